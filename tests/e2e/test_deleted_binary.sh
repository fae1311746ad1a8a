#!/bin/bash
# test_deleted_binary — a deploy replaced the binary while the old process
# runs: the file on disk is gone (or is a different build). stacktop must
# still unwind and name the running code, reading the ELF the process really
# mapped (/proc/PID/map_files), not whatever is at the path now.
. "$(dirname "$0")/lib.sh"
need_stacktop
need_target cpuburn

mkdir -p "$E2E_TMPDIR/app"
cp "$TARGETS/cpuburn" "$E2E_TMPDIR/app/server"
start_bg "$E2E_TMPDIR/app/server" 1
S=$BG_PID
sleep 0.5
alive "$S" || die "the copied cpuburn did not start"

# Deleted: the path leads nowhere.
rm "$E2E_TMPDIR/app/server"
out=$E2E_TMPDIR/deleted.out
timeout 30 "$STACKTOP" -b -d 2 -n 1 -l 30 -p "$S" >"$out" 2>&1
check_cmp "$?" == 0 "deleted binary: stacktop -b exits 0"
grep -q 'leaf_a (cpuburn.c)' "$out" && ok "deleted binary: leaf_a named, with its file" ||
	{ bad "deleted binary: leaf_a not named"; cat "$out"; }
grep -q 'run_worker' "$out" && ok "deleted binary: callers unwound (run_worker)" ||
	bad "deleted binary: run_worker missing"

# Replaced by another program at the same path: still the old code's names.
cp "$TARGETS/idle" "$E2E_TMPDIR/app/server"
out2=$E2E_TMPDIR/replaced.out
timeout 30 "$STACKTOP" -b -d 2 -n 1 -l 30 -p "$S" >"$out2" 2>&1
check_cmp "$?" == 0 "replaced binary: stacktop -b exits 0"
grep -q 'leaf_a (cpuburn.c)' "$out2" && ok "replaced binary: still names the running code (leaf_a)" ||
	{ bad "replaced binary: leaf_a not named"; cat "$out2"; }
check_target_healthy "$S" "after profiling a deleted binary" burns
e2e_finish
