#!/bin/bash
# test_python — an unmodified CPython's Python functions in the top view:
# tests/targets/pyshares.py runs three leaf functions at 60/30/10 behind
# run() and main(); under Debian's python3.11 (the makefile installs it)
# and every pyenv CPython 3.8-3.13 found here, stacktop -b must show each
# leaf as "leaf_X (pyshares.py)" with its share (check_share), and run()
# and main() as their callers (%Total ~100): the evaluation loop's native
# frames replaced by the Python frames they run. Compares shares: the
# Debian part runs alone (SOLO in tests/run.sh; the rest is
# test_python_more.sh). Also: dump's Python tracebacks
# (pystack.py), the threads view's GIL holder and wall mode's sleep,
# lock and GIL kinds (pystack.py, pygil.py), and --subprocesses'
# multiprocessing workers (pyworkers.py, fork and spawn) and the memory
# view's code paths (pymem.py) under Debian's 3.11; -X perf's trampolines unwound through on the newest 3.12+.
. "$(dirname "$0")/lib.sh"
need_stacktop
SCRIPT=$ROOT/tests/targets/pyshares.py

# row_total OUT FUNC: the %Total of the row "FUNC (pyshares.py)".
row_total() {
	awk -v f="$2 (pyshares.py)" '/%Own/ { on = 1; next } on && index($0, "  " f) { print $2; exit }' "$1"
}

# run_case NAME PYTHON [OPTION...]: profile PYTHON [OPTION...] running
# pyshares.py for 3 s.
run_case() {
	local name=$1 py=$2 out=$E2E_TMPDIR/$1.out n f want tot
	shift 2
	start_bg "$py" "$@" "$SCRIPT"
	local pid=$BG_PID
	sleep 0.5
	if ! alive "$pid"; then
		bad "$name: $py did not start"
		return
	fi
	# every row: the leaves own nothing (spin does), and under -X perf the
	# interpreter's inline rows outnumber 60
	timeout 60 "$STACKTOP" -b -d 3 -n 1 -l 400 -p "$pid" >"$out" 2>&1
	check_cmp "$?" == 0 "$name: stacktop -b exits 0"
	n=$(samples_in "$out")
	# Shares among the three leaves: a sample named late (start-up)
	# keeps only its native frames (ingest.h), in no leaf.
	local sum=0 nl
	for f in leaf_sixty leaf_thirty leaf_ten; do
		tot=$(row_total "$out" "$f")
		sum=$(awk -v a="$sum" -v b="${tot:-0}" 'BEGIN { print a + b }')
	done
	nl=$(awk -v s="$sum" -v n="$n" 'BEGIN { printf "%d", s * n / 100 }')
	# Each leaf has a row, when it should have had 8 samples or more (no
	# row by chance: e^-8); a loaded run of 40 samples expects leaf_ten's
	# 10% four times, and missed it.
	for f in leaf_sixty:60 leaf_thirty:30 leaf_ten:10; do
		[ -n "$(row_total "$out" "${f%%:*}")" ] && continue
		[ $((nl * ${f#*:})) -ge 800 ] && bad "$name: no row '${f%%:*} (pyshares.py)' ($nl leaf samples)"
	done
	check_cmp "$nl" '>=' $((n / 4)) "$name: a quarter of the samples or more in a leaf"
	# The shares only alone: beside other tests a late collect tick
	# credits more of a leaf's start to the one before (a 3.11 run read
	# leaf_sixty 80% over 102 samples); the others name the same functions.
	for f in leaf_sixty:60 leaf_thirty:30 leaf_ten:10; do
		[ "${PY_PART:-solo}" = solo ] || break
		want=${f#*:}
		f=${f%%:*}
		tot=$(row_total "$out" "$f")
		[ -n "$tot" ] || continue
		check_share "$(awk -v t="$tot" -v s="$sum" 'BEGIN { printf "%.1f", (s > 0 ? 100 * t / s : 0) }')" \
			"$want" "$nl" "$name: $f share of the leaves"
	done
	# Their callers hold every leaf sample.
	for f in step run main; do
		tot=$(row_total "$out" "$f")
		if [ -z "$tot" ]; then
			bad "$name: caller '$f (pyshares.py)' missing"
			continue
		fi
		check_cmp "$tot" '>=' "$(awk -v s="$sum" 'BEGIN { print s - 0.5 }')" "$name: caller $f %Total holds the leaves'"
	done
	log "$name: $(grep -o 'unwind ok.*)' "$out" | head -n 1)"
	[ $# -gt 0 ] && perf_checks "$name" "$out" "$n"
	[ "$E2E_FAILS" -eq 0 ] || cat "$out"
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
}

# perf_checks NAME OUT N: under -X perf (3.12+) the unwinder goes through
# the trampolines (no CFI, no frame pointer) to their callers: most
# stacks whole; and a trampoline ("py::leaf_sixty:/...pyshares.py",
# perf map) that called a matched evaluation is not shown beside the
# Python frame it names: no py:: row holds a fifth of the samples, beyond
# the share of samples left unmatched.
perf_checks() {
	local ok_pct py_max
	ok_pct=$(grep -o 'unwind ok [0-9.]*' "$2" | head -n 1 | awk '{ print $3 }')
	check_cmp "${ok_pct:-0}" '>=' 80 "$1: unwind ok through the trampolines"
	py_max=$(awk '/%Own/ { on = 1; next } on && $5 ~ /^py::/ { if ($2 > m) m = $2 } END { print m + 0 }' "$2")
	# A sample whose Python stack no longer matches its native one when
	# it is named (read late on a loaded box: "python unmatched U ... of
	# N") keeps its trampolines by design: their rows may hold that share.
	local unm
	unm=$(grep -o 'python unmatched [0-9]* cut [0-9]* of [0-9]*' "$2" | head -n 1 |
		awk '{ print ($7 > 0 ? 100 * $3 / $7 : 0) }')
	check_cmp "$py_max" '<' "$(awk -v u="${unm:-0}" 'BEGIN { print 20 + u }')" \
		"$1: a trampoline not counted beside its matched Python frame (${unm:-0}% unmatched)"
}

# dump_case PYTHON: `stacktop dump` of pystack.py prints each thread's
# Python traceback, innermost last, with file:line: the chain of the main
# thread, the lock holder asleep, the waiter on its lock; its native
# frames (numbered "#N" lines) only with --native.
dump_case() {
	local py=$1 out=$E2E_TMPDIR/dump.out src=$ROOT/tests/targets/pystack.py
	"$py" "$src" >"$E2E_TMPDIR/pystack.out" 2>&1 &
	local pid=$!
	BG_PIDS+=("$pid")
	wait_until 20 grep -q ready "$E2E_TMPDIR/pystack.out" || bad "dump: pystack.py not ready"
	timeout 60 "$STACKTOP" dump -p "$pid" >"$out" 2>&1
	check_cmp "$?" == 0 "dump: exits 0"
	local m
	for m in inner middle outer main holder waiter; do
		local line func
		line=$(grep -n "# at:$m\$" "$src" | cut -d: -f1)
		case $m in inner | middle) func=Chain.$m ;; *) func=$m ;; esac
		if grep -q "File \"pystack.py\", line $line, in $func\$" "$out"; then
			ok "dump: $func at pystack.py:$line"
		else
			bad "dump: no 'File \"pystack.py\", line $line, in $func'"
			cat "$out"
		fi
	done
	# innermost last: the main thread's traceback ends in Chain.inner
	awk '/Python traceback/ { on = 1; last = ""; next } on && /File/ { last = $NF } on && !/File/ { if (last) print last; on = 0 } END { if (on) print last }' \
		"$out" | grep -qx Chain.inner && ok "dump: innermost last" || bad "dump: a traceback does not end in Chain.inner"
	check_cmp "$(grep -c '^    #[0-9]' "$out")" == 0 "dump: no native frames unless asked"
	timeout 60 "$STACKTOP" dump --native -p "$pid" >"$out" 2>&1
	check_cmp "$?" == 0 "dump --native: exits 0"
	# The main thread's merged stack: clock_nanosleep (libc) innermost,
	# the Python chain above it, then the interpreter's frames below.
	awk '/^Thread/ { t++ } t == 1 && /^    #[0-9]/ { print }' "$out" >"$E2E_TMPDIR/dump-main.out"
	grep -q '(python) *Chain.inner (pystack.py:' "$E2E_TMPDIR/dump-main.out" &&
		grep -q '0x[0-9a-f]* .*\[libc' "$E2E_TMPDIR/dump-main.out" &&
		ok "dump --native: native frames between the Python ones" ||
		{
			bad "dump --native: no native and Python frames in the main thread"
			cat "$out"
		}
	grep -q "File \"pystack.py\", line .*, in Chain.inner" "$out" &&
		ok "dump --native: the traceback too" || bad "dump --native: no traceback"
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
}

# gil_case PYTHON: the threads view flags the thread that holds the GIL
# (pyshares.py's one thread, always running Python).
gil_case() {
	local out=$E2E_TMPDIR/threads.out
	start_bg "$1" "$SCRIPT"
	local pid=$BG_PID
	sleep 0.5
	timeout 60 "$STACKTOP" -b -d 1 -n 1 --view threads -p "$pid" >"$out" 2>&1
	if awk -v p="$pid" '$1 == p && / GIL/ { f = 1 } END { exit !f }' "$out"; then
		ok "threads view: thread $pid holds the GIL"
	else
		bad "threads view: no GIL on thread $pid"
		cat "$out"
	fi
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
}

# wall_share OUT KIND: KIND's whole percent on the "wall time:" line.
wall_share() {
	sed -n 's/^wall time: //p' "$1" | head -n 1 | tr -d '\302\267,' |
		awk -v k="$2" '{ for (i = 1; i < NF; i++) if ($i == k) { sub("%", "", $(i + 1)); print $(i + 1) } }'
}

# wall_case PYTHON: wall mode tells a sleeper (time.sleep) from a lock
# waiter (Lock.acquire) in pystack.py, a third of the threads each... the
# main thread sleeps too: sleep 2/3, lock 1/3; and in pygil.py a thread
# waiting to take the GIL from the other spinner is "GIL".
wall_case() {
	local out=$E2E_TMPDIR/wall.out n
	"$1" "$ROOT/tests/targets/pystack.py" >"$E2E_TMPDIR/pystack2.out" 2>&1 &
	local pid=$!
	BG_PIDS+=("$pid")
	wait_until 20 grep -q ready "$E2E_TMPDIR/pystack2.out" || bad "wall: pystack.py not ready"
	timeout 60 "$STACKTOP" -b -d 2 -n 1 --mode wall -p "$pid" >"$out" 2>&1
	n=$(samples_in "$out")
	check_share "$(wall_share "$out" lock)" 33 "$n" "wall: Lock.acquire is lock"
	check_share "$(wall_share "$out" sleep)" 67 "$n" "wall: time.sleep is sleep"
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	start_bg "$1" "$ROOT/tests/targets/pygil.py"
	pid=$BG_PID
	sleep 0.5
	timeout 60 "$STACKTOP" -b -d 2 -n 1 --mode wall -p "$pid" >"$out" 2>&1
	check_cmp "$(wall_share "$out" GIL)" '>' 0 "wall: a spinner waits for the GIL ($(grep '^wall time' "$out"))"
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
}

# workers_case PYTHON: stacktop --subprocesses launching pyworkers.py:
# its two multiprocessing workers, forked (then spawned: a new
# interpreter exec'd) after stacktop started, are read as CPython too:
# worker_alpha and worker_beta each have a row with a share of the CPU.
workers_case() {
	local how out tot f n
	for how in fork spawn; do
		out=$E2E_TMPDIR/workers-$how.out
		timeout 60 "$STACKTOP" --subprocesses -b -d 3 -n 1 -l 60 -- \
			"$1" "$ROOT/tests/targets/pyworkers.py" "$how" >"$out" 2>&1
		check_cmp "$?" == 0 "workers ($how): stacktop --subprocesses -b exits 0"
		n=$(samples_in "$out")
		for f in worker_alpha worker_beta; do
			tot=$(awk -v f="$f (pyworkers.py)" '/%Own/ { on = 1; next } on && index($0, "  " f) { print $2; exit }' "$out")
			check_cmp "${tot:-0}" '>=' 10 "workers ($how): $f (pyworkers.py) %Total over $n samples"
		done
		[ "$E2E_FAILS" -eq 0 ] || cat "$out"
	done
}

# mem_case PYTHON: the memory view's code paths name a CPython's Python
# function: pymem.py maps its buffers from hold_buffers, so its paths are
# labelled "hold_buffers (pymem.py:LINE) < main", not by the
# interpreter's frames above it.
mem_case() {
	local out=$E2E_TMPDIR/mem.out src=$ROOT/tests/targets/pymem.py line row
	start_bg "$1" "$src"
	local pid=$BG_PID
	sleep 0.5
	timeout 60 "$STACKTOP" -b -d 3 -n 1 --view memory -p "$pid" >"$out" 2>&1
	check_cmp "$?" == 0 "memory view: stacktop -b exits 0"
	line=$(grep -n '# at:hold$' "$src" | cut -d: -f1)
	# the first path with a Python frame (beside other tests a sample
	# named late keeps its native frames only, and such a path may lead)
	row=$(awk '/CODE PATH$/ { on = 1; next } on && /\(pymem\.py/ { print; exit }' "$out")
	if [[ $row == *"hold_buffers (pymem.py:$line) < main"* ]]; then
		ok "memory view: the top Python code path is hold_buffers (pymem.py:$line)"
	else
		bad "memory view: top code path '$row', not hold_buffers (pymem.py:$line)"
		cat "$out"
	fi
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
}

# Two parts: the Debian CPython's leaf shares and wall splits compare
# shares and scheduling, so they run alone (SOLO in tests/run.sh); the
# rest (every other CPython naming the same functions, dump, the GIL flag,
# workers, the memory view, -X perf) runs beside other tests, as
# test_python_more.sh, which sources this file with PY_PART=more.
if [ "${PY_PART:-solo}" = solo ]; then
	if [ -x /usr/bin/python3.11 ]; then
		wall_case /usr/bin/python3.11
		run_case debian-3.11 /usr/bin/python3.11
	else
		bad "/usr/bin/python3.11 is missing (make deps-test installs python3.11)"
	fi
	e2e_finish
fi
if [ -x /usr/bin/python3.11 ]; then
	mem_case /usr/bin/python3.11
	workers_case /usr/bin/python3.11
	dump_case /usr/bin/python3.11
	gil_case /usr/bin/python3.11
fi
ran=()
for minor in 8 9 10 11 12 13; do
	for d in /root/.pyenv/versions/3.$minor.*; do
		[ -x "$d/bin/python3.$minor" ] || continue
		run_case "pyenv-${d##*/}" "$d/bin/python3.$minor"
		ran+=("${d##*/}")
	done
done
# -X perf trampolines (3.12+): on the newest pyenv CPython that has them.
perf_py=$(ls -d /root/.pyenv/versions/3.1[2-9].*/bin/python3.1[2-9] 2>/dev/null | tail -n 1)
if [ -n "$perf_py" ]; then
	run_case "perf-${perf_py##*/}" "$perf_py" -X perf
else
	log "no CPython 3.12+ here (pyenv): -X perf skipped"
fi
if [ ${#ran[@]} -gt 0 ]; then
	log "other CPythons that ran: ${ran[*]}"
else
	log "no other CPython 3.8-3.13 here (pyenv): skipped"
fi
e2e_finish
