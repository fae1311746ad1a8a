#!/bin/bash
# bench/switch.sh — how much of a switch-heavy target each kind of cpu-clock
# event puts on the kernel's finish_task_switch (issue 24, item 3). Not a
# test: prints one line per profiler (bench/README.md shows runs).
#
#   bash bench/switch.sh [SECONDS [UNITS]]   (5 s each, pingpong's 200 units)
#
# The target is pingpong (2 pongs here, their pings in a child process,
# thousands of switches a second between the two). One after the other, on
# the same target, each at 499 Hz with a fixed period:
#   stacktop           per-CPU events, BPF process filter (the default)
#   stacktop-inherit   --events inherit: per-task events
#   perf-p             perf record -p: per-task events
#   perf-a             perf record -a: per-CPU events, the target's samples
# The figure: finish_task_switch's share of the target's samples as the
# leaf (stacktop's %Own), and the samples it is of. Per-task clocks and
# per-CPU clocks differ here by design: a per-task clock that expires while
# its task is being switched out (interrupts off) is saved as overdue and
# re-armed 10 µs after the task next runs, which lands at the end of the
# switch-in on a VM (perf_swevent_start_hrtimer); a per-CPU clock that
# expires with interrupts off fires where they are turned back on, in
# whatever task then runs (finish_task_switch after a switch,
# _raw_spin_unlock_irqrestore after a wake-up).
. "$(dirname "$0")/lib.sh"
SECS=${1:-5}
UNITS=${2:-200}
bench_init stacktop-switch
bench_need "$ROOT/build/targets/pingpong" targets
command -v perf >/dev/null || { echo "bench: perf not installed" >&2; exit 1; }
PERIOD=$((1000000000 / 499))

"$ROOT/build/targets/pingpong" 2 "$UNITS" &
T=$!
PIDS+=("$T")
sleep 0.5

# share OUT: "fts% of N" from a batch output
share() {
	awk '/^samples [0-9]/ && !n { n = $2; gsub(",", "", n) }
		/finish_task_switch/ && f == "" { f = $1 }
		END { printf "%5.1f%% of %d", f + 0, n }' "$1"
}
# perf_share DATA: the same from a perf.data, the target's samples only
perf_share() {
	perf script -i "$1" -F pid,ip,sym 2>/dev/null | awk -v p="$T" '$1 == p { n++
		if ($3 ~ /^finish_task_switch/) f++ } END { printf "%5.1f%% of %d", (n ? 100 * f / n : 0), n }'
}

echo "bench: switch, pingpong 2 $UNITS, $SECS s each, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-18s %s\n' profiler finish_task_switch
"$STACKTOP" -b -r 499 -d "$SECS" -n 1 -l 60 -p "$T" >"$TMP/st.out" 2>&1
printf '%-18s %s\n' stacktop "$(share "$TMP/st.out")"
"$STACKTOP" -b -r 499 -d "$SECS" -n 1 -l 60 --events inherit -p "$T" >"$TMP/inh.out" 2>&1
printf '%-18s %s\n' stacktop-inherit "$(share "$TMP/inh.out")"
perf record -q -e cpu-clock -c "$PERIOD" -p "$T" -o "$TMP/p.data" -- sleep "$SECS" >/dev/null 2>&1
printf '%-18s %s\n' perf-p "$(perf_share "$TMP/p.data")"
perf record -q -e cpu-clock -c "$PERIOD" -a -o "$TMP/a.data" -- sleep "$SECS" >/dev/null 2>&1
printf '%-18s %s\n' perf-a "$(perf_share "$TMP/a.data")"
