#!/bin/bash
# bench/machine.sh — what the whole-machine mode costs on a box full of
# processes. Not a test: prints a table.
#
#   bash bench/machine.sh [SECONDS]          (default 20 s per row)
#   BENCH_SLEEPERS=5000 BENCH_RATE=99 bash bench/machine.sh
#   BENCH_STACKTOP=/tmp/stacktop-old bash bench/machine.sh   (an older build)
#
# The box: BENCH_SLEEPERS (2000) extra processes that only sleep, plus one
# build/targets/cpuburn worker and one build/targets/floor (the busy ones
# the process table must name). Then, one after the other for SECONDS each
# and on the same box: `stacktop -a -b -d 1` (cpu mode, BENCH_RATE Hz),
# `perf top -a --stdio -d 1 -g` at the same rate when perf is installed,
# and `top -b -d 1` (procps: every process each second, no stacks). Per
# row: the tool's CPU (% of one core, schedstat of all its threads from
# WARM s to the end), its read system calls a second (most of them procfs
# here), its peak RSS (VmHWM), and for stacktop the records lost and the
# processes its last process table counted. Needs root and build/stacktop,
# build/targets/{cpuburn,floor}.
. "$(dirname "$0")/lib.sh"
STACKTOP=${BENCH_STACKTOP:-$STACKTOP}
DUR=${1:-${BENCH_SECONDS:-20}}
RATE=${BENCH_RATE:-99}
SLEEPERS=${BENCH_SLEEPERS:-2000}
WARM=3
bench_on_exit() {
	exec 3>&- 2>/dev/null
	[ -n "${SLEEP_PGID:-}" ] && kill -KILL -- -"$SLEEP_PGID" 2>/dev/null
}
bench_init stacktop-machine
bench_need "$ROOT/build/targets/cpuburn" targets
bench_need "$ROOT/build/targets/floor" targets
[ "$DUR" -gt $((WARM + 2)) ] || { echo "bench: SECONDS must be > $((WARM + 2))" >&2; exit 1; }


# The sleepers: one process group, so the exit trap ends them in one kill.
setsid bash -c "for i in \$(seq $SLEEPERS); do sleep 3600 & done; wait" </dev/null >/dev/null 2>&1 &
SLEEP_PGID=$!
for _ in $(seq 300); do
	[ "$(pgrep -c -g "$SLEEP_PGID")" -gt "$SLEEPERS" ] && break
	sleep 0.1
done
"$ROOT/build/targets/cpuburn" 1 >/dev/null 2>&1 &
PIDS+=($!)
"$ROOT/build/targets/floor" >/dev/null 2>&1 &
PIDS+=($!)
echo "box: $(nproc) CPUs, $(ls -d /proc/[0-9]* | wc -l) processes ($SLEEPERS sleepers), $RATE Hz, $DUR s a row"

# perf top --stdio spins on a stdin at end of file: every tool gets a FIFO
# that stays open and silent (as in bench/run.sh).
mkfifo "$TMP/stdin"
exec 3<>"$TMP/stdin"
printf '%-9s %7s %8s %7s %6s %s\n' tool "CPU" "reads/s" "RSS MiB" lost processes
"$STACKTOP" -a -b -r "$RATE" -d 1 -n $((DUR + 2)) >"$TMP/out" 2>&1 <&3 &
spid=$!
PIDS+=("$spid")
row=$(watch_pid "$spid")
bench_stop "$spid" 5
lost=$(grep -o '[0-9,]* lost' "$TMP/out" | tail -1 | tr -d ', lost')
procs=$(grep -o '[0-9,]* processes' "$TMP/out" | tail -1 | tr -d ', processes')
printf '%-9s %s %6s %s\n' stacktop "$row" "${lost:-0}" "${procs:-?}"
if [ "$HAVE_PERF" = 1 ]; then
	perf top -a --stdio -d 1 -F "$RATE" -g >"$TMP/perf" 2>&1 <&3 &
	ppid=$!
	PIDS+=("$ppid")
	row=$(watch_pid "$ppid")
	bench_stop "$ppid" 5
	printf '%-9s %s %6s %s\n' "perf top" "$row" - -
fi
if command -v top >/dev/null; then
	top -b -d 1 -n $((DUR + 2)) >"$TMP/top" 2>&1 <&3 &
	tpid=$!
	PIDS+=("$tpid")
	row=$(watch_pid "$tpid")
	bench_stop "$tpid" 5
	printf '%-9s %s %6s %s\n' top "$row" - -
fi
