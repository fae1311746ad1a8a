#!/bin/bash
# test_wall_threads — wall-clock (ptrace) mode samples every thread of
# cpuburn 1, running or blocked, the same: worker-0 burns, main (pause),
# reporter (sigwait), sleeper (nanosleep) and waiter (pthread_cond_wait)
# block, so each thread's start function has ~20% of the samples and leaf_a
# (60% of the worker's time) ~12%, within 4 standard errors of the sample
# count; the target is left running, untraced. Where the worker's stops
# land moved with other processes' load (leaf_a at 7% on a machine at load
# 11), so this runs alone (tests/run.sh SOLO).
. "$(dirname "$0")/lib.sh"
start_cpuburn 0.5 1

# ---- wall mode (ptrace): every thread, running or blocked -------------------------------
# cpuburn 1 has 5 threads: worker-0 burns, main (pause), reporter (sigwait),
# sleeper (nanosleep) and waiter (pthread_cond_wait) block. Wall-clock
# sampling gives each thread the same share: ~20 % of samples each, so each
# thread's start function has %Total ~20 and leaf_a ~12 (60 % of 20).
out7=$E2E_TMPDIR/wall.out
run_ok 40 "$out7" "wall: stacktop --wall -b -d 2 -n 2 -r 49 -p PID exits 0" --wall -b -d 2 -n 2 -W 30 -r 49 -l 100 -p "$CB"
wsamples=$(samples_in "$out7")
# wall mode's table: %Own %Total OnCPU OffCPU Wait Function... Module
rows7=$(awk '/%Total/ && /Wait/ { n = 0; delete r; inrow = 1; next }
	inrow && /^[[:space:]]*$/ { inrow = 0; next }
	inrow && $1 ~ /^[0-9.]+$/ { r[++n] = $0 }
	END { for (i = 1; i <= n; i++) print r[i] }' "$out7")
wall_bad=$E2E_FAILS
for spec in run_worker:20 run_sleeper:20 run_waiter:20 run_reporter:20 main:20 leaf_a:12; do
	f=${spec%%:*} want=${spec#*:}
	tot=$(awk -v f="$f" '$6 == f { print $2; exit }' <<<"$rows7")
	if [ -z "$tot" ]; then
		bad "wall: $f missing from the table (blocked threads must be sampled too)"
		continue
	fi
	check_share "$tot" "$want" "$wsamples" "wall: $f %Total"
done
if [ "$E2E_FAILS" -gt "$wall_bad" ]; then
	log "---- wall: last block"
	awk '/^stacktop/ { b = "" } { b = b $0 "\n" } END { printf "%s", b }' "$out7" | head -n 40
	tail -n 5 "$out7.err"
fi
check_target_healthy "$CB" "after wall mode (ptrace detached)" burns
e2e_finish
