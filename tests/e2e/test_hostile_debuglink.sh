#!/bin/bash
# test_hostile_debuglink — a stripped binary whose .gnu_debuglink names a
# file the target controls, planted as a 4 GiB sparse file. stacktop used to
# CRC it whole before even looking at it (17 s of a frozen loop); now a
# debuglink candidate is checked by its build-id, and CRC'd only when it is
# at most 256 MiB (TFILE_CRC_MAX). stacktop must finish within seconds.
. "$(dirname "$0")/lib.sh"
need_stacktop
need_target symtest-debuglink

D=$E2E_TMPDIR/app
mkdir -p "$D"
cp "$TARGETS/symtest-debuglink" "$D/"
truncate -s 4G "$D/symtest-debuglink.debug" || die "cannot make a sparse file in $D"
# symtest waits until its stdin closes (or 30 s): a pipe that stays open.
# shellcheck disable=SC2016
start_bg bash -c 'exec "$0" < <(sleep 60)' "$D/symtest-debuglink"
S=$BG_PID
sleep 0.5
alive "$S" || die "symtest-debuglink did not start"

# Wall mode: symtest blocks in read, its main is on every stack, so its
# module is symbolized (no .symtab: the debug file is looked for).
out=$E2E_TMPDIR/wall.out
t0=$(date +%s.%N)
timeout -k 5 30 "$STACKTOP" -b -w -n 1 -p "$S" >"$out" 2>&1
rc=$?
t1=$(date +%s.%N)
check_cmp "$rc" == 0 "stacktop -b -w -n 1 exits 0"
check_cmp "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" '<' 6 \
	"finished in seconds despite a 4 GiB debuglink file"
grep -q 'symtest-debuglink' "$out" && ok "the module is in the table" ||
	{ bad "symtest-debuglink not in the table"; head -c 2000 "$out"; }
check_target_healthy "$S" "after the sparse debuglink"
e2e_finish
