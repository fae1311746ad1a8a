#!/bin/bash
# bench/run.sh — what does profiling cost? Prints a table, then runs
# bench/checks.sh (the figures the tests used to assert, beside perf's, each
# with a limit a factor 2 from what was asserted) and exits with its status.
#
#   bash bench/run.sh [SECONDS]        (or: make bench; BENCH_SECONDS=20 make bench)
#   BENCH_CHECK_SECONDS=10 bash bench/run.sh   (the checks' measurements, default 5 s)
#   BENCH_FOOTPRINT_SECONDS=20 bash bench/run.sh (footprint.sh's rows, default SECONDS)
#
# One cpuburn process with 2 workers runs throughout. For SECONDS each, it
# runs alone, then under each profiler in turn, then alone again (the two
# "alone" rows show how noisy the machine is). For every phase we report:
#   - target throughput (cpuburn rounds/s, fixed work per round) relative to
#     the mean of the two "alone" phases: what the profiled program loses,
#     including the kernel's per-sample cost charged to it;
#   - the profiler's own CPU seconds (utime+stime of its process, all
#     threads, from /proc/PID/stat just before it is stopped);
#   - samples taken and CPU ms per 1000 samples;
#   - peak RSS (VmHWM) of the profiler.
# Then bench/footprint.sh (the TUI's peak RSS and steady ms/s at 999 and
# 99 Hz beside perf top's; BENCH_FOOTPRINT_SECONDS a row, SECONDS by
# default). See bench/README.md for how to read it. Needs root (perf_event_open on
# another process, perf itself) and build/stacktop, build/targets/cpuburn.
. "$(dirname "$0")/lib.sh"
DUR=${1:-${BENCH_SECONDS:-10}}
THREADS=${BENCH_THREADS:-2}
CPUBURN=$ROOT/build/targets/cpuburn
bench_on_exit() { exec 3>&- 2>/dev/null; }
bench_init stacktop-bench
bench_need "$CPUBURN" targets

# ---- helpers ----------------------------------------------------------------------

# Results, one line per phase:
#   name|rounds/s|cpu_s|samples|samples_note|hwm_kb|steady_ms_per_1000
RESULTS=()
WARM=2 # seconds of each profiler phase that count as start-up

phase_alone() {
	throughput "$CB" "$TMP/cpuburn.out"
	sleep "$DUR"
	throughput "$CB" "$TMP/cpuburn.out"
	RESULTS+=("$1|$TP;$EFF|-|-||-|-")
}

# phase_profiler NAME SAMPLES_FN CMD...: run CMD (the profiler) for DUR
# seconds. SAMPLES_FN OUTFILE FROM_LINE prints "N|note": samples counted in
# the output after line FROM_LINE (0: all). The steady-state cost is the
# CPU time between WARM seconds and the end over the samples in between, so
# start-up (symbol tables, debug info) is left out of it.
phase_profiler() {
	local name=$1 samples_fn=$2
	shift 2
	local out=$TMP/$name.out
	"$@" >"$out" 2>"$out.err" <&3 &
	local pp=$!
	PIDS+=("$pp")
	throughput "$CB" "$TMP/cpuburn.out"
	sleep "$WARM"
	local ns1 line1 s1
	ns1=$(cpu_ns "$pp")
	line1=$(wc -l <"$out")
	s1=$($samples_fn "$out" 0)
	sleep $((DUR - WARM))
	local tp ticks hwm ns2 s2 steady
	throughput "$CB" "$TMP/cpuburn.out"
	tp="$TP;$EFF"
	ticks=$(cpu_ticks "$pp")
	hwm=$(hwm_kb "$pp")
	ns2=$(cpu_ns "$pp")
	if ! kill -0 "$pp" 2>/dev/null; then
		echo "bench: $name exited early:" >&2
		tail -n 5 "$out.err" >&2
	fi
	bench_stop "$pp"
	local all
	all=$($samples_fn "$out" 0)
	case $name in
	stacktop*) s2=$(( ${all%%|*} - ${s1%%|*} )) ;; # cumulative counts in the window
	perf-top*) s2=$($samples_fn "$out" "$line1") && s2=${s2%%|*} ;;
	*) s2=0 ;;
	esac
	steady=$(awk -v ns="$((ns2 - ns1))" -v n="$s2" 'BEGIN { if (n > 0) printf "%.1f", ns / 1e6 / n * 1000; else print "-" }')
	RESULTS+=("$name|$tp|$(awk -v t="$ticks" -v hz="$HZ" 'BEGIN { printf "%.2f", t / hz }')|$all|$hwm|$steady")
}

stacktop_samples() { # the latest batch block: "samples N in Xs (R/s) ..."
	local n
	n=$(awk '/^samples [0-9]/ { n = $2 } END { gsub(",", "", n); print n }' "$1")
	echo "${n:-0}|"
}
perftop_samples() { # sum of "PerfTop: N irqs/sec" over the 1 s refreshes after line $2
	awk -v from="$2" 'NR > from && /PerfTop:/ { for (i = 1; i < NF; i++) if ($(i + 1) == "irqs/sec") s += $i }
		END { printf "%d|est.", s }' "$1"
}
perfrecord_samples() {
	local n
	n=$(perf report -i "$TMP/perf.data" --stats 2>/dev/null | awk '/SAMPLE events:/ { print $3; exit }')
	echo "${n:-0}|"
}

# ---- run ---------------------------------------------------------------------------

# perf top --stdio reads keys from stdin and spins on EOF: give it (and
# everyone) a pipe that stays open and silent.
mkfifo "$TMP/stdin"
exec 3<>"$TMP/stdin"

"$CPUBURN" "$THREADS" >"$TMP/cpuburn.out" 2>&1 &
CB=$!
PIDS+=("$CB")
sleep 1

echo "bench: cpuburn $THREADS workers (pid $CB), $DUR s per phase, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"

phase_alone "alone"
phase_profiler "stacktop-99Hz" stacktop_samples \
	"$STACKTOP" -b -d 1 -r 99 -W $((DUR + 30)) -p "$CB"
phase_profiler "stacktop-999Hz" stacktop_samples \
	"$STACKTOP" -b -d 1 -r 999 -W $((DUR + 30)) -p "$CB"
phase_profiler "stacktop-wall-19Hz" stacktop_samples \
	"$STACKTOP" -w -b -d 1 -r 19 -W $((DUR + 30)) -p "$CB"
phase_profiler "stacktop-wall-99Hz" stacktop_samples \
	"$STACKTOP" -w -b -d 1 -r 99 -W $((DUR + 30)) -p "$CB"
REPORT_CPU=""
if [ "$HAVE_PERF" = 1 ]; then
	phase_profiler "perf-top-dwarf" perftop_samples \
		perf top -p "$CB" -F 99 --call-graph dwarf --stdio -d 1
	phase_profiler "perf-record-dwarf" perfrecord_samples \
		perf record -q -F 99 --call-graph dwarf -p "$CB" -o "$TMP/perf.data"
	# and what turning that recording into a report costs, afterwards
	TIMEFORMAT='%U %S'
	rt=$({ time perf report -i "$TMP/perf.data" --stdio --no-children >/dev/null 2>&1; } 2>&1)
	REPORT_CPU=$(awk '{ printf "%.2f", $1 + $2 }' <<<"$rt")
	REPORT_SIZE=$(du -k "$TMP/perf.data" | cut -f1)
else
	echo "bench: perf not installed; skipping the perf rows" >&2
fi
phase_alone "alone-again"

# ---- table ---------------------------------------------------------------------------

# the baselines: means of the alone rows, for rounds/s and rounds per CPU s
read -r base base_eff <<<"$(printf '%s\n' "${RESULTS[@]}" | awk -F'|' '$1 ~ /^alone/ {
	split($2, t, ";"); if (t[1] > 0) { s += t[1]; n++ } if (t[2] > 0) { e += t[2]; m++ } }
	END { printf "%.1f %.1f\n", n ? s / n : 0, m ? e / m : 0 }')"
echo
printf '%-18s %9s %8s %9s %8s %7s %10s %10s %12s %9s\n' phase rounds/s vs-alone rounds/cpu vs-alone \
	cpu-s samples ms/1k-all ms/1k-steady peak-rss
for r in "${RESULTS[@]}"; do
	IFS='|' read -r name tp cpu n note hwm steady <<<"$r"
	awk -v name="$name" -v tp="${tp%%;*}" -v eff="${tp#*;}" -v base="$base" -v beff="$base_eff" \
		-v cpu="$cpu" -v n="$n" -v note="$note" -v hwm="$hwm" -v steady="$steady" 'BEGIN {
		rel = (base > 0 && tp != "") ? sprintf("%.1f%%", 100 * tp / base) : "-"
		rele = (beff > 0 && eff + 0 > 0) ? sprintf("%.1f%%", 100 * eff / beff) : "-"
		per = (cpu != "-" && n > 0) ? sprintf("%.1f", cpu * 1e6 / n) : "-"
		smp = (n == "-") ? "-" : n (note != "" ? " " note : "")
		rss = (hwm == "-" || hwm == "") ? "-" : sprintf("%.1f MiB", hwm / 1024)
		printf "%-18s %9s %8s %9s %8s %7s %10s %10s %12s %9s\n", name, tp, rel, eff, rele, cpu, smp, per, steady, rss
	}'
done
for f in "$TMP"/stacktop-wall-*.out; do
	[ -f "$f" ] || continue
	p=$(grep -o 'pause [0-9.,]* µs/sample' "$f" | tail -n 1)
	[ -n "$p" ] && echo "$(basename "$f" .out): target threads stopped for $p (its own header)"
done
if [ -n "$REPORT_CPU" ]; then
	echo
	echo "perf report --stdio on the perf-record-dwarf data (${REPORT_SIZE} KiB): ${REPORT_CPU} CPU s"
fi
echo
echo "rounds/s: target throughput (fixed work); rounds/cpu: per CPU second of the target (immune to other"
echo "load: it only drops when the work itself gets slower); vs-alone: relative to the mean of the alone rows."
echo "cpu-s: the profiler's utime+stime. samples: from its own output (est. = sum of perf top's irqs/s per 1 s refresh)."
echo "ms/1k-all: profiler CPU ms per 1000 samples, start-up included; ms/1k-steady: after the first $WARM s."

# ---- memory and steady cost in the TUI beside perf top's (bench/footprint.sh) ------
# its own cpuburn: this one stops first
bench_stop "$CB" 2
echo
echo "TUI on cpuburn: memory and steady cost (bench/footprint.sh, ${BENCH_FOOTPRINT_SECONDS:-$DUR} s a row)"
bash "$ROOT/bench/footprint.sh" "${BENCH_FOOTPRINT_SECONDS:-$DUR}"

# ---- the checks: figures with limits (bench/checks.sh); its status is ours ----------
echo
bash "$ROOT/bench/checks.sh" "${BENCH_CHECK_SECONDS:-5}"
