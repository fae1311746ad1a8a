#!/bin/bash
# bench/coverage.sh — sampling coverage and scale: how much of a target's
# CPU time the profiler samples, what it loses and what it costs itself.
#
#   bash bench/coverage.sh [SECONDS]          default 5 s a run
#   BEFORE=/path/to/old/stacktop bash bench/coverage.sh   adds its rows
#
# Targets (tests/targets): shortthreads with 1.5 ms and 60 ms threads (1.5
# cores of short_job in threads that exit), and bigpool (1,000 threads, 2
# busy, 998 blocked). Each profiler attaches at 99 Hz (-p PID) for SECONDS:
# stacktop (this build: per-CPU events where allowed), the same with
# --events inherit (per-task inherited events), the BEFORE build if given, and
# `perf record -F 99 --call-graph dwarf -p PID` if perf is installed.
#
# coverage = samples / (the target's CPU seconds during the run x 99);
# lost = lost records (stacktop's header; perf: LOST events);
# cpu% = the profiler's own utime+stime after its first second, % of one
# core. Not a test: nothing passes or fails.
. "$(dirname "$0")/lib.sh"
bench_init coverage
SECS=${1:-5}
bench_need "$ROOT/build/targets/shortthreads" targets
bench_need "$ROOT/build/targets/bigpool" targets

# run_prof KIND BIN TARGET_PID [ARGS...]: prints "samples lost cpu% target_ticks".
run_prof() {
	local kind=$1 bin=$2 tp=$3 pp c0 c1 t0 t1 tc0 out=$TMP/out.$RANDOM
	shift 3
	tc0=$(cpu_ticks "$tp")
	if [ "$kind" = perf ]; then
		perf record -q -F 99 --call-graph dwarf -o "$out.data" -p "$tp" -- sleep "$SECS" \
			>/dev/null 2>&1 &
	else
		"$bin" -b -n "$SECS" -d 1 -r 99 "$@" -p "$tp" >"$out" 2>&1 &
	fi
	pp=$!
	PIDS+=("$pp")
	sleep 1
	c0=$(cpu_ticks "$pp")
	t0=$(date +%s.%N)
	c1=$c0 t1=$t0
	while [ -d "/proc/$pp" ] && [ "$(awk '{ print $3 }' "/proc/$pp/stat" 2>/dev/null)" != Z ]; do
		c=$(cpu_ticks "$pp")
		[ "$c" -gt 0 ] && c1=$c && t1=$(date +%s.%N)
		sleep 0.1
	done
	wait "$pp" 2>/dev/null
	local tcpu=$(($(cpu_ticks "$tp") - tc0))
	local samples lost
	if [ "$kind" = perf ]; then
		local st
		st=$(perf report -i "$out.data" --stats 2>/dev/null)
		samples=$(awk '/SAMPLE events:/ { print $3; exit }' <<<"$st")
		lost=$(awk '/LOST events:/ { print $3; exit }' <<<"$st")
	else
		samples=$(grep -E '^samples [0-9,]+' "$out" | tail -1 | awk '{ gsub(",", "", $2); print $2 }')
		lost=$(grep -oE 'lost [0-9,]+' "$out" | tail -1 | awk '{ gsub(",", "", $2); print $2 }')
	fi
	awk -v a="$c0" -v b="$c1" -v t0="$t0" -v t1="$t1" -v hz="$HZ" -v s="${samples:-0}" \
		-v l="${lost:-0}" -v tc="$tcpu" 'BEGIN { d = t1 - t0; printf "%d %d %.1f %d\n", s, l,
		(d > 0 ? (b - a) / hz / d * 100 : 0), tc }'
}

printf '%-22s %-16s %8s %8s %9s %6s %6s\n' target profiler cpu-s samples coverage lost cpu%
row() { # TARGET-LABEL ARGS...: one target, every profiler
	local label=$1 tp
	shift
	"$ROOT/build/targets/$@" &
	tp=$!
	PIDS+=("$tp")
	sleep 1.5
	local kinds=("stacktop:$STACKTOP" "stacktop-inherit:$STACKTOP")
	[ -n "${BEFORE:-}" ] && kinds+=("stacktop-before:$BEFORE")
	command -v perf >/dev/null && kinds+=("perf:perf")
	for k in "${kinds[@]}"; do
		local name=${k%%:*} bin=${k#*:} s l c tc
		local extra=()
		[ "$name" = stacktop-inherit ] && extra=(--events inherit)
		read -r s l c tc < <(run_prof "$([ "$name" = perf ] && echo perf || echo st)" "$bin" "$tp" \
			"${extra[@]}")
		awk -v n="$label" -v p="$name" -v s="$s" -v l="$l" -v c="$c" -v tc="$tc" -v hz="$HZ" \
			'BEGIN { cpu = tc / hz; printf "%-22s %-16s %8.2f %8d %8.0f%% %6d %6.1f\n", n, p,
			cpu, s, (cpu > 0 ? 100 * s / (cpu * 99) : 0), l, c }'
	done
	kill -KILL "$tp" 2>/dev/null
	wait "$tp" 2>/dev/null
}

row "shortthreads-1.5ms" shortthreads 0 1.5 1.5
row "shortthreads-60ms" shortthreads 0 1.5 60
row "bigpool-1000" bigpool 1000 2
