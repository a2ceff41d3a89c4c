#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Edit one field of one line of a quickack journal, as a person with sed
would, and make that line's CRC-32 right again (zlib's, as the format in
quickack/journal.h says), so that quickack reads the edit as written rather
than as damage.

    qajournal.py FILE LINE KEY VALUE   set KEY=VALUE on line LINE (1-based)
    qajournal.py --format1 FILE        make FILE a format 1 journal, as
                                       quickack wrote before the identity
                                       records: version 1, no boot,
                                       netns_ino, netns_cookie or devs
"""
import sys
import zlib

CRC = " crc="


FORMAT2_ONLY = ("boot=", "netns_ino=", "netns_cookie=", "devs=")


def fields(line):
    return line[: line.rindex(CRC)].split(" ")


def with_crc(parts):
    body = " ".join(parts)
    return f"{body}{CRC}{zlib.crc32(body.encode()):08x}"


def set_field(lines, no, key, value):
    parts = fields(lines[no - 1])
    hits = [i for i, p in enumerate(parts) if p.startswith(key + "=")]
    if len(hits) != 1:
        sys.exit(f"line {no} has no field {key}=")
    parts[hits[0]] = f"{key}={value}"
    lines[no - 1] = with_crc(parts)


def format1(lines):
    for i, line in enumerate(lines):
        if not line:
            continue
        parts = [p for p in fields(line) if not p.startswith(FORMAT2_ONLY)]
        if i == 0:
            parts[1] = "1"
        lines[i] = with_crc(parts)


def main():
    path = sys.argv[2] if sys.argv[1] == "--format1" else sys.argv[1]
    with open(path, encoding="ascii") as f:
        lines = f.read().split("\n")
    if sys.argv[1] == "--format1":
        format1(lines)
    else:
        set_field(lines, int(sys.argv[2]), sys.argv[3], sys.argv[4])
    with open(path, "w", encoding="ascii") as f:
        f.write("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
