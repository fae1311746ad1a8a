#!/bin/bash
# test_writekey — the TUI's w key writes what is on screen to a profile file
# (pprof, named with the pid and the time, in --output-dir), says the path on
# the status line, respects the thread narrowing, never overwrites, and the
# file reads back with `stacktop report`. Also `report` in the TUI.
. "$(dirname "$0")/lib.sh"
start_tui_cpuburn 0.3
OUT=$E2E_TMPDIR/profiles
mkdir -p "$OUT"

tm_start 160 40 "$STACKTOP" -r 499 -W 20 --output-dir "$OUT" -p "$CB"
tm_wait 8 'leaf_a' || { tm_dump "top view"; die "top view never showed leaf_a"; }
sleep 2
tm_keys w
if tm_wait 4 "wrote $OUT/stacktop-$CB-[0-9]{8}-[0-9]{6}\\.pb\\.gz"; then
	ok "w: the status line names the file"
else
	tm_dump "after w"
	bad "w: no 'wrote PATH' on the status line"
fi
f=$(ls "$OUT"/stacktop-"$CB"-*.pb.gz 2>/dev/null | head -n 1)
[ -n "$f" ] && [ -s "$f" ] && ok "w: $f exists and is not empty" || bad "w: no profile file in $OUT"

# The file reads back with the same hot leaf.
if [ -n "$f" ]; then
	"$STACKTOP" report -b -l 5 "$f" >"$E2E_TMPDIR/rep.out" 2>&1
	check_cmp "$?" == 0 "report -b on the written file exits 0"
	first=$(awk '/%Own/ { getline; print $5; exit }' "$E2E_TMPDIR/rep.out")
	[ "$first" = leaf_a ] && ok "report: leaf_a first, as on screen" ||
		{ bad "report: first row '$first', not leaf_a"; cat "$E2E_TMPDIR/rep.out"; }
	grep -q "stacktop  report  $f" "$E2E_TMPDIR/rep.out" && ok "report: header names the file" ||
		bad "report: header does not name the file"
fi

# Narrowed to the worker thread: the status line says so.
tm_keys 3
tm_wait 4 'TID' || tm_dump "threads view"
tm_keys Home Enter
sleep 1
sleep 1.1 # the next file gets a new second in its name
tm_keys w
tm_wait 4 'this thread only' && ok "w after narrowing says 'this thread only'" ||
	{ tm_dump "after narrowed w"; bad "w after narrowing does not say so"; }
n=$(ls "$OUT"/stacktop-"$CB"-*.pb.gz 2>/dev/null | wc -l)
check_cmp "$n" == 2 "two profile files written"

# An output dir that cannot be written: one clear sentence, no crash.
tm_keys q
wait_until 3 tm_dead || bad "q did not quit"
tm_stop
tm_start 160 40 "$STACKTOP" -W 20 --output-dir /proc/nonexistent -p "$CB"
tm_wait 8 'leaf_a' || tm_dump "top view 2"
tm_keys w
tm_wait 4 '^! ' && ok "w into an unwritable dir: an error line" ||
	{ tm_dump "after failing w"; bad "w into an unwritable dir: no error shown"; }
alive "$(tm_pid)" && ! tm_dead && ok "stacktop still running after the failed write" ||
	bad "stacktop died after a failed write"
tm_keys q
wait_until 3 tm_dead || bad "q did not quit"
tm_stop

# report in the TUI: the same views, offline; q quits.
if [ -n "$f" ]; then
	tm_start 120 30 "$STACKTOP" report "$f"
	tm_wait 5 'leaf_a' && ok "report TUI shows leaf_a" || { tm_dump "report TUI"; bad "report TUI"; }
	tm_keys 2
	tm_wait 4 '^\[' && ok "report TUI: icicle view" || { tm_dump "report icicle"; bad "report icicle"; }
	tm_keys q
	wait_until 3 tm_dead && ok "report TUI: q quits" || bad "report TUI: q did not quit"
fi
check_target_healthy "$CB" "after the w tests" burns
e2e_finish
