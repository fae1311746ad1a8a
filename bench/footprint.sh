#!/bin/bash
# bench/footprint.sh — stacktop's memory on cpuburn in the TUI. Not a test:
# prints a table.
#
#   bash bench/footprint.sh [SECONDS]     (default 20 s a row)
#   BENCH_STACKTOP_OLD=/tmp/stacktop-old bash bench/footprint.sh  (adds its rows)
#
# For 999 Hz and 99 Hz: stacktop's TUI (80x24, private tmux server) watches
# build/targets/cpuburn (2 workers) for SECONDS; then its peak RSS (VmHWM),
# RSS at the end split into anonymous and file-backed (RssAnon, RssFile),
# and the shared libraries it has mapped (a linked library is mapped by
# every run; one opened on first use only when used). Needs root, tmux,
# build/stacktop and build/targets/cpuburn.
. "$(dirname "$0")/lib.sh"
DUR=${1:-${BENCH_SECONDS:-20}}
CPUBURN=$ROOT/build/targets/cpuburn
TMUX_SOCK=stacktop-footprint-$$
bench_on_exit() { tmux -L "$TMUX_SOCK" kill-server 2>/dev/null; }
bench_init stacktop-footprint
bench_need "$CPUBURN" targets
command -v tmux >/dev/null || { echo "bench: tmux is needed" >&2; exit 1; }

status_kb() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status" 2>/dev/null; }

"$CPUBURN" 2 >/dev/null 2>&1 &
CB=$!
PIDS+=("$CB")
sleep 1
printf '%-10s %5s %8s %8s %8s %8s %s\n' build Hz "peak MiB" "RSS MiB" "anon" "file" "libraries"
row() { # NAME BINARY RATE
	local name=$1 bin=$2 rate=$3 sp hwm rss anon file libs
	tmux -L "$TMUX_SOCK" new-session -d -s fp -x 80 -y 24 "exec $bin -r $rate -p $CB"
	sleep 1
	sp=$(tmux -L "$TMUX_SOCK" display-message -p -t fp '#{pane_pid}')
	sleep $((DUR - 1))
	hwm=$(status_kb "$sp" VmHWM) rss=$(status_kb "$sp" VmRSS)
	anon=$(status_kb "$sp" RssAnon) file=$(status_kb "$sp" RssFile)
	libs=$(awk '$6 ~ /\.so/ { print $6 }' "/proc/$sp/maps" | sort -u | wc -l)
	tmux -L "$TMUX_SOCK" kill-server 2>/dev/null
	sleep 0.5
	awk -v n="$name" -v r="$rate" -v h="$hwm" -v s="$rss" -v a="$anon" -v f="$file" -v l="$libs" \
		'BEGIN { printf "%-10s %5s %8.1f %8.1f %8.1f %8.1f %s\n", n, r, h / 1024, s / 1024, a / 1024, f / 1024, l }'
}
for rate in 999 99; do
	row stacktop "$STACKTOP" "$rate"
	[ -n "${BENCH_STACKTOP_OLD:-}" ] && row old "$BENCH_STACKTOP_OLD" "$rate"
done
