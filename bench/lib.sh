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
