#!/bin/bash
# test_hsperf — a JVM's own heap beside its RSS, read from its hsperfdata
# file (no attach): the MEM line and the memory view say "Java heap X of
# Y, RSS Z: W outside the heap" for a JVM (-Xmx32m: committed at most 32
# MiB) and nothing of the kind for a C program. Skips without java.
. "$(dirname "$0")/lib.sh"
need_stacktop
need_target cpuburn

if start_gcchurn; then
	J=$BG_PID
	wait_until 20 sh -c "grep -q hsperfdata /proc/$J/maps" || die "the JVM mapped no hsperfdata file"
	# committed: the generations' capacities, at most -Xmx32m
	heap_case java "$J" Java 1 33
	kill "$J"
fi

# node: a runtime whose heap is not read says so in the memory view.
if command -v node >/dev/null; then
	start_bg node -e 'let s = 0; for (;;) s = (s + 1) % 1000003'
	N=$BG_PID
	sleep 1
	memory_view node "$N"
	expect_in "$E2E_TMPDIR/node.mem" "node: the memory view says its heap is not available" '^node heap: not available'
	kill "$N"
else
	log "SKIP node: not installed"
fi

start_cpuburn 1
run_ok 30 "$E2E_TMPDIR/c.out" "cpuburn: stacktop -b exits 0" -b -d 3 -n 1 -l 3 -p "$CB"
memory_view cpuburn "$CB"
cat "$E2E_TMPDIR/c.out" "$E2E_TMPDIR/cpuburn.mem" | grep -q 'Java heap\| heap: not available' &&
	bad "cpuburn: a runtime heap line for a C program" || ok "cpuburn: no runtime heap line (MEM line, memory view)"
kill "$CB"
e2e_finish
