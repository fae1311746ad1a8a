#!/bin/bash
# bench/cost.sh — what does watching cost per second, and does it grow with
# the machine? Not a test: prints a table.
#
#   bash bench/cost.sh [SECONDS]          (default 30 s per phase)
#   BENCH_STACKTOP_OLD=/tmp/stacktop-old bash bench/cost.sh   (adds its rows)
#   BENCH_SIZE=200x60 BENCH_RATE=999 BENCH_CROWD=10000 bash bench/cost.sh
#
# One cpuburn process with 2 workers runs throughout. Each profiler watches
# it for SECONDS, twice: on the machine as it is ("quiet"), and with
# BENCH_CROWD (2000) extra sleeping processes (build/targets/sleepers)
# ("crowd"). stacktop runs as the TUI in a private tmux server (BENCH_SIZE,
# default 80x24) at BENCH_RATE (99) Hz with the default 1 s refresh; perf
# top (--stdio, -d 1) and perf record (DWARF call graphs) watch the same
# target when perf is installed. For every phase: the profiler's CPU time
# from WARM (3) seconds after its start to the end, per second of wall
# time: from /proc/PID/task/*/schedstat (ns) and from utime+stime in
# /proc/PID/stat (clock ticks, coarse). Needs root, build/stacktop and
# build/targets/{cpuburn,sleepers}. See bench/README.md.
. "$(dirname "$0")/lib.sh"
STACKTOP=${BENCH_STACKTOP:-$STACKTOP}
DUR=${1:-${BENCH_SECONDS:-30}}
RATE=${BENCH_RATE:-99}
SIZE=${BENCH_SIZE:-80x24}
CROWD=${BENCH_CROWD:-2000}
WARM=3
CPUBURN=$ROOT/build/targets/cpuburn
SLEEPERS=$ROOT/build/targets/sleepers
TMUX_SOCK=stacktop-cost-$$
bench_on_exit() {
	tmux -L "$TMUX_SOCK" kill-server 2>/dev/null
	exec 3>&- 2>/dev/null
}
bench_init stacktop-cost
bench_need "$CPUBURN" targets
bench_need "$SLEEPERS" targets
command -v tmux >/dev/null || { echo "bench: tmux is needed" >&2; exit 1; }
[ "$DUR" -gt $((WARM + 2)) ] || { echo "bench: SECONDS must be > $((WARM + 2))" >&2; exit 1; }

procs_now() { ls -d /proc/[0-9]* 2>/dev/null | wc -l; }

RESULTS=()

# measure NAME LOAD PID: CPU of PID from WARM s to DUR s into RESULTS
# (samples/s: filled in by the caller through SAMPLES, after the run).
measure() {
	local name=$1 load=$2 pid=$3 ns1 t1 ns2 t2 w1 w2 prev cur steps=()
	sleep "$WARM"
	ns1=$(cpu_ns "$pid")
	t1=$(cpu_ticks "$pid")
	w1=$(date +%s%N)
	prev=$ns1
	for _ in $(seq $((DUR - WARM))); do # one-second steps, for the median
		sleep 1
		cur=$(cpu_ns "$pid")
		steps+=($((cur - prev)))
		prev=$cur
	done
	ns2=$(cpu_ns "$pid")
	t2=$(cpu_ticks "$pid")
	w2=$(date +%s%N)
	if ! kill -0 "$pid" 2>/dev/null; then
		echo "bench: $name exited early" >&2
		RESULTS+=("$name|$load|-|-|-|-")
		return
	fi
	local med
	med=$(printf '%s\n' "${steps[@]}" | sort -n | awk '{ v[NR] = $1 } END {
		printf "%.2f", (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) / 1e6 }')
	RESULTS+=("$name|$load|$(awk -v ns=$((ns2 - ns1)) -v t=$((t2 - t1)) -v hz="$HZ" \
		-v w=$((w2 - w1)) -v np="$(procs_now)" 'BEGIN {
		printf "%.2f|%.2f|%d", ns / 1e6 / (w / 1e9), t * 1000 / hz / (w / 1e9), np }')|$med")
}

# The samples a profiler took in the phase, per second of it, appended to
# the last result.
add_rate() {
	local n=${1:-0}
	RESULTS[-1]+="|$(awk -v n="$n" -v d="$DUR" 'BEGIN { if (n > 0) printf "%.0f", n / d; else print "-" }')"
}

# stacktop BINARY NAME LOAD: the TUI in tmux, exec'd so the pane pid is it.
# Its header says "samples N in Ns" (the window is longer than the phase).
run_stacktop() {
	local bin=$1 name=$2 load=$3 pid
	TERM=xterm-256color tmux -L "$TMUX_SOCK" -f /dev/null new-session -d -s cost \
		-x "${SIZE%x*}" -y "${SIZE#*x}" "exec $bin -r $RATE -p $CB" || {
		echo "bench: tmux failed" >&2
		return
	}
	tmux -L "$TMUX_SOCK" set -g status off >/dev/null
	pid=$(tmux -L "$TMUX_SOCK" list-panes -t cost -F '#{pane_pid}')
	measure "$name" "$load" "$pid"
	add_rate "$(tmux -L "$TMUX_SOCK" capture-pane -p -t cost |
		awk '/^samples [0-9]/ { gsub(",", "", $2); print $2; exit }')"
	tmux -L "$TMUX_SOCK" send-keys -t cost q
	for _ in $(seq 30); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null
	tmux -L "$TMUX_SOCK" kill-server 2>/dev/null
}

run_bg() { # NAME LOAD CMD...: a profiler in the background, stdin the silent FIFO
	local name=$1 load=$2 pp
	shift 2
	"$@" >"$TMP/$name-$load.out" 2>&1 <&3 &
	pp=$!
	PIDS+=("$pp")
	measure "$name" "$load" "$pp"
	bench_stop "$pp" 5
	case $name in
	perf-top) # the mean of its "PerfTop: N irqs/sec" refreshes, times the phase
		add_rate "$(awk -v d="$DUR" '/PerfTop:/ { for (i = 1; i < NF; i++) if ($(i + 1) == "irqs/sec") { s += $i; k++ } }
			END { if (k) printf "%.0f", s / k * d }' "$TMP/$name-$load.out")" ;;
	perf-record)
		add_rate "$(perf report -i "$TMP/perf-$load.data" --stats 2>/dev/null |
			awk '/SAMPLE events:/ { print $3; exit }')" ;;
	*) add_rate 0 ;;
	esac
}

run_all() { # LOAD
	[ -n "${BENCH_STACKTOP_OLD:-}" ] && run_stacktop "$BENCH_STACKTOP_OLD" stacktop-old "$1"
	run_stacktop "$STACKTOP" stacktop "$1"
	if [ "$HAVE_PERF" = 1 ]; then
		run_bg perf-top "$1" perf top -p "$CB" -F "$RATE" --call-graph dwarf --stdio -d 1
		run_bg perf-record "$1" perf record -q -F "$RATE" --call-graph dwarf -p "$CB" \
			-o "$TMP/perf-$1.data"
	fi
}

# ---- run ---------------------------------------------------------------------------

mkfifo "$TMP/stdin"
exec 3<>"$TMP/stdin"
"$CPUBURN" 2 >"$TMP/cpuburn.out" 2>&1 &
CB=$!
PIDS+=("$CB")
sleep 1
[ "$HAVE_PERF" = 1 ] || echo "bench: perf not installed; skipping the perf rows" >&2
echo "bench: cpuburn 2 workers (pid $CB), ${RATE} Hz, TUI ${SIZE}, $DUR s per phase," \
	"$(nproc) CPUs, $(procs_now) processes, load $(cut -d' ' -f1-3 /proc/loadavg)"

run_all quiet

"$SLEEPERS" "$CROWD" >"$TMP/sleepers.out" 2>&1 &
SP=$!
PIDS+=("$SP")
for _ in $(seq 300); do
	grep -q ready "$TMP/sleepers.out" && break
	sleep 0.1
done
grep -q ready "$TMP/sleepers.out" || { echo "bench: sleepers did not start" >&2; exit 1; }
run_all crowd
kill -KILL "$SP" 2>/dev/null # its children follow (PR_SET_PDEATHSIG)
wait "$SP" 2>/dev/null
for _ in $(seq 100); do # until init has reaped them
	[ "$(procs_now)" -lt $((CROWD / 2)) ] && break
	sleep 0.1
done

# ---- table ---------------------------------------------------------------------------

echo
printf '%-14s %-6s %10s %14s %10s %9s %11s %10s\n' profiler load "cpu-ms/s" "cpu-ms/s(tck)" \
	"median" processes "crowd/quiet" samples/s
for r in "${RESULTS[@]}"; do
	IFS='|' read -r name load ms tck np med rate <<<"$r"
	ratio=-
	if [ "$load" = crowd ]; then
		for q in "${RESULTS[@]}"; do
			IFS='|' read -r qn ql _ _ _ qmed _ <<<"$q"
			[ "$qn" = "$name" ] && [ "$ql" = quiet ] &&
				ratio=$(awk -v a="$med" -v b="$qmed" 'BEGIN { if (b > 0 && a != "-") printf "%.2f", a / b; else print "-" }')
		done
	fi
	printf '%-14s %-6s %10s %14s %10s %9s %11s %10s\n' "$name" "$load" "$ms" "$tck" "$med" "$np" \
		"$ratio" "${rate:--}"
done
echo
echo "cpu-ms/s: the profiler's CPU ms per wall second after the first $WARM s (schedstat, ns);"
echo "(tck): the same from utime+stime in /proc/PID/stat (clock ticks of $((1000 / HZ)) ms); median:"
echo "the median one-second step (a one-off, like loading kallsyms at the first kernel frame, left out)."
echo "processes: how many were on the machine at the end of the phase; crowd: +$CROWD sleeping;"
echo "crowd/quiet: of the medians."
echo "samples/s: samples the profiler took over the phase (stacktop's header; perf top's irqs/sec;"
echo "perf report --stats), per second: cpuburn gets less than 2 CPUs on a busy machine, so fewer."
