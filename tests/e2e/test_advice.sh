#!/bin/bash
# test_advice — the advice stacktop gives names the real cause (issue 17,
# item 2): a number given without -p is taken for a PID that exists; wall
# mode on a kernel thread says it is a kernel thread, not "run as root"; a
# pre-fork master whose workers burn says "try --subprocesses" at 80x24.
. "$(dirname "$0")/lib.sh"
need_stacktop
need_target prefork
need_tmux

# ---- `stacktop 4501`: forgot -p ----------------------------------------------------
start_bg sleep 30
S=$BG_PID
out=$E2E_TMPDIR/nop.out
timeout 10 "$STACKTOP" -b -d 1 "$S" >"$out" 2>&1
rc=$?
check_cmp "$rc" '!=' 0 "stacktop PID (without -p) fails"
grep -q "did you mean -p $S?" "$out" && ok "a running PID without -p: 'did you mean -p $S?'" ||
	{ bad "no 'did you mean -p $S?': $(cat "$out")"; }
# A number that is no process gets no such guess.
timeout 10 "$STACKTOP" -b -d 1 999999999 >"$out" 2>&1
grep -q "did you mean" "$out" && bad "guessed -p for a number that is no process: $(cat "$out")" ||
	ok "no guess for a number that is no process"

# ---- wall mode on a kernel thread (kthreadd is pid 2) ------------------------------
if [ "$(id -u)" = 0 ] && grep -q '^kthreadd' /proc/2/comm 2>/dev/null; then
	timeout 10 "$STACKTOP" -b -w -d 1 -n 1 -p 2 >"$out" 2>&1
	check_cmp "$?" '!=' 0 "-w -p 2 fails"
	grep -q "kernel thread" "$out" && ok "-w -p 2: says it is a kernel thread" ||
		bad "-w -p 2 does not say kernel thread: $(cat "$out")"
	grep -q "run as root" "$out" && bad "-w -p 2 as root still says 'run as root'" ||
		ok "-w -p 2 as root: no 'run as root'"
else
	log "skip: -w -p 2 needs root and kthreadd"
fi

# ---- a pre-fork master: nothing on a CPU, its children are -------------------------
"$TARGETS/prefork" 60 >"$E2E_TMPDIR/prefork.txt" 2>&1 &
PF=$!
BG_PIDS+=("$PF")
disown "$PF"
workers_up() { grep -q '^prefork: parent' "$E2E_TMPDIR/prefork.txt"; }
wait_until 5 workers_up || die "prefork did not start its workers"
tm_start 80 24 "$STACKTOP" -p "$PF"
if tm_wait 12 'its children do: try --subprocesses'; then
	ok "80x24: the master's screen says its children do, try --subprocesses"
else
	bad_dump "prefork master" "80x24: no 'try --subprocesses' on the master of busy workers"
fi
tm_stop
e2e_finish
