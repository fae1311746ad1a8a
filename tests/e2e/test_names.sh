#!/bin/bash
# test_names — the names a responder reads (issue 24, item 12, and the
# icicle's recursion of item 8), on cxxnames (C++, built with g++):
#   - a call through the PLT is a row "strlen@plt" (perf's name), never one
#     "[plt]" row for every stub;
#   - C++ names are short by default ("shop::Basket<long>::total_of", no
#     parameters), whole with --full-names and on key v;
#   - at 80x24 the icicle folds "shop::depth" calling itself 13 times into
#     one bar "×13" with the hot member function right under it; x unfolds.
. "$(dirname "$0")/lib.sh"
need_stacktop
need_target cxxnames
need_tmux

start_target 0.5 cxxnames
P=$BG_PID
out=$E2E_TMPDIR/top.out
run_ok 30 "$out" "batch top on cxxnames" -b -d 2 -n 1 -l 40 -r 499 -p "$P"
rows=$(rows_of "$out")
grep -q ' strlen@plt  *cxxnames$' <<<"$rows" && ok "the PLT stub is a row of its own: strlen@plt" ||
	bad "no strlen@plt row: $(grep -i plt <<<"$rows")"
grep -q '\[plt\]' <<<"$rows" && bad "a [plt] row is left: $(grep 'plt' <<<"$rows")" ||
	ok "no bare [plt] row"
grep -q ' shop::Basket<long>::total_of (cxxnames.cpp) ' <<<"$rows" &&
	ok "the C++ name is short by default" || bad "no short shop::Basket<long>::total_of row"
grep -q 'total_of(' <<<"$rows" && bad "parameters shown by default" || ok "no parameters by default"

full=$E2E_TMPDIR/full.out
run_ok 30 "$full" "batch top --full-names" -b -d 2 -n 1 -l 40 -r 499 --full-names -p "$P"
grep -q 'shop::Basket<long>::total_of(std::' "$full" && ok "--full-names: parameters shown" ||
	bad "--full-names: no parameters"

# The TUI at 80x24: key v toggles the names; the icicle folds the recursion.
tm_start 80 24 "$STACKTOP" -r 499 -p "$P"
tm_wait 15 'shop::Basket<long>::total_of ' && ok "80x24: the short name whole on the top table" ||
	bad_dump "short" "80x24: no short name on the top table"
tm_key_expect v 5 'count_bytes\(char' "80x24: v shows the whole C++ name" "80x24: v: no whole name"
tm_key_expect v 5 'shop::Basket<long>::total_of ' "80x24: v again: short" "80x24: v again: not short"
tm_key_expect 2 5 'shop::depth (×|x)13' "80x24 icicle: the recursion is one bar x13" \
	"80x24 icicle: no folded recursion bar"
scr=$E2E_TMPDIR/icicle80
tm_screen >"$scr"
# The row right under the folded bar has a bar where it starts: its callee
# (total_of; its name may be cut when few samples came under load).
# (Columns counted in ASCII: the multibyte "…" and "×" made one character.)
under=$(sed 's/\xe2\x80\xa6/./g; s/\xc3\x97/x/g' "$scr" |
	awk '!found && (c = index($0, "[shop::depth")) { found = 1; getline nx; print substr(nx, c, 30) }')
if [ "${under:0:1}" = "[" ]; then
	ok "80x24 icicle: the callee right under the folded bar: ${under%%]*}]"
else
	bad_dump "icicle" "80x24 icicle: no bar right under the folded one ('$under')"
fi
grep -q 'more below' "$scr" && bad_dump "more" "80x24 icicle: 'more below' with the recursion folded" ||
	ok "80x24 icicle: nothing below the screen"
tm_key_expect x 5 'more below' "80x24 icicle: x unfolds (13 rows of depth, more below)" \
	"80x24 icicle: x did not unfold"
tm_screen >"$scr"
n=$(grep -c '\[shop::depth' "$scr")
check_cmp "$n" '>=' 10 "80x24 icicle unfolded: a row per call of depth ($n)"
# The marker has a row of its own: the row above it is a bar, not cut by it.
m=$(grep -n 'more below' "$scr" | head -1 | cut -d: -f1)
grep -q '\[' <(sed -n "${m}p" "$scr") && bad_dump "marker" "80x24: the marker shares a row with a bar" ||
	ok "80x24: 'more below' on a row of its own"
tm_stop
e2e_finish
