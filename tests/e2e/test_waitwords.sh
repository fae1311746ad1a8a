#!/bin/bash
# test_waitwords — one word for one wait on every screen (issue 21): a thread
# waiting on a condition variable waits for work ("idle"), never "lock",
# whether the threads view reads it without a stack (cpu mode) or with one
# (wall mode), and the icicle does not draw its wait in the lock colour.
# Against two targets whose threads wait on condition variables nobody
# signals: floor's "idler" and idlepool's worker1-3 (and its "sem", which
# waits on a semaphore, and "loop", an epoll_wait: idle too).
#
#   -b --view threads (cpu)   idler: "S idle: futex_wait"; no "lock" word
#                             for any condvar or semaphore waiter
#   -b -w --view threads      idler: "S idle: ..." (the stack's word)
#   TUI -w, icicle (key 2)    the pthread_cond_wait box and the futex box
#                             under it are not red (the legend's "lock")
. "$(dirname "$0")/lib.sh"
need_stacktop
need_target floor
need_target idlepool
need_tmux

# last_block FILE: the last refresh of a batch output.
last_block() { awk '/^stacktop  pid/ { n = 0; delete l } { l[++n] = $0 } END { for (i = 1; i <= n; i++) print l[i] }' "$1"; }
# state_of FILE TID: the STATE column of TID's row in the last block
# (the words after NAME up to the CPU percentage).
state_of() {
	last_block "$1" | awk -v t="$2" '$1 == t {
		s = ""
		for (i = 3; i <= NF && $i !~ /%$/; i++) s = s (s ? " " : "") $i
		print s; exit }'
}
# expect_state FILE TID WHO PATTERN: TID's STATE matches PATTERN.
expect_state() {
	local s
	s=$(state_of "$1" "$2")
	[[ $s == $4 ]] && ok "$3: '$s'" || bad "$3: STATE '$s', expected '$4'"
}

start_target 0.3 floor
FLOOR=$BG_PID
IDLER=$(tid_named "$FLOOR" idler) || die "floor has no thread named idler"
start_target 0.3 idlepool
POOL=$BG_PID
nthreads_is() { [ "$(ls "/proc/$1/task" 2>/dev/null | wc -l)" -eq "$2" ]; }
wait_until 3 nthreads_is "$POOL" 7 || die "idlepool did not start its threads"

# ==== cpu mode: no stack, the futex as read ==================================
out=$E2E_TMPDIR/cpu.txt
timeout 30 "$STACKTOP" -b -n 2 -d 1 --view threads -p "$FLOOR" >"$out" 2>"$out.err" ||
	bad "-b --view threads (cpu) exited $?: $(head -c 300 "$out.err")"
expect_state "$out" "$IDLER" "cpu mode: floor's condvar idler is idle" 'S idle: futex_wait'

out=$E2E_TMPDIR/cpu-pool.txt
timeout 30 "$STACKTOP" -b -n 2 -d 1 --view threads -p "$POOL" >"$out" 2>"$out.err" ||
	bad "-b --view threads (cpu, idlepool) exited $?: $(head -c 300 "$out.err")"
for n in worker1 worker2 worker3 sem loop; do
	t=$(tid_named "$POOL" "$n") || { bad "idlepool has no thread $n"; continue; }
	expect_state "$out" "$t" "cpu mode: idlepool's $n is idle" 'S idle: *'
done
t=$(tid_named "$POOL" reader) && expect_state "$out" "$t" "cpu mode: the pipe reader is I/O" 'S I/O: *'
last_block "$out" | grep -q 'S lock:' && bad "cpu mode: a 'lock' word where nothing contends: $(last_block "$out" | grep 'S lock:')" ||
	ok "cpu mode: no thread of idlepool said to wait on a lock"

# ==== wall mode: the stack's word is the same ================================
out=$E2E_TMPDIR/wall.txt
timeout 30 "$STACKTOP" -b -w -n 2 -d 1 --view threads -p "$FLOOR" >"$out" 2>"$out.err" ||
	bad "-b -w --view threads exited $?: $(head -c 300 "$out.err")"
expect_state "$out" "$IDLER" "wall mode: floor's condvar idler is idle" 'S idle: *'
check_target_healthy "$FLOOR" "after wall mode"

# ==== the icicle's colours ===================================================
# box_fg LABEL: the foreground colour (SGR 30-37; 39 the default) the first
# icicle box "[LABEL" is drawn in, read from the screen with its attributes.
box_fg() {
	tm capture-pane -p -e -t e2e | awk -v l="[$1" '
		{
			i = index($0, l)
			if (!i) next
			pre = substr($0, 1, i - 1)
			fg = 39
			while (match(pre, /\033\[[0-9;]*m/)) {
				n = split(substr(pre, RSTART + 2, RLENGTH - 3), p, ";")
				if (n == 0) fg = 39
				for (k = 1; k <= n; k++) {
					if (p[k] == "" || p[k] == 0) fg = 39
					else if ((p[k] >= 30 && p[k] <= 37) || p[k] == 39) fg = p[k]
					else if (p[k] == 38) k += 2 # 38;5;N: not one of ours
				}
				pre = substr(pre, RSTART + RLENGTH)
			}
			print fg
			exit
		}'
}
tm_start 200 50 "$STACKTOP" -w -p "$FLOOR"
tm_wait 10 '%Own' || { tm_dump "start"; die "stacktop -w did not show the top view"; }
tm_key_expect 2 5 'selected:' "the icicle" "no icicle after key 2"
tm_wait 10 '\[pthread_cond_wait' || { tm_dump "icicle"; die "no pthread_cond_wait box in the icicle"; }
tm_match 'lock I/O' && ok "the legend names the lock colour" || bad "no colour legend on the footer"
red=31
for box in pthread_cond_wait __futex_abstimed_wait_common; do
	fg=$(box_fg "$box")
	if [ -z "$fg" ]; then
		tm_dump "icicle"
		bad "no '[$box' box on the screen"
	elif [ "$fg" = "$red" ]; then
		bad "the $box box is drawn red, the legend's lock: a condvar waits for work"
	else
		ok "the $box box is not lock-red (SGR $fg)"
	fi
done
fg=$(box_fg '[idle]')
[ -n "$fg" ] && [ "$fg" != "$red" ] && ok "the [idle] box is not lock-red (SGR $fg)" ||
	bad "the [idle] box: colour '${fg}'"
tm_stop
check_target_healthy "$FLOOR" "after the TUI"
e2e_finish
