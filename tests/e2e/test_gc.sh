#!/bin/bash
# test_gc — garbage collection as a kind: a Java program that churns a
# small heap spends most of its CPU in G1's threads and frames, and the
# header says "GC N% of CPU", and so does a Go program with GOGC=10 (its
# mark workers and assists by their frames); a C program that never
# collects shows no GC figure. Skips a runtime not installed.
. "$(dirname "$0")/lib.sh"
need_stacktop
need_target cpuburn

# gc_share LABEL PID MIN: PID's header says "GC N% of CPU" with N at least
# MIN (through the noise of its sample count).
gc_share() {
	local out=$E2E_TMPDIR/$1.out gc
	run_ok 30 "$out" "$1: stacktop -b exits 0" -b -d 3 -n 1 -l 5 -p "$2"
	gc=$(grep -o 'GC [0-9]*% of CPU' "$out" | head -1 | awk '{ sub("%", "", $2); print $2 }')
	if [ -n "$gc" ]; then
		check_share_min "$gc" "$3" "$(samples_in "$out")" "$1: GC share of CPU in the header"
	else
		bad "$1: no 'GC N% of CPU' in the header"
		cat "$out" "$out.err"
	fi
}

if start_gcchurn; then
	J=$BG_PID
	sleep 2
	gc_share java "$J" 45 # measured 85-95% here; half of that is a generous floor
	kill "$J"
fi

# Go with GOGC=10: its mark workers and assists are GC by their frames.
if command -v go >/dev/null; then
	LANG_SRC=$(cd "$(dirname "$0")/../targets/lang" && pwd)
	(cd "$E2E_TMPDIR" && go build -o gogc "$LANG_SRC/gogc.go") || die "go build failed"
	start_bg env GOGC=10 "$E2E_TMPDIR/gogc"
	G=$BG_PID
	sleep 1
	gc_share go "$G" 40 # measured ~80% here
	kill "$G"
else
	log "SKIP go: not installed (make deps-test installs golang-go)"
fi

start_cpuburn 1
out=$E2E_TMPDIR/c.out
run_ok 30 "$out" "cpuburn: stacktop -b exits 0" -b -d 2 -n 1 -l 5 -p "$CB"
grep -q 'GC [0-9]*% of CPU' "$out" && bad "cpuburn: a GC share for a program that never collects" ||
	ok "cpuburn: no GC figure"
kill "$CB"
e2e_finish
