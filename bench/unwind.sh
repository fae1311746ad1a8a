#!/bin/bash
# bench/unwind.sh — how many stacks end truncated, with the rule cache alone
# and with libunwind continuing where it stops (issue 12).
#
#   bench/unwind.sh [SECONDS]     default 5 s per target
#
# One stacktop run per target (batch mode, -r 499); its header counts the
# stacks the rule cache stopped ("libunwind finished F of S") and those
# still truncated (T) after the fallback. Without the fallback F more would
# be truncated, so from the same samples:
#   before = (T + F) / samples      after = T / samples
# Targets: cpuburn, demo, tree (compiled C, ordinary CFI), jit (no CFI:
# frame pointers), oddcfi (CFI the cache does not model), wall mode on
# sleepers and waiter (stacks in libc's syscall wrappers), and distro
# interpreters busy in a loop (perl, python3, node) when installed.
. "$(dirname "$0")/lib.sh"
bench_init unwind
SECS=${1:-5}

run() { # NAME MODEARGS TARGET ARGS... (a build/targets name, or a command)
	local name=$1 mode=$2 out prog
	shift 2
	prog=$ROOT/build/targets/$1
	if [ ! -x "$prog" ]; then
		prog=$(command -v "$1") || { printf '%-16s not installed\n' "$name"; return; }
	fi
	"$prog" "${@:2}" >/dev/null 2>&1 &
	PIDS+=($!)
	local pid=$!
	sleep 0.5
	out=$TMP/$name.out
	# shellcheck disable=SC2086
	timeout $((SECS + 20)) "$STACKTOP" -b $mode -r 499 -d "$SECS" -n 1 -l 1 -p "$pid" >"$out" 2>&1
	bench_stop "$pid" 2
	awk -v name="$name" '
		/^samples / { gsub(",", ""); n = $2
			if (match($0, /truncated [0-9]+/)) t = substr($0, RSTART + 10, RLENGTH - 10)
			f = 0; s = 0
			if (match($0, /finished [0-9]+ of [0-9]+/)) {
				split(substr($0, RSTART, RLENGTH), a, " "); f = a[2]; s = a[4] } }
		END { if (n == 0) { printf "%-16s no samples\n", name; exit }
			printf "%-16s %8d %10d %9d %9.2f%% %9.2f%%\n", name, n, s, f,
				100 * (t + f) / n, 100 * t / n }' "$out"
}

printf '%-16s %8s %10s %9s %10s %10s\n' target samples "cache stop" "lu finish" before after
run cpuburn "" cpuburn 2
run demo "" demo
run tree "" tree
run jit "" jit
run oddcfi "" oddcfi
run sleepers-wall "-w" sleepers
run waiter-wall "-w" waiter
run perl "" perl -e 'my $x = 0; while (1) { $x = ($x * 7 + 1) % 1000003 }'
run python3 "" python3 -c 'x = 0
while True: x = (x * 7 + 1) % 1000003'
run node "" node -e 'let x = 0; for (;;) { x = (x * 7 + 1) % 1000003 }'
