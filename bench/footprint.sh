#!/bin/bash
# bench/footprint.sh — stacktop's memory and steady cost on cpuburn in the
# TUI, beside perf top's on the same target in the same run. Not a test:
# prints a table.
#
#   bash bench/footprint.sh [SECONDS]     (default 20 s a row)
#   BENCH_STACKTOP_OLD=/tmp/stacktop-old bash bench/footprint.sh  (adds its rows)
#
# For 999 Hz and 99 Hz: stacktop's TUI (80x24, private tmux server) watches
# build/targets/cpuburn (2 workers) for SECONDS; then its peak RSS (VmHWM),
# RSS at the end split into anonymous and file-backed (RssAnon, RssFile),
# the shared libraries it has mapped (a linked library is mapped by every
# run; one opened on first use only when used), and its steady cost: CPU ms
# per wall second from 3 s after its start to the end (schedstat of all its
# threads, ns), and the median of its one-second steps. Then `perf top -g`
# (--stdio, a silent FIFO as stdin) at the same rate on the same target
# for as long. Needs root, tmux,
# build/stacktop and build/targets/cpuburn; perf optional.
. "$(dirname "$0")/lib.sh"
DUR=${1:-${BENCH_SECONDS:-20}}
WARM=3
CPUBURN=$ROOT/build/targets/cpuburn
TMUX_SOCK=stacktop-footprint-$$
bench_on_exit() {
	exec 3>&- 2>/dev/null
	tmux -L "$TMUX_SOCK" kill-server 2>/dev/null
}
bench_init stacktop-footprint
bench_need "$CPUBURN" targets
command -v tmux >/dev/null || { echo "bench: tmux is needed" >&2; exit 1; }

status_kb() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status" 2>/dev/null; }

mkfifo "$TMP/stdin"
exec 3<>"$TMP/stdin"
"$CPUBURN" 2 >/dev/null 2>&1 &
CB=$!
PIDS+=("$CB")
sleep 1
printf '%-10s %5s %8s %8s %8s %8s %9s %8s %8s\n' build Hz "peak MiB" "RSS MiB" "anon" "file" "libraries" "cpu-ms/s" median
# measure NAME RATE PID: wait out the row, print its line (the process still runs)
measure() {
	local name=$1 rate=$2 sp=$3 ns1 w1 ns2 w2 hwm rss anon file libs prev cur steps=""
	sleep "$WARM"
	ns1=$(cpu_ns "$sp") w1=$(date +%s%N) prev=$ns1
	for _ in $(seq $((DUR - WARM))); do
		sleep 1
		cur=$(cpu_ns "$sp")
		steps="$steps $((cur - prev))"
		prev=$cur
	done
	ns2=$prev w2=$(date +%s%N)
	hwm=$(status_kb "$sp" VmHWM) rss=$(status_kb "$sp" VmRSS)
	anon=$(status_kb "$sp" RssAnon) file=$(status_kb "$sp" RssFile)
	libs=$(awk '$6 ~ /\.so/ { print $6 }' "/proc/$sp/maps" | sort -u | wc -l)
	awk -v n="$name" -v r="$rate" -v h="$hwm" -v s="$rss" -v a="$anon" -v f="$file" -v l="$libs" \
		-v c1="$ns1" -v c2="$ns2" -v w1="$w1" -v w2="$w2" -v steps="$steps" \
		'BEGIN { k = split(steps, v, " "); for (i = 2; i <= k; i++) for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) { x = v[j]; v[j] = v[j - 1]; v[j - 1] = x }
			printf "%-10s %5s %8.1f %8.1f %8.1f %8.1f %9s %8.2f %8.2f\n", n, r, h / 1024, s / 1024,
			a / 1024, f / 1024, l, (c2 - c1) / 1e6 / ((w2 - w1) / 1e9), k ? v[int((k + 1) / 2)] / 1e6 : 0 }'
}
row() { # NAME BINARY RATE
	local name=$1 bin=$2 rate=$3 sp
	tmux -L "$TMUX_SOCK" new-session -d -s fp -x 80 -y 24 "exec $bin -r $rate -p $CB"
	sp=$(tmux -L "$TMUX_SOCK" display-message -p -t fp '#{pane_pid}')
	measure "$name" "$rate" "$sp"
	tmux -L "$TMUX_SOCK" kill-server 2>/dev/null
	sleep 0.5
}
perf_row() { # RATE
	local pp
	perf top -p "$CB" -F "$1" -g --stdio -d 1 >"$TMP/perf-top.out" 2>&1 <&3 &
	pp=$!
	PIDS+=("$pp")
	measure perf-top "$1" "$pp"
	bench_stop "$pp" 5
}
for rate in 999 99; do
	row stacktop "$STACKTOP" "$rate"
	[ -n "${BENCH_STACKTOP_OLD:-}" ] && row old "$BENCH_STACKTOP_OLD" "$rate"
	[ "$HAVE_PERF" = 1 ] && perf_row "$rate"
done
echo "cpu-ms/s: CPU ms per wall second from ${WARM} s after the start (schedstat, all threads);"
echo "median: of its one-second steps (one-offs such as loading /proc/kallsyms left out)."
