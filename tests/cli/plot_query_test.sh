#!/usr/bin/env bash
# haptic-query --plot: one PNG of two panels, the latency histogram (upper half) and the latency
# per pose (lower half). The picture is decoded and its colours counted: the histogram's bars
# only in the upper half, the budget's red in both halves when drawn (its line in the histogram;
# its line and the over-budget points below), none of it when the budget is far beyond every query.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/junit_lib.sh"
query="$HP_BIN/haptic-query"
make_query_objects
objects=(--static "$TMP/block.dist.vdb" --moving "$TMP/peg.hps" --scenario contact --count 200 --seed 4 --threads 1)

# colour FILE R,G,B: "TOTAL UPPER" pixel counts of that colour (0 0 when absent).
colour() { awk -v c="$2" '$1 == c {print $2, $3; found = 1} END {if (!found) print 0, 0}' "$1"; }

expect_exit 1 "$query" "${objects[@]}" --budget-us 0.001 --plot "$TMP/over.png" --quiet
png_colours "$TMP/over.png" >"$TMP/over.txt" || fail "$TMP/over.png is not a valid 8-bit RGB PNG"
check "size: two panels of 1000 x 480" "$(head -1 "$TMP/over.txt")" "1000 960"
read -r bars bars_up < <(colour "$TMP/over.txt" 70,120,190)
[ "$bars" -gt 1000 ] && [ "$bars" = "$bars_up" ] && pass "histogram bars ($bars pixels), all in the upper panel" \
    || fail "histogram bars: $bars pixels, $bars_up in the upper panel"
read -r red red_up < <(colour "$TMP/over.txt" 200,30,30)
[ "$red_up" -gt 100 ] && [ $((red - red_up)) -gt 100 ] && pass "budget drawn in both panels ($red_up + $((red - red_up)) pixels)" \
    || fail "budget red: $red pixels, $red_up in the upper panel"
read -r green _ < <(colour "$TMP/over.txt" 30,140,60)
[ "$green" -gt 100 ] && pass "p50 marked" || fail "no p50 mark ($green pixels)"

# A budget 10^9 times beyond every query: named in the titles, not drawn; no query over it.
expect_exit 0 "$query" "${objects[@]}" --budget-us 1e9 --plot "$TMP/within.png" --quiet
png_colours "$TMP/within.png" >"$TMP/within.txt" || fail "$TMP/within.png is not a valid 8-bit RGB PNG"
check "no budget red" "$(colour "$TMP/within.txt" 200,30,30)" "0 0"
read -r blue blue_up < <(colour "$TMP/within.txt" 50,100,180)
[ "$blue" -gt 200 ] && [ "$blue_up" -lt "$blue" ] && pass "points within budget in the lower panel" \
    || fail "within-budget points: $blue pixels, $blue_up in the upper panel"

expect_exit 4 "$query" "${objects[@]}" --budget-us 1e9 --plot "$TMP/missing/q.png" --quiet
expect_one_error_line
finish
