# bench/lib.sh — what the benchmarks share (sourced, not run).
#
#   bench_init NAME       ROOT, STACKTOP, HZ, TMP (/tmp/NAME.XXXXXX), PIDS and
#                         the EXIT trap that kills every pid in PIDS (by pid,
#                         never by name) and removes TMP; a script may define
#                         bench_on_exit to run last
#   bench_need PATH WHAT  stop with "bench: PATH missing: run make WHAT"
#   cpu_ticks PID         utime+stime of a process, all its threads (0 if gone)
#   bench_stop PID [SECS] SIGINT, SIGKILL after SECS (default 10) s, then reap
set -u

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
STACKTOP=$ROOT/build/stacktop
HZ=$(getconf CLK_TCK)
PIDS=()

bench_cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
	declare -F bench_on_exit >/dev/null && bench_on_exit
	rm -rf "$TMP"
}

bench_init() {
	TMP=$(mktemp -d "/tmp/$1.XXXXXX")
	trap bench_cleanup EXIT
	trap 'exit 130' INT TERM HUP
	bench_need "$STACKTOP" all
}

bench_need() {
	[ -x "$1" ] || { echo "bench: $1 missing: run make $2" >&2; exit 1; }
}

bench_stop() {
	local tenths=$((${2:-10} * 10))
	kill -INT "$1" 2>/dev/null
	for _ in $(seq "$tenths"); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}

cpu_ticks() {
	local s
	s=$(cat "/proc/$1/stat" 2>/dev/null) || { echo 0; return; }
	s=${s##*) }
	awk '{ print $12 + $13 }' <<<"$s"
}

# cpu_ns PID: on-CPU ns of a process's live threads (schedstat: ns resolution).
cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%.0f", s }'; }
# hwm_kb PID: its peak RSS (VmHWM); syscr PID: its read syscalls so far.
hwm_kb() { awk '/^VmHWM:/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0; }
syscr() { awk '/^syscr:/ { print $2 }' "/proc/$1/io" 2>/dev/null || echo 0; }

# throughput PID OUT: ask a rounds target (cpuburn, the Python burners) for
# its rounds/s since the previous SIGUSR1 (a line appended to OUT), into TP;
# EFF: rounds per CPU second of the target over the same span (its
# schedstat), which does not move when other processes compete for the
# CPUs, only when the work itself gets slower (per-sample kernel work
# charged to the target, cache and TLB pollution). Globals, not output: a
# $(...) subshell would lose them. TGT_NS0: the target's ns at the last call.
TGT_NS0=0
throughput() {
	local n ns line
	n=$(wc -l <"$2")
	ns=$(cpu_ns "$1")
	kill -USR1 "$1"
	for _ in $(seq 50); do
		[ "$(wc -l <"$2")" -gt "$n" ] && break
		sleep 0.05
	done
	line=$(tail -n 1 "$2")
	EFF=$(awk -v l="$line" -v ns="$((ns - TGT_NS0))" 'BEGIN {
		if (match(l, /rounds=[0-9]+/) && ns > 0) printf "%.1f", substr(l, RSTART + 7, RLENGTH - 7) / (ns / 1e9); else print "-" }')
	TGT_NS0=$ns
	TP=$(sed -n 's/.*rounds_per_s=\([0-9.]*\).*/\1/p' <<<"$line")
}

# HAVE_PERF: 1 when perf is installed (its figures beside ours), else 0.
HAVE_PERF=1
command -v perf >/dev/null || HAVE_PERF=0

# watch_pid PID: CPU % of one core (schedstat of all its threads), read
# system calls a second and peak RSS (MiB) of PID from WARM s to DUR s (the
# caller's globals), as one line of the table.
watch_pid() {
	local pid=$1 ns1 r1 w1 ns2 r2 w2 hwm
	sleep "$WARM"
	ns1=$(cpu_ns "$pid") r1=$(syscr "$pid") w1=$(date +%s%N)
	sleep $((DUR - WARM))
	ns2=$(cpu_ns "$pid") r2=$(syscr "$pid") w2=$(date +%s%N) hwm=$(hwm_kb "$pid")
	awk -v a="$ns1" -v b="$ns2" -v r1="$r1" -v r2="$r2" -v w1="$w1" -v w2="$w2" -v h="$hwm" \
		'BEGIN { s = (w2 - w1) / 1e9; printf "%6.1f%% %8.0f %7.1f", 100 * (b - a) / 1e9 / s, (r2 - r1) / s, h / 1024 }'
}
