#!/usr/bin/env python3
"""The stages' option tables of docs/pipeline.md, from the declaration.

Reads `haptic-pipeline --list-stages --json` on stdin and prints one Markdown table per available
stage. With --check DOC it compares the tables with the part of DOC between the markers
<!-- options:begin --> and <!-- options:end --> instead (exit 1 when they differ); with --write
DOC it replaces that part.
"""
import json
import sys

BEGIN, END = "<!-- options:begin -->", "<!-- options:end -->"


def number(v):
    if v == int(v) and abs(v) < 1e17:
        return "%.0f" % v
    return "%.17g" % v


def value(v):
    return "`%s`" % (v if isinstance(v, str) else json.dumps(v))


def bounds(p):
    words = []
    if "choices" in p:
        words.append(", ".join(value(c) for c in p["choices"]))
    elif p.get("positive"):
        words.append("> 0")
    elif "min" in p and "max" in p:
        words.append("%s .. %s" % (number(p["min"]), number(p["max"])))
    elif "min" in p:
        words.append(">= " + number(p["min"]))
    elif "max" in p:
        words.append("<= " + number(p["max"]))
    if p.get("excludes"):
        words.append("excludes " + ", ".join("`%s`" % x for x in p["excludes"]))
    return "; ".join(words)


def applies(p):
    out = []
    for a in p.get("applies", []):
        vals = [v for v in a["values"] if v is not None]
        out.append("`%s` %s" % (a["key"], " or ".join(value(v) for v in vals)) if vals else "`%s` unset" % a["key"])
    return "; ".join(out)


def tables(stages):
    out = []
    for s in stages:
        if not s["available"]:
            continue
        out.append("#### %s (`%s`)\n" % (s["stage"], s["tool"]))
        out.append("| key | option | type | default | range or choices | only with | what it does |")
        out.append("|---|---|---|---|---|---|---|")
        for p in s["params"]:
            kind = "file (a flag in a pipeline)" if "input" in p else p["type"]
            default = "—" if p["default"] is None or "input" in p else value(p["default"])
            help_text = p["help"].replace("|", "\\|")
            out.append("| `%s` | `%s` | %s | %s | %s | %s | %s |" % (p["key"], p["option"], kind, default, bounds(p),
                                                                 applies(p), help_text))
        out.append("")
    return "\n".join(out)


def main():
    text = tables(json.load(sys.stdin)["stages"])
    if len(sys.argv) == 1:
        sys.stdout.write(text)
        return 0
    mode, doc = sys.argv[1], sys.argv[2]
    page = open(doc).read()
    head, rest = page.split(BEGIN + "\n", 1)
    _, tail = rest.split(END, 1)
    if mode == "--write":
        open(doc, "w").write(head + BEGIN + "\n" + text + END + tail)
        return 0
    if rest.split(END, 1)[0] != text:
        sys.stderr.write("%s: the option tables differ from the declaration; run scripts/options_table.py --write %s "
                         "on haptic-pipeline --list-stages --json\n" % (doc, doc))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
