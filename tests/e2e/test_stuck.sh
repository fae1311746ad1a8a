#!/bin/bash
# test_stuck — the threads view (key 3) in the live TUI, driven through tmux
# (issue 3), on a process with stuck threads:
#
#   stuck  thread "loader" sits in D (a vfork parent) and a child process is
#          a zombie nobody reaps: loader is flagged STUCK (D for Ns) after a
#          few seconds, the zombie child is listed as "[child] Z defunct"
#          and flagged ZOMBIE.
#
# No CPU share here (the flags come from states and how long they last), so
# it runs beside other tests; test_threads' busy floor runs alone.
# Every process started here (and any child it forked) is killed on exit.
. "$(dirname "$0")/lib.sh"
need_stacktop
need_target stuck
need_tmux

trap e2e_cleanup_trees EXIT

# row_of TID: the threads-view row of TID on the screen (TID is the first field).
row_of() { tm_screen | awk -v t="$1" '$1 == t { print; exit }'; }

start_bg "$TARGETS/stuck"
STUCK=$BG_PID
loader_in_d() { LOADER=$(tid_named "$STUCK" loader) && [ "$(proc_state "$STUCK/task/$LOADER")" = D ]; }
wait_until 3 loader_in_d || die "stuck: no thread 'loader' in state D ($(proc_state "$STUCK/task/$LOADER" 2>/dev/null))"
ZOMBIE=
zombie_there() {
	local c
	for c in $(pgrep -P "$STUCK"); do
		[ "$(proc_state "$c")" = Z ] && { ZOMBIE=$c; return 0; }
	done
	return 1
}
wait_until 3 zombie_there || die "stuck: no zombie child"
log "stuck: pid $STUCK, loader $LOADER in D, zombie child $ZOMBIE"

tm_start 200 50 "$STACKTOP" -p "$STUCK"
tm_wait 8 'stacktop' || { tm_dump "start"; die "stacktop did not start on stuck"; }
tm_keys 3
tm_wait 5 'TID +NAME +STATE' || { tm_dump "after key 3"; die "key 3: no threads view"; }
T_START=$(date +%s)
loader_stuck() { [[ $(row_of "$LOADER") =~ STUCK\ \(D\ for\ [0-9] ]]; }
if wait_until 15 loader_stuck; then
	ok "loader ($LOADER) flagged STUCK after $(($(date +%s) - T_START)) s: $(row_of "$LOADER")"
else
	bad "loader ($LOADER) not flagged 'STUCK (D for Ns)' within 15 s: row '$(row_of "$LOADER")'"
	tm_dump "waiting for STUCK"
fi
[[ $(row_of "$LOADER") == *loader*" D "* ]] && ok "loader shown in state D" ||
	bad "loader should show state D: '$(row_of "$LOADER")'"
zrow=$(row_of "$ZOMBIE")
if [[ $zrow =~ \[child\]\ +Z\ defunct.*ZOMBIE ]]; then
	ok "zombie child $ZOMBIE listed as '[child] Z defunct' and flagged ZOMBIE"
else
	bad_dump "zombie" "zombie child $ZOMBIE should be a row '[child] Z defunct ... ZOMBIE', seen '$zrow'"
fi
mrow=$(row_of "$STUCK")
[[ -n $mrow && $mrow != *STUCK* && $mrow != *ZOMBIE* ]] && ok "main thread listed, not flagged" ||
	bad "main thread should be listed without flags: '$mrow'"
tm_keys q
wait_until 3 tm_dead && ok "q: stacktop exits" || bad "q: stacktop still running"
check_target_healthy "$STUCK" "stuck after q"
[ "$(proc_state "$STUCK/task/$LOADER")" = D ] && ok "loader still in D (untouched)" ||
	bad "loader left D: $(proc_state "$STUCK/task/$LOADER")"

e2e_finish
