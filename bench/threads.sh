#!/bin/bash
# bench/threads.sh — does stacktop's cost grow with the target's threads?
# Not a test: prints a table.
#
#   bash bench/threads.sh [SECONDS]              (default 20 s per row)
#   BENCH_SWEEP="100 1000 10000" BENCH_RATE=99 bash bench/threads.sh
#   BENCH_STACKTOP=/tmp/stacktop-old bash bench/threads.sh   (an older build)
#
# For each thread count N: build/targets/wakers N (2 threads spin, the
# N-2 others sleep and wake every 2 s, N/2 wake-ups a second). stacktop
# watches it in batch mode (cpu mode, BENCH_RATE Hz, 1 s refresh) for
# SECONDS; then perf top (--stdio, -d 1) watches the same target for the
# same time, when perf is installed. Per row: the profiler's CPU (% of one
# core, schedstat of all its threads from WARM s to the end), its procfs
# reads a second (syscr of /proc/PID/io over the same span: every read and
# pread, most of them procfs at this size; perf top's are its own reads),
# peak RSS (VmHWM), and for stacktop the lost records and the thread count
# its last header printed. Needs root and build/{stacktop,targets/wakers}.
. "$(dirname "$0")/lib.sh"
STACKTOP=${BENCH_STACKTOP:-$STACKTOP}
DUR=${1:-${BENCH_SECONDS:-20}}
RATE=${BENCH_RATE:-99}
SWEEP=${BENCH_SWEEP:-100 1000 10000}
WARM=3
WAKERS=$ROOT/build/targets/wakers
bench_on_exit() { exec 3>&- 2>/dev/null; }
bench_init stacktop-threads
bench_need "$WAKERS" targets
[ "$DUR" -gt $((WARM + 2)) ] || { echo "bench: SECONDS must be > $((WARM + 2))" >&2; exit 1; }



# perf top --stdio spins on a stdin at end of file: both get a FIFO that
# stays open and silent (as in bench/run.sh).
mkfifo "$TMP/stdin"
exec 3<>"$TMP/stdin"
printf '%-8s %-9s %7s %8s %7s %6s %s\n' threads profiler "CPU" "reads/s" "RSS MiB" lost header
for n in $SWEEP; do
	"$WAKERS" "$n" >/dev/null 2>&1 &
	tpid=$!
	PIDS+=("$tpid")
	for _ in $(seq 100); do # wait for its threads
		[ "$(ls /proc/$tpid/task 2>/dev/null | wc -l)" -ge "$n" ] && break
		sleep 0.1
	done
	"$STACKTOP" -b -p "$tpid" -r "$RATE" -d 1 -n $((DUR + 2)) >"$TMP/out.$n" 2>&1 <&3 &
	spid=$!
	PIDS+=("$spid")
	row=$(watch_pid "$spid")
	bench_stop "$spid" 5
	lost=$(grep -o '[0-9,]* lost' "$TMP/out.$n" | tail -1 | tr -d ', lost')
	hdr=$(grep -o '[0-9,]* threads' "$TMP/out.$n" | tail -1)
	printf '%-8s %-9s %s %6s %s\n' "$n" stacktop "$row" "${lost:-0}" "${hdr:-?}"
	if [ "$HAVE_PERF" = 1 ]; then
		perf top --stdio -d 1 -F "$RATE" -p "$tpid" -g >"$TMP/perf.$n" 2>&1 <&3 &
		ppid=$!
		PIDS+=("$ppid")
		row=$(watch_pid "$ppid")
		bench_stop "$ppid" 5
		printf '%-8s %-9s %s %6s %s\n' "$n" "perf top" "$row" - -
	fi
	kill -KILL "$tpid" 2>/dev/null
	wait "$tpid" 2>/dev/null
done
