#!/usr/bin/env python3
"""Every number a tool's text summary prints is also in its --json (or its report of the same run),
and so is every name of a choice it prints (a fill method, an encoding, a mode...).

usage: text_in_json.py TEXT JSON [--words W1,W2,...] [KEY ...]

TEXT is a tool's text output, JSON the JSON of a run with the same input and options. A number of
the text is found when some number of the JSON (its values, the numbers inside its strings, its
object keys) equals it within the text's printed precision (%g's six digits, or half a unit of the
last printed decimal); sizes printed in KB, MB or GB also match their bytes. Not compared, because
they change from run to run: lines whose key (the first 13 columns) is `time`, `memory` or one of
the KEYs given, numbers followed by s, ms or us, and percentages (ratios of numbers that are
compared). A table row's leading label (its level or index) is skipped. With --words, each of
those words printed after a line's key must be a word of the JSON too (of its strings or its keys;
words are letters and hyphens). Exit 1 listing what is missing.
"""
import json
import re
import sys

text = open(sys.argv[1]).read().replace("..", " .. ")
args = sys.argv[3:]
names = set()
if args[:1] == ["--words"]:
    names = set(w for w in args[1].split(",") if w)
    args = args[2:]
skip = {"time", "memory"} | set(args)
word = re.compile(r"[A-Za-z][A-Za-z-]*[A-Za-z]|[A-Za-z]")
json_words = set()
numbers = []
# A number as printed: 1,480 or -4.45 or 6.66e+03, then maybe its unit.
token = re.compile(r"(?<![\w.])(-?\d{1,3}(?:,\d{3})+(?!\d)|-?\d+(?:\.(\d+))?(?:[eE][-+]?\d+)?)( ?(KB|MB|GB|s\b|ms\b|us\b|%))?")


def collect(v):
    if isinstance(v, bool):
        return
    if isinstance(v, (int, float)):
        numbers.append(float(v))
    elif isinstance(v, str):
        numbers.extend(float(m.group(1).replace(",", "")) for m in token.finditer(v))
        json_words.update(word.findall(v.replace("_", " ")))
    elif isinstance(v, dict):
        for k, x in v.items():
            collect(k)
            collect(x)
    elif isinstance(v, list):
        for x in v:
            collect(x)


collect(json.load(open(sys.argv[2])))
per_unit = {"KB": 1024, "MB": 1024**2, "GB": 1024**3}
missing = []
for line in text.splitlines():
    if line[:13].strip() in skip:
        continue
    body = re.sub(r"^\s+\d+", "", line) if re.match(r"\s+\d", line) else line
    for m in token.finditer(body):
        printed, decimals, unit = m.group(1), m.group(2), m.group(4)
        if unit in ("s", "ms", "us", "%"):
            continue
        value = float(printed.replace(",", ""))
        half = 0.5 * 10 ** -len(decimals) if decimals else 0.5
        if "e" in printed.lower():  # 6.66e+03: half a unit of the mantissa's last digit, scaled
            half *= 10 ** int(printed.lower().split("e")[1])
        tolerance = max(half, abs(value) * 6e-6) * 1.0001  # %g prints six significant digits
        scale = per_unit.get(unit, 1)
        if not any(abs(n - value) <= tolerance or abs(n - value * scale) <= tolerance * scale for n in numbers):
            missing.append("%s%s   (%s)" % (printed, unit or "", line.strip()[:120]))
    for w in word.findall(line[13:]):
        if w in names and w not in json_words:
            missing.append("%s   (%s)" % (w, line.strip()[:120]))
for m in missing:
    print("not in --json: " + m)
sys.exit(1 if missing else 0)
