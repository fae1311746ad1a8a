#!/bin/bash
# test_difflive — the live diff in the TUI: the shift target runs 60/30/10
# (hot_a, hot_b, hot_c); b marks the baseline (the last seconds of the
# window), SIGUSR1 makes it 30/60/10, D shows the diff: after the shift
# hot_b is starred, grown, and hot_a starred too (per-second Welch test on
# the window's buckets), the legend is there; with too few seconds there
# are no stars and the line says why; D again leaves the diff. Then the
# caller shift (shift_caller: leaf_a and leaf_b both call spin, 60/30/10,
# SIGUSR1 makes it 30/60/10): b, the shift, D: leaf_b's total is starred
# and grew (its own share is next to nothing on both sides), and it is
# not labelled (gone). About 45 s.
# (How soon the star comes, ~5 s, is a timing: bench/checks.sh measures it;
# here 25 s is only how long to wait before calling it missing.)
. "$(dirname "$0")/lib.sh"
need_stacktop
need_target shift
need_target shift_caller
need_tmux

start_target 0.3 shift 60/30/10
SH=$BG_PID
tm_start 160 40 "$STACKTOP" -r 499 -p "$SH"
tm_wait 8 'hot_a' || { tm_dump "start"; die "the top view never showed hot_a"; }

# D before any baseline: a hint, not a diff
tm_key_expect D 3 'no baseline: press b first' "without a baseline it says to press b" \
	"no hint without a baseline"

# a baseline of too few seconds: no stars, and why
tm_keys b
tm_key_expect D 3 'diff: baseline' "D shows the diff against the baseline" "no diff screen"
tm_wait 3 'legend: grew shrank not significant' && ok "the legend says what the colours mean" ||
	bad "no legend"
if tm_match 'too few seconds'; then ok "one second of baseline: no test, and the line says why"; fi
tm_keys D
tm_wait 3 '%Own' && ok "D again: the top view is back" || bad "D again: no top view"

# now a real baseline: wait for 5 s of samples, mark it, shift the split
sleep 5
tm_keys b
sleep 0.3
kill -USR1 "$SH"
t0=$(date +%s)
tm_keys D
# own Base% Now% Delta*, total Base% Now% Delta*, hot_b (a leaf: the same)
star_row() {
	tm_screen | grep -E "^ +[0-9.]+ +[0-9.]+ +\+[0-9.]+\* +[0-9.]+ +[0-9.]+ +\+[0-9.]+\* +hot_b$"
}
if wait_until 25 star_row; then
	dt=$(($(date +%s) - t0))
	ok "hot_b starred ${dt}s after the shift: $(star_row)"
	# the sign of the change (its size mixes seconds before and after the
	# shift in the window, so it is not a share to compare with 30)
	d=$(star_row | awk '{ d = $6; sub(/\*$/, "", d); print d }')
	check_cmp "$d" '>' 0 "hot_b grew"
	tm_wait 3 '[0-9]\* +hot_a$' && ok "hot_a starred too (it shrank)" || bad "hot_a not starred"
else
	tm_dump "after the shift"
	bad "hot_b never starred after the shift"
fi
tm_match 'Welch' && ok "the line names the per-second test" || bad "no test named"
tm_stop
kill_tree "$SH"

# ---- the caller shift: the leaf stays, its callers trade places -------------------
start_target 0.3 shift_caller 60/30/10
SC=$BG_PID
tm_start 160 40 "$STACKTOP" -r 499 -p "$SC"
tm_wait 8 'leaf_a' || { tm_dump "start"; die "the top view never showed leaf_a"; }
sleep 5
tm_keys b
sleep 0.3
kill -USR1 "$SC"
tm_keys D
# Base% Now% Delta (own), Base% Now% Delta* (total), leaf_b
grew_row() {
	tm_screen | grep -E "^ +[0-9.]+ +[0-9.]+ +[-+][0-9.]+\*? +[0-9.]+ +[0-9.]+ +\+[0-9.]+\* +leaf_b$"
}
if wait_until 25 grew_row; then
	ok "leaf_b's total starred and grown after the shift: $(grew_row)"
	tm_wait 3 '[0-9]\* +leaf_a$' && ok "leaf_a's total starred too (it shrank)" ||
		bad "leaf_a not starred"
else
	tm_dump "after the caller shift"
	bad "leaf_b's total never starred after the shift"
fi
tm_nomatch 'leaf_[ab] \((gone|new)\)' && ok "neither caller is labelled (gone) or (new)" ||
	bad "a caller on both sides is labelled gone or new"
tm_stop
e2e_finish
