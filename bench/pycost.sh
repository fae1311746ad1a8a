#!/bin/bash
# bench/pycost.sh — what profiling a CPython costs next to a native target,
# in one run: stacktop's CPU per sample and the target's slowdown.
#
#   bash bench/pycost.sh [SECONDS]        (default 10 s per phase)
#
# Targets, one at a time: cpuburn (1 worker, native C), Debian's python3.11
# and the newest pyenv CPython 3.12+ (also with -X perf) running a Python
# loop of fixed rounds (leaf → step → run) that, like cpuburn, prints its
# rounds/s since the last SIGUSR1. For each: SECONDS alone, then SECONDS
# watched by `stacktop -b -p PID` at 99 Hz (cpu mode). Columns:
#   smp/s      samples per second (stacktop's own count)
#   us/smp     stacktop's CPU (schedstat) from 3 s after its start to the
#              end, per sample: the steady cost, start-up left out
#   rounds/s   the target's fixed work per wall second, alone and watched
#              (moves when anything competes for the CPUs)
#   rounds/cpu the same per CPU second of the target: moves only when the
#              work itself gets slower (per-sample kernel work, caches)
# Needs root, build/stacktop, build/targets/cpuburn. See bench/README.md.
. "$(dirname "$0")/lib.sh"
DUR=${1:-${BENCH_SECONDS:-10}}
WARM=3
CPUBURN=$ROOT/build/targets/cpuburn
bench_init stacktop-pycost
bench_need "$CPUBURN" targets


cat >"$TMP/pywork.py" <<'PY'
import signal
import time

rounds = 0
last = [time.monotonic(), 0]


def report(*_):
    t = time.monotonic()
    print("pywork: rounds_per_s=%.1f rounds=%d seconds=%.3f"
          % ((rounds - last[1]) / (t - last[0]), rounds - last[1], t - last[0]), flush=True)
    last[0], last[1] = t, rounds


signal.signal(signal.SIGUSR1, report)


def leaf(n):
    x = 0
    for i in range(n):
        x += i
    return x


def step():
    leaf(20000)


def run():
    global rounds
    while True:
        step()
        rounds += 1


run()
PY

ROWS=()
# one NAME CMD...: the target CMD alone, then watched.
one() {
	local name=$1 out=$TMP/target.out st=$TMP/stacktop.out
	shift
	: >"$out"
	"$@" >"$out" 2>&1 &
	local tp=$!
	PIDS+=("$tp")
	sleep 2 # cpuburn calibrates; python imports
	TGT_NS0=$(cpu_ns "$tp")
	throughput "$tp" "$out"
	sleep "$DUR"
	throughput "$tp" "$out"
	local tp0=$TP eff0=$EFF
	"$STACKTOP" -b -d $((DUR + WARM + 2)) -n 1 -p "$tp" >"$st" 2>&1 &
	local sp=$!
	PIDS+=("$sp")
	throughput "$tp" "$out"
	sleep "$WARM"
	local ns1 w1 ns2 w2
	ns1=$(cpu_ns "$sp")
	w1=$(date +%s%N)
	sleep "$DUR"
	ns2=$(cpu_ns "$sp")
	w2=$(date +%s%N)
	throughput "$tp" "$out"
	wait "$sp"
	kill "$tp" 2>/dev/null
	wait "$tp" 2>/dev/null
	local rate
	rate=$(tr -d , <"$st" | sed -n 's/^samples \([0-9]*\) in \([0-9.]*\)s.*/\1 \2/p' | head -n 1 |
		awk '{ if ($2 > 0) printf "%.1f", $1 / $2 }')
	ROWS+=("$(awk -v n="$name" -v r="${rate:-0}" -v ns=$((ns2 - ns1)) -v w=$((w2 - w1)) \
		-v a="$tp0" -v b="$TP" -v ea="$eff0" -v eb="$EFF" -v u="$(grep -o 'unwind ok [0-9.]*%' "$st" | head -n 1)" 'BEGIN {
		smp = r * w / 1e9
		printf "%-22s %6.1f %8.1f %9.1f %9.1f %7.1f%% %10.1f %10.1f %7.1f%%  %s", n, r,
			(smp > 0 ? ns / 1e3 / smp : 0), a, b, (a > 0 ? 100 * (1 - b / a) : 0),
			ea, eb, (ea > 0 ? 100 * (1 - eb / ea) : 0), u }')")
}

one "native cpuburn" "$CPUBURN" 1
[ -x /usr/bin/python3.11 ] && one "python3.11 (Debian)" /usr/bin/python3.11 "$TMP/pywork.py"
new=$(ls -d /root/.pyenv/versions/3.1[2-9].*/bin/python3.1[2-9] 2>/dev/null | tail -n 1)
if [ -n "$new" ]; then
	one "${new##*/}" "$new" "$TMP/pywork.py"
	one "${new##*/} -X perf" "$new" -X perf "$TMP/pywork.py"
fi
printf '%-22s %6s %8s %9s %9s %8s %10s %10s %8s\n' target smp/s us/smp "rounds/s" watched slower "rounds/cpu" watched slower
printf '%s\n' "${ROWS[@]}"
