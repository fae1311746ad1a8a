#!/bin/bash
# test_hostile_dlnames — a target dlopens library after library (five a
# second), each with 24 nested functions of new 912-byte names
# (hostile_dlnames), and stacktop -W 5 samples it at 499 Hz (issue 28,
# the last finding). Function, module and file names of ELF code follow
# the window's content like its frames: once the window is full, the peak
# RSS (VmHWM) stops climbing. Before, sym kept every name it handed out
# until exit (a forever string pool), ~140 KiB more a second here.
# The session's own tables settle in the first 20 s (one step of 1.5 MiB
# near the 15th), so second by second from the 18th to the 33rd: before,
# the peak rose by 32 KiB or more in 12-15 of 15 steps (~140 KiB each;
# 14 with two more busy loops on the 2 cores); now in 0-2 (3 so loaded).
# A late one-time allocation is one step, so the check counts steps, not
# bytes: at most 7 of the 15. A memory bound, not a rate: load can only
# make the old pool grow in fewer steps (fewer libraries sampled), never
# make the new one grow.
. "$(dirname "$0")/lib.sh"
need_stacktop
need_target hostile_dlnames
[ -f "$TARGETS/hostile_dlnames.so" ] || die "no $TARGETS/hostile_dlnames.so (make targets)"

TOUT=$E2E_TMPDIR/target.out
mkdir -p "$E2E_TMPDIR/libs"
"$TARGETS/hostile_dlnames" "$TARGETS/hostile_dlnames.so" "$E2E_TMPDIR/libs" 200 >"$TOUT" 2>&1 &
T=$!
BG_PIDS+=("$T")
wait_until 20 grep -q '^ready' "$TOUT" || die "hostile_dlnames did not load a library: $(head -c 300 "$TOUT")"

out=$E2E_TMPDIR/batch.out
stacktop_bg 100 "$out" -b -W 5 -r 499 -d 1 -n 34 -p "$T"
hwm_rises "$ST" 18 33 32
check_cmp "$HWM_RISES" "<=" 7 "the peak RSS rises by 32 KiB or more in at most 7 of 15 one-second steps (names kept until exit: 12-15)"
wait "$S"
check_cmp "$?" == 0 "stacktop -b -n 34 exits 0"
grep -q 'dlname_' "$out" && ok "the libraries' functions are named" || bad "no dlname_ function in the output"
alive "$T" && ok "the target is still alive" || bad "the target is gone"
e2e_finish
