#!/bin/bash
# test_batch_view — `-b --view icicle|threads` prints that view as text, as
# the TUI would draw it, against cpuburn launched as a command: one worker
# burns CPU under run_worker → work_unit → depth_1 … depth_8 → leaf_a/b/c
# (60/30/10 %); its other threads (reporter, sleeper, waiter) sleep. Checks
# what a person reads: the icicle's rows along the hot path with leaf_a the
# widest leaf and the detail line, no key hints in text output; the threads
# table's column header, the thread names and worker-0 on top with its
# hottest function; and that a bad --view value is one sentence and exit 2.
. "$(dirname "$0")/lib.sh"
need_stacktop
need_target cpuburn

# ---- icicle ----------------------------------------------------------------
out=$E2E_TMPDIR/icicle.out
# 999 Hz: enough samples to tell 60% from 30% even when the target gets a
# fraction of a core (at 99 Hz a loaded run had 20)
timeout 30 "$STACKTOP" -b -n 2 -r 999 --view icicle -- "$TARGETS/cpuburn" >"$out" 2>"$out.err"
rc=$?
check_cmp "$rc" == 0 "-b -n 2 --view icicle -- cpuburn exits 0"
check_cmp "$(grep -c '^stacktop  pid' "$out")" == 2 "--view icicle: -n 2 prints 2 blocks"
last=$E2E_TMPDIR/icicle.last
awk '/^stacktop/ { b = "" } { b = b $0 "\n" } END { printf "%s", b }' "$out" >"$last"
grep -q '^all 100%' "$last" && ok "icicle: breadcrumb 'all 100%'" ||
	bad "icicle: no 'all 100%' breadcrumb line"
grep -q '^\[all 100%' "$last" && ok "icicle: the root box" || bad "icicle: no '[all 100%' root box"
prev=0
path_ok=1
for f in run_worker work_unit depth_1 depth_2 depth_3 depth_4 depth_5 depth_6 depth_7 depth_8; do
	n=$(grep -n -m1 "^\[$f [0-9.]*%" "$last" | cut -d: -f1)
	if [ -z "$n" ] || [ "$n" -le "$prev" ]; then
		bad "icicle: '$f' should start a row below the one before it (row '${n:-none}' after $prev)"
		path_ok=0
		break
	fi
	prev=$n
done
[ "$path_ok" = 1 ] && ok "icicle: the hot path run_worker > work_unit > depth_1 .. depth_8, one row each"
leaves=$(grep -m1 'leaf_a' "$last")
case $leaves in
"[leaf_a "*) ok "icicle: leaf_a is the first (widest) box of its row" ;;
*) bad "icicle: the leaves' row should start with '[leaf_a', seen: '$leaves'" ;;
esac
wa=$(grep -m1 -o '\[leaf_a[^]]*\]' "$last" | wc -c)
wb=$(grep -m1 -o '\[leaf_b[^]]*\]' "$last" | wc -c)
if [ "$wb" -gt 0 ]; then
	check_cmp "$wa" '>' "$wb" "icicle: leaf_a's box wider than leaf_b's (60% vs 30%)"
else
	log "icicle: leaf_b has no box this run (few samples)"
fi
grep -q '^selected: all .*total 100%' "$last" && ok "icicle: the detail line" ||
	bad "icicle: no 'selected: all ... total 100%' detail line"
grep -qE 'Enter zoom|q quit' "$out" && bad "icicle: text output shows key hints" ||
	ok "icicle: no key hints in text output"
check_cmp "$(awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }' "$out")" '<=' 400 \
	"icicle: lines fit a 200-column text screen (bytes, UTF-8 counted)"
if [ "$E2E_FAILS" -gt 0 ]; then
	log "---- icicle: last block"
	cut -c1-150 "$last"
	tail -n 5 "$out.err"
fi

# ---- threads -----------------------------------------------------------------
out=$E2E_TMPDIR/threads.out
timeout 30 "$STACKTOP" -b -n 2 --view threads -- "$TARGETS/cpuburn" >"$out" 2>"$out.err"
rc=$?
check_cmp "$rc" == 0 "-b -n 2 --view threads -- cpuburn exits 0"
last=$E2E_TMPDIR/threads.last
awk '/^stacktop/ { b = "" } { b = b $0 "\n" } END { printf "%s", b }' "$out" >"$last"
hdr=$(grep -m1 'TID' "$last")
for col in TID NAME STATE "CPU now" floor SAMPLES "HOTTEST NOW"; do
	case $hdr in
	*"$col"*) ok "threads: column '$col'" ;;
	*) bad "threads: the column header should have '$col', seen: '$hdr'" ;;
	esac
done
for name in cpuburn reporter sleeper waiter worker-0; do
	grep -qE "^ *[0-9]+  $name " "$last" && ok "threads: a row for thread '$name'" ||
		bad "threads: no row for thread '$name'"
done
first=$(awk '/TID/ { getline; print; exit }' "$last")
case $first in
*worker-0*leaf_*) ok "threads: worker-0 on top (sorted by CPU), its hottest function a leaf" ;;
*) bad "threads: first row should be worker-0 with a leaf_* hottest, seen: '$first'" ;;
esac
grep -qE 'Enter: only this thread|q quit' "$out" && bad "threads: text output shows key hints" ||
	ok "threads: no key hints in text output"
if [ "$E2E_FAILS" -gt 0 ]; then
	log "---- threads: last block"
	cut -c1-200 "$last"
	tail -n 5 "$out.err"
fi

# ---- a bad value ---------------------------------------------------------------
err=$("$STACKTOP" -b --view flame -- "$TARGETS/cpuburn" 2>&1 >/dev/null)
rc=$?
check_cmp "$rc" == 2 "--view flame: exit status 2"
check_cmp "$(printf '%s\n' "$err" | grep -c .)" == 1 "--view flame: one line on stderr"
case $err in
*"invalid --view value 'flame'"*"top, icicle, threads, memory or processes"*) ok "--view flame: says what is valid" ;;
*) bad "--view flame: expected \"invalid --view value 'flame': expected top, icicle, threads, memory or processes\", seen: '$err'" ;;
esac

e2e_finish
