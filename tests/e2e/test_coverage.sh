#!/bin/bash
# test_coverage — sampling coverage and scale of the perf sampler.
#
#   1. shortthreads: threads that each run JOB_MS in short_job and exit,
#      1.5 cores in all, launched: `stacktop -b -n 5 -- shortthreads`.
#      coverage = samples in the window / (the target's CPU seconds from
#      /proc/PID/stat x rate), and short_job on top.
#      - 1.5 ms threads, default events (per-CPU, BPF-filtered; root here):
#        >= 80%. The clock runs per CPU, so a thread far shorter than one
#        period (10.1 ms at 99 Hz) is sampled in proportion to its CPU.
#      - 60 ms threads with --events inherit (per-task events that new
#        threads inherit): >= 80%. With inherit, each new thread starts a
#        full period late, so 1.5 ms threads are reported, not checked
#        (about 1%, as `perf record -p`; bench/coverage.sh prints both).
#      - without CAP_BPF and CAP_SYS_ADMIN (capsh), the default falls back
#        to per-task events and the header says what that misses.
#   2. bigpool: 1,000 threads (2 busy, 998 blocked) at 99 Hz for 5 s:
#      0 lost records, and stacktop's own CPU (utime+stime from /proc,
#      after its first second of set-up) <= 5% of one core.
#   3. bigpool in wall mode at 100 Hz (100,000 samples a second asked):
#      stacktop lowers its rate by itself, says so in the header, and then
#      keeps up with what it says (achieved >= 70% of the expected rate).
. "$(dirname "$0")/lib.sh"
need_stacktop
need_target shortthreads
need_target bigpool
trap e2e_cleanup_trees EXIT

HZ=$(getconf CLK_TCK)

# coverage JOB_MS OUT: run the launched form; prints "coverage% samples cpu_s".
coverage() {
	local job=$1 out=$2 st child ticks=0 t
	shift 2
	"$STACKTOP" -b -n 5 -r 99 "$@" -- "$TARGETS/shortthreads" 0 1.5 "$job" >"$out" 2>"$out.err" &
	st=$!
	BG_PIDS+=("$st")
	wait_until 5 pgrep -P "$st" >/dev/null
	child=$(pgrep -P "$st" | head -1)
	# The child's CPU, polled until it is stopped with stacktop's last frame.
	while alive "$child"; do
		t=$(proc_cpu_ticks "$child") && ticks=$t
		sleep 0.1
	done
	wait "$st"
	local samples
	samples=$(grep -E '^samples [0-9,]+' "$out" | tail -1 | awk '{ gsub(",", "", $2); print $2 }')
	awk -v s="$samples" -v t="$ticks" -v hz="$HZ" 'BEGIN {
		cpu = t / hz; printf "%.0f %d %.2f\n", (cpu > 0 ? 100 * s / (cpu * 99) : 0), s, cpu }'
}

out=$E2E_TMPDIR/cov1.txt
read -r pct n cpu < <(coverage 1.5 "$out")
log "1.5 ms threads, per-CPU events: $n samples for $cpu CPU s at 99 Hz"
check_cmp "$pct" '>=' 80 "coverage of 1.5 ms threads, % of their CPU time sampled"
top=$(rows_of "$out" | head -1 | awk '{ print $5 }')
[ "$top" = short_job ] && ok "short_job is on top" || { bad "top row is '$top', not short_job"; tail -n 12 "$out"; }
grep -q 'per-task events' "$out" && bad "the header says per-task events with per-CPU ones in use" ||
	ok "no coverage note in the header"

out=$E2E_TMPDIR/cov60.txt
read -r pct n cpu < <(coverage 60 "$out" --events inherit)
log "60 ms threads, inherited events: $n samples for $cpu CPU s at 99 Hz"
check_cmp "$pct" '>=' 80 "coverage of 60 ms threads with --events inherit"
grep -q 'per-task events: threads under 10 ms undersampled' "$out" &&
	ok "the header says what per-task events miss" || bad "no coverage note with --events inherit"

# In a PID namespace of its own (stacktop in a container) the filter must
# match the namespace's pids, not the global ones.
if unshare --pid --fork --mount-proc true 2>/dev/null; then
	out=$E2E_TMPDIR/pidns.txt
	unshare --pid --fork --mount-proc "$STACKTOP" -b -n 3 -- "$TARGETS/shortthreads" 0 1.5 60 >"$out" 2>&1
	n=$(grep -E '^samples [0-9,]+' "$out" | tail -1 | awk '{ gsub(",", "", $2); print $2 }')
	check_cmp "${n:-0}" '>' 20 "in a PID namespace of its own: samples taken"
	grep -q short_job "$out" && ! grep -q 'per-task events' "$out" &&
		ok "in a PID namespace: per-CPU events, short_job named" || { bad "pidns run"; head -8 "$out"; }
fi

# Not allowed CPU-wide events and BPF: the default falls back, and says so;
# asking for per-cpu is one clear sentence and exit status 1.
if command -v capsh >/dev/null; then
	out=$E2E_TMPDIR/nocap.txt
	capsh --drop=cap_bpf,cap_sys_admin,cap_perfmon -- -c \
		"'$STACKTOP' -b -n 2 -- '$TARGETS/shortthreads' 0 1.5 60" >"$out" 2>&1
	check_cmp "$?" == 0 "without CAP_BPF/CAP_PERFMON the default still samples"
	grep -q 'per-task events' "$out" && grep -q short_job "$out" &&
		ok "fallback to per-task events, said in the header" || { bad "no fallback"; head -5 "$out"; }
	capsh --drop=cap_bpf,cap_sys_admin,cap_perfmon -- -c \
		"'$STACKTOP' --events per-cpu -b -n 1 -- '$TARGETS/shortthreads' 0 1.5 60" >"$out" 2>&1
	rc=$?
	check_cmp "$rc" == 1 "--events per-cpu without the capabilities exits 1"
	grep -q 'per-CPU events were refused.*CAP_BPF' "$out" && ok "and says why" || { bad "no reason"; cat "$out"; }
fi

# ---- 1,000 threads ----------------------------------------------------------
start_target 1 bigpool 1000 2
BP=$BG_PID
wait_until 10 test "$(ls /proc/"$BP"/task | wc -l)" -ge 1000
check_cmp "$(ls /proc/"$BP"/task | wc -l)" '>=' 1000 "bigpool runs 1,000 threads"
out=$E2E_TMPDIR/big.txt
"$STACKTOP" -b -n 6 -r 99 -p "$BP" >"$out" 2>"$out.err" &
ST=$!
BG_PIDS+=("$ST")
sleep 1.5 # set-up: 1,000 threads x CPUs events opened, symbols read
c0=$(proc_cpu_ticks "$ST")
t0=$(date +%s.%N)
c1=$c0
while alive "$ST"; do
	c=$(proc_cpu_ticks "$ST") && c1=$c && t1=$(date +%s.%N)
	sleep 0.1
done
wait "$ST"
check_cmp "$?" == 0 "stacktop -b -n 6 -p bigpool exits 0"
lost=$(grep -oE 'lost [0-9,]+' "$out" | awk '{ gsub(",", "", $2); s += $2 } END { print s + 0 }')
check_cmp "$lost" == 0 "lost records over 6 frames of 1,000 threads"
grep -qE 'busy_loop \(bigpool.c\)' "$out" && ok "busy_loop named" || bad "busy_loop not in the profile"
cost=$(awk -v a="$c0" -v b="$c1" -v t0="$t0" -v t1="$t1" -v hz="$HZ" \
	'BEGIN { printf "%.1f", (b - a) / hz / (t1 - t0) * 100 }')
log "stacktop's own CPU after set-up: $cost% of a core ($((c1 - c0)) ticks)"
check_cmp "$cost" '<=' 5 "stacktop's own CPU with 1,000 threads at 99 Hz, % of one core"
threads=$(grep -oE '[0-9,]+ threads' "$out" | tail -1)
log "header: $threads"

out=$E2E_TMPDIR/wall.txt
"$STACKTOP" -w -r 100 -b -n 7 -p "$BP" >"$out" 2>&1
check_cmp "$?" == 0 "stacktop -w -r 100 -p bigpool exits 0"
last=$(grep -E '^samples ' "$out" | tail -1)
log "wall, last frame: $last"
grep -qE 'rate lowered to [0-9.]+ Hz a thread to keep up' <<<"$last" &&
	ok "wall mode says it lowered its rate" || bad "no 'rate lowered' in the wall header"
# The header gives "(now X/s of Y/s expected)" only when short of 90%.
if grep -q 'expected)' <<<"$last"; then
	ratio=$(sed -nE 's/.*\(now ([0-9.]+)\/s of ([0-9.]+)\/s expected\).*/\1 \2/p' <<<"$last" |
		awk '{ printf "%.0f", ($2 > 0 ? 100 * $1 / $2 : 0) }')
else
	ratio=90
fi
check_cmp "${ratio:-0}" '>=' 70 "wall mode keeps up with the rate it says, % achieved"

e2e_finish
