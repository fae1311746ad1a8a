#!/bin/bash
# test_subprocesses — --subprocesses follows what the target forks and execs.
#
#   - a launched shell that runs cpuburn (sh -c 'cpuburn 1 10; exit 0', so
#     the shell forks rather than execs): with --subprocesses cpuburn's hot
#     leaf (leaf_a) is in the table and the header counts the child;
#     without, only the shell is profiled and leaf_a is absent;
#   - a pre-fork server (tests/targets/prefork.c: the parent only waits, two
#     workers burn in prefork_burn) attached with -p PARENT: prefork_burn
#     with --subprocesses, absent without; the icicle view too; in wall mode
#     (-w) as well, and the workers are left running, not stopped or traced;
#   - the run lasts until the launched command AND its children are gone,
#     and ends then with the command's exit status.
#
# STACKTOP_BIN overrides the binary (to try a build before it lands).
. "$(dirname "$0")/lib.sh"
STACKTOP=${STACKTOP_BIN:-$STACKTOP}
trap e2e_cleanup_trees EXIT
need_stacktop
need_target cpuburn
need_target prefork

# run NAME ARGS...: stacktop ARGS into $E2E_TMPDIR/NAME.out; ok when it exits 0.
run() {
	local name=$1
	shift
	if timeout 40 "$STACKTOP" "$@" >"$E2E_TMPDIR/$name.out" 2>"$E2E_TMPDIR/$name.err"; then
		ok "$name: stacktop $* exits 0"
	else
		bad "$name: stacktop $* exited $?: $(head -c 300 "$E2E_TMPDIR/$name.err")"
	fi
}
# has_fn NAME FUNC: FUNC has a row with samples (%Total > 0) in the last
# table of NAME (cpu mode: function in column 5; wall mode, after OnCPU
# OffCPU Wait: column 6).
has_fn() {
	rows_of "$E2E_TMPDIR/$1.out" |
		awk -v f="$2" '($5 == f || $6 == f) && $2 > 0 { found = 1 } END { exit !found }'
}
show() {
	log "output of $1:"
	tail -n 30 "$E2E_TMPDIR/$1.out" | sed 's/^/  | /'
}

# ---- a launched shell that forks cpuburn ------------------------------------------
CMD="$TARGETS/cpuburn 1 10; exit 0"
run launched -b -n 3 --subprocesses -- sh -c "$CMD"
if has_fn launched leaf_a; then
	ok "launched: cpuburn's leaf_a is shown"
else
	bad "launched: no leaf_a with --subprocesses"
	show launched
fi
if grep -qE '^stacktop  pid [0-9]+ \+1 child  sh -c' "$E2E_TMPDIR/launched.out"; then
	ok "launched: the header says 'pid N +1 child'"
else
	bad "launched: the header does not count the child"
	show launched
fi

# Quitting stops the command: the shell and, following, its cpuburn.
CB=$(pgrep -f -n "^$TARGETS/cpuburn 1 10\$")
if [ -z "$CB" ] || wait_until 3 gone "$CB"; then
	ok "launched: cpuburn, started by the command, ended with it"
else
	bad "launched: cpuburn $CB still runs after stacktop quit"
	kill -KILL "$CB"
fi

run launched_only -b -n 3 -- sh -c "$CMD"
if has_fn launched_only leaf_a; then
	bad "launched_only: leaf_a shown without --subprocesses"
	show launched_only
else
	ok "launched_only: without --subprocesses only the shell (no leaf_a)"
fi
grep -qE 'pid [0-9]+ \+[0-9]+ child' "$E2E_TMPDIR/launched_only.out" &&
	bad "launched_only: the header speaks of children" ||
	ok "launched_only: no children in the header"

# ---- the run ends with the last descendant ---------------------------------------
# The shell waits for cpuburn (2 s), then exits 3: the run ends there, long
# before 20 refreshes.
t0=$(date +%s)
if timeout 40 "$STACKTOP" -b -n 20 --subprocesses -- sh -c "$TARGETS/cpuburn 1 2; exit 3" \
	>"$E2E_TMPDIR/ends.out" 2>"$E2E_TMPDIR/ends.err"; then
	ok "ends: exits 0"
else
	bad "ends: exited $?: $(head -c 300 "$E2E_TMPDIR/ends.err")"
fi
# a deadline, not a measurement: ~3 s when it ends with the child, 20 s if not
check_cmp "$(($(date +%s) - t0))" '<=' 12 "ends: stops once the command and its child are gone (seconds)"
grep -q 'target exited with status 3' "$E2E_TMPDIR/ends.out" &&
	ok "ends: the exit text is the command's status" ||
	{ bad "ends: no 'target exited with status 3'"; show ends; }
grep -q 'leaf_a' "$E2E_TMPDIR/ends.out" && ok "ends: the child's samples are kept" ||
	bad "ends: no leaf_a in the last data"

# ---- a pre-fork server, attached ---------------------------------------------------
"$TARGETS/prefork" 90 >"$E2E_TMPDIR/prefork.txt" 2>&1 &
PF=$!
BG_PIDS+=("$PF")
disown "$PF" # killed by the EXIT trap: no "Killed" notice from bash
workers_up() { grep -q '^prefork: parent' "$E2E_TMPDIR/prefork.txt"; }
wait_until 5 workers_up || die "prefork did not start its workers"
read -r W1 W2 < <(awk '{ print $5, $6 }' "$E2E_TMPDIR/prefork.txt")
log "prefork parent $PF, workers $W1 $W2"
sleep 0.3

run prefork -b -n 2 --subprocesses -p "$PF"
if has_fn prefork prefork_burn; then
	ok "prefork: the workers' prefork_burn is shown"
else
	bad "prefork: no prefork_burn with --subprocesses"
	show prefork
fi
grep -qE "^stacktop  pid $PF \+2 children" "$E2E_TMPDIR/prefork.out" &&
	ok "prefork: the header says 'pid $PF +2 children'" ||
	{ bad "prefork: the header does not count 2 children"; show prefork; }

run prefork_only -b -n 2 -p "$PF"
has_fn prefork_only prefork_burn &&
	{ bad "prefork_only: prefork_burn shown without --subprocesses"; show prefork_only; } ||
	ok "prefork_only: without --subprocesses the parent only (no prefork_burn)"

run prefork_icicle -b -n 2 --view icicle --subprocesses -p "$PF"
grep -q 'prefork_burn' "$E2E_TMPDIR/prefork_icicle.out" &&
	ok "prefork_icicle: prefork_burn in the icicle" ||
	{ bad "prefork_icicle: no prefork_burn in the icicle"; show prefork_icicle; }

# ---- wall mode -----------------------------------------------------------------------
run prefork_wall -b -w -n 2 --subprocesses -p "$PF"
if has_fn prefork_wall prefork_burn; then
	ok "prefork_wall: prefork_burn in wall mode"
else
	bad "prefork_wall: no prefork_burn in wall mode"
	show prefork_wall
fi
grep -q 'wait4' "$E2E_TMPDIR/prefork_wall.out" &&
	ok "prefork_wall: the parent waiting in wait4 too" ||
	bad "prefork_wall: the parent's wait4 is missing"
for w in "$W1" "$W2" "$PF"; do
	check_target_healthy "$w" "after wall mode, pid $w"
done

run launched_wall -b -w -n 3 --subprocesses -- sh -c "$CMD"
has_fn launched_wall leaf_a && ok "launched_wall: leaf_a in wall mode" ||
	{ bad "launched_wall: no leaf_a in wall mode"; show launched_wall; }

e2e_finish
