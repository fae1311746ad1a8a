#!/bin/bash
# test_screen80 — at 80x24 the words that matter come first (issue 17, item
# 6): a leaking program launched by its full path keeps its name in the
# header, the MEM line's verdict word is whole, the memory chart shows
# while memory climbs, and the alert line (when one comes) is not cut;
# after the target exits the CPU says "exited", not a live "now N%"; in
# wall mode the threads view keeps tied rows in one order and the wait kind
# in the state (issue 24).
. "$(dirname "$0")/lib.sh"
need_stacktop
need_target leak
need_tmux

scr=$E2E_TMPDIR/screen
# $TARGETS is a long absolute path: the whole command does not fit.
tm_start 80 24 "$STACKTOP" -W 30 "$TARGETS/leak" 8 400
verdict() { tm_screen >"$scr"; grep -Eq '^MEM .*(RISING|STAIRS)' "$scr"; }
if wait_until 25 verdict; then
	ok "80x24: the MEM line says $(grep -Eo 'RISING|STAIRS' "$scr" | head -1) whole"
else
	bad_dump "verdict" "80x24: no whole verdict word on the MEM line"
fi
line1=$(head -1 "$scr")
[[ $line1 == *"leak 8 400"* ]] && ok "80x24: the header keeps the program's name: $line1" ||
	bad "80x24: the program's name is cut from the header: $line1"
grep -q '^RSS  *+-30s' "$scr" && ok "80x24: the memory chart is drawn while memory climbs" ||
	bad_dump "memory chart" "80x24: no memory chart"
# No line of the screen ends in a cut word of the verdicts or alerts.
# Nor a breakdown cut mid-fact ("(anon 104", issue 24): whole or left out.
if grep -Eq '(RISING, too s|: STA|leak suspe)$|\((anon|file) [^)]*$' "$scr"; then
	bad_dump "cut" "80x24: a verdict is cut"
else
	ok "80x24: no verdict cut mid-word"
fi
tm_stop

# After the target exits, its last second is no live figure: "exited".
need_target cpuburn
tm_start 80 24 "$STACKTOP" -W 30 "$TARGETS/cpuburn" 1 3
if tm_wait 15 'target exited'; then
	sleep 1.2 # one more tick of the chart
	tm_screen >"$scr"
	if grep -Eq 'now +[0-9]+%' "$scr"; then
		bad_dump "after exit" "after exit the CPU still reads as a live 'now N%'"
	else
		ok "after exit: no live 'now N%'"
	fi
	grep -Eq '(^CPU.* exited|exited *$)' "$scr" && ok "after exit: the CPU says exited" ||
		bad_dump "after exit" "after exit: the CPU does not say exited"
else
	bad_dump "exit" "cpuburn 1 3 did not exit within 15 s"
fi
tm_stop

# The threads view in wall mode at 80 columns (issue 24, item 10): every
# thread of idlepool waits, so every row reads 0.0% / 0%: tied rows keep
# one order (by TID) from one second to the next, and the state keeps its
# wait kind ("S idle: fute…"), not the kernel's word alone ("S futex…").
need_target idlepool
start_target 0.5 idlepool
tm_start 80 24 "$STACKTOP" -w -p "$BG_PID"
tm_wait 15 'S idle' >/dev/null
tm_keys 3
if tm_wait 15 'S idle: '; then
	ok "80x24 wall: the state keeps its kind (S idle: ...)"
else
	bad_dump "kind" "80x24 wall: no 'S idle: ' state"
fi
# The TIDs of the rows reading 0.0% and 0%, in screen order.
tied() { tm_screen | awk '$1 ~ /^[0-9]+$/ && / 0\.0% +0% / { printf "%s ", $1 }'; }
sorted_ok=0
for i in 1 2 3; do
	sleep 1.1
	order=$(tied)
	want=$(tr ' ' '\n' <<<"$order" | grep . | sort -n | tr '\n' ' ')
	[ -n "$order" ] && [ "$order" = "$want" ] && sorted_ok=$((sorted_ok + 1)) ||
		log "capture $i: tied rows in the order $order"
done
check_cmp "$sorted_ok" == 3 "80x24 wall: tied rows by TID in 3 captures a second apart"
if tm_screen | grep -Eq '^ *[0-9]+ .* S futex'; then
	bad_dump "futex" "80x24 wall: a state cut to 'S futex...' without its kind"
else
	ok "80x24 wall: no state without its kind"
fi
tm_stop
e2e_finish
