#!/bin/bash
# test_safety — a target is never left stopped or traced, whatever happens to
# stacktop: kill -9, SIGTERM, SIGHUP (the SSH connection drops: tmux
# kill-session), Ctrl-C, in cpu (perf) and wall (ptrace) mode. A launched
# command does not outlive stacktop. Names from the target never reach the
# terminal unfiltered.
. "$(dirname "$0")/lib.sh"
start_tui_cpuburn 0.5

# attach LABEL: stacktop in tmux on cpuburn, until it shows leaf_a
attach() { tm_attach leaf_a "$1" -W 10 -p "$CB"; }

# ---- kill -9 ---------------------------------------------------------------------
if attach "kill -9"; then
	kill -KILL "$ST"
	wait_until 3 gone "$ST" && ok "kill -9: stacktop gone" || bad "kill -9: stacktop $ST still there"
	sleep 0.3
	check_target_healthy "$CB" "kill -9" burns
fi

# ---- SIGTERM -----------------------------------------------------------------------
if attach "SIGTERM"; then
	kill -TERM "$ST"
	wait_until 3 gone "$ST" && ok "SIGTERM: stacktop exits within 3 s" || bad "SIGTERM: stacktop $ST still running after 3 s"
	check_target_healthy "$CB" "SIGTERM" burns
fi

# ---- SIGHUP --------------------------------------------------------------------------
if attach "SIGHUP"; then
	kill -HUP "$ST"
	wait_until 3 gone "$ST" && ok "SIGHUP: stacktop exits within 3 s" || bad "SIGHUP: stacktop $ST still running after 3 s"
	check_target_healthy "$CB" "SIGHUP" burns
fi

# ---- the terminal goes away (SSH drop) -------------------------------------------------
# stacktop as the session leader (TM_EXEC): closing the pty sends it SIGHUP.
if TM_EXEC=1 attach "terminal closed"; then
	tm kill-session -t e2e
	wait_until 3 gone "$ST" && ok "terminal closed (tmux kill-session): stacktop exits within 3 s" ||
		bad "terminal closed (tmux kill-session): stacktop $ST still running after 3 s"
	check_target_healthy "$CB" "terminal closed" burns
	alive "$ST" && kill -KILL "$ST" 2>/dev/null
fi
# under a shell that keeps the session (the wrapper traps HUP): no signal
# reaches stacktop, only a dead terminal (EOF/EIO on stdin). It must still
# exit, not spin.
if attach "terminal closed, no SIGHUP"; then
	tm kill-session -t e2e
	if wait_until 3 gone "$ST"; then
		ok "terminal closed without SIGHUP: stacktop exits within 3 s"
	else
		a=$(proc_cpu_ticks "$ST")
		sleep 1
		b=$(proc_cpu_ticks "$ST")
		bad "terminal closed without SIGHUP (stdin at EOF/EIO): stacktop $ST still running after 3 s, using $((b - a)) ticks/s of CPU"
		kill -KILL "$ST" 2>/dev/null
	fi
	check_target_healthy "$CB" "terminal closed without SIGHUP" burns
fi

# ---- Ctrl-C --------------------------------------------------------------------------------
if attach "Ctrl-C"; then
	tm_keys C-c
	if wait_until 3 tm_dead; then
		ok "Ctrl-C: stacktop exits"
		st=$(tm_status)
		[ "$st" = 0 ] || [ "$st" = 130 ] && ok "Ctrl-C: exit status $st" || bad "Ctrl-C: exit status: expected 0 or 130, seen '$st'"
	else
		bad "Ctrl-C: stacktop still running after 3 s"
	fi
	check_target_healthy "$CB" "Ctrl-C" burns
fi

# ---- kill -9 while paused (the sampler must not depend on the display) -------------------
if attach "kill -9 while paused"; then
	tm_keys Space
	sleep 0.5
	kill -KILL "$ST"
	wait_until 3 gone "$ST" || bad "kill -9 while paused: stacktop $ST still there"
	check_target_healthy "$CB" "kill -9 while paused" burns
fi
tm_stop

# ---- wall mode (ptrace): killed at any moment, even between INTERRUPT and CONT ----------
# A high rate keeps a thread stopped as much of the time as possible, so a
# signal is likely to land mid-sample. Each round: attach, sample a moment,
# then a signal; the target must run on, untraced.
wall_round() { # wall_round SIGNAL DELAY
	tm_attach leaf_a "wall $1" --wall -r 500 -W 10 -p "$CB" || return
	sleep "$2"
	kill -"$1" "$ST"
	wait_until 3 gone "$ST" || { bad "wall $1: stacktop $ST still running after 3 s"; kill -KILL "$ST" 2>/dev/null; }
	check_target_healthy "$CB" "wall, SIG$1 after ${2}s" burns
}
wall_round KILL 0
wall_round KILL 0.47
wall_round TERM 0.2
wall_round INT 0.1
wall_round HUP 0.3
tm_stop

# ---- a launched command is stacktop's child: gone after q ---------------------------------
tm_start 120 40 "$STACKTOP" -W 10 -- "$TARGETS/cpuburn" 1 600
if tm_wait 8 'leaf_a'; then
	ST=$(tm_pid)
	CHILD=$(pgrep -P "$ST" | head -n 1)
	if [ -z "$CHILD" ]; then
		bad "launch: no child process under stacktop $ST"
	else
		ok "launch: command runs as stacktop's child ($CHILD)"
		check_cmp "$(proc_stopped_threads "$CHILD" | wc -w)" == 0 "launch: no thread of the command stopped"
		tm_keys q
		wait_until 3 tm_dead && ok "launch: q quits" || bad "launch: q did not quit"
		if wait_until 3 gone "$CHILD"; then
			ok "launch: the command is gone after q"
		else
			bad "launch: the command $CHILD still runs after q (state $(proc_state "$CHILD"))"
			kill -KILL "$CHILD" 2>/dev/null
		fi
	fi
else
	tm_dump "launch"
	bad "launch: leaf_a never appeared"
fi
tm_stop

# ---- a launched command, stacktop killed with SIGTERM: the command must not be left stopped ----
tm_start 120 40 "$STACKTOP" -W 10 -- "$TARGETS/cpuburn" 1 600
if tm_wait 8 'leaf_a'; then
	ST=$(tm_pid)
	CHILD=$(pgrep -P "$ST" | head -n 1)
	kill -TERM "$ST"
	wait_until 3 gone "$ST" || bad "launch + SIGTERM: stacktop $ST still running"
	if [ -n "$CHILD" ] && wait_until 3 gone "$CHILD"; then
		ok "launch + SIGTERM: the command is gone too"
	elif [ -n "$CHILD" ]; then
		bad "launch + SIGTERM: the command $CHILD outlives stacktop (state $(proc_state "$CHILD"))"
		kill -KILL "$CHILD" 2>/dev/null
	fi
else
	bad "launch + SIGTERM: leaf_a never appeared"
fi
tm_stop

# ---- nothing from the target reaches the terminal unfiltered ---------------------------
# argv[0] (the command line in the header) and a thread name (threads view)
# carry escape sequences, a BEL and invalid UTF-8.
need_target idle
EVIL_ARG0=$(printf 'evil\e]2;PWNED\a\e[2J\xff\xfe\x01name')
EVIL_THREAD=$(printf '\e]2;PWN\a\e[H') # 11 bytes, fits the 15 of a comm
start_bg bash -c 'exec -a "$1" "$2" 0 "$3"' _ "$EVIL_ARG0" "$TARGETS/idle" "$EVIL_THREAD"
EV=$BG_PID
sleep 0.5
out=$E2E_TMPDIR/evil.out
run_ok 10 "$out" "hostile names: batch run exits 0" -b -n 1 -d 1 -p "$EV"
grep -q 'evil' "$out" && grep -q 'name' "$out" && ok "hostile names: the command line is shown" ||
	bad "hostile names: command line (evil...name) not in the header: $(head -n 1 "$out" | cat -v)"
ctl=$(LC_ALL=C grep -c $'[\x01-\x08\x0b-\x1f\x7f]' "$out")
check_cmp "$ctl" == 0 "hostile names: batch output lines with control characters"
[ "$ctl" = 0 ] || LC_ALL=C grep $'[\x01-\x08\x0b-\x1f\x7f]' "$out" | head -n 3 | cat -v
iconv -f UTF-8 -t UTF-8 "$out" >/dev/null 2>&1 && ok "hostile names: batch output is valid UTF-8" ||
	bad "hostile names: batch output is not valid UTF-8"
tm_start 120 40 "$STACKTOP" -p "$EV"
if tm_wait 8 'evil'; then
	tm_keys 3
	sleep 1.5
	title=$(tm display-message -p -t e2e '#{pane_title}')
	case $title in
	*PWN*) bad "hostile names: an escape sequence from the target set the terminal title to '$title'" ;;
	*) ok "hostile names: terminal title untouched ('$title')" ;;
	esac
	tm_match 'idle' && ok "hostile names: threads view drawn" || bad_dump "evil threads" "hostile names: no threads view"
	tm_keys q
	wait_until 3 tm_dead || bad "hostile names: q did not quit"
else
	bad_dump "evil" "hostile names: the TUI never showed the command line"
fi
tm_stop

e2e_finish
