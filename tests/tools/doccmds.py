#!/usr/bin/python3
"""The commands and expected outputs of the READMEs, for the doc tests
(tests/bats/docs*.bats), which run every command for real.

Fences in a README:
  ```sh     commands: one per line; `\\` at the end of a line continues it;
            a `#` that starts a word (outside quotes) starts a comment, which
            is dropped; a comment saying `exit N` declares the command's
            expected exit status (default 0). A block with no command is an
            error.
  ```text   expected output of the ```sh block above it (the nearest one in
            the same file; none is an error). Each line of a block's text
            blocks must match a whole line of what the block's commands print
            (stdout, then stderr, command by command), in order: a number
            matches any number, `[...]` matches anything, the rest matches
            itself (surrounding spaces aside).
  ```       (no language) shown, not run: synopses, file formats, output
            without a command. Any other language, or a fence left open, is
            an error.

Usage: doccmds.py [--root DIR] COMMAND [ARGS]
  list [FILE...]          one line per command: file, line, its block's line,
                          expected status, section, command (tab-separated)
  texts [FILE...]         one line per expected-output line: file, line, its
                          text block's line, its command block's line, the
                          line as written
  match FILE LINE OUTPUT  check OUTPUT against the text blocks of the block
                          that opens at FILE:LINE (a ```sh block: all its
                          text blocks; a ```text block: that one); exit 1
                          naming the first line that found no match
  check [FILE...]         parse only; exit 1 with FILE:LINE: reason
FILEs are relative to the repository (default: README.md and */README.md).
"""
import glob
import os
import re
import sys

FENCE = re.compile(r"^ {0,3}```\s*([A-Za-z0-9_+-]*)\s*$")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
EXIT_NOTE = re.compile(r"\bexit (\d+)\b")
NUMBER = re.compile(r"\d+(?:\.\d+)?")
ANY_NUMBER = r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"
ANYTHING = "[...]"
# sh: commands that run; text: their output; yaml: a configuration file to write, not
# run; none: the rest
LANGS = ("sh", "text", "yaml", "")


class DocError(Exception):
    pass


class Block:
    def __init__(self, path, line, lang, section):
        self.path, self.line, self.lang, self.section = path, line, lang, section
        self.body = []  # (line number, text)
        self.commands = []  # (line, status, command)
        self.texts = []  # (line, text)
        self.owner = None  # a text block's ```sh block


def split_comment(s):
    """the shell words before a comment, and the comment: a # that starts a
    word outside quotes starts it, as in sh"""
    quote = None
    for i, c in enumerate(s):
        if quote:
            if c == quote:
                quote = None
            elif c == "\\" and quote == '"':
                continue
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or s[i - 1].isspace()):
            return s[:i].rstrip(), s[i + 1:].strip()
    if quote:
        raise DocError(f"an unclosed {quote} quote")
    return s.rstrip(), ""


def read_blocks(root, path):
    """the fenced blocks of one README, in order"""
    blocks, cur, section = [], None, ""
    with open(os.path.join(root, path), encoding="utf-8") as f:
        lines = f.read().split("\n")
    for n, text in enumerate(lines, 1):
        fence = FENCE.match(text)
        if cur is None:
            head = HEADING.match(text)
            if head:
                section = head.group(1)
            elif fence:
                if fence.group(1) not in LANGS:
                    raise DocError(f"{path}:{n}: unknown fence language '{fence.group(1)}' "
                                   "(sh for commands, text for their output, yaml for a configuration file, "
                                   "none for the rest)")
                cur = Block(path, n, fence.group(1), section)
        elif fence and fence.group(1) == "":
            blocks.append(cur)
            cur = None
        else:
            cur.body.append((n, text))
    if cur is not None:
        raise DocError(f"{path}:{cur.line}: a ```{cur.lang} block that is never closed")
    return blocks


def parse_commands(b):
    """a ```sh block's commands: comments dropped, continuations joined"""
    pending, start = "", None
    for n, text in b.body:
        try:
            words, note = split_comment(text)
        except DocError as e:
            raise DocError(f"{b.path}:{n}: {e}") from None
        if not words and not pending:
            continue
        if start is None:
            start, status = n, 0
        m = EXIT_NOTE.search(note)
        if m:
            status = int(m.group(1))
        if words.endswith("\\"):
            pending += words[:-1].strip() + " "
            continue
        b.commands.append((start, status, (pending + words.strip()).strip()))
        pending, start = "", None
    if pending:
        raise DocError(f"{b.path}:{start}: a continued line that nothing continues")
    if not b.commands:
        raise DocError(f"{b.path}:{b.line}: a ```sh block with nothing to run")


def parse_texts(b, owner):
    if owner is None:
        raise DocError(f"{b.path}:{b.line}: a ```text block with no ```sh block above it")
    b.owner = owner
    b.texts = [(n, t.strip()) for n, t in b.body if t.strip()]
    if not b.texts:
        raise DocError(f"{b.path}:{b.line}: an empty ```text block")


def parse(root, path):
    blocks, owner = read_blocks(root, path), None
    for b in blocks:
        if b.lang == "sh":
            parse_commands(b)
            owner = b
        elif b.lang == "text":
            parse_texts(b, owner)
    return blocks


def readmes(root, args):
    if args:
        return args
    found = ["README.md"] + sorted(glob.glob("*/README.md", root_dir=root))
    return [p for p in found if os.path.isfile(os.path.join(root, p))]


def pattern(text):
    """the regular expression of one expected line"""
    out = []
    for i, piece in enumerate(text.split(ANYTHING)):
        if i:
            out.append(".*")
        pos = 0
        for m in NUMBER.finditer(piece):
            out.append(re.escape(piece[pos:m.start()]))
            out.append(ANY_NUMBER)
            pos = m.end()
        out.append(re.escape(piece[pos:]))
    return re.compile("".join(out))


def match(blocks, line, output_path):
    """the text lines of the block at `line` against the output, in order"""
    texts = [t for b in blocks if b.lang == "text" and (b.line == line or b.owner and b.owner.line == line)
             for t in b.texts]
    if not any(b.line == line and b.lang in ("sh", "text") for b in blocks):
        raise DocError(f"line {line}: no ```sh or ```text block opens there")
    with open(output_path, encoding="utf-8", errors="replace") as f:
        got = [s.strip() for s in f.read().split("\n")]
    pos = 0
    for n, text in texts:
        rx = pattern(text)
        while pos < len(got) and not rx.fullmatch(got[pos]):
            pos += 1
        if pos == len(got):
            print(f"line {n}: no line of {output_path} (after those matched before it) matches:\n"
                  f"  {text}\n  as the regular expression {rx.pattern}", file=sys.stderr)
            return 1
        pos += 1
    return 0


def main(argv):
    root = os.path.realpath(os.path.join(os.path.dirname(__file__), "..", ".."))
    if len(argv) > 1 and argv[0] == "--root":
        root, argv = argv[1], argv[2:]
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if argv else 2
    cmd, args = argv[0], argv[1:]
    try:
        if cmd == "match" and len(args) == 3:
            return match(parse(root, args[0]), int(args[1]), args[2])
        if cmd not in ("list", "texts", "check"):
            print(f"doccmds.py: unknown command or arguments: {' '.join(argv)} (see --help)", file=sys.stderr)
            return 2
        for path in readmes(root, args):
            for b in parse(root, path):
                if cmd == "list":
                    for n, status, c in b.commands:
                        print(f"{path}\t{n}\t{b.line}\t{status}\t{b.section}\t{c}")
                elif cmd == "texts":
                    for n, t in b.texts:
                        print(f"{path}\t{n}\t{b.line}\t{b.owner.line}\t{t}")
    except (DocError, OSError) as e:
        print(f"doccmds.py: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
