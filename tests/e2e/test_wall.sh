#!/bin/bash
# test_wall — wall-clock mode and `stacktop dump` against the waiter target,
# whose wall time is known (tests/targets/waiter.c): 5 threads; take_lock
# ~18% (lock: contention in pthread_mutex_lock), read_pipe 20% (I/O), nap
# 20%, hold_lock ~22% and write_pipe 20% (sleep), running about 0%.
#
#   - `-b -w`: each of those functions within 4 standard errors (of the
#     sample count: lib.sh's check_share) of its share, with the right wait
#     kind; the "wall time:" line splits lock/I/O/sleep the same way;
#   - dump: every thread by name, leaf first, read_pipe with its file:line;
#     --json read back by python3's json module.
# After each run the target has no thread stopped or traced. Cpu mode on
# the same program and the errors (no such process, a traced target) are
# test_wall_errors', beside other tests.
#
# STACKTOP_BIN overrides the binary (to try a build before it lands).
. "$(dirname "$0")/lib.sh"
STACKTOP=${STACKTOP_BIN:-$STACKTOP}
start_waiter

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

e2e_finish
