#!/usr/bin/python3
"""A man page against its tool's --help, read one way for every check.

    manpage.py defaults TOOL_BINARY MAN_PAGE
    manpage.py options MAN_PAGE

defaults: every option default that --help prints ("(default DEF)" at the
end of the option's text, from the option table, where the default is
written once) must be the one the man page's paragraph for that option
gives: "default DEF" or "default: DEF", or, in a list of values, the one
marked "(the default" or ", the default)" is DEF. A tool with commands
("Commands:" in its --help) is read through each command's --help too.
Prints "ok --OPT DEF" per default, or "--OPT: --help says DEF; the man page
..." for one that differs; exits 1 when any differs or has no paragraph.

options: the options the man page documents, one per line, sorted: each
dashed word of its SYNOPSIS and of its .TP tags (the tool's side is the
installed completion's reader of --help, tests/bats/install.bats)."""
import re
import subprocess
import sys

HELP_COL = 26  # lib/opt.c's OPT_HELP_COL: continuation lines are indented this far


def run_help(tool, *cmd):
    return subprocess.run([tool, *cmd, "--help"], capture_output=True, text=True, check=False).stdout


def help_defaults(text):
    """{option: default} of one --help page"""
    blocks, cur = {}, None
    for line in text.splitlines():
        m = re.match(r"^ {2,6}(?:-\w, )?--([A-Za-z0-9][A-Za-z0-9-]*)", line)
        if m:
            cur = m.group(1)
            blocks[cur] = line
        elif cur and line.startswith(" " * HELP_COL):
            blocks[cur] += " " + line.strip()
        else:
            cur = None
    found = {}
    for opt, block in blocks.items():
        m = re.search(r"\(default ([^)]*)\)$", block.strip())
        if m:
            found[opt] = m.group(1)
    return found


def plain(line):
    """a man page line as read: escapes and font requests gone"""
    line = line.replace("\\-", "-").replace("\\(mu", "x").replace("×", "x")
    line = re.sub(r"\\f[BIRP]|\\&|\\\(..", "", line)
    line = re.sub(r"^\.(?:BR|RB|BI|IB|IR|RI|B|I)\s+", "", line)
    return line.replace('"', "")


def man_paragraphs(path):
    """{option: text} of each .TP paragraph, by the options its tag names"""
    paras, tags, body = {}, [], []
    lines = open(path, encoding="utf-8").read().splitlines()

    def close():
        text = " ".join(" ".join(body).split()).replace(" ,", ",")
        for t in tags:
            paras[t] = paras.get(t, "") + " " + text

    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith(".TP"):
            close()
            tag = plain(lines[i + 1]) if i + 1 < len(lines) else ""
            tags, body = re.findall(r"--([A-Za-z0-9][A-Za-z0-9-]*)", tag), []
            i += 2
            continue
        if re.match(r"^\.(SH|SS|PP|P|LP)\b", line):
            close()
            tags, body = [], []
        elif not line.startswith(".\\\""):
            body.append(plain(line))
        i += 1
    close()
    return paras


def dashed_words(text):
    """the option names in TEXT, short and long, as a synopsis or a tag
    writes them: [-o FILE], --side=S, -h, --help, a|--b"""
    return [w for w in re.split(r"[][ ,/|();=]+", text)
            if re.fullmatch(r"--?[A-Za-z0-9][A-Za-z0-9-]*", w)]


def man_options(path):
    """the options of a man page's SYNOPSIS and .TP tags"""
    found, section, tag = set(), "", False
    for line in open(path, encoding="utf-8").read().splitlines():
        if line.startswith(".SH"):
            section, tag = line[3:].strip(), False
        elif tag:
            found.update(dashed_words(plain(line)))
            tag = False
        elif line.startswith(".TP"):
            tag = True
        elif section == "SYNOPSIS":
            found.update(dashed_words(plain(line)))
    return sorted(found)


def says_default(text, d):
    """"default D"; or, in a list of values, D followed by a parenthesis
    that says "the default", or starting the clause (up to a ';') whose
    text ends so"""
    d = d.replace("×", "x")
    if any(s in text for s in (f"default {d}", f"default: {d}", f"Default {d}", f"Default: {d}")):
        return True
    if re.search(rf"\b{re.escape(d)} \((?:[^()]*, )?the default\b", text):
        return True
    return any(re.search(r"\(the default\b|, the default\)", clause) and
               re.match(rf"\s*{re.escape(d)}\b", clause) for clause in text.split(";"))


def check_defaults(tool, man):
    top = run_help(tool)
    pages = [top]
    cmds = re.search(r"^Commands:\n((?:  .*\n)+)", top, re.M)
    for cmd in re.findall(r"^  ([a-z][a-z-]*)", cmds.group(1), re.M) if cmds else []:
        pages.append(run_help(tool, cmd))
    defaults = {}
    for page in pages:
        defaults.update(help_defaults(page))
    paras = man_paragraphs(man)
    bad = 0
    for opt, d in sorted(defaults.items()):
        text = paras.get(opt)
        if text is None:
            print(f"--{opt}: --help says default {d}; the man page has no paragraph for it")
            bad += 1
        elif says_default(text, d):
            print(f"ok --{opt} {d}")
        else:
            said = re.findall(r"[^.;(]*\bdefault\b[^.;)]*", text, re.I)
            print(f"--{opt}: --help says default {d}; the man page says: {'; '.join(s.strip() for s in said) or 'none'}")
            bad += 1
    if not defaults and any("(default " in page for page in pages):
        print(f"{tool} --help prints a default this script does not read: its layout changed")
        bad += 1
    return 1 if bad else 0


def main():
    args = sys.argv[1:]
    if len(args) == 3 and args[0] == "defaults":
        sys.exit(check_defaults(args[1], args[2]))
    if len(args) == 2 and args[0] == "options":
        print("\n".join(man_options(args[1])))
        sys.exit(0)
    print(f"usage: {sys.argv[0]} defaults TOOL_BINARY MAN_PAGE | options MAN_PAGE", file=sys.stderr)
    sys.exit(2)


if __name__ == "__main__":
    main()
