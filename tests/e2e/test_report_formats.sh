#!/bin/bash
# test_report_formats — `stacktop report` reads all three formats `record`
# writes, and shows only what each file knows (issue 17, item 8):
#
#   - speedscope: loads (it failed with "line 1 has no sample count"), with
#     the rate and duration stacktop wrote beside the format;
#   - folded: no rate ("cpu 0 Hz"), no duration ("over 1s"), no "lost" or
#     "unwind ok" (nothing was unwound), sample counts instead of times
#     (OwnTime 0.0s at 98%), no "?" for a module the file does not name;
#   - pprof: its rate and duration (at least -d, at most the wall time the
#     record command took), times.
# Each load gives the same hottest leaf (leaf_a, ~60% of cpuburn's worker).
. "$(dirname "$0")/lib.sh"
start_cpuburn 0.5 1
P=$CB
declare -A WALL
for f in folded pprof speedscope; do
	t0=$(date +%s.%N)
	timeout 20 "$STACKTOP" record -d 1.5 -r 499 --format "$f" -o "$E2E_TMPDIR/p.$f" -p "$P" \
		>"$E2E_TMPDIR/rec.$f" 2>&1 || bad "record --format $f exited $?: $(tail -n 1 "$E2E_TMPDIR/rec.$f")"
	WALL[$f]=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%d", b - a + 1 }')
done

# leaf_pct FILE: %Own of leaf_a in the report's table
leaf_pct() { awk '$5 == "leaf_a" { print $1; exit }' "$1"; }

for f in folded pprof speedscope; do
	OUT=$E2E_TMPDIR/rep.$f
	if timeout 20 "$STACKTOP" report -b "$E2E_TMPDIR/p.$f" >"$OUT" 2>&1; then
		ok "report reads its own $f file"
	else
		bad "report on $f exited $?: $(head -n 2 "$OUT")"
		continue
	fi
	pct=$(leaf_pct "$OUT")
	check_share "${pct:-}" 60 "$(samples_in "$OUT")" "$f: leaf_a %Own"
	sed -n 2p "$OUT" | grep -qE 'lost|unwind ok' && bad "$f: line 2 claims unwinding: $(sed -n 2p "$OUT")" ||
		ok "$f: no lost/unwind counters for a saved profile"
done

OUT=$E2E_TMPDIR/rep.folded
head -n 1 "$OUT" | grep -q ' Hz' && bad "folded: a rate it cannot know: $(head -n 1 "$OUT")" || ok "folded: no rate"
sed -n 2p "$OUT" | grep -q ' over ' && bad "folded: a duration it cannot know: $(sed -n 2p "$OUT")" || ok "folded: no duration"
grep -q 'OwnSamp  TotalSamp' "$OUT" && ok "folded: sample counts, not times" || bad "folded: columns: $(grep '%Own' "$OUT")"
awk '$5 == "leaf_a"' "$OUT" | grep -q '?' && bad "folded: module '?' on leaf_a" || ok "folded: no invented module"

for f in pprof speedscope; do
	OUT=$E2E_TMPDIR/rep.$f
	head -n 1 "$OUT" | grep -q 'cpu 499 Hz' && ok "$f: its rate (-r 499)" || bad "$f: line 1: $(head -n 1 "$OUT")"
	s=$(sed -n 2p "$OUT" | grep -oE 'over [0-9]+s' | grep -oE '[0-9]+')
	# At least the 1.5 s asked for (rounded), at most the wall time the
	# record command took (rounded up): the file's duration is its own.
	check_cmp "${s:-0}" '>=' 1 "$f: the recorded duration (-d 1.5)"
	check_cmp "${s:-99}" '<=' "${WALL[$f]}" "$f: the recorded duration, within record's wall time"
	grep -q 'OwnTime  TotalTime' "$OUT" && ok "$f: times" || bad "$f: columns: $(grep '%Own' "$OUT")"
done
e2e_finish
