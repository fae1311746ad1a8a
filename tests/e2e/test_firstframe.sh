#!/bin/bash
# test_firstframe — the first frame of a batch run says what the run so far
# measured (issue 24, items 4 and 5):
#   -b -n 1 -d 0.5 on cpuburn (two spinning workers): the CPU line is a
#   figure above 0% (or "measuring"), never "CPU now 0%", the MEM line never
#   "MEM 0 B", and no "stacktop is behind" from start-up cost alone (it came
#   in 9 runs of 15); five runs, each must hold;
#   -b --view memory -d 6 -n 1 on leak (2 MiB/s by mmap): the tracer ran from
#   start-up, so the frame says ~6 s traced (not 0.0s) and leak_bytes holds
#   MiBs (not "no mmap or brk seen yet").
. "$(dirname "$0")/lib.sh"
start_cpuburn 0.5 2
need_target leak

for i in 1 2 3 4 5; do
	out=$E2E_TMPDIR/first.$i.out
	run_ok 30 "$out" "run $i: -b -n 1 -d 0.5 exits 0" -b -n 1 -d 0.5 -p "$CB"
	cpu=$(grep -m1 -E '^CPU ' "$out")
	if echo "$cpu" | grep -qE '^CPU (now [1-9][0-9]*%|measuring)'; then
		ok "run $i: first frame: ${cpu%%  peak*}"
	else
		bad "run $i: first frame says '$cpu'"
	fi
	grep -qE '^MEM 0 B' "$out" && bad "run $i: MEM 0 B RSS on the first frame" ||
		ok "run $i: MEM is measured ($(grep -m1 -oE '^MEM [^ ]+ [^ ]+' "$out"))"
	grep -q 'stacktop is behind' "$out" && bad "run $i: 'stacktop is behind' on the first frame" ||
		ok "run $i: no 'behind' from start-up"
done

[ "$(id -u)" = 0 ] || { log "SKIP: tracing mmap needs root (CAP_BPF, CAP_PERFMON)"; e2e_finish; }
start_target 0.3 leak 2
LEAK=$BG_PID
out=$E2E_TMPDIR/memory.out
run_ok 40 "$out" "-b --view memory -d 6 -n 1 exits 0" -b --view memory -d 6 -n 1 -p "$LEAK"
traced=$(grep -m1 -oE 'traced [0-9.]+s' "$out" | grep -oE '[0-9.]+')
# The frame comes 6 s after start-up, later on a loaded machine, never
# sooner: traced from start-up is at least 5 s.
if [ -n "$traced" ] && awk -v t="$traced" 'BEGIN { exit !(t >= 5) }'; then
	ok "memory view after -d 6: traced ${traced}s"
else
	bad "memory view after -d 6: traced '${traced}' s, want >= 5"
	grep -E 'traced|no mmap' "$out"
fi
grep -q 'no mmap or brk seen yet' "$out" && bad "'no mmap or brk seen yet' after 6 s of a leak" ||
	ok "mmaps were seen"
row=$(grep -m1 -E '^ +[0-9.]+ [KMG]?i?B .*leak_bytes' "$out")
held=$(echo "$row" | awk '{ print $1 }')
unit=$(echo "$row" | awk '{ print $2 }')
# 2 MiB/s for 6 s is 12 MiB; a third of it is plenty of margin.
if [ "$unit" = MiB ] && awk -v h="$held" 'BEGIN { exit !(h >= 4) }'; then
	ok "leak_bytes holds $held MiB"
else
	bad "leak_bytes should hold >= 4 MiB, row: '$row'"
	sed -n '/CODE PATHS/,$p' "$out" | head -8
fi
e2e_finish
