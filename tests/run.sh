#!/bin/bash
# tests/run.sh — every test `make check` runs, with one PASS/FAIL line each
# (and the tail of its log on failure), a summary, and exit status 0 only
# when all passed.
#
#   tests/run.sh UNITS -- FUZZERS -- E2E
#
# Unit binaries run one after the other; the fuzzers two at a time. The
# end-to-end tests mostly wait (a target starts, stacktop samples for some
# seconds), so those that only check what is shown run two at a time; the
# ones that measure shares, rates or stacktop's own CPU (SOLO below) run
# alone, so another test's load cannot move their numbers.
set -u
FUZZ_ROUNDS=${FUZZ_ROUNDS:-200000}
# From the makefile: FUZZ_ASAN ("ASAN_OPTIONS=... UBSAN_OPTIONS=..."),
# CPPCHECK (the lint command), B (the build directory).
FUZZ_ASAN=${FUZZ_ASAN:-ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1}
CPPCHECK=${CPPCHECK:-cppcheck --quiet --error-exitcode=1 --enable=warning,performance,portability --std=c11 -D_GNU_SOURCE -Iinclude --suppress=missingIncludeSystem --suppress=preprocessorErrorDirective --inline-suppr}
B=${B:-build}
SOLO=" test_cost test_coverage test_busyfloor test_series test_batch_shares test_threads
 test_multiproc test_cpuwait test_memory test_wall test_difflive test_diff test_inline
 test_annotate test_icicle test_export test_tui test_languages test_idle "

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
	local kind=$1 name=$2 log=$3 t0 rc lines
	shift 3
	t0=$(date +%s)
	"$@" >"$log" 2>&1
	rc=$?
	lines=$([ "$kind" = e2e ] && echo 40 || echo 30)
	{
		if [ $rc -eq 0 ]; then
			echo "PASS $name ($(($(date +%s) - t0))s)"
		else
			echo "FAIL $name ($(($(date +%s) - t0))s)"
			tail -n "$lines" "$log"
		fi
	} >"$R/$(basename "$name").res"
	return $rc
}

# pool N: run the queued commands (one per line of $R/queue, "KIND NAME LOG
# CMD...") N at a time, printing each result as it ends.
pass=0 fail=0 failed=""
collect() {
	local f=$R/$1.res
	cat "$f"
	if head -n 1 "$f" | grep -q '^PASS'; then pass=$((pass + 1)); else
		fail=$((fail + 1)); failed="$failed $1"; fi
	rm -f "$f"
}

for t in "${units[@]}"; do
	run_one unit "$t" "$t.log" "$t"
	collect "$(basename "$t")"
done

# Two at a time: start, and when two run, wait for one.
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

for f in "${fuzzers[@]}"; do
	name=$(basename "$f")
	[ ${#running[@]} -ge 2 ] && pool_wait_one
	# shellcheck disable=SC2086 # FUZZ_ASAN is NAME=VALUE words
	pool_start fuzz "$f" "$f.log" env $FUZZ_ASAN "$f" "tests/fuzz/corpus/${name#fuzz_}" "$FUZZ_ROUNDS"
done
pool_drain

t0=$(date +%s)
# shellcheck disable=SC2086 # CPPCHECK is a command line
if $CPPCHECK src/main.c src/*/*.c >"$B/lint.log" 2>&1; then
	pass=$((pass + 1)); echo "PASS lint (cppcheck) ($(($(date +%s) - t0))s)"
else
	fail=$((fail + 1)); failed="$failed lint"; echo "FAIL lint (cppcheck)"; tail -n 20 "$B/lint.log"
fi

e2e_log() { echo "$B/e2e-$(basename "$1" .sh).log"; }
for t in "${e2e[@]}"; do # the solo ones first, one at a time
	n=$(basename "$t" .sh)
	case $SOLO in *" $n "*) ;; *) continue ;; esac
	run_one e2e "$t" "$(e2e_log "$t")" timeout 300 bash "$t"
	collect "$(basename "$t")"
done
for t in "${e2e[@]}"; do # then the others, two at a time
	n=$(basename "$t" .sh)
	case $SOLO in *" $n "*) continue ;; esac
	[ ${#running[@]} -ge 2 ] && pool_wait_one
	pool_start e2e "$t" "$(e2e_log "$t")" timeout 300 bash "$t"
done
pool_drain

echo
[ -z "$failed" ] || echo "failed:$failed"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
