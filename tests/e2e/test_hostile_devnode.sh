#!/bin/bash
# test_hostile_devnode — a target plants character devices where stacktop
# looks for its debug file (tests/targets/hostile_devnode.c): in a private
# mount namespace, a tmpfs on /usr/lib/debug holding a node at
# .build-id/xx/yyyy.debug for the target's own build-id and one at the
# /usr/lib/debug candidate of its .gnu_debuglink; the target runs a stripped
# copy of itself (no .symtab), so the debug file is looked for. Opening a
# device as root runs its driver's open (/dev/watchdog arms a watchdog): old
# code opened the path before checking its type. The nodes are 1:3 (null),
# watched with inotify by the target: stacktop must look at them through
# O_PATH only (no IN_OPEN), say it refused them, print its table, exit 0.
# The host's /usr/lib/debug is never written (the tmpfs is in the target's
# own mount namespace); needs root (CAP_SYS_ADMIN, CAP_MKNOD) and objcopy.
. "$(dirname "$0")/lib.sh"
STACKTOP=${STACKTOP_BIN:-$STACKTOP}
need_stacktop
need_target hostile_devnode
command -v objcopy >/dev/null || die "objcopy (binutils) is not installed"
[ -d /usr/lib/debug ] || die "/usr/lib/debug does not exist: the target mounts its tmpfs there"

D=$E2E_TMPDIR/d
TOUT=$E2E_TMPDIR/target.out
mkdir -p "$D"
# Not start_bg: its output is read. The pid stays the same across its exec.
"$TARGETS/hostile_devnode" "$D" 50 >"$TOUT" 2>&1 &
H=$!
BG_PIDS+=("$H")
wait_until 10 grep -q '^ready ' "$TOUT" || { cat "$TOUT"; die "hostile_devnode did not plant its nodes"; }
NODE=$(awk '/^ready / { print $2; exit }' "$TOUT")
[ -c "/proc/$H/root$NODE" ] || die "no character device at $NODE in the target's root"
[ -c "/proc/$H/root/usr/lib/debug$D/hostile-devnode.debug" ] ||
	die "no character device at the debuglink candidate in the target's root"
[ -e "$NODE" ] && die "$NODE exists on the host: the tmpfs is not private to the target"
readelf -S "/proc/$H/exe" 2>/dev/null | grep -q '\.symtab' &&
	die "the target's binary has a .symtab: its debug file would not be looked for"
ok "nodes planted at $NODE and the debuglink path, the binary stripped"

reports() { grep -c '^opened ' "$TOUT"; }
more_reports_than() { [ "$(reports)" -gt "$1" ]; }

run_one() { # LABEL FLAGS...
	local label=$1 out=$E2E_TMPDIR/$1.out rc n line
	shift
	timeout -k 5 30 "$STACKTOP" -b -n 2 "$@" -p "$H" >"$out" 2>&1
	rc=$?
	check_cmp "$rc" == 0 "$label: stacktop -b -n 2 $* exits 0"
	expect_in "$out" "$label: the table is printed, the module named" '%Own' 'hostile-devnode'
	expect_in "$out" "$label: the header says the two nodes were refused" \
		'2 files refused \(not regular or too big\)'
	# Every open stacktop made is queued before it exited; the target
	# reads its queue after it sees the signal, then reports.
	n=$(reports)
	kill -USR1 "$H"
	wait_until 5 more_reports_than "$n" || die "$label: the target did not report"
	line=$(grep '^opened ' "$TOUT" | tail -n 1)
	if [[ $line == "opened 0 "* ]]; then
		ok "$label: no device node was opened ($line)"
	else
		bad "$label: stacktop opened a device node: $line"
	fi
	check_target_healthy "$H" "$label" burns
}

run_one on-cpu
run_one wall -w

kill -TERM "$H"
wait "$H"
check_cmp "$?" == 0 "the target exits 0 on SIGTERM"
line=$(tail -n 1 "$TOUT")
if [[ $line == "opened 0 "* ]]; then ok "at the end: $line"; else bad "at the end: $line"; fi
e2e_finish
