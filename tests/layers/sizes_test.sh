#!/usr/bin/env bash
# Files and functions a reader can hold in the head: no C++ file of lib/, formats/, apps/, python/,
# bench/ or tests/ over 600 lines, and no function of the code (not the tests) over 150 lines.
# A function here: a line at column 0 that ends with '{' after a parenthesis (this codebase does
# not indent namespace bodies), up to the next line at column 0 that starts with '}'; lambdas and
# members defined inside a class count with their enclosing function or class, which is not
# measured.
# usage: sizes_test.sh [SOURCE_DIR]   (default: HP_SOURCE_DIR, else the repository of this file)
src=${1:-${HP_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}}
python3 - "$src" <<'PY'
import glob, os, sys
src = sys.argv[1]
MAX_FILE, MAX_FUNCTION = 600, 150
def sources(folders):
    out = []
    for f in folders:
        for ext in ("cpp", "hpp"):
            out += glob.glob(os.path.join(src, f, "**", "*." + ext), recursive=True)
    return sorted(out)
problems = []
for path in sources(["lib", "formats", "apps", "python", "bench", "tests"]):
    n = sum(1 for _ in open(path, encoding="utf-8"))
    if n > MAX_FILE:
        problems.append(f"{os.path.relpath(path, src)}: {n} lines (at most {MAX_FILE}: split it by concern)")
functions = 0
for path in sources(["lib", "formats", "apps", "python", "bench"]):
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        head = " ".join(lines[max(0, i - 3):i + 1])
        if (line and not line[0].isspace() and line.rstrip().endswith("{") and "(" in head
                and not line.startswith(("namespace", "struct", "class", "enum", "extern", "union", "template"))
                and "=" not in line.split("(")[0]):
            j = i + 1
            while j < len(lines) and not lines[j].startswith("}"):
                j += 1
            functions += 1
            if j - i - 1 > MAX_FUNCTION:
                problems.append(f"{os.path.relpath(path, src)}:{i + 1}: a function of {j - i - 1} lines "
                                f"(at most {MAX_FUNCTION}: make it read as steps)")
            i = j
        i += 1
for p in problems:
    print(p)
if problems:
    sys.exit(1)
if functions < 500:  # the detection itself broke (the code has well over a thousand)
    print(f"only {functions} functions found: the detection no longer matches the code's layout")
    sys.exit(1)
print(f"ok: files at most {MAX_FILE} lines, {functions} functions at most {MAX_FUNCTION} lines")
PY
