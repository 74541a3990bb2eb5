#!/usr/bin/env bash
# docs/architecture.md draws the module graph the build enforces: its module table (module, the
# modules it depends on) equals the hp_module declarations (module_graph.txt, written by CMake, in
# the same order), and its drawing has one arrow per dependency that no other path implies, and
# every module. Env (set by CMake): HP_BUILD_DIR, HP_SOURCE_DIR.
: "${HP_BUILD_DIR:?HP_BUILD_DIR must point to the build directory}"
: "${HP_SOURCE_DIR:?HP_SOURCE_DIR must point to the repository}"
HP_BIN="$HP_BUILD_DIR/bin"
source "$HP_SOURCE_DIR/tests/cli/lib.sh"

python3 - "$HP_BUILD_DIR/module_graph.txt" "$HP_SOURCE_DIR/docs/architecture.md" <<'PY' >"$TMP/report"
import re, sys
graph = {}
for line in open(sys.argv[1]):
    name, deps = line.split(":")
    graph[name.strip()] = deps.split()
doc = open(sys.argv[2]).read()
problems = []
# A module the table marks "(optional" that this build did not configure (its library was not
# found) is left out of the comparison.
absent = set(re.findall(r"^\| `(\w+)` \|[^|\n]*\| \(optional", doc, re.M)) - set(graph)

# The table under "| Module | Depends on | Holds |".
table = re.search(r"^\| Module \| Depends on \| Holds \|\n\|[-| ]+\|\n((?:\|.*\|\n)+)", doc, re.M)
if not table:
    problems.append("no '| Module | Depends on | Holds |' table")
else:
    rows = []
    for row in table.group(1).splitlines():
        cells = [c.strip() for c in row.strip("|").split("|")]
        if cells[0].strip("`") not in absent:
            rows.append((cells[0].strip("`"), sorted(re.findall(r"`([^`]+)`", cells[1]))))
    if [r[0] for r in rows] != list(graph):
        problems.append(f"table lists {[r[0] for r in rows]}, CMake defines {list(graph)}")
    for name, deps in rows:
        if name in graph and deps != sorted(graph[name]):
            problems.append(f"table: {name} depends on {deps}, CMake: {sorted(graph[name])}")

# The drawing: the mermaid block of "## Modules".
section = doc.split("## Modules", 1)[-1]
block = re.search(r"```mermaid\n(.*?)```", section, re.S)
if not block:
    problems.append("no mermaid drawing under '## Modules'")
else:
    edges = {e for e in re.findall(r"^\s*(\w+) --> (\w+)\s*$", block.group(1), re.M) if not absent & set(e)}
    def reaches(a, b, skip):
        todo, seen = [d for d in graph[a] if (a, d) != skip], set()
        while todo:
            x = todo.pop()
            if x == b:
                return True
            if x not in seen:
                seen.add(x)
                todo += graph[x]
        return False
    want = {(a, b) for a in graph for b in graph[a] if not reaches(a, b, (a, b))}
    for a, b in sorted(want - edges):
        problems.append(f"drawing lacks {a} --> {b}")
    for a, b in sorted(edges - want):
        problems.append(f"drawing has {a} --> {b}, which CMake does not declare or another path implies")
    drawn = {n for e in edges for n in e}
    for name in graph:
        if name not in drawn:
            problems.append(f"drawing lacks module {name}")
print("\n".join(problems) if problems else f"ok {len(graph)}")
PY
if grep -q '^ok ' "$TMP/report"; then
    pass "docs/architecture.md shows the $(cut -d' ' -f2 "$TMP/report") modules and their graph as CMake declares them"
else
    fail "docs/architecture.md differs from the module targets:"; sed 's/^/    /' "$TMP/report" >&2
fi
finish
