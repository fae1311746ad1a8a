#!/bin/bash
# test_hostile_newstacks — stacktop's memory stays flat on a target whose
# every sample is a stack never seen before (tests/targets/newstacks): what
# it keeps per distinct stack must be given back when the stack leaves the
# window. The old code kept it: ~60 KiB/s at 99 Hz, ~200 KiB/s at 499 Hz.
# With a 5 s window, 499 Hz and a refresh a second, stacktop's VmRSS after
# the 10th table and after the 35th must differ by less than 1.5 MiB (old
# code: ~5 MiB). Progress is counted in tables printed, not seconds, so a
# slow machine only makes the run longer (~37 s when idle).
. "$(dirname "$0")/lib.sh"
STACKTOP=${STACKTOP_BIN:-$STACKTOP}
need_stacktop
need_target newstacks

out=$E2E_TMPDIR/out
# newstacks ends by itself after 90 s if stacktop does not end it first.
"$STACKTOP" -b -d 1 -W 5 -n 37 -r 499 -- "$TARGETS/newstacks" 90 >"$out" 2>&1 &
S=$!
BG_PIDS+=("$S")

tables() { grep -c '%Own' "$out"; }
tables_at_least() { [ "$(tables)" -ge "$1" ]; }
rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$S/status" 2>/dev/null; }

wait_until 40 tables_at_least 10 || { head -c 2000 "$out"; die "no 10th table within 40 s"; }
r10=$(rss_kib)
wait_until 75 tables_at_least 35 || { head -c 2000 "$out"; die "no 35th table within 75 s"; }
r35=$(rss_kib)
{ [ -n "$r10" ] && [ -n "$r35" ]; } || die "cannot read stacktop's VmRSS (gone early?)"
log "VmRSS after table 10: $r10 KiB, after table 35: $r35 KiB"
check_cmp "$((r35 - r10))" '<' 1536 "VmRSS growth from table 10 to 35 (KiB) under 1.5 MiB"

wait_until 20 gone "$S"
wait "$S"
check_cmp "$?" == 0 "stacktop -n 37 exits 0"
# The samples were taken and unwound: newstacks' steps are in the table.
rows=$(rows_of "$out")
if grep -Eq ' step_[0-9a-f] ' <<<"$rows"; then
	ok "the last table holds newstacks' step functions"
else
	bad "the last table does not show newstacks' steps"
	tail -n 40 "$out"
fi
# (Few: on a shared machine newstacks may get a third of a core or less.)
samples=$(awk '/^samples / { n = $2 } END { gsub(/,/, "", n); print n + 0 }' "$out")
check_cmp "$samples" '>' 20 "samples in the last window"
e2e_finish
