#!/bin/bash
# test_tui — the live TUI driven through tmux: start on cpuburn, sort keys,
# views, selection, L/K, pause, reset, help, resizing (down to too small),
# quit, target exit; the target must run on untouched afterwards.
. "$(dirname "$0")/lib.sh"
start_tui_cpuburn 0.5

tm_start 200 60 "$STACKTOP" -W 30 -r 499 -p "$CB"

# first screen: header and leaf_a among the top rows
if tm_wait 8 'leaf_a'; then
	ok "screen shows leaf_a"
else
	tm_dump "waiting for leaf_a"
	die "leaf_a never appeared"
fi
tm_match '%Own' && ok "column header shown" || bad "no %Own column header"
tm_match "$CB" && ok "header shows the pid" || bad "header does not show pid $CB"
sleep 2 # let the shares settle (>= 2 s of samples)
scr=$E2E_TMPDIR/screen
tm_screen >"$scr"
rows=$(rows_of "$scr")
first=$(awk 'NR == 1 { print $5 }' <<<"$rows")
[ "$first" = leaf_a ] && ok "sorted by %Own: leaf_a is the first row" ||
	bad_dump "sort own" "sorted by %Own: first row should be leaf_a, seen '$first'"
check_share "$(awk 'NR == 1 { print $1 }' <<<"$rows")" 60 "$(samples_in "$scr")" "first row %Own (leaf_a)"

# ---- sort keys: s / > next column, S / < previous (%Own %Total OwnTime TotalTime) ----
sorted_total() {
	tm_screen >"$scr"
	rows_of "$scr" | awk 'NR == 1 { f = ($2 >= 90 && $5 != "leaf_a") } END { exit !f }'
}
leaf_a_first() {
	tm_screen >"$scr"
	[ "$(rows_of "$scr" | awk 'NR == 1 { print $5 }')" = leaf_a ]
}
# rows out of %Total order on the last capture
total_disorder() { rows_of "$scr" | awk '{ if (NR > 1 && $2 > prev + 0.05) bad++; prev = $2 } END { print bad + 0 }'; }
# A capture may catch a redraw half done (the first row re-sorted, the rest
# not yet): the order must hold on some capture within 3 s, and on none
# does a real misordering.
sorted_in_order() { sorted_total && [ "$(total_disorder)" = 0 ]; }
check_sort_total() { # check_sort_total KEY
	tm_keys "$1"
	if wait_until 3 sorted_total; then
		ok "key $1: sorted by %Total, first row a caller at ~100% ($(rows_of "$scr" | awk 'NR == 1 { print $5 }'))"
		wait_until 3 sorted_in_order
		check_cmp "$(total_disorder)" == 0 "key $1: %Total descending (rows out of order)"
	else
		bad_dump "after key $1" "key $1: first row should be a caller with %Total ~100"
	fi
}
check_sort_own() { # check_sort_own KEY
	tm_keys "$1"
	wait_until 3 leaf_a_first && ok "key $1: back to %Own, leaf_a first" ||
		bad_dump "after key $1" "key $1: sorted by %Own, leaf_a should be first"
}
check_sort_total s
check_sort_own '<'
check_sort_total '>'
check_sort_own S

# ---- 1 2 3: views --------------------------------------------------------------------
tm_keys 3
if tm_wait 3 'worker-0' && tm_match 'TID'; then
	ok "key 3: threads view lists worker-0"
else
	bad_dump "after key 3" "key 3: no threads view (TID, worker-0)"
fi
tm_keys 2
tm_wait 3 'leaf_a' && tm_wait_gone 3 '%Own' && ok "key 2: icicle view shows leaf_a" ||
	bad_dump "after key 2" "key 2: no icicle view with leaf_a"
tm_keys 1
tm_wait 3 '%Own' && tm_wait 3 'leaf_a' && leaf_a_first && ok "key 1: top view back, leaf_a first" ||
	bad_dump "after key 1" "key 1: top view not back"

# ---- selection: arrows, Home, End, PgDn ------------------------------------------------
row_fn() { rows_of "$scr" | awk -v n="$1" 'NR == n { print $5 }'; }
sel_is() { # sel_is N: the selection is on row N (N = "last" for the last row)
	local n=$1 want
	tm_screen >"$scr"
	[ "$n" = last ] && n=$(rows_of "$scr" | wc -l)
	want=$(row_fn "$n")
	[ -n "$want" ] && [ "$(tm_selected)" = "$want" ]
}
check_sel() { # check_sel KEYS N MSG
	tm_keys $1
	if wait_until 3 sel_is "$2"; then
		ok "$3: selection on row $2 ($(tm_selected))"
	else
		bad "$3: selection should be on row $2 ($(row_fn "$2")), seen '$(tm_selected)'"
	fi
}
# Paused, so the rows stay put: live, a row that appears at the end of the
# table between End and the check would make "last" another row.
tm_keys Space
tm_wait 3 'PAUSED' || bad "space: no [PAUSED] before the selection keys"
check_sel Home 1 "Home"
check_sel "Down Down" 3 "Down Down"
check_sel Up 2 "Up"
check_sel End last "End"
check_sel Home 1 "Home again"
check_sel NPage last "PgDn (the table fits on one page)"
check_sel PPage 1 "PgUp"
tm_keys Space
tm_wait_gone 3 'PAUSED' || bad "space: still [PAUSED] after the selection keys"

# ---- L: by line, K: kernel frames ------------------------------------------------------
tm_keys L
if tm_wait 3 'leaf_a \(cpuburn\.c:[0-9]+\)'; then
	ok "L: rows show cpuburn.c:LINE"
else
	bad_dump "after L" "L: no 'leaf_a (cpuburn.c:LINE)' row"
fi
tm_keys L
tm_wait 3 'leaf_a \(cpuburn\.c\)' && ok "L again: back to functions" || bad "L again: no 'leaf_a (cpuburn.c)' row"
tm_keys K
sleep 1.2
tm_match '\[k\]' && bad "K: kernel frames ([k]) still shown" || ok "K: no kernel frames shown"
tm_match 'leaf_a' && ok "K: user frames still shown" || bad "K: leaf_a gone"
tm_keys K

# ---- space: pause ----------------------------------------------------------------
tm_keys Space
if tm_wait 3 '\[PAUSED\]'; then
	ok "space: [PAUSED] shown"
	sleep 0.5
	tm_screen >"$scr.1"
	sleep 2
	tm_screen >"$scr.2"
	if cmp -s "$scr.1" "$scr.2"; then
		ok "paused: the screen does not change over 2 s"
	else
		bad "paused: the screen changed over 2 s"
		diff "$scr.1" "$scr.2" | head -n 10
	fi
else
	bad_dump "after space" "space: no [PAUSED] in the header"
fi
tm_keys Space
tm_wait_gone 3 '\[PAUSED\]' && ok "space again: [PAUSED] gone" || bad "space again: [PAUSED] still shown"
tm_screen >"$scr.1"
sleep 2.5
tm_screen >"$scr.2"
cmp -s "$scr.1" "$scr.2" && bad "unpaused: the screen did not change over 2.5 s" ||
	ok "unpaused: the screen updates"

# ---- R: reset ------------------------------------------------------------------------
samples_now() { tm_screen | awk '/samples [0-9]/ { for (i = 1; i < NF; i++) if ($i == "samples") { n = $(i + 1); gsub(",", "", n); print n; exit } }'; }
before=$(samples_now)
check_cmp "$before" '>' 40 "samples counted before reset"
tm_keys R
reset_done() { local n; n=$(samples_now); [ -n "$n" ] && [ "$n" -lt $((before / 2)) ]; }
if wait_until 3 reset_done; then
	ok "R: sample count restarts ($before -> $(samples_now))"
else
	bad_dump "after R" "R: sample count should drop below $((before / 2)), seen $(samples_now)"
fi
tm_wait 4 'leaf_a' && ok "after reset: leaf_a back" || bad "after reset: leaf_a missing"

# ---- ?: help --------------------------------------------------------------------------
tm_keys '?'
if tm_wait 3 '[Qq]uit'; then
	ok "?: help screen lists quit"
	tm_match '[Pp]ause|[Ff]reeze' && ok "help lists pause (freeze)" || bad "help does not mention pause/freeze"
	tm_match '%Total' && ok "help lists the sort keys" || bad "help does not mention %Total (the sort columns)"
else
	bad_dump "after ?" "?: no help screen mentioning quit"
fi
tm_keys x
tm_wait 3 'leaf_a' && tm_match '%Own' && ok "any key leaves help" ||
	bad_dump "after help" "after help + x: table not back"
alive "$(tm_pid)" && ! tm_dead && ok "a key in the help screen does not quit" || bad "stacktop exited from the help screen"

# ---- resize ----------------------------------------------------------------------------
tm_resize 80 24
sleep 1.5
if tm_match 'leaf_a' && tm_match '%Own' && tm_match 'stacktop'; then
	ok "80x24: header, columns and leaf_a shown"
else
	bad_dump "80x24" "80x24: expected header, %Own and leaf_a"
fi
# display width (wc -L counts characters, not bytes: the screen may hold UTF-8)
check_cmp "$(tm_screen | LC_ALL=C.UTF-8 wc -L)" '<=' 80 "80x24: no line wider than the terminal"

tm_resize 40 10
if tm_wait 3 '[Tt]oo small'; then
	ok "40x10: says the terminal is too small"
else
	bad_dump "40x10" "40x10: no 'too small' message"
fi
tm_resize 100 30
if tm_wait 3 'leaf_a' && tm_wait_gone 3 '[Tt]oo small'; then
	ok "100x30: table back"
else
	bad_dump "100x30" "100x30: table not back"
fi
tm_dead && bad "stacktop died while resizing (status $(tm_status))"

# ---- q: quit ----------------------------------------------------------------------------
ST=$(tm_pid)
tm_keys q
if wait_until 3 tm_dead; then
	ok "q: stacktop exits"
	st=$(tm_status)
	check_cmp "$st" == 0 "q: exit status"
	[ "$st" = 0 ] || tm_dump "after q"
else
	bad_dump "after q" "q: stacktop still running after 3 s"
fi
check_target_healthy "$CB" "after q" burns

# ---- target exits under the TUI -----------------------------------------------------------
tm_stop
start_bg "$TARGETS/cpuburn" 1 4
SHORT=$BG_PID
tm_start 120 40 "$STACKTOP" -p "$SHORT"
tm_wait 5 'leaf_a' || bad "short-lived target: leaf_a never appeared"
if tm_wait 8 '[Tt]arget exited|exited'; then
	ok "target exit: the screen says the target exited"
	line=$(tm_screen | grep -E 'exited' | head -n 1 | sed 's/  */ /g')
	case $line in
	*"target target"*) bad "target exit: garbled sentence (word repeated): $line" ;;
	*) ok "target exit: clean sentence: $line" ;;
	esac
	tm_match 'leaf_a' && ok "target exit: the last data stays" || bad "target exit: the table was cleared"
else
	bad_dump "after target exit" "target exit: no 'target exited' line"
fi
tm_dead && bad "target exit: stacktop quit by itself (it should wait for q)"
tm_keys q
wait_until 3 tm_dead && ok "target exit: q quits" || bad "target exit: q did not quit"

e2e_finish
