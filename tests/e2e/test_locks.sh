#!/bin/bash
# test_locks — lock owners and deadlocks (issue 15), on the deadlock target:
# alpha and beta deadlock (AB-BA), bystander waits on alpha's lock, contender
# on the lock of a sleeping holder, recwaiter on a recursive mutex held twice
# by recursive, condwait on a condition variable (no owner may be claimed),
# reader on an rwlock writer holds (known where a stack shows the rdlock).
#
#   dump         each waiter's block ends with "lock 0x… held by NAME (TID)",
#                condwait's says no owner, one "deadlock:" line names alpha
#                and beta; --json carries the same graph;
#   -b threads   cpu mode and wall mode: the holders, DEADLOCK on alpha and
#                beta only, the alert line, nothing claimed for condwait;
#   -b top       cpu mode: the deadlock alert above the table;
#   -b top wall  lock-wait rows end with "held by NAME 100%" (stand_by:
#                alpha, contend_c: holder ...), none on the condvar rows;
#   TUI 80x24    the alert line and holders fit; o on bystander selects its
#                holder (alpha) with o, Enter narrows the views to alpha.
. "$(dirname "$0")/lib.sh"
need_stacktop
need_target deadlock
need_tmux

start_bg "$TARGETS/deadlock"
T=$BG_PID
# Every waiter blocked: alpha, beta, bystander, contender, recwaiter, condwait in futex.
all_blocked() {
	local n w
	for n in alpha beta bystander contender recwaiter condwait reader; do
		w=$(tid_named "$T" "$n") || return 1
		grep -q '^202 ' "/proc/$T/task/$w/syscall" 2>/dev/null || return 1
	done
}
wait_until 5 all_blocked || die "deadlock target: its threads did not all block in futex"
for n in alpha beta bystander holder contender condwait recursive recwaiter writer reader; do
	printf -v "${n^^}" '%s' "$(tid_named "$T" "$n")"
done
log "alpha $ALPHA beta $BETA bystander $BYSTANDER holder $HOLDER contender $CONTENDER" \
	"condwait $CONDWAIT recursive $RECURSIVE recwaiter $RECWAITER"

# block_of FILE TID: the dump's block of thread TID (its header to the blank line).
block_of() { awk -v t="Thread $2 " 'index($0, t) == 1 { on = 1 } on && /^$/ { exit } on' "$1"; }

# ==== dump ====================================================================
out=$E2E_TMPDIR/dump.txt
"$STACKTOP" dump -p "$T" >"$out" 2>&1 || { cat "$out"; die "dump failed"; }
check_holder() { # WHO TID HOLDER_NAME HOLDER_TID [WORD]
	local last word=${5:-lock}
	last=$(block_of "$out" "$2" | tail -n 1)
	[[ $last == "    $word 0x"*" held by $3 ($4)"* ]] && ok "dump: $1's block ends with its $word held by $3 ($4)" ||
		bad "dump: $1's block should end with '$word 0x… held by $3 ($4)': '$last'"
}
check_holder alpha "$ALPHA" beta "$BETA"
check_holder beta "$BETA" alpha "$ALPHA"
check_holder bystander "$BYSTANDER" alpha "$ALPHA"
check_holder contender "$CONTENDER" holder "$HOLDER"
check_holder recwaiter "$RECWAITER" recursive "$RECURSIVE"
check_holder reader "$READER" writer "$WRITER" rwlock
block_of "$out" "$BYSTANDER" | grep -q DEADLOCK && bad "dump: bystander is not in the cycle, yet flagged" ||
	ok "dump: bystander not flagged DEADLOCK"
cw=$(block_of "$out" "$CONDWAIT")
[[ $cw == *pthread_cond_wait* ]] || bad "dump: condwait's stack should show pthread_cond_wait"
[[ $cw == *"held by"* ]] && bad "dump: an owner claimed for a condition variable: $(tail -n 1 <<<"$cw")" ||
	ok "dump: no owner claimed for condwait's condition variable"
[[ $cw == *"no owner"* ]] && ok "dump: condwait's futex said to have no owner" || bad "dump: condwait should say 'no owner'"
expect_in "$out" "dump: one deadlock: line names the AB-BA cycle" \
	"^deadlock: alpha \($ALPHA\) -> beta \($BETA\) -> alpha \($ALPHA\)$"
check_cmp "$(grep -c '^deadlock:' "$out")" == 1 "dump: exactly one deadlock line"

json=$E2E_TMPDIR/dump.json
"$STACKTOP" dump --json -p "$T" >"$json" 2>&1 || die "dump --json failed"
owner() { jq -r --argjson t "$1" '.threads[] | select(.tid == $t) | .lock.owner // "null"' "$json"; }
check_cmp "$(owner "$ALPHA")" == "$BETA" "json: alpha's lock owner is beta"
check_cmp "$(owner "$BYSTANDER")" == "$ALPHA" "json: bystander's lock owner is alpha"
check_cmp "$(owner "$CONTENDER")" == "$HOLDER" "json: contender's lock owner is holder"
check_cmp "$(owner "$RECWAITER")" == "$RECURSIVE" "json: recwaiter's lock owner is recursive"
check_cmp "$(owner "$READER")" == "$WRITER" "json: reader's rwlock owner is writer"
[ "$(owner "$CONDWAIT")" = null ] && ok "json: no owner for condwait" || bad "json: condwait given an owner: $(owner "$CONDWAIT")"
dl=$(jq -c '.deadlocks' "$json")
[ "$dl" = "[[$ALPHA,$BETA]]" ] && ok "json: deadlocks [[alpha,beta]]" || bad "json: deadlocks should be [[$ALPHA,$BETA]]: $dl"
check_target_healthy "$T" "after dump"

# ==== -b --view threads, cpu and wall mode =================================
check_batch() { # MODE FILE: the last refresh printed in FILE
	local f=$E2E_TMPDIR/last.txt r
	awk '/^stacktop  pid/ { n = 0; delete l } { l[++n] = $0 } END { for (i = 1; i <= n; i++) print l[i] }' "$2" >"$f"
	row() { awk -v t="$1" '$1 == t' "$f" | tail -n 1; }
	expect_in "$f" "$1: the alert line names the cycle" "^! DEADLOCK alpha \($ALPHA\) (⇄|<->) beta \($BETA\)"
	r=$(row "$ALPHA")
	[[ $r == *"DEADLOCK"*"held by beta ($BETA)"* ]] && ok "$1: alpha flagged DEADLOCK, held by beta" || bad "$1: alpha row: '$r'"
	r=$(row "$BYSTANDER")
	[[ $r == *"held by alpha ($ALPHA)"* && $r != *DEADLOCK* ]] &&
		ok "$1: bystander held by alpha, not flagged" || bad "$1: bystander row: '$r'"
	r=$(row "$CONTENDER")
	[[ $r == *"held by holder ($HOLDER)"* ]] && ok "$1: contender held by holder" || bad "$1: contender row: '$r'"
	r=$(row "$RECWAITER")
	[[ $r == *"held by recursive ($RECURSIVE)"* ]] && ok "$1: recwaiter held by recursive" || bad "$1: recwaiter row: '$r'"
	r=$(row "$CONDWAIT")
	[[ -n $r && $r != *"held by"* && $r != *DEADLOCK* ]] && ok "$1: condwait listed, no owner claimed" ||
		bad "$1: condwait row: '$r'"
	check_cmp "$(grep -v '^!' "$f" | grep -c DEADLOCK)" == 2 "$1: two rows flagged DEADLOCK"
	# An rwlock's writer is known from the stack: wall mode has one, cpu
	# mode does not and claims nothing.
	r=$(row "$READER")
	if [ "$1" = wall ]; then
		[[ $r == *"held by writer ($WRITER)"* ]] && ok "$1: reader held by writer" || bad "$1: reader row: '$r'"
	else
		[[ -n $r && $r != *"held by"* ]] && ok "$1: reader listed, no owner claimed without a stack" ||
			bad "$1: reader row: '$r'"
	fi
}
"$STACKTOP" -p "$T" -b --view threads -n 2 -d 1 >"$E2E_TMPDIR/cpu.txt" 2>&1 || die "batch (cpu) failed"
check_batch cpu "$E2E_TMPDIR/cpu.txt"
"$STACKTOP" -p "$T" -b --wall --ascii --view threads -n 3 -d 1 >"$E2E_TMPDIR/wall.txt" 2>&1 || die "batch (wall) failed"
check_batch wall "$E2E_TMPDIR/wall.txt"
# Top view, cpu mode: nothing burns, so the alert line is what says why.
"$STACKTOP" -p "$T" -b -n 2 -d 1 >"$E2E_TMPDIR/topcpu.txt" 2>&1 || die "batch top (cpu) failed"
expect_in "$E2E_TMPDIR/topcpu.txt" "top (cpu): the alert line names the deadlock" \
	"^! DEADLOCK alpha \($ALPHA\) (⇄|<->) beta \($BETA\) \(threads: --view threads\)"
# ... and the table says why it is empty from the first frame, not "waiting for samples"
head -n 12 "$E2E_TMPDIR/topcpu.txt" | grep -q 'no samples: its threads wait on each other' &&
	! grep -q 'waiting for samples' "$E2E_TMPDIR/topcpu.txt" &&
	ok "top (cpu): the empty table says the threads wait on each other, from the first frame" ||
	bad "top (cpu): the empty table of a deadlocked process: $(head -n 12 "$E2E_TMPDIR/topcpu.txt")"
# Top view, wall mode: lock-wait rows name the holder of what they wait on.
"$STACKTOP" -p "$T" -b --wall -l 100 -n 3 -d 1 >"$E2E_TMPDIR/top.txt" 2>&1 || die "batch top (wall) failed"
awk '/^stacktop  pid/ { n = 0; delete l } { l[++n] = $0 } END { for (i = 1; i <= n; i++) print l[i] }' \
	"$E2E_TMPDIR/top.txt" >"$E2E_TMPDIR/top_last.txt"
toprow() { grep -E " $1( |$)" "$E2E_TMPDIR/top_last.txt" | head -n 1; }
for pair in stand_by:alpha contend_c:holder wait_r:recursive take_b_after_a:beta take_a_after_b:alpha; do
	r=$(toprow "${pair%%:*}")
	[[ $r == *"held by ${pair#*:} 100%"* ]] && ok "top (wall): ${pair%%:*} held by ${pair#*:} 100%" ||
		bad "top (wall): ${pair%%:*} row should say 'held by ${pair#*:} 100%': '$r'"
done
for f in wait_cond pthread_cond_wait; do
	r=$(toprow "$f")
	[[ -n $r && $r != *"held by"* ]] && ok "top (wall): no holder for $f" || bad "top (wall): $f row: '$r'"
done
grep -q '⇄' "$E2E_TMPDIR/wall.txt" && bad "--ascii: the alert should use <->" || ok "--ascii: no arrow glyph"
check_target_healthy "$T" "after wall mode"

# ==== TUI at 80x24 =============================================================
tm_start 80 24 "$STACKTOP" -p "$T"
tm_wait 8 '%Own' || { tm_dump "start"; die "stacktop did not show the top view"; }
tm_wait 4 "! DEADLOCK alpha \($ALPHA\).*\(threads: key 3\)" && ok "80x24 top view: the deadlock alert" ||
	bad_dump "top view" "80x24 top view: no deadlock alert"
tm_key_expect 3 5 "! DEADLOCK alpha \($ALPHA\)" "threads view with the deadlock alert" "no DEADLOCK alert line"
row_of() { tm_screen | awk -v t="$1" '$1 == t { print; exit }'; }
r=$(row_of "$BYSTANDER")
[[ $r == *"held by alpha ($ALPHA)"* ]] && ok "80x24: bystander's holder shown" || { bad "80x24: bystander row '$r'"; tm_dump 80x24; }
r=$(row_of "$BETA")
[[ $r == *"DEADLOCK"*"held by alpha ($ALPHA)"* ]] && ok "80x24: beta flagged DEADLOCK, held by alpha" || bad "80x24: beta row '$r'"
check_cmp "$(tm_screen | LC_ALL=C.UTF-8 wc -L)" '<=' 80 "80x24: no line wider than the terminal"
# Select bystander (sort by TID, then down to it), h jumps to its holder.
tm_keys s s s
tm_wait 3 'sort \(tid\)' || tm_dump "sort"
tm_keys Home
for _ in $(seq $(($(tm_screen | awk -v t="$BYSTANDER" '/TID +NAME/ { on = 1; n = 0; next } on { if ($1 == t) { print n; exit } n++ }')))); do
	tm_keys Down
done
selected_tid() { tm capture-pane -p -e -t e2e | awk '/^\033\[([0-9]+;)*7(;[0-9]+)*m/ { gsub(/\033\[[0-9;]*m/, ""); print $1; exit }'; }
sel_is() { [ "$(selected_tid)" = "$1" ]; }
wait_until 3 sel_is "$BYSTANDER" && ok "bystander selected" || { bad "bystander should be selected (is $(selected_tid))"; tm_dump select; }
tm_keys o
wait_until 3 sel_is "$ALPHA" && ok "o: the selection moves to the holder, alpha" || bad_dump "after o" "o: selected $(selected_tid), want alpha $ALPHA"
tm_keys Enter
tm_wait 4 "thread $ALPHA" && ok "Enter on the holder narrows to alpha" || bad_dump "after Enter" "Enter: header should say 'thread $ALPHA'"
tm_keys q
wait_until 3 tm_dead && ok "q: stacktop exits" || bad "q: stacktop still running"
tm_stop
check_target_healthy "$T" "after the TUI"
e2e_finish
