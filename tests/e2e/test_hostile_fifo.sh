#!/bin/bash
# test_hostile_fifo — a target maps a copy of its code, unlinks the file and
# plants a FIFO at its path (tests/targets/hostile_fifo.c). Without
# CAP_SYS_ADMIN (and CAP_CHECKPOINT_RESTORE) /proc/PID/map_files is closed
# to stacktop, which then looks the path up in the target's root: a plain
# blocking open there waited for a writer for ever, and in wall mode it did
# so with the target's thread stopped. stacktop must refuse the FIFO, print
# its table, exit 0 in seconds, and leave the target running, not stopped.
. "$(dirname "$0")/lib.sh"
need_stacktop
need_target hostile_fifo

# The capabilities that open map_files; capsh (libcap2-bin), else setpriv.
DROP=cap_sys_admin,cap_checkpoint_restore
if command -v capsh >/dev/null; then
	nocap() { capsh --drop="$DROP" -- -c 'exec "$0" "$@"' "$@"; }
elif command -v setpriv >/dev/null; then
	nocap() { setpriv --inh-caps=-sys_admin,-checkpoint_restore \
		--bounding-set=-sys_admin,-checkpoint_restore "$@"; }
else
	die "neither capsh (libcap2-bin) nor setpriv (util-linux) is installed"
fi
# shellcheck disable=SC2016
nocap bash -c 'f=$(ls /proc/$$/map_files | head -1); head -c1 "/proc/$$/map_files/$f"' \
	>/dev/null 2>&1 &&
	die "map_files still readable without $DROP: the test would not test the fallback"

D=$E2E_TMPDIR/h
mkdir -p "$D"
start_bg "$TARGETS/hostile_fifo" "$D" 60
H=$BG_PID
wait_until 5 test -p "$D/hostile-code" || die "hostile_fifo did not plant its FIFO"
grep -q "$D/hostile-code (deleted)" "/proc/$H/maps" || die "hostile_fifo has no deleted code mapping"

run_one() { # LABEL FLAGS...: one bounded run; the target watched meanwhile
	local label=$1 out=$E2E_TMPDIR/$1.out t0 t1 rc spid stopped=0 worst=0
	shift
	t0=$(date +%s.%N)
	timeout -k 5 20 bash -c "$(declare -f nocap); DROP=$DROP; nocap \"\$@\"" _ \
		"$STACKTOP" -b -n 2 "$@" -p "$H" >"$out" 2>&1 &
	spid=$!
	# A wall sample stops a thread for microseconds; stopped for 2 s in a
	# row is a tracer stuck with its tracee in a ptrace stop.
	while kill -0 "$spid" 2>/dev/null; do
		if [ -n "$(proc_stopped_threads "$H")" ]; then stopped=$((stopped + 1)); else stopped=0; fi
		[ "$stopped" -gt "$worst" ] && worst=$stopped
		sleep 0.1
	done
	wait "$spid"
	rc=$?
	t1=$(date +%s.%N)
	check_cmp "$rc" == 0 "$label: stacktop -b -n 2 $* exits 0 (not 124/137, a hang)"
	check_cmp "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" '<' 15 "$label: finished in seconds"
	check_cmp "$worst" '<' 20 "$label: target never stopped for 2 s in a row (polls of 0.1 s)"
	expect_in "$out" "$label: the table is printed, the planted module named by its path" \
		'%Own' 'hostile-code'
	expect_in "$out" "$label: the header says the planted file was refused" \
		'1 file refused \(not regular or too big\)'
	check_target_healthy "$H" "$label" burns
}

run_one on-cpu
run_one wall -w
e2e_finish
