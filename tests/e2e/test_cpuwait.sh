#!/bin/bash
# test_cpuwait — wall mode on an oversubscribed CPU (issue 17, items 4 and
# 7): cpuburn's 4 busy workers pinned to one CPU (taskset -c 0) each run a
# quarter of the time and wait in the run queue the rest.
#
#   - the "wall time:" line has a CPU-wait share: of the process's 8 threads
#     the 4 workers are half the wall time, 3/4 of it waiting for a CPU
#     (true ~37%; more if anything else runs on CPU 0), so CPU-wait is at
#     least 37% (within 4 standard errors of the sample count) and running
#     (true ~12%) below it;
#   - the workers' leaf function's Wait column says CPU-wait;
#   - (that "pause N µs/sample" is the time a thread is held stopped, not
#     the wait for the oversubscribed CPU to reach the stop, is measured by
#     bench/checks.sh);
#   - the TUI at 80x24: the threads view (key 3) says "CPU-wait N%" for the
#     workers.
. "$(dirname "$0")/lib.sh"
need_stacktop
need_target cpuburn
need_tmux
command -v taskset >/dev/null || die "taskset is missing (util-linux)"

start_bg taskset -c 0 "$TARGETS/cpuburn" 4
P=$BG_PID
nthreads_is() { [ "$(ls "/proc/$1/task" 2>/dev/null | wc -l)" -ge "$2" ]; }
wait_until 5 nthreads_is "$P" 8 || die "cpuburn did not start its threads"
sleep 0.5 # past its calibration

OUT=$E2E_TMPDIR/wall.out
timeout 30 "$STACKTOP" -b -w -d 3 -n 1 -p "$P" >"$OUT" 2>"$E2E_TMPDIR/wall.err" ||
	bad "stacktop -b -w exited $?: $(head -c 300 "$E2E_TMPDIR/wall.err")"
cw=$(split_pct "$OUT" CPU-wait) && run=$(split_pct "$OUT" running) ||
	{ bad "no 'wall time:' line"; sed 's/^/  | /' "$OUT" | head -n 20; }
log "$(grep 'wall time:' "$OUT" | tail -n 1)"
check_share_min "$cw" 37 "$(samples_in "$OUT")" "wall time: CPU-wait (true ~37%: 4 threads on one CPU)"
check_cmp "$run" '<' "${cw:-0}" "wall time: running below CPU-wait"
w=$(awk '$6 == "leaf_a" { print $5; exit }' "$OUT")
[ "$w" = CPU-wait ] && ok "leaf_a waits: CPU-wait" || bad "leaf_a: wait '$w', expected CPU-wait"
check_target_healthy "$P" "after wall mode"

tm_start 80 24 "$STACKTOP" -w -p "$P"
tm_wait 10 'wall time:.*CPU-wait' && ok "TUI 80x24: the split line names CPU-wait" ||
	{ tm_dump "split"; bad "TUI 80x24: no CPU-wait in the split line"; }
tm_key_expect 3 10 'worker-[0-9] +(R )?CPU-wait [0-9]+%' "threads view: a worker's state is CPU-wait N%" \
	"threads view: no 'CPU-wait N%' state"
tm_stop
check_target_healthy "$P" "after the TUI"
e2e_finish
