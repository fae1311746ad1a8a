#!/bin/bash
# test_screen80 — at 80x24 the words that matter come first (issue 17, item
# 6): a leaking program launched by its full path keeps its name in the
# header, the MEM line's verdict word is whole, the memory chart shows
# while memory climbs, and the alert line (when one comes) is not cut;
# after the target exits the CPU says "exited", not a live "now N%".
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
if grep -Eq '(RISING, too s|: STA|leak suspe)$' "$scr"; then
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
e2e_finish
