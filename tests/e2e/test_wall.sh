#!/bin/bash
# test_wall — wall-clock mode and `stacktop dump` against the waiter target,
# whose wall time is known (tests/targets/waiter.c): 5 threads; take_lock
# ~18% (lock: contention in pthread_mutex_lock), read_pipe 20% (I/O), nap
# 20%, hold_lock ~22% and write_pipe 20% (sleep), running about 0%.
#
#   - `-b -w`: each of those functions within 4 standard errors (of the
#     sample count: lib.sh's check_share) of its share, with the right wait
#     kind; the "wall time:" line splits lock/I/O/sleep the same way;
#   - cpu mode on the same program shows almost nothing;
#   - dump: every thread by name, leaf first, read_pipe with its file:line;
#     --json read back by python3's json module;
#   - errors: no such process; a target already traced names the tracer.
# After each run the target has no thread stopped or traced.
#
# STACKTOP_BIN overrides the binary (to try a build before it lands).
. "$(dirname "$0")/lib.sh"
STACKTOP=${STACKTOP_BIN:-$STACKTOP}
need_stacktop
need_target waiter

start_bg "$TARGETS/waiter" 120
W=$BG_PID
nthreads_is() { [ "$(ls "/proc/$1/task" 2>/dev/null | wc -l)" -eq "$2" ]; }
wait_until 3 nthreads_is "$W" 5 || die "waiter did not start its threads"
sleep 0.3

# wall_rows FILE: rows of the last wall table: %Own %Total OnCPU OffCPU Wait Function ...
wall_rows() {
	awk '/OnCPU/ && /OffCPU/ { n = 0; delete r; inrow = 1; next }
	     inrow && /^[[:space:]]*$/ { inrow = 0; next }
	     inrow && $1 ~ /^[0-9.]+$/ { r[++n] = $0 }
	     END { for (i = 1; i <= n; i++) print r[i] }' "$1"
}
# wall_field ROWS FUNC COL
wall_field() { awk -v f="$2" -v c="$3" '$6 == f { print $c; exit }' <<<"$1"; }
# ---- wall mode: shares and wait kinds ---------------------------------------------
OUT=$E2E_TMPDIR/wall.out
if timeout 30 "$STACKTOP" -b -w -d 2 -n 3 -p "$W" >"$OUT" 2>"$E2E_TMPDIR/wall.err"; then
	ok "stacktop -b -w -d 2 -n 3 exits 0"
else
	bad "stacktop -b -w exited $?: $(head -c 300 "$E2E_TMPDIR/wall.err")"
fi
grep -q ' wall ' "$OUT" && ok "header says wall mode" || bad "header does not say wall"
ROWS=$(wall_rows "$OUT")
N=$(samples_in "$OUT")
[ -n "$ROWS" ] || { log "output:"; sed 's/^/  | /' "$OUT" | tail -n 40; }
# (the two lockers trade one mutex: ~18% waiting for it, ~22% holding it)
for spec in take_lock:lock:18 read_pipe:I/O:20 nap:sleep:20 hold_lock:sleep:22 write_pipe:sleep:20; do
	IFS=: read -r fn kind want <<<"$spec"
	pct=$(wall_field "$ROWS" "$fn" 2)
	check_share "$pct" "$want" "$N" "$fn %Total"
	w=$(wall_field "$ROWS" "$fn" 5)
	[ "$w" = "$kind" ] && ok "$fn waits in $kind" || bad "$fn: wait '$w', expected $kind"
done
lock=$(split_pct "$OUT" lock) && io=$(split_pct "$OUT" 'I/O') && sl=$(split_pct "$OUT" sleep) &&
	run=$(split_pct "$OUT" running) || { bad "no 'wall time:' line"; lock=; io=; sl=; run=; }
check_share "$lock" 20 "$N" "wall time: lock"
check_share "$io" 20 "$N" "wall time: I/O"
# On a busy machine a woken thread waits for a CPU (R): that shows as
# running or CPU-wait and comes out of sleep, so sleep is bounded above
# only, and running (with CPU-wait) gets 15 points of room: the load of
# other processes, not sampling noise.
check_share_max "$sl" 60 "$N" "wall time: sleep (true 60%)"
check_share_min "$sl" 45 "$N" "wall time: sleep (true 60%, less when woken threads wait for a CPU)"
check_share_max "$run" 15 "$N" "wall time: running (true ~0%, more when the machine is busy)"
check_target_healthy "$W" "after wall mode"

# ---- cpu mode on the same program: almost nothing ---------------------------------
OUT=$E2E_TMPDIR/cpu.out
timeout 30 "$STACKTOP" -b -d 2 -n 2 -p "$W" >"$OUT" 2>&1 || bad "cpu mode exited $?"
n=$(grep -oE '^samples [0-9,]+' "$OUT" | tail -n 1 | tr -dc 0-9)
check_cmp "${n:-x}" '<=' 20 "cpu mode: samples in 4 s of an idle waiter"
check_target_healthy "$W" "after cpu mode"

# ---- dump -------------------------------------------------------------------------
OUT=$E2E_TMPDIR/dump.out
if timeout 20 "$STACKTOP" dump -p "$W" >"$OUT" 2>"$E2E_TMPDIR/dump.err"; then ok "dump exits 0"; else bad "dump exited $?: $(cat "$E2E_TMPDIR/dump.err")"; fi
head -n 1 "$OUT" | grep -q "^Process $W: .*waiter 120" && ok "dump: Process line" || bad "dump: first line '$(head -n 1 "$OUT")'"
for name in writer locker1 locker2 reader napper; do
	grep -qE "^Thread [0-9]+ \"$name\" \(" "$OUT" && ok "dump: thread $name" || bad "dump: no thread $name"
done
line=$(grep -n 'if (read(pipefd\[0\], buf, sizeof(buf)) < 0)' "$ROOT/tests/targets/waiter.c" | cut -d: -f1)
BLOCK=$(awk '/"reader" \(/ { on = 1 } on && /^$/ { exit } on' "$OUT")
grep -q '(S, waiting: I/O in ' <<<"$BLOCK" && ok "dump: reader waits in I/O" || bad "dump: reader block: $BLOCK"
grep -qE "^    #0  0x[0-9a-f]+ .*\[libc\.so\.6\]$" <<<"$BLOCK" && ok "dump: reader's #0 is in libc" || bad "dump: reader's #0: $(grep '#0' <<<"$BLOCK")"
grep -q " read_pipe (waiter.c:$line) \[waiter\]" <<<"$BLOCK" && ok "dump: read_pipe (waiter.c:$line)" || bad "dump: no 'read_pipe (waiter.c:$line)' in: $BLOCK"
a=$(grep -n ' read_pipe (' <<<"$BLOCK" | cut -d: -f1)
b=$(grep -n ' reader (' <<<"$BLOCK" | cut -d: -f1)
check_cmp "${a:-99}" '<' "${b:-0}" "dump: leaf first (read_pipe above its caller reader)"
grep -q '"napper" (S, waiting: sleep' "$OUT" && ok "dump: napper sleeps" || bad "dump: napper line: $(grep napper "$OUT")"
grep -q '"locker1" (S, waiting: \(lock\|sleep\)' "$OUT" && ok "dump: locker1 waits for the lock or sleeps holding it" || bad "dump: locker1 line: $(grep locker1 "$OUT")"
check_target_healthy "$W" "after dump"

OUT=$E2E_TMPDIR/dump.json
timeout 20 "$STACKTOP" dump --json -p "$W" >"$OUT" 2>&1 || bad "dump --json exited $?"
res=$(python3 - "$OUT" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
t = {x["name"]: x for x in d["threads"]}
f = [x["function"] for x in t["reader"]["frames"]]
rp = [x for x in t["reader"]["frames"] if x["function"] == "read_pipe"][0]
print(len(d["threads"]), t["reader"]["wait"], t["napper"]["wait"],
      f.index("read_pipe") < f.index("reader"), rp["file"], rp["line"] > 0, rp["module"])
EOF
)
[ "$res" = "5 I/O sleep True waiter.c True waiter" ] && ok "dump --json parses: $res" || bad "dump --json: '$res'"
check_target_healthy "$W" "after dump --json"

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
