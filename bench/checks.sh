#!/bin/bash
# bench/checks.sh — the figures the tests no longer assert (stacktop's own
# CPU, sample rates, lost records, how long things take), measured, with
# perf's for the same target in the same run beside them where perf does the
# same thing (perf record runs at the same time as stacktop, on the same
# target, at the same rate, with DWARF call graphs).
#
#   bash bench/checks.sh [SECONDS]        (default 5 s a measurement)
#   BENCH_FACTOR=3 bash bench/checks.sh   (default 2)
#
# Each figure has the value the e2e tests used to assert ("expect"). It
# fails only when it is off that by more than FACTOR (2): a ceiling E fails
# above E x 2, a floor E below E / 2, a ratio that should be 1 outside
# 1/2 .. 2. Figures that should be 0 (lost records) fail above 1% of the
# samples taken. The exit status is 1 when one fails, else 0. Run it on a
# quiet machine, as root (perf events on another process, ptrace).
#
# Figures (bench/README.md says what each used to be in which test):
#   cpu-499Hz    stacktop's CPU, % of one core, on cpuburn at 499 Hz (<= 10)
#   rate-vs-perf stacktop's samples/s over perf record's on the same target (1)
#   header-rate  the header's samples/s over the count's growth between two
#                refreshes (1); -wall: the same in wall mode (on bigpool)
#   cpu-1000thr  stacktop's CPU on bigpool (1,000 threads, 2 busy), 99 Hz (<= 5)
#   lost-1000thr lost records there (0)
#   lost-saturated lost records at 999 Hz on bigpool (200 threads, 8 busy)
#                beside two CPU hogs, the first seconds included (0)
#   coverage     samples / (target CPU s x 99 Hz) on 1.5 ms threads (>= 80%);
#                -60ms-inh: on 60 ms threads with --events inherit (>= 80%)
#   wall-keepup  wall mode asked 100,000 samples/s on bigpool: % of the
#                rate it says it lowered to that it achieves (>= 70)
#   wall-pause   µs a thread is held stopped, 4 threads on one CPU (< 2000)
#   crowd        stacktop's CPU per second with 2,000 more processes over
#                without (median of one-second steps) (< 1.3)
#   diff-star    seconds from a 60/30/10 → 30/60/10 shift to the live
#                diff's star (<= 10)
#   mem-lost     records lost by the memory view on memgrow in SECONDS (0;
#                fails above 100: the view has no record count)
. "$(dirname "$0")/lib.sh"
SECS=${1:-${BENCH_SECONDS:-5}}
FACTOR=${BENCH_FACTOR:-2}
T=$ROOT/build/targets
TMUX_SOCK=stacktop-checks-$$
bench_on_exit() { tmux -L "$TMUX_SOCK" kill-server 2>/dev/null; }
bench_init stacktop-checks
for t in cpuburn bigpool shortthreads sleepers shift memgrow; do bench_need "$T/$t" targets; done
HAVE_PERF=1
command -v perf >/dev/null || { HAVE_PERF=0; echo "bench: perf not installed: no perf column" >&2; }

# ---- helpers ----------------------------------------------------------------------

now_s() { date +%s.%N; }
# pct NS0 NS1 T0 T1: CPU between two readings, % of one core
pct() { awk -v a="$1" -v b="$2" -v t0="$3" -v t1="$4" 'BEGIN { d = t1 - t0; printf "%.1f", (d > 0 ? (b - a) / 1e9 / d * 100 : 0) }'; }
start() { # OUT CMD...: in the background, output to OUT, pid in P
	local out=$1
	shift
	"$@" >"$out" 2>&1 &
	P=$!
	PIDS+=("$P")
}
perf_stats() { perf report -i "$1" --stats 2>/dev/null; }
perf_count() { awk -v w="$2 events:" 'index($0, w) { n = $3; exit } END { print n + 0 }' <<<"$1"; }
# perf_on PID HZ DATA: perf record on PID at HZ with DWARF stacks, pid in PP
perf_on() {
	PP=
	[ "$HAVE_PERF" = 1 ] || return 0
	start "$3.log" perf record -q -F "$2" --call-graph dwarf -p "$1" -o "$3"
	PP=$P
}
# cpu_of STACKTOP_PID PERF_PID: both processes' CPU over SECS, % of a core,
# into CS and CP (CP empty without perf)
cpu_of() {
	local t0 t1 s0 s1 p0 p1
	t0=$(now_s) s0=$(cpu_ns "$1") p0=$([ -n "$2" ] && cpu_ns "$2")
	sleep "$SECS"
	t1=$(now_s) s1=$(cpu_ns "$1") p1=$([ -n "$2" ] && cpu_ns "$2")
	CS=$(pct "$s0" "$s1" "$t0" "$t1")
	CP=$([ -n "$2" ] && pct "$p0" "$p1" "$t0" "$t1")
}
# header FILE: "N D R G" of a batch output: samples N in D s by its last
# block, and the rate R/s of the block before it (the last may come early,
# on SIGINT), G samples more than the block before that (1 s apart)
header() {
	awk '/^samples [0-9]/ { gsub(",", "", $2); k++; n[k] = $2; d[k] = $4; r[k] = $5
		sub(/s$/, "", d[k]); sub(/^\(/, "", r[k]); sub(/\/s.*/, "", r[k]) }
		END { if (k >= 3) printf "%d %s %s %d\n", n[k], d[k], r[k - 1], n[k - 1] - n[k - 2]; else print "0 0 0 0" }' "$1"
}
last_samples() { awk '/^samples [0-9]/ { n = $2 } END { gsub(",", "", n); print n + 0 }' "$1"; }
lost_of() { grep -oE 'lost [0-9,]+' "$1" | tail -1 | awk '{ gsub(",", "", $2); print $2 + 0 }'; }

# Results: name|stacktop|perf|expect|limit|verdict
RESULTS=()
FAILS=0
# verdict NAME VALUE PERF EXPECT KIND [LIMIT]: KIND max (<= EXPECT), min
# (>= EXPECT), one (a ratio of 1), zero (LIMIT given); fails beyond FACTOR.
verdict() {
	local name=$1 v=$2 pf=$3 e=$4 kind=$5 lim=${6:-} res
	res=$(awk -v v="$v" -v e="$e" -v k="$kind" -v f="$FACTOR" -v l="$lim" 'BEGIN {
		if (v == "" || v == "-") { print "no figure|FAIL"; exit }
		if (k == "max") { L = e * f; bad = v + 0 > L; s = "<= " L }
		else if (k == "min") { L = e / f; bad = v + 0 < L; s = ">= " L }
		else if (k == "one") { bad = v + 0 > f || v + 0 < 1 / f; s = sprintf("%.2f .. %g", 1 / f, f) }
		else { bad = v + 0 > l + 0; s = "<= " l }
		print s "|" (bad ? "FAIL" : "ok") }')
	[ "${res#*|}" = ok ] || FAILS=$((FAILS + 1))
	RESULTS+=("$name|$v|${pf:--}|$e|${res%|*}|${res#*|}")
}
kill_pid() { kill -KILL "$1" 2>/dev/null; wait "$1" 2>/dev/null; }

echo "bench: checks, $SECS s a measurement, factor $FACTOR, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"

# ---- cpu-499Hz, rate-vs-perf, header-rate: cpuburn, 1 worker -----------------------
start "$TMP/cb.out" "$T/cpuburn" 1
CB=$P
sleep 0.5
start "$TMP/cpu499.out" "$STACKTOP" -b -d 1 -r 499 -W 120 -p "$CB"
ST=$P
ta=$(now_s)
perf_on "$CB" 499 "$TMP/a.data"
sleep 1.5 # set-up: symbol tables, debug info, perf's buffers
cpu_of "$ST" "$PP"
bench_stop "$ST"
[ -n "$PP" ] && bench_stop "$PP"
tb=$(now_s)
verdict cpu-499Hz "$CS" "$CP" 10 max
read -r n d r g <<<"$(header "$TMP/cpu499.out")"
srate=$(awk -v n="$n" -v d="$d" 'BEGIN { if (d > 0) printf "%.1f", n / d; else print "-" }')
prate=-
if [ "$HAVE_PERF" = 1 ]; then
	pn=$(perf_count "$(perf_stats "$TMP/a.data")" SAMPLE)
	prate=$(awk -v n="${pn:-0}" -v a="$ta" -v b="$tb" 'BEGIN { printf "%.1f", n / (b - a) }')
	verdict rate-vs-perf "$(awk -v s="$srate" -v p="$prate" 'BEGIN { if (p > 0) printf "%.2f", s / p; else print "-" }')" \
		"" 1 one
fi
RESULTS+=("  (samples/s)|$srate|$prate|||")
verdict header-rate "$(awk -v r="$r" -v g="$g" 'BEGIN { if (g > 0) printf "%.2f", r / g; else print "-" }')" "" 1 one
kill_pid "$CB"

# ---- cpu-1000thr, lost-1000thr, wall-keepup: bigpool ----------------------------------
start "$TMP/bp.out" "$T/bigpool" 1000 2
BP=$P
for _ in $(seq 100); do [ "$(ls /proc/"$BP"/task 2>/dev/null | wc -l)" -ge 1000 ] && break; sleep 0.1; done
start "$TMP/big.out" "$STACKTOP" -b -d 1 -r 99 -p "$BP"
ST=$P
perf_on "$BP" 99 "$TMP/b.data"
sleep 1.5
cpu_of "$ST" "$PP"
bench_stop "$ST"
[ -n "$PP" ] && bench_stop "$PP" 30
verdict cpu-1000thr "$CS" "$CP" 5 max
n=$(last_samples "$TMP/big.out")
pl=-
if [ "$HAVE_PERF" = 1 ]; then
	st=$(perf_stats "$TMP/b.data")
	pl="$(perf_count "$st" LOST) of $(perf_count "$st" SAMPLE)"
fi
verdict lost-1000thr "$(lost_of "$TMP/big.out")" "$pl" 0 zero "$(awk -v n="$n" 'BEGIN { printf "%d", n / 100 }')"
RESULTS+=("  (samples)|$n|-|||")
timeout $((SECS + 30)) "$STACKTOP" -w -r 100 -b -n "$SECS" -p "$BP" >"$TMP/wall.out" 2>&1
last=$(grep -E '^samples ' "$TMP/wall.out" | tail -1)
# the header gives "(now X/s of Y/s expected)" only when short of 90%
if grep -q 'expected)' <<<"$last"; then
	keep=$(sed -nE 's/.*\(now ([0-9.]+)\/s of ([0-9.]+)\/s expected\).*/\1 \2/p' <<<"$last" |
		awk '{ printf "%.0f", ($2 > 0 ? 100 * $1 / $2 : 0) }')
elif grep -q 'rate lowered' <<<"$last"; then keep=90; else keep=-; fi
verdict wall-keepup "$keep" "" 70 min
read -r n d r g <<<"$(header "$TMP/wall.out")"
verdict header-rate-wall "$(awk -v r="$r" -v g="$g" 'BEGIN { if (g > 0) printf "%.2f", r / g; else print "-" }')" "" 1 one
kill_pid "$BP"

# ---- lost-saturated: bigpool 200 8 beside two CPU hogs, 999 Hz --------------------------
start "$TMP/hogs.out" "$T/cpuburn" 2
HOGS=$P
start "$TMP/bp2.out" "$T/bigpool" 200 8
BP=$P
sleep 0.5
start "$TMP/sat.out" "$STACKTOP" -b -d 1 -r 999 -p "$BP"
ST=$P
perf_on "$BP" 999 "$TMP/s.data"
sleep $((SECS + 2)) # the first seconds are the test: symbols, DWARF, kallsyms
bench_stop "$ST"
[ -n "$PP" ] && bench_stop "$PP" 30
n=$(last_samples "$TMP/sat.out")
pl=-
if [ "$HAVE_PERF" = 1 ]; then
	st=$(perf_stats "$TMP/s.data")
	pl="$(perf_count "$st" LOST) of $(perf_count "$st" SAMPLE)"
fi
verdict lost-saturated "$(lost_of "$TMP/sat.out")" "$pl" 0 zero "$(awk -v n="$n" 'BEGIN { printf "%d", n / 100 }')"
RESULTS+=("  (samples)|$n|-|||")
kill_pid "$BP"
kill_pid "$HOGS"

# ---- coverage: 1.5 ms threads (default events), 60 ms threads (--events inherit) ----
# coverage NAME JOB_MS EXPECT [STACKTOP ARGS...]
coverage() {
	local name=$1 job=$2 want=$3 c0 c1 sh st pc=-
	shift 3
	start "$TMP/st.out" "$T/shortthreads" 0 1.5 "$job"
	sh=$P
	sleep 1
	c0=$(cpu_ticks "$sh")
	timeout $((SECS + 30)) "$STACKTOP" -b -n "$SECS" -d 1 -r 99 "$@" -p "$sh" >"$TMP/cov.out" 2>&1 &
	st=$!
	PIDS+=("$st")
	[ "$HAVE_PERF" = 1 ] && perf record -q -F 99 --call-graph dwarf -o "$TMP/c.data" -p "$sh" -- sleep "$SECS" >/dev/null 2>&1
	wait "$st"
	c1=$(cpu_ticks "$sh")
	cov() { awk -v s="$1" -v t=$((c1 - c0)) -v hz="$HZ" 'BEGIN { c = t / hz; if (c > 0) printf "%.0f", 100 * s / (c * 99); else print "-" }'; }
	[ "$HAVE_PERF" = 1 ] && pc=$(cov "$(perf_count "$(perf_stats "$TMP/c.data")" SAMPLE)")
	verdict "$name" "$(cov "$(last_samples "$TMP/cov.out")")" "$pc" "$want" min
	kill_pid "$sh"
}
coverage coverage 1.5 80
coverage coverage-60ms-inh 60 80 --events inherit

# ---- wall-pause: 4 busy threads on one CPU -------------------------------------------------
if command -v taskset >/dev/null; then
	start "$TMP/ts.out" taskset -c 0 "$T/cpuburn" 4
	TS=$P
	sleep 1
	timeout $((SECS + 30)) "$STACKTOP" -b -w -d "$SECS" -n 1 -p "$TS" >"$TMP/pause.out" 2>&1
	verdict wall-pause "$(grep -oE 'pause [0-9]+ µs/sample' "$TMP/pause.out" | tail -n 1 | grep -oE '[0-9]+')" "" 2000 max
	kill_pid "$TS"
fi

# ---- crowd: stacktop's CPU with 2,000 more processes -----------------------------------------
# median_ms PID...: the median one-second step of each PID's CPU over SECS s, in ms
median_ms() {
	local i p
	declare -A prev=()
	local steps=$TMP/steps.$RANDOM
	for p in "$@"; do prev[$p]=$(cpu_ns "$p"); done
	for i in $(seq "$SECS"); do
		sleep 1
		for p in "$@"; do
			c=$(cpu_ns "$p")
			echo "$p $((c - ${prev[$p]}))" >>"$steps"
			prev[$p]=$c
		done
	done
	for p in "$@"; do
		awk -v p="$p" '$1 == p { print $2 }' "$steps" | sort -n | awk '{ v[NR] = $1 } END {
			m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.3f ", m / 1e6 }'
	done
}
start "$TMP/cb2.out" "$T/cpuburn" 2
CB=$P
sleep 0.5
start "$TMP/crowd.out" "$STACKTOP" -b -d 1 -r 99 -p "$CB"
ST=$P
perf_on "$CB" 99 "$TMP/d.data"
sleep 3 # start-up
read -r qs qp <<<"$(median_ms "$ST" ${PP:+"$PP"})"
start "$TMP/sleepers.out" "$T/sleepers" 2000
SL=$P
for _ in $(seq 300); do grep -q ready "$TMP/sleepers.out" && break; sleep 0.1; done
sleep 2
read -r cs cp <<<"$(median_ms "$ST" ${PP:+"$PP"})"
kill_pid "$SL"
bench_stop "$ST"
[ -n "$PP" ] && bench_stop "$PP"
ratio() { awk -v q="$1" -v c="$2" 'BEGIN { if (q > 0) printf "%.2f", c / q; else print "-" }'; }
verdict crowd "$(ratio "$qs" "$cs")" "$([ -n "$PP" ] && ratio "$qp" "$cp")" 1.3 max
RESULTS+=("  (ms/s quiet, crowd)|$qs $cs|${qp:--} ${cp:--}|||")
kill_pid "$CB"

# ---- diff-star: seconds from a shift to the live diff's star ---------------------------------
if command -v tmux >/dev/null; then
	start "$TMP/shift.out" "$T/shift" 60/30/10
	SF=$P
	tm() { tmux -L "$TMUX_SOCK" "$@"; }
	TERM=xterm-256color tm new-session -d -s b -x 160 -y 40 "$STACKTOP -r 499 -p $SF"
	scr() { tm capture-pane -p -t b; }
	for _ in $(seq 80); do scr | grep -q hot_a && break; sleep 0.1; done
	sleep 5 # the baseline's seconds
	tm send-keys -t b b
	sleep 0.3
	kill -USR1 "$SF"
	t0=$(now_s)
	tm send-keys -t b D
	star=-
	for _ in $(seq 300); do
		# own Base% Now% Delta*, total Base% Now% Delta*, hot_b
		if scr | grep -qE '^ +[0-9.]+ +[0-9.]+ +\+[0-9.]+\* +[0-9.]+ +[0-9.]+ +\+[0-9.]+\* +hot_b$'; then
			star=$(awk -v a="$t0" -v b="$(now_s)" 'BEGIN { printf "%.1f", b - a }')
			break
		fi
		sleep 0.1
	done
	tm kill-server 2>/dev/null
	verdict diff-star "$star" "" 10 max
	kill_pid "$SF"
fi

# ---- mem-lost: the memory view on memgrow ----------------------------------------------------
start "$TMP/mg.out" "$T/memgrow" "$TMP/grow.dat"
MG=$P
sleep 0.5
timeout $((SECS + 30)) "$STACKTOP" -b -d 1 -n "$SECS" --view memory -p "$MG" >"$TMP/mem.out" 2>&1
ml=$(awk '/^stacktop/ { l = 0 } { if (match($0, /[0-9,]+ records lost/)) { v = substr($0, RSTART, RLENGTH); gsub(/[^0-9]/, "", v); l = v } }
	END { print l + 0 }' "$TMP/mem.out")
verdict mem-lost "$ml" "" 0 zero 100
kill_pid "$MG"

# ---- the table ----------------------------------------------------------------------------------
echo
printf '%-22s %14s %16s %8s %14s %s\n' figure stacktop perf expect limit verdict
for r in "${RESULTS[@]}"; do
	IFS='|' read -r name v pf e lim res <<<"$r"
	printf '%-22s %14s %16s %8s %14s %s\n' "$name" "$v" "$pf" "$e" "$lim" "$res"
done
echo
echo "cpu: % of one core (schedstat) after start-up; perf: perf record -F <same Hz> --call-graph dwarf on the"
echo "same target at the same time. expect: what the e2e tests used to assert; limit: expect x/÷ $FACTOR."
[ "$FAILS" -eq 0 ] || { echo "bench: $FAILS figure(s) beyond their limit"; exit 1; }
