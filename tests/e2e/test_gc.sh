#!/bin/bash
# test_gc — garbage collection as a kind: a Java program that churns a
# small heap spends most of its CPU in G1's threads and frames, and the
# header says "GC N% of CPU", and so does a Go program with GOGC=10 (its
# mark workers and assists by their frames); a C program that never
# collects shows no GC figure. Skips a runtime not installed.
. "$(dirname "$0")/lib.sh"
need_stacktop
need_target cpuburn

CLASSES=$ROOT/build/java
if command -v java >/dev/null && [ -f "$CLASSES/GcChurn.class" ]; then
	start_bg java -Xmx32m -XX:+UseG1GC -cp "$CLASSES" GcChurn 60
	J=$BG_PID
	sleep 2
	out=$E2E_TMPDIR/java.out
	timeout 30 "$STACKTOP" -b -d 3 -n 1 -l 5 -p "$J" >"$out" 2>&1
	check_cmp "$?" == 0 "java: stacktop -b exits 0"
	gc=$(grep -o 'GC [0-9]*% of CPU' "$out" | head -1 | awk '{ sub("%", "", $2); print $2 }')
	if [ -n "$gc" ]; then
		# Measured 85-95% here; half of that is a generous floor.
		check_share_min "$gc" 45 "$(samples_in "$out")" "java: GC share of CPU in the header"
	else
		bad "java: no 'GC N% of CPU' in the header"
		cat "$out"
	fi
	kill "$J"
else
	log "SKIP java: no java or no build/java/GcChurn.class (make targets with javac installed)"
fi

# Go with GOGC=10: its mark workers and assists are GC by their frames.
if command -v go >/dev/null; then
	LANG_SRC=$(cd "$(dirname "$0")/../targets/lang" && pwd)
	(cd "$E2E_TMPDIR" && go build -o gogc "$LANG_SRC/gogc.go") || die "go build failed"
	start_bg env GOGC=10 "$E2E_TMPDIR/gogc"
	G=$BG_PID
	sleep 1
	out=$E2E_TMPDIR/go.out
	timeout 30 "$STACKTOP" -b -d 3 -n 1 -l 5 -p "$G" >"$out" 2>&1
	check_cmp "$?" == 0 "go: stacktop -b exits 0"
	gc=$(grep -o 'GC [0-9]*% of CPU' "$out" | head -1 | awk '{ sub("%", "", $2); print $2 }')
	if [ -n "$gc" ]; then
		# Measured ~80% here.
		check_share_min "$gc" 40 "$(samples_in "$out")" "go: GC share of CPU in the header"
	else
		bad "go: no 'GC N% of CPU' in the header"
		cat "$out"
	fi
	kill "$G"
else
	log "SKIP go: not installed (make deps-test installs golang-go)"
fi

start_target 1 cpuburn
C=$BG_PID
out=$E2E_TMPDIR/c.out
timeout 30 "$STACKTOP" -b -d 2 -n 1 -l 5 -p "$C" >"$out" 2>&1
check_cmp "$?" == 0 "cpuburn: stacktop -b exits 0"
grep -q 'GC [0-9]*% of CPU' "$out" && bad "cpuburn: a GC share for a program that never collects" ||
	ok "cpuburn: no GC figure"
kill "$C"
e2e_finish
