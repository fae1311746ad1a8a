#!/bin/bash
# test_wall_errors — stacktop on the waiter target (tests/targets/waiter.c)
# where nothing is shared out: cpu mode on the idle waiter shows almost
# nothing; errors: no such process, and a target already traced names the
# tracer (wall mode, dump, and cpu mode's warning). After each run the
# target has no thread stopped or traced. test_wall's shares, wait kinds
# and dump run alone (SOLO); these hold beside other tests (a count of CPU
# samples has only an upper bound, the rest are messages).
#
# STACKTOP_BIN overrides the binary (to try a build before it lands).
. "$(dirname "$0")/lib.sh"
STACKTOP=${STACKTOP_BIN:-$STACKTOP}
start_waiter

# ---- cpu mode on the idle waiter: almost nothing ------------------------------------
OUT=$E2E_TMPDIR/cpu.out
timeout 30 "$STACKTOP" -b -d 2 -n 2 -p "$W" >"$OUT" 2>&1 || bad "cpu mode exited $?"
n=$(grep -oE '^samples [0-9,]+' "$OUT" | tail -n 1 | tr -dc 0-9)
check_cmp "${n:-x}" '<=' 20 "cpu mode: samples in 4 s of an idle waiter"
check_target_healthy "$W" "after cpu mode"

# ---- errors -------------------------------------------------------------------------
true &
DEAD=$!
wait "$DEAD"
msg=$("$STACKTOP" dump -p "$DEAD" 2>&1)
rc=$?
[ "$rc" = 1 ] && grep -q "no process with PID $DEAD" <<<"$msg" && ok "dump of a missing pid: exit 1, '$msg'" ||
	bad "dump of a missing pid: exit $rc, '$msg'"

# A target already traced (PTRACE_SEIZE from python): both wall mode and dump name the tracer.
start_bg "$TARGETS/waiter" 60
W2=$BG_PID
sleep 0.3
start_bg python3 -c 'import ctypes, sys, time
l = ctypes.CDLL(None, use_errno=True)
print(l.ptrace(0x4206, int(sys.argv[1]), 0, 0), flush=True)
time.sleep(60)' "$W2"
TR=$BG_PID
traced_by() { [ "$(awk '/^TracerPid:/ { print $2 }' "/proc/$1/status")" = "$2" ]; }
wait_until 5 traced_by "$W2" "$TR" || bad "python could not trace the waiter"
# Only the leader is traced (as by strace -p): refusing, or sampling the
# other threads with a warning, are both fine, as long as the tracer is named
# and nothing hangs.
msg=$(timeout 10 "$STACKTOP" -b -w -n 1 -p "$W2" 2>&1)
rc=$?
if [ "$rc" = 1 ] && grep -q "already traced by pid $TR" <<<"$msg"; then
	ok "wall mode on a traced target: exit 1, names pid $TR"
elif [ "$rc" = 0 ] && grep -q "traced by pid $TR" <<<"$msg"; then
	ok "wall mode on a target whose leader is traced: samples the rest, warns about pid $TR"
else
	bad "wall mode on a traced target: exit $rc, '$msg'"
fi
msg=$(timeout 10 "$STACKTOP" dump -p "$W2" 2>&1)
rc=$?
[ "$rc" = 1 ] && grep -q "already traced by pid $TR" <<<"$msg" && ok "dump of a traced target: exit 1, names pid $TR" ||
	bad "dump of a traced target: exit $rc, '$msg'"
# cpu mode needs no ptrace: it samples on, and its warning names the tracer
# by name and pid (never suggests -w, which would be refused)
msg=$(timeout 10 "$STACKTOP" -b -n 2 -d 1 -p "$W2" 2>&1)
rc=$?
[ "$rc" = 0 ] && grep -q "traced by pid $TR (python3)" <<<"$msg" && ! grep -q -- '-w)' <<<"$msg" &&
	ok "cpu mode on a traced target: the warning names python3 (pid $TR)" ||
	bad "cpu mode on a traced target: exit $rc, '$msg'"
kill -KILL "$TR"
wait "$TR" 2>/dev/null
sleep 0.2
check_target_healthy "$W2" "traced target, after its tracer died"

e2e_finish
