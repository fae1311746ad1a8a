#!/bin/bash
# bench/memtrace.sh — what the memory view costs the target: rounds of
# mmap + one page fault + munmap (tests/targets/mapchurn) alone, with
# stacktop's memory view attached (-b --view memory), and with perf record
# on the same tracepoints with the same 16 KiB stack copies; flat out
# (stacktop then samples one mmap in N) and paced at 800 rounds a second
# (under the 1,000/s threshold: every call traced). The figure is the
# target's CPU time per round (immune to a busy machine, unlike the rate),
# median of the seconds while the tracer ran. Then the cost of reading
# smaps for 100, 1,000 and 10,000 mappings (tests/targets/manymaps).
#
#   bench/memtrace.sh [SECONDS]      default 8
. "$(dirname "$0")/lib.sh"
bench_init memtrace
SECS=${1:-8}
CHURN=$ROOT/build/targets/mapchurn
MANY=$ROOT/build/targets/manymaps
bench_need "$CHURN" targets
bench_need "$MANY" targets

# Median of column $2 of the per-second lines 3..SECS-1 (the tracer is
# attached by then).
median() { sed -n "3,$((SECS - 1))p" "$1" | awk -v c="$2" '{print $c}' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

run() { # name, then the tracer command with PID for the target's pid
	local name=$1
	shift
	"$CHURN" "$SECS" 64 "$RATE" >"$TMP/$name.out" &
	local pid=$!
	PIDS+=("$pid")
	local cmd=("${@//PID/$pid}") tp=
	if [ ${#cmd[@]} -gt 0 ]; then
		"${cmd[@]}" >"$TMP/$name.tracer" 2>&1 &
		tp=$!
		PIDS+=("$tp")
	fi
	wait "$pid"
	[ -n "$tp" ] && bench_stop "$tp" 5
	local m c
	m=$(median "$TMP/$name.out" 2)
	c=$(median "$TMP/$name.out" 4)
	printf '  %-34s %8s rounds/s %7s us CPU a round' "$name" "$m" "$c"
	[ -n "${BASE:-}" ] && awk -v b="$BASE" -v c="$c" 'BEGIN {printf "  +%.2f us (%+.0f%%)", c-b, (c-b)*100/b}'
	echo
	[ "$name" = alone ] && BASE=$c
	return 0
}

for RATE in 0 800; do
	BASE=
	[ "$RATE" = 0 ] && echo "mapchurn flat out: mmap 64 KiB + 1 page fault + munmap, ${SECS}s each" ||
		echo "mapchurn at $RATE rounds/s (stacktop traces every call)"
	run alone
	run "stacktop -b --view memory" "$STACKTOP" -b -d 1 --view memory -p PID
	grep -ao 'mmap sampled 1 in [0-9]*' "$TMP/stacktop -b --view memory.tracer" | tail -1 |
		sed 's/^/    (stacktop: /; s/$/)/'
	if command -v perf >/dev/null; then
		run "perf record -e sys_exit_* (stacks)" perf record -q -o "$TMP/perf.data" \
			-e syscalls:sys_exit_mmap,syscalls:sys_exit_munmap,syscalls:sys_exit_brk,syscalls:sys_exit_mremap \
			--call-graph dwarf,16384 -p PID
	fi
done

echo
echo "smaps read (median of 10):"
for n in 100 1000 10000; do
	"$MANY" "$n" >"$TMP/many.out" &
	pid=$!
	PIDS+=("$pid")
	for _ in $(seq 100); do grep -q ready "$TMP/many.out" && break; sleep 0.1; done
	python3 - "$pid" <<'PY'
import sys, time
pid = sys.argv[1]
def med(path):
    ts = []
    for _ in range(10):
        t = time.perf_counter()
        with open(path, 'rb') as f:
            f.read()
        ts.append(time.perf_counter() - t)
    ts.sort()
    return ts[5] * 1e3
n = sum(1 for _ in open(f'/proc/{pid}/maps'))
print(f'  {n:6d} mappings: smaps {med(f"/proc/{pid}/smaps"):7.2f} ms   smaps_rollup {med(f"/proc/{pid}/smaps_rollup"):6.2f} ms')
PY
	kill "$pid"
	wait "$pid" 2>/dev/null
done
