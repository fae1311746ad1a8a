#!/bin/bash
# test_batch_shares — batch mode (-b) against cpuburn, whose true profile is
# known: one worker spends 60/30/10 % of its CPU in leaf_a/leaf_b/leaf_c,
# under run_worker → work_unit → depth_1 … depth_8. Only the worker burns
# CPU, so those are also the leaves' shares of all samples. Checks the
# shares (within 4 standard errors of their sample count: lib.sh's
# check_share), the full caller chain (DWARF unwinding: the target has no
# frame pointers), line mode, sorting and launch mode (the demo workload,
# whose threads compete for the CPU, is test_demo's; wall-clock mode's
# per-thread shares, test_wall_threads'). The shares are of the
# target's own CPU time, so another process's load lowers the sample count
# (and widens the tolerance), not the shares. stacktop's own CPU and the
# header's samples/s against the count's growth are bench's (bench/checks.sh).
. "$(dirname "$0")/lib.sh"
start_cpuburn 0.5 1

# ---- shares: ~4 s at 999 Hz, so ~4000 samples on an idle machine -------------
out=$E2E_TMPDIR/shares.out
run_ok 30 "$out" "stacktop -b -d 2 -n 2 -W 30 -r 999 -p PID exits 0" -b -d 2 -n 2 -W 30 -r 999 -l 60 -p "$CB"
blocks=$(grep -c '^stacktop' "$out")
check_cmp "$blocks" == 2 "-n 2 prints 2 blocks"
rows=$(rows_of "$out")
if [ -z "$rows" ]; then
	bad "no table rows in the last block"
	log "---- output"; tail -n 40 "$out"; log "---- stderr"; tail -n 10 "$out.err"
fi
hdr=$(grep '^stacktop' "$out" | tail -n 1)
case $hdr in
*"pid $CB"*) ok "header names pid $CB" ;;
*) bad "header line 1 should hold 'pid $CB', seen: $hdr" ;;
esac
case $hdr in
*" 5 threads"*) ok "header counts 5 threads (main, reporter, sleeper, waiter, worker-0)" ;;
*) bad "header should say '5 threads', seen: $hdr" ;;
esac
samples=$(samples_in "$out")
unw=$(awk '/^samples [0-9]/ { for (i = 1; i < NF; i++) if ($i == "ok" && $(i - 1) == "unwind") u = $(i + 1) } END { sub("%", "", u); print u }' "$out")
check_share_min "$unw" 95 "$samples" "unwind ok % (the target has no frame pointers: DWARF CFI)"
# Not a rate: enough samples for the shares below to tell 60 from 30 (the
# tolerance is ~20 points at 100 samples; ~4000 are expected, a few hundred
# when the machine is busy)
check_cmp "$samples" '>=' 100 "enough samples to compare shares"

for spec in leaf_a:60 leaf_b:30 leaf_c:10; do
	f=${spec%%:*} want=${spec#*:}
	tot=$(field_of "$rows" "$f" 2)
	own=$(field_of "$rows" "$f" 1)
	if [ -z "$tot" ]; then
		bad "$f missing from the table"
		continue
	fi
	check_share "$tot" "$want" "$samples" "$f %Total"
	# a leaf: %Own is %Total but for samples taken in an interrupt (a
	# kernel frame on top of the leaf: under 2% of them)
	check_share_max "$(awk -v a="$own" -v b="$tot" 'BEGIN { d = a - b; print (d < 0 ? -d : d) }')" 2 "$samples" \
		"$f is a leaf: %Total - %Own (samples with a kernel frame on top)"
done

# the whole caller chain, each ~100 % total (the worker is all the CPU)
for f in work_unit depth_1 depth_2 depth_3 depth_4 depth_5 depth_6 depth_7 depth_8 run_worker; do
	tot=$(field_of "$rows" "$f" 2)
	if [ -z "$tot" ]; then
		bad "caller $f missing from the table (unwinding through DWARF CFI broke)"
	else
		check_share_min "$tot" 95 "$samples" "caller $f %Total (the chain unwound)"
	fi
done
if [ "$E2E_FAILS" -gt 0 ]; then
	log "---- last block"
	awk '/^stacktop/ { b = "" } { b = b $0 "\n" } END { printf "%s", b }' "$out"
fi

# default sort is %Own: column 1 never increases down the table
check_cmp "$(awk '{ if (NR > 1 && $1 > prev + 0.05) bad++; prev = $1 } END { print bad + 0 }' <<<"$rows")" \
	== 0 "default sort: %Own descending (rows out of order)"
first=$(awk 'NR == 1 { print $5 }' <<<"$rows")
[ "$first" = leaf_a ] && ok "first row by %Own is leaf_a" || bad "first row by %Own: expected leaf_a, seen '$first'"

# ---- -s total: %Total descending ------------------------------------------------
out2=$E2E_TMPDIR/total.out
timeout 20 "$STACKTOP" -b -d 1 -n 1 -W 30 -s total -p "$CB" >"$out2" 2>&1
check_cmp "$?" == 0 "-s total run exits 0"
rows2=$(rows_of "$out2")
check_cmp "$(wc -l <<<"$rows2")" '>=' 12 "-s total shows the chain (rows)"
check_cmp "$(awk '{ if (NR > 1 && $2 > prev + 0.05) bad++; prev = $2 } END { print bad + 0 }' <<<"$rows2")" \
	== 0 "-s total: %Total descending (rows out of order)"
check_share_min "$(awk 'NR == 1 { print $2 }' <<<"$rows2")" 95 "$(samples_in "$out2")" "-s total: first row %Total"

# ---- -L: aggregate by line --------------------------------------------------
out3=$E2E_TMPDIR/lines.out
timeout 20 "$STACKTOP" -b -d 1 -n 1 -W 30 -L -p "$CB" >"$out3" 2>&1
check_cmp "$?" == 0 "-L run exits 0"
rows3=$(rows_of "$out3")
if grep -Eq 'leaf_a \(cpuburn\.c:[0-9]+\)' <<<"$rows3"; then
	ok "-L shows leaf_a (cpuburn.c:LINE)"
else
	bad "-L: expected a row 'leaf_a (cpuburn.c:LINE)', seen: $(head -n 3 <<<"$rows3")"
fi
# leaf_a's loop is one source line (the SPIN macro use), so its row is ~60 %
line=$(grep -n 'SPIN(x, 6 \* units);' "$ROOT/tests/targets/cpuburn.c" | cut -d: -f1)
if grep -Eq "leaf_a \(cpuburn\.c:$line\)" <<<"$rows3"; then
	ok "-L: leaf_a's hot line is cpuburn.c:$line"
else
	bad "-L: expected leaf_a (cpuburn.c:$line), seen: $(grep leaf_a <<<"$rows3" | head -n 2)"
fi

# ---- -K: no kernel frames -----------------------------------------------------
out4=$E2E_TMPDIR/nokernel.out
timeout 20 "$STACKTOP" -b -d 1 -n 1 -W 30 -K -l 200 -p "$CB" >"$out4" 2>&1
check_cmp "$?" == 0 "-K run exits 0"
check_cmp "$(rows_of "$out4" | grep -c '\[k\]')" == 0 "-K: kernel frames ([k] rows)"

# ---- -l N limits the rows -------------------------------------------------------
check_cmp "$(rows_of "$out2" | wc -l)" '<=' 30 "default limit: at most 30 rows"
out5=$E2E_TMPDIR/limit.out
timeout 20 "$STACKTOP" -b -d 1 -n 1 -l 3 -p "$CB" >"$out5" 2>&1
check_cmp "$(rows_of "$out5" | wc -l)" == 3 "-l 3: rows"

# ---- launch mode ------------------------------------------------------------------
out6=$E2E_TMPDIR/launch.out
timeout 30 "$STACKTOP" -b -n 2 -- "$TARGETS/cpuburn" 1 41 >"$out6" 2>&1
check_cmp "$?" == 0 "launch: stacktop -b -n 2 -- cpuburn 1 41 exits 0"
if rows_of "$out6" | awk '$5 == "leaf_a" { f = 1 } END { exit !f }'; then
	ok "launch: leaf_a in the table"
else
	bad "launch: leaf_a missing"; tail -n 30 "$out6"
fi
# the launched command was stacktop's child: it must be gone when stacktop is
sleep 0.5
left=$(pgrep -f "$TARGETS/cpuburn 1 41")
if [ -z "$left" ]; then
	ok "launch: the command is gone after stacktop exits"
else
	bad "launch: the launched command still runs after stacktop exited (pids $left)"
	kill -KILL $left 2>/dev/null
fi

check_target_healthy "$CB" "after the batch runs" burns
e2e_finish
