#!/bin/bash
# test_hostile_fuse — a target runs code from a file on a FUSE mount it
# serves itself (hostile_fuse: /dev/fuse spoken directly, in a mount
# namespace of its own), then stops answering. stacktop used to open the
# mapped file (map_files, then fstat) and wait for the daemon for ever:
# SIGINT and SIGTERM are caught, so only SIGKILL ended it, and a TUI run
# left the terminal raw. Files on FUSE and network mounts of the target
# (its mountinfo) are now never opened: -b -n 2 must finish, a TUI run must
# end on SIGTERM, the help must say why the module has no names, and the
# target keeps running. Needs root and /dev/fuse (the target exits 77
# when it cannot mount: the test then says so and passes nothing).
# Then other paths of a target into its mount (hostile_fuse DIR MODE), each
# a lookup its daemon never answers, which stacktop followed before it
# checked them against the target's mountinfo (tfile_open_local):
#   perfmap  /tmp of the target is the FUSE mount and it runs code from
#            anonymous memory: /tmp/perf-PID.map is not looked up there;
#   source   annotate of source_loop, whose line table names a symlink
#            into the mount: the source is not read through it;
#   debug    libc's debug file by build-id is a symlink into the mount
#            (wall mode names libc, which has no .symtab): not followed.
# Each: the batch run exits 0 (before: killed by its timeout, hung).
. "$(dirname "$0")/lib.sh"
need_stacktop
need_target hostile_fuse
need_tmux

M=$E2E_TMPDIR/mnt
mkdir -p "$M"
TOUT=$E2E_TMPDIR/fuse.out
"$TARGETS/hostile_fuse" "$M" >"$TOUT" 2>&1 &
T=$!
BG_PIDS+=("$T")
if ! wait_until 5 grep -q ready "$TOUT"; then
	wait "$T" 2>/dev/null
	rc=$?
	if [ "$rc" = 77 ]; then
		log "SKIP: FUSE cannot be mounted here ($(head -n 1 "$TOUT"))"
		e2e_finish
	fi
	die "hostile_fuse did not start: $(head -c 500 "$TOUT")"
fi
grep -q 'fuse.hostile' "/proc/$T/mountinfo" || die "no fuse.hostile mount in the target's mountinfo"

# Batch: two refreshes, then exit 0 (before: blocked in fstat until SIGKILL).
out=$E2E_TMPDIR/batch.out
t0=$(date +%s.%N)
timeout -k 3 20 "$STACKTOP" -b -d 1 -n 2 -p "$T" >"$out" 2>&1
rc=$?
t1=$(date +%s.%N)
check_cmp "$rc" == 0 "stacktop -b -n 2 exits 0 (137: killed after hanging on the FUSE file)"
check_cmp "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" '<' 10 "and within seconds"
grep -q 'lib.so' "$out" && ok "the FUSE module is in the table (unnamed)" ||
	{ bad "lib.so not in the table"; head -c 2000 "$out"; }

# Wall mode too.
timeout -k 3 20 "$STACKTOP" -b -w -d 1 -n 2 -p "$T" >"$out" 2>&1
check_cmp "$?" == 0 "stacktop -b -w -n 2 exits 0"

# TUI: the help names the reason; SIGTERM ends it.
tm_start 140 45 "$STACKTOP" -p "$T"
tm_wait 10 'lib\.so' || { tm_dump "no lib.so"; die "the TUI does not show lib.so"; }
ST=$(tm_pid)
tm_key_expect '?' 5 'FUSE or network mount' "the help says the FUSE file was not read" \
	"the help does not name the FUSE mount"
kill -TERM "$ST"
wait_until 5 gone "$ST" && ok "SIGTERM ends the TUI within 5 s" ||
	{ bad "stacktop $ST still running 5 s after SIGTERM"; kill -KILL "$ST"; }
check_target_healthy "$T" "after the FUSE runs" burns

# start_fuse MODE: another hostile_fuse with MODE's path into its mount
# (its own mount directory); pid in F.
start_fuse() {
	local d=$E2E_TMPDIR/mnt-$1 o=$E2E_TMPDIR/fuse-$1.out
	mkdir -p "$d"
	"$TARGETS/hostile_fuse" "$d" "$1" >"$o" 2>&1 &
	F=$!
	BG_PIDS+=("$F")
	wait_until 5 grep -q ready "$o" || die "hostile_fuse $1 did not start: $(head -c 500 "$o")"
}
# stop_fuse: that target gone (it burns two cores).
stop_fuse() {
	kill -KILL "$F" 2>/dev/null
	wait "$F" 2>/dev/null
}

start_fuse perfmap
grep -q ' /tmp .* fuse\.hostile ' "/proc/$F/mountinfo" || die "perfmap: /tmp is not the FUSE mount in the target"
timeout -k 3 20 "$STACKTOP" -b -d 1 -n 2 -p "$F" >"$out" 2>&1
check_cmp "$?" == 0 "perfmap: -b -n 2 exits 0 (124/137: hung looking up /tmp/perf-PID.map on FUSE)"
stop_fuse

start_fuse source
timeout -k 3 20 "$STACKTOP" -b -n 1 -d 1.5 -r 499 --annotate source_loop -p "$F" >"$out" 2>&1
check_cmp "$?" == 0 "source: -b --annotate source_loop exits 0 (124/137: hung reading its source through a symlink into FUSE)"
grep -q '^annotate source_loop ' "$out" && ok "source: source_loop annotated (without its source text)" ||
	{ bad "source: source_loop not annotated"; head -c 2000 "$out"; }
stop_fuse

# (the target mounts its tmpfs on /usr/lib/debug: the directory must be there)
if [ -d /usr/lib/debug ]; then
	start_fuse debug
	timeout -k 3 20 "$STACKTOP" -b -w -d 1 -n 2 -p "$F" >"$out" 2>&1
	check_cmp "$?" == 0 "debug: -b -w -n 2 exits 0 (124/137: hung on libc's debug file, a symlink into FUSE)"
	grep -q 'libc' "$out" && ok "debug: libc is in the table" || { bad "debug: no libc in the table"; head -c 2000 "$out"; }
	stop_fuse
else
	log "SKIP debug: no /usr/lib/debug to mount over"
fi
e2e_finish
