#!/bin/bash
# test_threads — the threads view (key 3) in the live TUI, driven through
# tmux (issue 3):
#
#   floor  "poller" spins ~30% of a core every second (30 ms of every 100 ms), "idler" waits on
#          a condition variable, the main thread alternates work and sleep:
#          poller is flagged BUSY FLOOR, idler and the main thread are not;
#          sorted by floor and selected, Enter narrows the top view to
#          poller (busy_poll first), Esc widens it again; at 80x24 the flag
#          is still shown and no line is wider than the terminal; idler's
#          wait channel is shown (read only while this view is on screen).
#
# The busy floor compares the threads' CPU in the pauses: SOLO in
# tests/run.sh. STUCK and ZOMBIE (states, not shares) are test_stuck's,
# beside other tests.
#
# Every process started here (and any child it forked) is killed on exit.
. "$(dirname "$0")/lib.sh"
need_stacktop
need_target floor
need_tmux

trap e2e_cleanup_trees EXIT

# listed_not_flagged ROW WHO TID WHY: ROW (of thread WHO) exists and carries
# no BUSY FLOOR flag; WHY is added to the message when it does.
listed_not_flagged() {
	if [ -z "$1" ]; then
		bad "no row for $2 ($3)"
	elif [[ $1 == *"BUSY FLOOR"* ]]; then
		bad "$2 flagged BUSY FLOOR$4: '$1'"
	else
		ok "$2 listed and not flagged"
	fi
}

# row_of TID: the threads-view row of TID on the screen (TID is the first field).
row_of() { tm_screen | awk -v t="$1" '$1 == t { print; exit }'; }

# ==== floor =====================================================================
start_target 0.3 floor
FLOOR=$BG_PID
POLLER=$(tid_named "$FLOOR" poller) || die "floor has no thread named poller"
IDLER=$(tid_named "$FLOOR" idler) || die "floor has no thread named idler"

tm_start 200 50 "$STACKTOP" -p "$FLOOR"
tm_wait 8 '%Own' || { tm_dump "start"; die "stacktop did not show the top view"; }
tm_key_expect 3 5 'TID +NAME +STATE' "threads view with its column header" \
	"no threads view (no 'TID  NAME  STATE' header)"
tm_match 'CPU now' && tm_match 'floor' && tm_match 'SAMPLES' && tm_match 'HOTTEST' &&
	ok "200 columns: CPU now, floor, SAMPLES and HOTTEST columns" ||
	bad_dump "200x50" "200 columns: expected CPU now, floor, SAMPLES and HOTTEST columns"

poller_flagged() { [[ $(row_of "$POLLER") == *"BUSY FLOOR"* ]]; }
if wait_until 20 poller_flagged; then
	ok "poller ($POLLER) flagged BUSY FLOOR"
else
	bad "poller ($POLLER) not flagged BUSY FLOOR within 20 s: row '$(row_of "$POLLER")'"
	tm_dump "waiting for BUSY FLOOR"
fi
sleep 2 # two more refreshes: the flags must hold, and only on poller
scr=$E2E_TMPDIR/screen
tm_screen >"$scr"
prow=$(awk -v t="$POLLER" '$1 == t' "$scr")
irow=$(awk -v t="$IDLER" '$1 == t' "$scr")
mrow=$(awk -v t="$FLOOR" '$1 == t' "$scr")
log "poller: $prow"
log "idler:  $irow"
log "main:   $mrow"
[[ $prow == *poller*"BUSY FLOOR"* ]] && ok "poller row still flagged" || bad "poller row lost its flag: '$prow'"
[[ $prow == *busy_poll* ]] && ok "poller's hottest function is busy_poll" ||
	bad "poller's hottest function should be busy_poll: '$prow'"
listed_not_flagged "$irow" idler "$IDLER" ""
[[ $irow == *" S "* ]] && ok "idler shown sleeping (S)" || bad "idler should be in state S: '$irow'"
# wait channels are read only while this view is shown: switched to from
# the top view, it still names idler's wait (its condition variable)
[[ $irow == *"idle: futex"* ]] && ok "idler's wait channel shown: idle: futex..." ||
	bad "idler's row should name its wait channel (idle: futex...): '$irow'"
listed_not_flagged "$mrow" "main thread" "$FLOOR" " (it sleeps half the time)"
check_cmp "$(grep -c 'BUSY FLOOR' "$scr")" == 1 "exactly one row flagged BUSY FLOOR"
pcpu=$(awk -v t="$POLLER" '$1 == t { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9.]+%$/) { sub("%", "", $i); print $i; exit } }' "$scr")
check_cmp "$pcpu" '>=' 10 "poller CPU now (~30%)"
check_cmp "$pcpu" '<=' 50 "poller CPU now (~30%)"

# sort by floor (poller first), select it, Enter: the top view shows only poller
tm_keys s
tm_wait 3 'sort \(floor\)' && ok "s: sort by floor" || bad_dump "after s" "s: footer should say 'sort (floor)'"
tm_keys Home
first_row() { tm_screen | awk '/TID +NAME +STATE/ { getline; print $1; exit }'; }
poller_first() { [ "$(first_row)" = "$POLLER" ]; }
wait_until 3 poller_first
check_cmp "$(first_row)" == "$POLLER" "sorted by floor: poller is the first row"
tm_keys Enter
if tm_wait 4 "thread $POLLER"; then
	ok "Enter: header says 'thread $POLLER'"
	tm_wait 4 '%Own' && ok "Enter: back in the top view" || bad "Enter: the top view should show"
	top1() { tm_screen >"$scr"; [ "$(rows_of "$scr" | awk 'NR == 1 { print $5 }')" = busy_poll ]; }
	wait_until 4 top1 && ok "narrowed to poller: busy_poll is the first row" ||
		bad_dump "narrowed" "narrowed to poller: first row should be busy_poll"
	tm_match 'main_work' && bad "narrowed to poller, yet main_work (main thread) is listed" ||
		ok "narrowed to poller: main_work not listed"
	tm_keys Escape
	tm_wait_gone 4 "thread $POLLER" && ok "Esc: all threads again" ||
		bad_dump "after Esc" "Esc: header still says 'thread $POLLER'"
else
	bad_dump "after Enter" "Enter on poller: the header should say 'thread $POLLER'"
fi

# 80x24: flag still there, nothing wider than the terminal
tm_keys 3
tm_resize 80 24
sleep 1.5
row80=$(row_of "$POLLER")
[[ $row80 == *"BUSY FLOOR"* ]] && ok "80x24: poller still flagged BUSY FLOOR" ||
	bad_dump "80x24" "80x24: poller row should keep BUSY FLOOR: '$row80'"
check_cmp "$(tm_screen | LC_ALL=C.UTF-8 wc -L)" '<=' 80 "80x24: no line wider than the terminal"
tm_keys q
wait_until 3 tm_dead && ok "q: stacktop exits" || bad "q: stacktop still running"
check_target_healthy "$FLOOR" "floor after q"
tm_stop

e2e_finish
