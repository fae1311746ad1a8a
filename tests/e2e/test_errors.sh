#!/bin/bash
# test_errors — every error a user can cause gets a clear message on stderr
# and the documented exit status: 2 for usage errors, 1 for runtime errors
# (no such process, no permission, a command that cannot be run). Never a
# crash (status >= 128), never a hang (each run under timeout 10).
. "$(dirname "$0")/lib.sh"
need_stacktop
need_target idle

# run_st NAME ARGS...: run stacktop in batch-friendly conditions (no tty),
# leaving its status in $rc and its stderr/stdout in $err/$outp.
run_st() {
	local name=$1
	shift
	err=$E2E_TMPDIR/$name.err
	outp=$E2E_TMPDIR/$name.out
	timeout 10 "$@" >"$outp" 2>"$err" </dev/null
	rc=$?
}

# expect STATUS NAME [REGEX] -- CMD...: status, a non-empty message whose
# first line is one sentence-like line, and (if given) a regex it must match.
expect() {
	local want=$1 name=$2 re=$3
	shift 4
	run_st "$name" "$@"
	if [ "$rc" = 124 ]; then
		bad "$name: hung (killed after 10 s): $*"
		return
	fi
	if [ "$rc" = "$want" ]; then ok "$name: exit status $want"; else bad "$name: exit status: expected $want, seen $rc ($*)"; fi
	local lines first
	lines=$(grep -c . "$err")
	first=$(head -n 1 "$err")
	if [ "$lines" -eq 0 ]; then
		bad "$name: no message on stderr"
		return
	fi
	# the message plus at most a one-line hint (e.g. "Try 'stacktop --help'"),
	# not a usage dump
	check_cmp "$lines" '<=' 2 "$name: stderr is a short message, not a dump (lines)"
	check_cmp "${#first}" '>=' 10 "$name: the message says something (chars)"
	if [ -n "$re" ]; then
		if grep -Eiq -- "$re" "$err"; then
			ok "$name: message matches /$re/"
		else
			bad "$name: message should match /$re/, seen: $(head -c 300 "$err")"
		fi
	fi
	if grep -q $'\e' "$err" "$outp"; then
		bad "$name: escape sequences printed (curses started?)"
	fi
}

# expect_tui STATUS NAME REGEX -- CMD...: the same on a real terminal (a
# tmux pane), where stacktop would start its TUI: the error must come before
# curses starts (stderr readable, status right, nothing drawn).
expect_tui() {
	local want=$1 name=$2 re=$3
	shift 4
	err=$E2E_TMPDIR/$name.err
	tm_stop
	tm_start 100 30 "$*" "2>$err"
	if ! wait_until 10 tm_dead; then
		bad_dump "$name" "$name: still running after 10 s on a terminal: $*"
		tm_stop
		return
	fi
	rc=$(tm_status)
	if [ "$rc" = "$want" ]; then ok "$name: exit status $want"; else bad "$name: exit status: expected $want, seen '$rc' ($*)"; fi
	check_cmp "$(grep -c . "$err")" '>=' 1 "$name: message on stderr (lines)"
	if grep -Eiq -- "$re" "$err"; then
		ok "$name: message matches /$re/"
	else
		bad "$name: message should match /$re/, seen: $(head -c 300 "$err")"
	fi
	tm_stop
}

# ---- usage errors: status 2 -------------------------------------------------------
expect 2 unknown-option '' -- "$STACKTOP" --bogus-option
expect 2 unknown-short '' -- "$STACKTOP" -Z
expect 2 pid-and-command '' -- "$STACKTOP" -p 1 -- /bin/true
expect 2 bad-pid 'abc|pid' -- "$STACKTOP" -b -p abc
expect 2 bad-pid-suffix '' -- "$STACKTOP" -b -p 12x
expect 2 bad-rate '' -- "$STACKTOP" -b -r fast -p 1
expect 2 zero-rate '' -- "$STACKTOP" -b -r 0 -p 1
expect 2 bad-delay '' -- "$STACKTOP" -b -d soon -p 1
expect 2 bad-count '' -- "$STACKTOP" -b -n x -p 1
expect 2 bad-limit '' -- "$STACKTOP" -b -l -5 -p 1
expect 2 bad-window '' -- "$STACKTOP" -b -W 0 -p 1
expect 2 bad-sort 'own|total|sort' -- "$STACKTOP" -b -s bogus -p 1

# the TUI without a terminal: a usage error that points to -b
start_bg "$TARGETS/idle"
expect 2 not-a-terminal '-b|terminal|tty' -- "$STACKTOP" -p "$BG_PID"

# --help and --version are not errors
run_st help "$STACKTOP" --help
check_cmp "$rc" == 0 "--help exits 0"
grep -q -- '-p' "$outp" && ok "--help prints the usage (mentions -p) on stdout" || bad "--help: no usage on stdout"
run_st version "$STACKTOP" --version
check_cmp "$rc" == 0 "--version exits 0"
grep -Eq '[0-9]+\.[0-9]+' "$outp" && ok "--version prints a version" || bad "--version: no version number on stdout"

# ---- runtime errors: status 1 ---------------------------------------------------------
# a pid that cannot exist (above the default pid_max of 4194304 would be a
# usage question; 999999 is valid but unused)
while [ -d /proc/999999 ]; do sleep 1; done
expect 1 no-such-process 'no such process|not exist|not found|999999' -- "$STACKTOP" -b -n 1 -p 999999
expect_tui 1 no-such-process-tui 'no such process|not exist|not found|999999' -- "$STACKTOP" -p 999999
# without -b and with the output redirected, the missing PID is still what
# is said first (it once said "not a terminal")
expect 1 no-such-process-redirected 'no process with PID 999999' -- "$STACKTOP" -p 999999
# a kernel thread has no user stack: dump says so, and never "run as root"
expect 1 dump-kernel-thread 'kernel thread' -- "$STACKTOP" dump -p 2
if grep -qi 'run as root' "$err"; then bad "dump -p 2 tells root to run as root"; else ok "dump -p 2: no 'run as root'"; fi
expect 1 no-such-command 'nonexistent|no such file|not found' -- "$STACKTOP" -b -n 1 -- /nonexistent/command
expect 1 not-executable 'permission|denied|exec' -- "$STACKTOP" -b -n 1 -- /etc/passwd

# ---- the target exits -------------------------------------------------------------------
# batch mode stops soon after the target is gone (not after all -n 8
# refreshes), says so once in a clean sentence, and does not crash. Batch
# mode has no keys: no "q quits" there.
need_target cpuburn
start_bg "$TARGETS/cpuburn" 1 2
SHORT=$BG_PID
sleep 0.3
t0=$SECONDS
run_st target-exits "$STACKTOP" -b -d 1 -n 8 -p "$SHORT"
check_cmp "$rc" '<' 128 "target exits (batch): no crash (status $rc)"
check_cmp "$((SECONDS - t0))" '<=' 6 "target exits (batch): stacktop stops within a few s of the target (s)"
if grep -Eq 'exited' "$outp" "$err"; then
	ok "target exits (batch): says the target exited"
	grep -Eh 'exited' "$outp" "$err" | grep -Eq 'target target|q quits' &&
		bad "target exits (batch): garbled sentence: $(grep -Eh 'exited' "$outp" "$err" | head -n 1)" ||
		ok "target exits (batch): clean sentence: $(grep -Eh 'exited' "$outp" "$err" | head -n 1)"
else
	bad "target exits (batch): nothing says the target exited"
fi
run_st command-exits "$STACKTOP" -b -d 1 -n 5 -- /bin/true
check_cmp "$rc" '<' 128 "command exits at once (batch): no crash (status $rc)"
grep -Eq 'exited' "$outp" "$err" && ok "command exits at once (batch): says it exited" ||
	bad "command exits at once (batch): nothing says the command exited"

# permission denied: an unprivileged user against a root-owned process. The
# message must name the fix (root, CAP_PERFMON or perf_event_paranoid).

# A file name given to report or diff is the user's, but may have come from
# anywhere (a profile someone sent): its control bytes and direction marks
# never reach the terminal raw in the error.
evil=$(printf '%s/prof\033]0;pwned\007\033[31mred\xe2\x80\x8e.pb.gz' "$E2E_TMPDIR")
for cmd in "report -b" "diff -b"; do
	files=("$evil")
	[ "$cmd" = "diff -b" ] && files+=("$evil")
	# shellcheck disable=SC2086 # cmd is the subcommand and its flag
	"$STACKTOP" $cmd "${files[@]}" >"$E2E_TMPDIR/evil.out" 2>&1
	rc=$?
	check_cmp "$rc" == 1 "$cmd of a missing file with control bytes in its name exits 1"
	if LC_ALL=C grep -q "$(printf '[\033\007]')" "$E2E_TMPDIR/evil.out" ||
		grep -q "$(printf '\xe2\x80\x8e')" "$E2E_TMPDIR/evil.out"; then
		bad "$cmd: the file name's control bytes reached stderr: $(od -c "$E2E_TMPDIR/evil.out" | head -3)"
	else
		ok "$cmd: the file name is shown with its control bytes replaced"
	fi
done

if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	start_bg "$TARGETS/idle"
	IDLE=$BG_PID
	# nobody may not be able to reach build/: run a copy from a world-readable dir
	pdir=$(mktemp -d /tmp/stacktop-e2e-bin.XXXXXX)
	cp "$STACKTOP" "$pdir/stacktop"
	chmod 755 "$pdir" "$pdir/stacktop"
	expect 1 permission-denied 'perf_event_paranoid|root|CAP_PERFMON|CAP_SYS_ADMIN|sudo' -- \
		setpriv --reuid=65534 --regid=65534 --clear-groups "$pdir/stacktop" -b -n 1 -p "$IDLE"
	expect_tui 1 permission-denied-tui 'perf_event_paranoid|root|CAP_PERFMON|CAP_SYS_ADMIN|sudo' -- \
		setpriv --reuid=65534 --regid=65534 --clear-groups "$pdir/stacktop" -p "$IDLE"
	rm -rf "$pdir"
	check_target_healthy "$IDLE" "after the permission errors"
else
	log "skip: permission test needs root and setpriv"
fi

e2e_finish
