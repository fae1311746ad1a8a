#!/bin/bash
# test_multiproc — every per-process figure covers every target process
# (issue 17, item 1):
#
#   - two cpuburn processes attached with -p A,B in the TUI at 80x24: the
#     CPU chart's "now" is their sum (against their own CPU time from
#     /proc/PID/stat over the same second, with a wide tolerance: the
#     machine is shared), more than either one alone; the threads view
#     lists the threads of both under a PID column; the icicle's per-thread
#     roots (key t) say "PID:TID name";
#   - batch mode (-b --view threads, -p "A B") lists both PIDs;
#   - --subprocesses on `sh -c 'cpuburn…; exit 0'` (the shell forks and
#     waits): the CPU line is cpuburn's, not the idle shell's 0%.
#
# STACKTOP_BIN overrides the binary (to try a build before it lands).
. "$(dirname "$0")/lib.sh"
STACKTOP=${STACKTOP_BIN:-$STACKTOP}
trap e2e_cleanup_trees EXIT
need_stacktop
need_target cpuburn
need_tmux

HZ=$(getconf CLK_TCK)
start_target 0.3 cpuburn 1
A=$BG_PID
start_target 0.3 cpuburn 1
B=$BG_PID
disown "$A" "$B" # killed here and by the EXIT trap: no "Killed" notice from bash
log "cpuburn A $A, B $B"

# ---- the TUI, 80x24 -----------------------------------------------------------------
tm_start 80 24 "$STACKTOP" -p "$A,$B"
tm_wait 8 'now +[0-9]+%' || { tm_dump "start"; die "no CPU chart with a 'now' figure"; }

# chart_now: the chart's "now" percentage.
chart_now() { tm_screen | grep -oE 'now +[0-9]+%' | head -1 | grep -oE '[0-9]+'; }
# sum_close: over one second, A's and B's CPU from procfs against the chart
# (read at the end of that second; stacktop's point covers nearly the same
# second). Sets ea, eb, seen.
sum_close() {
	local a0 b0 a1 b1 t0 t1
	a0=$(proc_cpu_ticks "$A") b0=$(proc_cpu_ticks "$B") t0=$(date +%s%3N)
	sleep 1
	a1=$(proc_cpu_ticks "$A") b1=$(proc_cpu_ticks "$B") t1=$(date +%s%3N)
	seen=$(chart_now)
	ea=$(awk -v d=$((a1 - a0)) -v ms=$((t1 - t0)) -v hz="$HZ" 'BEGIN { printf "%.0f", d / hz * 100000 / ms }')
	eb=$(awk -v d=$((b1 - b0)) -v ms=$((t1 - t0)) -v hz="$HZ" 'BEGIN { printf "%.0f", d / hz * 100000 / ms }')
	log "chart now ${seen}%, A ${ea}% + B ${eb}%"
	# Within 30% of the sum (or 20 points), and above the busier one by
	# a third of the other: not one process's figure.
	awk -v s="$seen" -v a="$ea" -v b="$eb" 'BEGIN {
		sum = a + b; tol = sum * 0.3 > 20 ? sum * 0.3 : 20
		hi = a > b ? a : b; lo = a > b ? b : a
		exit !(s != "" && lo >= 5 && s >= sum - tol && s <= sum + tol && s >= hi + lo / 3)
	}'
}
tries=0
until sum_close; do
	tries=$((tries + 1))
	[ "$tries" -ge 4 ] && break
done
if [ "$tries" -lt 4 ]; then
	ok "chart: now ${seen}% is the sum of A ${ea}% and B ${eb}%"
else
	bad_dump "chart" "chart: now ${seen}% is not the sum of A ${ea}% and B ${eb}% (4 tries)"
fi

tm_key_expect 3 5 'PID +PROCESS +TID +NAME' "threads view with PID and PROCESS columns" \
	"no PID/PROCESS columns in the threads view"
# row_pid PID TID: a row of PID's thread TID ("PID  cpuburn  TID  ...").
row_pid() { tm_screen | awk -v p="$1" -v t="$2" '$1 == p && $2 == "cpuburn" && $3 == t { f = 1 } END { exit !f }'; }
if wait_until 3 row_pid "$A" "$A" && row_pid "$B" "$B"; then
	ok "threads: both processes' main threads, under their PIDs"
else
	bad_dump "threads" "threads: A $A or B $B missing"
fi

tm_keys 2
tm_key_expect t 5 "($A|$B):[0-9]+ worker-0" "icicle: per-thread roots named PID:TID name" \
	"icicle: no 'PID:TID worker-0' root"
tm_keys q
tm_stop

# ---- batch ----------------------------------------------------------------------------
if timeout 30 "$STACKTOP" -b -n 2 --view threads -p "$A $B" >"$E2E_TMPDIR/batch.out" 2>"$E2E_TMPDIR/batch.err"; then
	ok "batch: exits 0"
else
	bad "batch: exited $?: $(head -c 300 "$E2E_TMPDIR/batch.err")"
fi
last=$(awk '/^stacktop /{ b = "" } { b = b $0 "\n" } END { printf "%s", b }' "$E2E_TMPDIR/batch.out")
if grep -qE "^ *$A +cpuburn +[0-9]+ +worker-0" <<<"$last" &&
	grep -qE "^ *$B +cpuburn +[0-9]+ +worker-0" <<<"$last"; then
	ok "batch: the threads table lists both PIDs' workers"
else
	bad "batch: not both PIDs in the threads table"
	tail -n 20 "$E2E_TMPDIR/batch.out" | sed 's/^/  | /'
fi

# ---- --subprocesses on a shell ----------------------------------------------------------
kill -KILL "$A" "$B"
if timeout 30 "$STACKTOP" -b -n 3 --subprocesses -- sh -c "$TARGETS/cpuburn 1 6; exit 0" \
	>"$E2E_TMPDIR/sub.out" 2>"$E2E_TMPDIR/sub.err"; then
	ok "subprocesses: exits 0"
else
	bad "subprocesses: exited $?: $(head -c 300 "$E2E_TMPDIR/sub.err")"
fi
now=$(grep -oE '^CPU( \(all processes\))? now [0-9]+%' "$E2E_TMPDIR/sub.out" | tail -1 | grep -oE '[0-9]+')
check_cmp "${now:-}" '>=' 10 "subprocesses: the CPU line counts the shell's child (now %)"

e2e_finish
