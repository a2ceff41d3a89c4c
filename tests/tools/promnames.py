#!/usr/bin/env python3
"""The metric names that monitoring/'s PromQL expressions read.

promnames.py exprs FILE...      one expression per line: every expr of the
                                Grafana dashboards and rules files given
promnames.py names FILE...      the metric names those expressions read
promnames.py exported PAGE...   the metric names a /metrics page exports (a
                                histogram's _bucket, _sum and _count too)
"""
import json
import re
import sys

import yaml

KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "bool",
            "and", "or", "unless", "offset", "inf", "nan"}
IDENT = re.compile(r"[A-Za-z_:][A-Za-z0-9_:]*")


def dashboard_exprs(doc):
    out = []

    def walk(panels):
        for p in panels:
            out.extend(t["expr"] for t in p.get("targets", []) if t.get("expr"))
            walk(p.get("panels", []))
    walk(doc.get("panels", []))
    for v in doc.get("templating", {}).get("list", []):
        q = v.get("query")
        m = re.fullmatch(r"label_values\((.*),\s*\w+\)", q) if isinstance(q, str) else None
        if m:
            out.append(m.group(1))
    return out


def rules_exprs(doc):
    return [r["expr"] for g in doc["groups"] for r in g["rules"]]


def exprs_of(path):
    with open(path) as f:
        if path.endswith(".json"):
            return dashboard_exprs(json.load(f))
        return rules_exprs(yaml.safe_load(f))


def names_in(expr):
    names = set()
    # {__name__=~"a|b"}: the names a selector by name reads
    for m in re.finditer(r'__name__\s*=~?\s*"([^"]*)"', expr):
        names.update(m.group(1).split("|"))
    e = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)           # strings
    e = re.sub(r"\{[^}]*\}", " ", e)                        # label matchers
    e = re.sub(r"\[[^\]]*\]", " ", e)                       # ranges
    e = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", e)
    e = re.sub(r"\$\{?\w+\}?", " ", e)                      # Grafana variables
    for m in IDENT.finditer(e):
        word = m.group(0)
        rest = e[m.end():].lstrip()
        if rest.startswith("(") or word.lower() in KEYWORDS:
            continue
        if re.fullmatch(r"\d.*", word):
            continue
        names.add(word)
    return names


def exported(path):
    names = set()
    with open(path) as f:
        for line in f:
            m = re.match(r"# TYPE (\S+) (\S+)", line)
            if not m:
                continue
            names.add(m.group(1))
            if m.group(2) == "histogram":
                names.update(m.group(1) + s for s in ("_bucket", "_sum", "_count"))
    return names


def main(argv):
    if len(argv) < 3 or argv[1] not in ("exprs", "names", "exported"):
        sys.exit(__doc__)
    out = set() if argv[1] != "exprs" else []
    for path in argv[2:]:
        if argv[1] == "exprs":
            out.extend(exprs_of(path))
        elif argv[1] == "names":
            for e in exprs_of(path):
                out |= names_in(e)
        else:
            out |= exported(path)
    print("\n".join(out if argv[1] == "exprs" else sorted(out)))


if __name__ == "__main__":
    main(sys.argv)
