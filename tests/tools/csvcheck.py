#!/usr/bin/python3
"""Load a CSV file as a strict reader would: one header, every row with as
many cells as the header, RFC 4180 quoting (csv.reader, strict=True).
Prints each record type (the "type" column, if there is one) with its count
of rows; exits 1 with the line at fault otherwise."""
import collections
import csv
import sys

path = sys.argv[1]
counts = collections.OrderedDict()
with open(path, newline="") as f:
    rows = csv.reader(f, strict=True)
    try:
        header = next(rows)
    except StopIteration:
        sys.exit(f"{path}: empty")
    if len(set(header)) != len(header):
        sys.exit(f"{path}: a column name twice in the header: {header}")
    typed = header[0] == "type"
    for row in rows:
        if len(row) != len(header):
            sys.exit(f"{path}:{rows.line_num}: {len(row)} cells under a header of {len(header)}")
        if row == header:
            sys.exit(f"{path}:{rows.line_num}: the header again")
        key = row[0] if typed else "row"
        counts[key] = counts.get(key, 0) + 1
for k, n in counts.items():
    print(k, n)
