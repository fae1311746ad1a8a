#!/bin/bash
# test_footprint — capstone and libdebuginfod are opened on first use
# (lib/dynload), not at start-up (issue 25):
#  - the TUI on hotloop: neither library (nor libcurl, libdebuginfod's
#    HTTP stack) is mapped in stacktop while the top view runs;
#  - a (annotate) maps capstone, and the view disassembles as before;
#  - --debuginfod=URL maps libdebuginfod from the start (its worker).
. "$(dirname "$0")/lib.sh"
need_stacktop
need_target hotloop
need_tmux

# mapped PID WORD: PID's maps name a file containing WORD.
mapped() { grep -q -- "$2" "/proc/$1/maps" 2>/dev/null; }

start_target 1 hotloop
HP=$BG_PID
tm_start 80 24 "$STACKTOP -r 499 -p $HP"
tm_wait 10 'hot_loop' || { tm_dump "start"; die "the top view shows no hot_loop"; }
SP=$(tm_pid)
[ -n "$SP" ] && alive "$SP" || die "no stacktop process under tmux"
for lib in libcapstone libdebuginfod libcurl; do
	if mapped "$SP" "$lib"; then
		bad "$lib is mapped before any annotate or --debuginfod"
	else
		ok "$lib not mapped at start-up"
	fi
done
tm_key_expect a 5 'annotate hot_loop ' "a opens the annotate view" "no annotate view"
tm_wait 5 '^ +[0-9]+\.[0-9]%  0x[0-9a-f]+  ' || { tm_dump "a"; die "no instruction with a share"; }
ok "the annotate view disassembles"
if mapped "$SP" libcapstone; then ok "a mapped capstone"; else bad "capstone not mapped after a"; fi
tm_stop

# --debuginfod: the client is opened by the worker's set-up (no server needed
# to be reached: the URL is never asked for a file hotloop's symbols have).
tm_start 80 24 "$STACKTOP -r 99 --debuginfod=http://127.0.0.1:9 -p $HP"
tm_wait 10 'hot_loop' || { tm_dump "debuginfod"; die "no top view with --debuginfod"; }
SP=$(tm_pid)
if mapped "$SP" libdebuginfod; then
	ok "--debuginfod mapped libdebuginfod"
else
	bad "libdebuginfod not mapped with --debuginfod"
fi
tm_stop
kill "$HP"
e2e_finish
