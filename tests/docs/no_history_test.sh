#!/usr/bin/env bash
# The user's pages and the results say what is; history lives in git. Fails when docs/*.md,
# formats/*.md or bench/RESULTS.md hold a commit hash (7 to 40 hex digits with a letter and a
# digit, outside fenced code blocks, where tools' outputs print content hashes) or a phrase of a
# lab notebook ("before this round", "tried and not kept", ...).
# usage: no_history_test.sh [SOURCE_DIR]   (default: HP_SOURCE_DIR, else the repository of this file)
src=${1:-${HP_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}}
python3 - "$src" <<'PY'
import glob, os, re, sys
src = sys.argv[1]
files = sorted(glob.glob(os.path.join(src, "docs", "*.md")) + glob.glob(os.path.join(src, "formats", "*.md"))
               + [os.path.join(src, "bench", "RESULTS.md")])
hexword = re.compile(r"(?<![0-9A-Za-z_.\-])[0-9a-f]{7,40}(?![0-9A-Za-z_])")
phrases = ["before this round", "after this round", "until this", "this round", "tried and not kept",
           "tried and dropped", "measured and not kept", "not kept:", "(before:", "superseded"]
problems = []
for path in files:
    if not os.path.exists(path):
        continue
    fenced = False
    for n, line in enumerate(open(path, encoding="utf-8"), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        where = f"{os.path.relpath(path, src)}:{n}"
        if not fenced:
            for m in hexword.finditer(line):
                w = m.group(0)
                if re.search(r"[a-f]", w) and re.search(r"[0-9]", w):
                    problems.append(f"{where}: commit hash? '{w}'")
        low = line.lower()
        for p in phrases:
            if p in low:
                problems.append(f"{where}: '{p}'")
for p in problems:
    print(p)
if problems:
    print(f"{len(problems)} place(s) of history in the docs: say what is, leave the history to git")
    sys.exit(1)
print(f"ok: {len(files)} files")
PY
