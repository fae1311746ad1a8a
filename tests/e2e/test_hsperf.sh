#!/bin/bash
# test_hsperf — a JVM's own heap beside its RSS, read from its hsperfdata
# file (no attach): the MEM line and the memory view say "Java heap X of
# Y, RSS Z: W outside the heap" for a JVM (-Xmx32m: committed at most 32
# MiB) and nothing of the kind for a C program. Skips without java.
. "$(dirname "$0")/lib.sh"
need_stacktop
need_target cpuburn

CLASSES=$ROOT/build/java
if command -v java >/dev/null && [ -f "$CLASSES/GcChurn.class" ]; then
	start_bg java -Xmx32m -XX:+UseG1GC -cp "$CLASSES" GcChurn 60
	J=$BG_PID
	wait_until 20 sh -c "grep -q hsperfdata /proc/$J/maps" || die "the JVM mapped no hsperfdata file"
	out=$E2E_TMPDIR/java.out
	timeout 30 "$STACKTOP" -b -d 3 -n 1 -l 3 -p "$J" >"$out" 2>&1
	check_cmp "$?" == 0 "java: stacktop -b exits 0"
	line=$(grep -o 'MEM Java heap [0-9.]* [KMG]iB of [0-9.]* [KMG]iB, RSS [0-9.]* [KMG]iB: [0-9.]* [KMG]iB outside the heap' "$out")
	if [ -n "$line" ]; then
		ok "java: $line"
		# committed: the generations' capacities, at most -Xmx
		comm=$(echo "$line" | awk '{ for (i = 1; i < NF; i++) if ($i == "of") { v = $(i + 1); u = $(i + 2) } }
			END { sub(",", "", u); print (u == "KiB" ? v / 1024 : u == "GiB" ? v * 1024 : v) }')
		check_cmp "$comm" '<=' 33 "java: committed heap (MiB) within -Xmx32m"
		check_cmp "$comm" '>=' 1 "java: committed heap (MiB) is read"
	else
		bad "java: no 'MEM Java heap X of Y, RSS Z: W outside the heap' line"
		cat "$out"
	fi
	mout=$E2E_TMPDIR/javamem.out
	timeout 30 "$STACKTOP" -b -d 2 -n 1 -l 3 --view memory -p "$J" >"$mout" 2>&1
	grep -q '^Java heap [0-9.]* [KMG]iB of ' "$mout" && ok "java: the memory view shows the heap line" ||
		{ bad "java: no heap line in the memory view"; cat "$mout"; }
	kill "$J"
else
	log "SKIP java: no java or no build/java/GcChurn.class (make targets with javac installed)"
fi

# node: a runtime whose heap is not read says so in the memory view.
if command -v node >/dev/null; then
	start_bg node -e 'let s = 0; for (;;) s = (s + 1) % 1000003'
	N=$BG_PID
	sleep 1
	nout=$E2E_TMPDIR/node.out
	timeout 30 "$STACKTOP" -b -d 2 -n 1 -l 3 --view memory -p "$N" >"$nout" 2>&1
	grep -q '^node heap: not available' "$nout" && ok "node: the memory view says its heap is not available" ||
		{ bad "node: no 'node heap: not available' in the memory view"; cat "$nout"; }
	kill "$N"
else
	log "SKIP node: not installed"
fi

start_target 1 cpuburn
C=$BG_PID
out=$E2E_TMPDIR/c.out
timeout 30 "$STACKTOP" -b -d 3 -n 1 -l 3 -p "$C" >"$out" 2>&1
check_cmp "$?" == 0 "cpuburn: stacktop -b exits 0"
timeout 30 "$STACKTOP" -b -d 2 -n 1 -l 3 --view memory -p "$C" >>"$out" 2>&1
grep -q 'Java heap\| heap: not available' "$out" && bad "cpuburn: a runtime heap line for a C program" ||
	ok "cpuburn: no runtime heap line (MEM line, memory view)"
kill "$C"
e2e_finish
