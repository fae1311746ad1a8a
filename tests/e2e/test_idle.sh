#!/bin/bash
# test_idle — wall mode tells waiting for work ("idle") from lock contention
# and I/O (issue 17, item 3), against the idlepool target
# (tests/targets/idlepool.c): 7 threads, 6 waiting for work (3 condition
# variable workers, a sem_wait, a pthread_join, an epoll_wait) and 1 blocked
# in read() on a pipe.
#
#   - `-b -w`: the "wall time:" line says idle ~86%, I/O ~14% (within 4
#     standard errors of the sample count), lock ~0;
#     each waiting function has the right kind in the Wait column;
#   - `--no-idle` (key i) hides the idle threads but not the reader;
#   - dump says "idle" for a condvar worker, "I/O" for the reader;
#   - the TUI at 80x24: key i hides pool_worker and keeps pipe_read.
# (Lock contention, pthread_mutex_lock, stays "lock": test_wall's take_lock.)
. "$(dirname "$0")/lib.sh"
need_stacktop
need_target idlepool
need_tmux

start_bg "$TARGETS/idlepool"
P=$BG_PID
nthreads_is() { [ "$(ls "/proc/$1/task" 2>/dev/null | wc -l)" -eq "$2" ]; }
wait_until 3 nthreads_is "$P" 7 || die "idlepool did not start its threads"
sleep 0.2

# wait_of FILE FUNC: the Wait column of FUNC's row (%Own %Total OnCPU OffCPU Wait Function)
wait_of() { awk -v f="$2" '$6 == f { print $5; exit }' "$1"; }

OUT=$E2E_TMPDIR/wall.out
# the default 19 Hz: at 49 Hz on a loaded machine the reader, woken by
# each ptrace stop, waited for a CPU often enough to show as CPU-wait
timeout 30 "$STACKTOP" -b -w -d 3 -n 1 -p "$P" >"$OUT" 2>"$E2E_TMPDIR/wall.err" ||
	bad "stacktop -b -w exited $?: $(head -c 300 "$E2E_TMPDIR/wall.err")"
idle=$(split_pct "$OUT" idle) && lock=$(split_pct "$OUT" lock) && io=$(split_pct "$OUT" 'I/O') ||
	{ bad "no 'wall time:' line"; sed 's/^/  | /' "$OUT" | tail -n 30; }
N=$(samples_in "$OUT")
check_share "$idle" 86 "$N" "wall time: idle"
# nothing contends: a lock sample is a misclassified one (3% of room)
check_share_max "$lock" 3 "$N" "wall time: lock (true 0%: nothing contends)"
check_share "$io" 14 "$N" "wall time: I/O"
for spec in pool_worker:idle sem_waiter:idle pool_join:idle event_wait:idle pipe_read:I/O; do
	fn=${spec%%:*} kind=${spec#*:}
	w=$(wait_of "$OUT" "$fn")
	[ "$w" = "$kind" ] && ok "$fn waits: $kind" || bad "$fn: wait '$w', expected $kind"
done

OUT=$E2E_TMPDIR/noidle.out
timeout 30 "$STACKTOP" -b -w --no-idle -d 2 -n 1 -p "$P" >"$OUT" 2>&1 || bad "--no-idle exited $?"
[ "$(wait_of "$OUT" pipe_read)" = "I/O" ] && ok "--no-idle keeps the thread blocked in read()" ||
	bad "--no-idle hid the reader: $(grep -c . "$OUT") lines"
[ -z "$(wait_of "$OUT" pool_worker)" ] && ok "--no-idle hides the condvar workers" ||
	bad "--no-idle still shows pool_worker"

OUT=$E2E_TMPDIR/dump.out
timeout 20 "$STACKTOP" dump -p "$P" >"$OUT" 2>&1 || bad "dump exited $?"
grep -q '"worker1" (S, waiting: idle' "$OUT" && ok "dump: worker1 idle" || bad "dump: $(grep worker1 "$OUT")"
grep -q '"reader" (S, waiting: I/O' "$OUT" && ok "dump: reader I/O" || bad "dump: $(grep reader "$OUT")"
check_target_healthy "$P" "after wall mode"

tm_start 80 24 "$STACKTOP" -w -p "$P"
tm_wait 10 'pool_worker' || { tm_dump "start"; bad "TUI 80x24: no pool_worker row"; }
tm_key_expect i 5 'idle threads hidden' "idle threads hidden" "no 'idle threads hidden'"
tm_wait_gone 5 'pool_worker' && ok "TUI: i hides the condvar workers" ||
	{ tm_dump "after i"; bad "TUI: pool_worker still shown after i"; }
tm_match 'pipe_read' && ok "TUI: i keeps the thread blocked in read()" ||
	{ tm_dump "after i"; bad "TUI: pipe_read hidden by i"; }
tm_stop
check_target_healthy "$P" "after the TUI"
e2e_finish
