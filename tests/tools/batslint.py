#!/usr/bin/python3
"""Assertions in bats files that cannot fail. bats runs a test under bash's
errexit, and errexit ignores a command negated with `!` and every command of
an `&&` list but the last: so, anywhere but at a test's or function's end,

    ! grep -q FAIL out            never fails the test
    [ "$w" -eq 1200 ] && [ "$h" -eq 800 ]   checks only the height
    [ "$w" -eq 1200 ] &&
        [ "$h" -eq 800 ]                    the same, on two lines

unless an `||` handler follows (`! cmd || false`, `a && b || { ...; }`).
It reads `&&` lists that start with a test (`[` or `[[`), the form the
suite's checks take; `cmd && [ ... ]` is not looked for.
Guards that are meant as such (`[ -n "$PID" ] && kill "$PID"`, `... &&
break`, `&& continue`, `&& return 0`) are not assertions and are left alone.

    batslint.py FILE...

Prints FILE:LINE: and the statement for each; exits 1 when there is any."""
import re
import sys

CHAIN = re.compile(r"^(?:\[\[? .*? \]\]?) && (?:\[\[? |! )")
CONTINUED = ("&&", "|", "\\", "||")  # a line ending so goes on in the next
GUARD_END = re.compile(r"&& (?:break|continue|return 0|kill\b|shift\b|echo\b|\{? ?\w+=)")


def statement(lines, i):
    """line i and its continuation lines (ending in && | \\ or ||), joined"""
    j = i
    while j < len(lines) - 1 and lines[j].rstrip().endswith(CONTINUED):
        j += 1
    return j, " ".join(x.strip() for x in lines[i:j + 1])


def next_code(lines, j):
    k = j + 1
    while k < len(lines) and (not lines[k].strip() or lines[k].strip().startswith("#")):
        k += 1
    return lines[k].strip() if k < len(lines) else ""


def check(path):
    lines = open(path, encoding="utf-8").read().split("\n")
    found = []
    for i, line in enumerate(lines):
        if not line.strip().startswith(("! ", "[")):
            continue
        # a continuation line is part of the statement above, read with it
        if i > 0 and lines[i - 1].rstrip().endswith(CONTINUED):
            continue
        # the whole statement: a list continued after a trailing && is one
        j, stmt = statement(lines, i)
        neg, chain = stmt.startswith("! "), bool(CHAIN.match(stmt))
        if not (neg or chain):
            continue
        if "||" in stmt or (chain and GUARD_END.search(stmt)):
            continue
        if next_code(lines, j).startswith("}"):  # the last command: its status is the test's
            continue
        found.append(f"{path}:{i + 1}: {stmt}")
    return found


def main():
    bad = [f for path in sys.argv[1:] for f in check(path)]
    for b in bad:
        print(b)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
