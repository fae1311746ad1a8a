#!/bin/bash
# test_libunwind — a stack through CFI the rule cache does not model
# (tests/targets/oddcfi.h: a CFA given by a DWARF expression, a CFA based on
# rbx after a realignment) continues to main through libunwind's fallback.
# The target burns all its CPU in oddcfi_hot under
#   main → oddcfi_run → oddcfi_expr → oddcfi_rbx → oddcfi_hot;
# the rule cache alone stops at oddcfi_rbx (see test_lunwind), so every
# sample reaching main here is one libunwind finished. Checked in the
# recorded profile (folded stacks) and in the batch header's counters.
. "$(dirname "$0")/lib.sh"
need_stacktop
need_target oddcfi

start_target 0.2 oddcfi
T=$BG_PID

folded=$E2E_TMPDIR/odd.folded
timeout 30 "$STACKTOP" record -d 2 -o "$folded" -p "$T" >"$E2E_TMPDIR/record.out" 2>&1
check_cmp "$?" == 0 "record exits 0"
total=$(awk '{ s += $NF } END { print s + 0 }' "$folded")
full=$(awk '/main;oddcfi_run;oddcfi_expr;oddcfi_rbx;oddcfi_hot/ { s += $NF } END { print s + 0 }' "$folded")
check_cmp "$total" ">=" 20 "samples recorded ($total)"
# A sample landing in the odd functions' own instructions is still a full
# stack; allow a few percent for samples in the first instructions of a
# call (prologues) on a loaded machine.
check_share_min "$(awk -v f="$full" -v t="$total" 'BEGIN { if (t > 0) printf "%.1f", 100 * f / t }')" 90 "$total" \
	"stacks through oddcfi_expr/oddcfi_rbx reach main, % ($full of $total)"
grep -q '__libc_start_main' "$folded" && ok "and on to libc's start" ||
	{ bad "no stack reaches __libc_start_main"; head -5 "$folded"; }

out=$E2E_TMPDIR/batch.out
timeout 30 "$STACKTOP" -b -d 1 -n 2 -l 10 -s total -p "$T" >"$out" 2>&1
check_cmp "$?" == 0 "stacktop -b exits 0"
lu=$(sed -n 's/.*libunwind finished \([0-9,]*\) of .*/\1/p' "$out" | tail -1 | tr -d ,)
tr=$(sed -n 's/.*(truncated \([0-9,]*\),.*/\1/p' "$out" | tail -1 | tr -d ,)
n=$(sed -n 's/^samples \([0-9,]*\) .*/\1/p' "$out" | tail -1 | tr -d ,)
check_cmp "${lu:-0}" ">" 0 "the header counts stacks libunwind continued ($lu)"
check_share_max "$(awk -v t="${tr:-}" -v n="${n:-0}" 'BEGIN { if (t != "" && n > 0) printf "%.1f", 100 * t / n }')" 10 "${n:-0}" \
	"few stacks remain truncated, % ($tr of $n)"
grep -Eq '^ *[0-9.]+ +(9[0-9]|100)\.[0-9] .*main \(oddcfi\.c\)' "$out" &&
	ok "main holds the hot stack's total share" ||
	{ bad "main's total share is not >= 90%"; cat "$out"; }
check_target_healthy "$T" "after profiling" burns
e2e_finish
