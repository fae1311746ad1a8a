#!/bin/bash
# bench/memory.sh — does stacktop's memory follow its window or the run time?
# Not a test: prints stacktop's RSS every 10 s.
#
#   bash bench/memory.sh [SECONDS]      (default 120; 600 for the long run)
#
# Runs `stacktop -b -d 1 -W 10 -r RATE -n SECONDS+3 -- build/targets/newstacks`
# (tests/targets/newstacks.c: every sample is a call stack never seen before,
# 24 levels deep through sixteen functions), its batch output into a file,
# and reads VmRSS of the stacktop process from /proc/PID/status every 10 s.
# With a 10 s window, what stacktop keeps per stack should age out with it:
# after the first 10-20 s the RSS column should stay flat. A column that
# climbs for the whole run is memory that follows the run time.
#
# Environment: BENCH_RATE (default 99 Hz), BENCH_STACKTOP (another binary,
# e.g. a copy built before a change, to compare). Needs root (perf events on
# another process), build/stacktop and build/targets/newstacks.
. "$(dirname "$0")/lib.sh"
DUR=${1:-${BENCH_SECONDS:-120}}
RATE=${BENCH_RATE:-99}
STACKTOP=${BENCH_STACKTOP:-$STACKTOP}
TARGET=$ROOT/build/targets/newstacks
bench_init stacktop-membench
bench_need "$TARGET" targets

rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null; }

"$STACKTOP" -b -d 1 -W 10 -r "$RATE" -n "$((DUR + 3))" -- "$TARGET" >"$TMP/out" 2>"$TMP/err" &
ST=$!
PIDS+=("$ST")

printf '# %s -b -d 1 -W 10 -r %s -n %s -- newstacks\n' "$STACKTOP" "$RATE" "$DUR"
printf '%6s %10s %10s %10s\n' seconds rss_kb hwm_kb samples
t0=$(date +%s)
for ((t = 10; t <= DUR; t += 10)); do
	# sleep to the next multiple of 10 s since the start, not 10 s after
	# the last read: the columns stay on the 10 s grid
	now=$(date +%s)
	[ $((t0 + t)) -gt "$now" ] && sleep $((t0 + t - now))
	kill -0 "$ST" 2>/dev/null || break
	r=$(rss_kb "$ST")
	h=$(hwm_kb "$ST")
	s=$(grep -o 'samples [0-9]*' "$TMP/out" | tail -1 | awk '{ print $2 }')
	printf '%6d %10s %10s %10s\n' "$t" "${r:-?}" "${h:-?}" "${s:-?}"
done
wait "$ST" 2>/dev/null
rc=$?
PIDS=()
if [ "$rc" -ne 0 ]; then
	echo "bench: stacktop exited with status $rc:" >&2
	head -5 "$TMP/err" >&2
	exit 1
fi
