#!/bin/bash
# bench/wall.sh — what does wall-clock (ptrace) sampling cost the target?
# Not a test: prints a table.
#
#   bash bench/wall.sh [SECONDS]       (default 5 s per run)
#
# The target is `waiter --bench N SECONDS` (tests/targets/waiter.c): N
# threads that each do ~100 µs of arithmetic and sleep N x 0.4 ms, so the
# process wants about a quarter of a CPU whatever N is and most threads are
# asleep at any moment. It prints rounds/s at the end: fixed work per round,
# so a profiler that stops threads (or takes the CPU) lowers it.
#
# For N = 8 and 200, the target runs alone, under `stacktop -w` at the
# default wall rate (19 Hz per thread) and at 99 Hz, and alone again; the
# two alone runs give the baseline (and show the noise). Columns:
#   rounds/s      the target's throughput
#   slowdown      1 - rounds/s / baseline
#   pause         mean time a thread is held stopped per ptrace stop
#                 (stacktop's header: the stop seen → resumed)
#   samples/s     samples delivered (stops + reused stacks of threads that
#                 did not run)
#   stacktop CPU  stacktop's own CPU time over the run, % of one core
# Needs root (ptrace of another process), build/stacktop and build/targets/waiter.
. "$(dirname "$0")/lib.sh"
DUR=${1:-${BENCH_SECONDS:-5}}
WAITER=$ROOT/build/targets/waiter
bench_init stacktop-wallbench
bench_need "$WAITER" targets

rounds_of() { sed -n 's/.*rounds_per_s=\([0-9.]*\).*/\1/p' "$1"; }

# alone N: rounds/s of the target by itself
alone() {
	"$WAITER" --bench "$1" "$DUR" >"$TMP/alone.out"
	rounds_of "$TMP/alone.out"
}

# profiled N RATE: sets TP, PAUSE, SPS, CPU
profiled() {
	local n=$1 rate=$2 w st t0 t1 c0 c1 k
	"$WAITER" --bench "$n" "$DUR" >"$TMP/w.out" &
	w=$!
	PIDS+=("$w")
	for k in $(seq 50); do
		[ "$(ls /proc/$w/task 2>/dev/null | wc -l)" -gt "$n" ] && break
		sleep 0.02
	done
	"$STACKTOP" -b -w -r "$rate" -d 1 -n 1000 -p "$w" >"$TMP/st.out" 2>&1 &
	st=$!
	PIDS+=("$st")
	t0=$(date +%s%N)
	c0=$(cpu_ticks "$st")
	wait "$w"
	c1=$(cpu_ticks "$st")
	t1=$(date +%s%N)
	kill -TERM "$st" 2>/dev/null
	wait "$st" 2>/dev/null
	TP=$(rounds_of "$TMP/w.out")
	grep -q "pause" "$TMP/st.out" || { echo "bench: stacktop -w -r $rate on $n threads printed:" >&2; head -c 600 "$TMP/st.out" >&2; }
	PAUSE=$(grep -o 'pause [0-9.]* µs' "$TMP/st.out" | tail -n 1 | grep -o '[0-9.]*')
	# the last full second's rate, from the header: "samples N in Ss (R/s ..."
	SPS=$(grep -o '([0-9.]*/s' "$TMP/st.out" | tail -n 2 | head -n 1 | tr -dc '0-9.')
	CPU=$(awk -v c=$((c1 - c0)) -v hz="$HZ" -v ns=$((t1 - t0)) 'BEGIN { printf "%.1f", 100 * c / hz / (ns / 1e9) }')
}

printf 'wall-mode cost, %s s per run, %s CPUs, load %s\n\n' "$DUR" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-8s %-10s %10s %9s %10s %10s %13s\n' threads profiler rounds/s slowdown pause samples/s "stacktop CPU"
for n in 8 200; do
	a1=$(alone "$n")
	rows=()
	for rate in 19 99; do
		profiled "$n" "$rate"
		rows+=("$rate|$TP|${PAUSE:--}|${SPS:--}|$CPU")
	done
	a2=$(alone "$n")
	base=$(awk -v a="$a1" -v b="$a2" 'BEGIN { printf "%.1f", (a + b) / 2 }')
	printf '%-8s %-10s %10s %9s %10s %10s %13s\n' "$n" "alone" "$a1" "-" "-" "-" "-"
	for r in "${rows[@]}"; do
		IFS='|' read -r rate tp pause sps cpu <<<"$r"
		slow=$(awk -v t="$tp" -v b="$base" 'BEGIN { if (b > 0 && t != "") printf "%.1f%%", 100 * (1 - t / b); else print "-" }')
		label="-w $rate Hz"
		[ "$rate" = 19 ] && label="-w (19 Hz)"
		printf '%-8s %-10s %10s %9s %8s µs %10s %12s%%\n' "$n" "$label" "$tp" "$slow" "$pause" "$sps" "$cpu"
	done
	printf '%-8s %-10s %10s %9s %10s %10s %13s\n' "$n" "alone" "$a2" "-" "-" "-" "-"
done
printf '\nslowdown: against the mean of the two alone runs (their spread is the noise).\n'
