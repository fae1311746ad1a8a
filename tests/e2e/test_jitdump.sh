#!/bin/bash
# test_jitdump — JIT code named from a jitdump file (perf's format: node
# --perf-prof, python3.13 -X perf_jit), found where the target maps it.
# node writes jit-PID.dump in its cwd, CPython /tmp/jit-PID.dump; both
# through a stdio buffer, so the targets compile filler code to push their
# hot function's record into the file. The hottest row must be the hot
# function in [jit] (it is "[unknown]+0x…" without the jitdump reader); a
# dump owned by another user names nothing. Skips a runtime not installed.
# A CPython's trampoline that called a Python frame stacktop read from its
# memory is not shown beside it (one name, with its line: test_python):
# there py_hot's row is "py_hot (pyburn.py)", the jitdump's name only
# where the reader's frames were not matched.
. "$(dirname "$0")/lib.sh"
need_stacktop
LANG_SRC=$(cd "$(dirname "$0")/../targets/lang" && pwd)

# hottest OUT: the first row of the table, its function and module.
hottest() { awk '/%Own/ { getline; print; exit }' "$1"; }

if command -v node >/dev/null; then
	cd "$E2E_TMPDIR" || die "no tmp dir"
	start_bg node --perf-prof --interpreted-frames-native-stack "$LANG_SRC/jsburn.js" 60
	N=$BG_PID
	wait_until 30 grep -aqs 'JS:\*jsburn_hot' "jit-$N.dump" ||
		die "node did not write jsburn_hot's optimized code to jit-$N.dump"
	out=$E2E_TMPDIR/node.out
	timeout 30 "$STACKTOP" -b -d 2 -n 1 -l 8 -p "$N" >"$out" 2>&1
	check_cmp "$?" == 0 "node: stacktop -b exits 0"
	row=$(hottest "$out")
	case "$row" in
	*jsburn_hot*'[jit]'*) ok "node: hottest row is jsburn_hot in [jit]: $row" ;;
	*) bad "node: hottest row should be jsburn_hot [jit], is: $row"; cat "$out" ;;
	esac
	own=$(awk '/%Own/ { on = 1; next } on && /jsburn_hot/ { s += $1 } END { print s + 0 }' "$out")
	check_share_min "$own" 80 "$(samples_in "$out")" "node: jsburn_hot's own share"
	if [ "$(id -u)" = 0 ]; then
		# Not the target's user nor root: not trusted (a new stacktop
		# reads it afresh).
		chown 65534:65534 "jit-$N.dump"
		out2=$E2E_TMPDIR/node2.out
		timeout 30 "$STACKTOP" -b -d 2 -n 1 -l 8 -p "$N" >"$out2" 2>&1
		if grep -q jsburn_hot "$out2"; then
			bad "node: a jitdump owned by uid 65534 was trusted"
			cat "$out2"
		else
			ok "node: a jitdump owned by another user names nothing: $(hottest "$out2")"
		fi
	else
		log "not root: the ownership case needs chown, skipped"
	fi
	kill "$N"
	cd - >/dev/null || true
else
	log "SKIP node: not installed (make deps-test installs nodejs)"
fi

PY=$(ls -d /root/.pyenv/versions/3.1[3-9]*/bin/python3.1[3-9] 2>/dev/null | head -1)
[ -n "$PY" ] || PY=$(command -v python3.13 || true)
if [ -n "$PY" ] && "$PY" -X perf_jit -c '' 2>/dev/null; then
	start_bg "$PY" -X perf_jit "$LANG_SRC/pyburn.py" 60
	P=$BG_PID
	wait_until 30 grep -aqs 'py::py_hot' "/tmp/jit-$P.dump" ||
		die "python did not write py_hot's trampoline to /tmp/jit-$P.dump"
	out=$E2E_TMPDIR/py.out
	# Twice at most: once in a while every stack of a run stops at
	# _PyEval_EvalFrameDefault, short of the trampolines (an unwinding
	# matter, not a naming one: the log keeps it). py_hot's row: the
	# trampoline's ("py::py_hot [jit]") or the Python reader's.
	for try in 1 2; do
		timeout 30 "$STACKTOP" -b -d 3 -n 1 -l 30 -p "$P" >"$out" 2>&1
		check_cmp "$?" == 0 "python: stacktop -b exits 0"
		# both rows summed: a stack has one or the other (the trampoline
		# is hidden where the reader's frames matched; a sample named
		# late keeps its native frames, the trampoline's among them)
		tot=$(awk '/%Own/ { on = 1; next } on && (/py::py_hot/ && /\[jit\]/ || / py_hot \(pyburn\.py\)/) { s += $2; n++ }
			END { if (n) print s }' "$out")
		[ -n "$tot" ] && break
		log "python: no trampoline reached in run $try: $(grep -o 'unwind ok.*' "$out")"
	done
	if [ -n "$tot" ]; then
		# 80: py_hot is ~95% of the burner's CPU, but a loaded run names
		# some samples late, with neither row (a clean run read 14 of 22)
		check_share_min "$tot" 80 "$(samples_in "$out")" "python: py_hot %Total"
	else
		bad "python: no py::py_hot [jit] nor py_hot (pyburn.py) row"
		cat "$out"
	fi
	kill "$P"
	wait_until 10 sh -c "! kill -0 $P 2>/dev/null"
	rm -f "/tmp/jit-$P.dump"
else
	log "SKIP python: no python3.13 with -X perf_jit"
fi
e2e_finish
