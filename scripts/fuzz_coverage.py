#!/usr/bin/env python3
"""Edge coverage of a fuzz target's corpus in the given source files.

    scripts/fuzz_coverage.py BINARY CORPUS_DIR... -- SOURCE...

Runs the libFuzzer BINARY once over the corpus (-runs=0 -print_coverage=1) and sums, per source
file, the edges libFuzzer's instrumentation counts in the functions defined there: covered / total.
Functions inlined into others count where they were inlined.
"""
import os
import re
import subprocess
import sys
from collections import defaultdict

FUNC = re.compile(r"^(UN)?COVERED_FUNC: hits: \d+ edges: (\d+)/(\d+) .* (\S+):\d+$")


def main(argv):
    if "--" not in argv or argv.index("--") < 3:
        sys.exit(__doc__)
    split = argv.index("--")
    binary, corpora, sources = argv[1], argv[2:split], argv[split + 1:]
    env = dict(os.environ)
    env.setdefault("ASAN_OPTIONS", "allocator_may_return_null=1:detect_leaks=0")
    run = subprocess.run([binary, "-runs=0", "-print_coverage=1", *corpora], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
    covered, total = defaultdict(int), defaultdict(int)
    for line in run.stdout.splitlines():
        m = FUNC.match(line.strip())
        if not m:
            continue
        path = os.path.normpath(m.group(4))
        for source in sources:
            if path.endswith(os.path.normpath(source)):
                covered[source] += int(m.group(2))
                total[source] += int(m.group(3))
    for source in sources:
        t = total[source]
        share = f"{100.0 * covered[source] / t:5.1f} %" if t else "    - "
        print(f"{source:32s} {covered[source]:6d} / {t:<6d} edges  {share}")


if __name__ == "__main__":
    main(sys.argv)
