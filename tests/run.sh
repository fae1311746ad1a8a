#!/bin/bash
# tests/run.sh — every test `make check` runs, with one PASS/FAIL line each
# (and the tail of its log on failure), a summary, and exit status 0 only
# when all passed.
#
#   tests/run.sh UNITS -- FUZZERS -- E2E
#
# Tests check behaviour; figures (stacktop's own CPU, sample rates, how long
# something takes) are measured by `make bench` (bench/), not here. So most
# tests can share the machine:
#   1. the unit binaries one after the other, but for WAITING_UNITS in a
#      lane of their own, beside the fuzzers two at a time and the lint (in
#      one lane the units took 37 s, the last 15 alone after the fuzzers
#      with the CPU idle; with any two units at a time, test_perf's burning
#      beside the others starved test_metrics' own-CPU check under load);
#   2. the end-to-end tests in SOLO, one at a time: they compare CPU shares
#      of threads or processes against each other or against procfs (the
#      busy floor, the CPU chart), or wall-time splits whose kinds come from
#      scheduling (CPU-wait is run delay: under load a thread woken by a
#      ptrace stop waits for a CPU, and a reader blocked in read() showed
#      as CPU-wait, and where a preempted worker is stopped), or the demo's
#      parser against its poller; test_inline's dump stops a busy thread,
#      which under load missed the stop's deadline (dump then printed no
#      thread at all); test_languages' hottest row, where a heavily loaded
#      machine piles samples on the kernel's finish_task_switch; test_lost,
#      whose lost records depend on how long stacktop waits for a CPU on a
#      saturated machine;
#   3. the other end-to-end tests, E2E_JOBS (8) at a time, the longest
#      first: by the last run's times in $B/e2e.times, else (a clean clone,
#      as in CI) by tests/e2e/times, a clean run's times kept in the tree
#      (refresh it from $B/e2e.times after adding a long test: a long test
#      started last is a tail where the other lanes idle); they mostly wait
#      for a target and stacktop, and their shares are of one target's own
#      CPU, with tolerances from their sample counts.
# Each test's time is on its PASS/FAIL line.
set -u
FUZZ_ROUNDS=${FUZZ_ROUNDS:-12000}
E2E_JOBS=${E2E_JOBS:-8}
# From the makefile: FUZZ_ASAN ("ASAN_OPTIONS=... UBSAN_OPTIONS=..."),
# CPPCHECK (the lint command), B (the build directory).
FUZZ_ASAN=${FUZZ_ASAN:-ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1}
CPPCHECK=${CPPCHECK:-cppcheck --quiet --error-exitcode=1 --enable=warning,performance,portability --std=c11 -D_GNU_SOURCE -Iinclude --suppress=missingIncludeSystem --suppress=preprocessorErrorDirective --inline-suppr}
B=${B:-build}
# The unit binaries that take seconds mostly waiting (test_wall on its
# sampled threads, 2 s of CPU in 10; test_jvmattach on its fake JVM, none in 4;
# test_machine on its ticks a second, 10 s for the demand of two children).
WAITING_UNITS=" test_wall test_jvmattach test_machine "
SOLO=" test_busyfloor test_series test_threads test_multiproc test_cpuwait test_idle test_wall test_demo test_wall_threads test_inline test_languages test_lost test_python test_rhythm "

units=() fuzzers=() e2e=()
part=0
for a in "$@"; do
	if [ "$a" = -- ]; then part=$((part + 1)); continue; fi
	case $part in 0) units+=("$a") ;; 1) fuzzers+=("$a") ;; *) e2e+=("$a") ;; esac
done

R=$(mktemp -d)
trap 'rm -rf "$R"' EXIT

# run_one KIND NAME LOG CMD...: runs CMD, writes "PASS|FAIL NAME (Ns)" and,
# on failure, the log's tail into $R/NAME.res.
run_one() {
	local kind=$1 name=$2 log=$3 t0 rc lines secs
	shift 3
	t0=$(date +%s)
	"$@" >"$log" 2>&1
	rc=$?
	secs=$(($(date +%s) - t0))
	lines=$([ "$kind" = e2e ] && echo 40 || echo 30)
	[ "$kind" = e2e ] && echo "$(basename "$name" .sh) $secs" >>"$R/times"
	{
		if [ $rc -eq 0 ]; then
			echo "PASS $name (${secs}s)"
		else
			echo "FAIL $name (${secs}s)"
			tail -n "$lines" "$log"
		fi
	} >"$R/$(basename "$name").res"
	return $rc
}

pass=0 fail=0 failed=""
# collect NAME: print a finished test's result and count it.
collect() {
	local f=$R/$1.res
	cat "$f"
	if head -n 1 "$f" | grep -q '^PASS'; then pass=$((pass + 1)); else
		fail=$((fail + 1)); failed="$failed $1"; fi
	rm -f "$f"
}

# A pool of background jobs: pool_start runs one, pool_wait_one waits for
# any one to end and prints its result, pool_drain waits for all.
declare -A running=()
pool_start() { # KIND NAME LOG CMD...
	run_one "$@" &
	running[$!]=$(basename "$2")
}
pool_wait_one() {
	local pid
	wait -n -p pid "${!running[@]}" 2>/dev/null
	collect "${running[$pid]}"
	unset "running[$pid]"
}
pool_drain() { while [ ${#running[@]} -gt 0 ]; do pool_wait_one; done; }

# ---- 1. units (two lanes: WAITING_UNITS, the rest), fuzzers (two lanes), lint ------
# unit_lane waiting|rest: those units one after the other.
unit_lane() {
	local t w
	for t in "${units[@]}"; do
		case $WAITING_UNITS in *" $(basename "$t") "*) w=waiting ;; *) w=rest ;; esac
		[ "$w" = "$1" ] && run_one unit "$t" "$t.log" "$t"
	done
	return 0
}
(
	unit_lane waiting &
	unit_lane rest
	wait
) &
units_pid=$!

pool_start lint lint "$B/lint.log" bash -c "$CPPCHECK src/main.c src/*/*.c"
# the tree itself: includes point down the folders, every C file formatted
pool_start lint layers "$B/layers.log" bash tests/lint/layers.sh
pool_start lint format "$B/format.log" bash tests/lint/format.sh
for f in "${fuzzers[@]}"; do
	name=$(basename "$f")
	[ ${#running[@]} -ge 2 ] && pool_wait_one
	# shellcheck disable=SC2086 # FUZZ_ASAN is NAME=VALUE words
	pool_start fuzz "$f" "$f.log" env $FUZZ_ASAN "$f" "tests/fuzz/corpus/${name#fuzz_}" "$FUZZ_ROUNDS"
done
pool_drain
wait "$units_pid"
for t in "${units[@]}"; do collect "$(basename "$t")"; done

# ---- 2. end-to-end tests that compare shares another load moves: alone ------------
e2e_log() { echo "$B/e2e-$(basename "$1" .sh).log"; }
for t in "${e2e[@]}"; do
	n=$(basename "$t" .sh)
	case $SOLO in *" $n "*) ;; *) continue ;; esac
	run_one e2e "$t" "$(e2e_log "$t")" timeout 300 bash "$t"
	collect "$(basename "$t")"
done

# ---- 3. the others, E2E_JOBS at a time, longest first ------------------------------
# order: the tests' paths, longest first by the last run's times, else by
# the tree's (tests/e2e/times; a test in neither counts 0 s and starts last,
# ties in the given order). Longest first, the lanes end within a short
# test of each other; when 35 s tests started last, they ran on alone (the
# last clean run's times, eight lanes: 122 s in the old order, 106 s so).
TIMES=$B/e2e.times
SEED_TIMES=tests/e2e/times
order() {
	local t n s i=0
	for t in "${e2e[@]}"; do
		n=$(basename "$t" .sh)
		case $SOLO in *" $n "*) continue ;; esac
		s=$(cat "$SEED_TIMES" "$TIMES" 2>/dev/null | awk -v n="$n" '$1 == n { s = $2 } END { print s + 0 }')
		i=$((i + 1))
		printf '%s %s %s\n' "${s:-0}" "$i" "$t"
	done | sort -k1,1nr -k2,2n | cut -d' ' -f3-
}
mapfile -t queue < <(order)
for t in "${queue[@]}"; do
	[ ${#running[@]} -ge "$E2E_JOBS" ] && pool_wait_one
	pool_start e2e "$t" "$(e2e_log "$t")" timeout 300 bash "$t"
done
pool_drain
# this run's times, for the next run's order
[ -s "$R/times" ] && cat "$TIMES" "$R/times" 2>/dev/null |
	awk '{ t[$1] = $2 } END { for (n in t) print n, t[n] }' | sort >"$TIMES.new" && mv "$TIMES.new" "$TIMES"

echo
[ -z "$failed" ] || echo "failed:$failed"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
