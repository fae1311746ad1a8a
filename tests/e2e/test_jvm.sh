#!/bin/bash
# test_jvm.sh — a JVM started with no flags has its JIT methods named
# (issue 23): stacktop asks it for its perf map as `jcmd PID
# Compiler.perfmap` does (attach file, SIGQUIT, its UNIX socket) and cleans
# the attach file up; --no-runtime-attach asks nothing and the hint names
# the JVM's remedy (not node's flag); and `record -- java
# -XX:+DumpPerfMapAtExit` reads the map the JVM writes as it exits; a JVM
# in its own pid and mount namespaces is reached there.
# Target: tests/targets/JvmHot.java, one hot method (stacktopHotSpin).
# Skipped with a message when no JDK is installed (make deps-test installs
# default-jdk-headless). JVM start-up is slow on a loaded box: waits poll.
source "$(dirname "$0")/lib.sh"
need_stacktop
CLASSES=$TARGETS/java
if ! command -v java >/dev/null 2>&1 || [ ! -f "$CLASSES/JvmHot.class" ]; then
	log "skip: no JDK (java, javac: apt-get install default-jdk-headless, then make targets)"
	e2e_finish
	exit 0
fi

# The JVM is up and running Java code: libjvm.so mapped, CPU time rising.
jvm_busy() {
	grep -q libjvm.so "/proc/$1/maps" 2>/dev/null && [ "$(proc_cpu_ticks "$1")" -gt 100 ]
}

cd "$E2E_TMPDIR" || die "no tmp dir"
start_bg java -cp "$CLASSES" JvmHot 300 late
J=$BG_PID
# the maps the JVMs write, whatever way the test ends
jvm_cleanup() {
	rm -f "/tmp/perf-$J.map"
	[ -s "$E2E_TMPDIR/jvm.pid" ] && rm -f "/tmp/perf-$(cat "$E2E_TMPDIR/jvm.pid").map"
	e2e_cleanup
}
trap jvm_cleanup EXIT
wait_until 60 jvm_busy "$J" || die "the JVM did not start"

# --no-runtime-attach: nothing asked, and the hint names what fits a JVM.
out0=$E2E_TMPDIR/noattach.out
run_ok 60 "$out0" "--no-runtime-attach: runs" --no-runtime-attach -b -d 2 -n 2 -l 10 -p "$J"
grep -q "JIT code unnamed: no /tmp/perf-$J.map (JVM: jcmd $J Compiler.perfmap" "$out0" &&
	ok "--no-runtime-attach: the hint names jcmd $J Compiler.perfmap" ||
	{ bad "--no-runtime-attach: no JVM hint"; cat "$out0"; }
grep -q -- "--perf-basic-prof" "$out0" && bad "a JVM is given node's flag"
[ ! -e "/tmp/perf-$J.map" ] && ok "--no-runtime-attach: the JVM was not asked for a map" ||
	bad "--no-runtime-attach: /tmp/perf-$J.map was written"

# By default: asked, named within 10 s (the fifth block, two seconds
# apart); then code compiled after that map (stacktopLateSpin, once the file
# "late" exists) is asked for again and named in the same run.
out=$E2E_TMPDIR/attach.out
timeout 150 "$STACKTOP" -b -d 2 -n 60 -l 10 -p "$J" >"$out" 2>&1 &
ST=$!
BG_PIDS+=("$ST")
blocks() { grep -c '^stacktop ' "$out"; }
# block N (1-based) of the output
block() { awk -v n="$1" '/^stacktop /{k++} k == n' "$out"; }
worst_unknown() { awk '/\[unknown\]/ && $1 ~ /^[0-9.]+$/ && $1 > m {m = $1} END {print m + 0}'; }
have_blocks() { [ "$(blocks)" -ge "$1" ]; }
wait_until 60 have_blocks 6 || die "stacktop printed $(blocks) blocks"
b5=$(block 5)
hot=$(grep -m1 "stacktopHotSpin" <<<"$b5" | awk '{print $1}')
[ -n "$hot" ] && ok "the hot JIT method is named within 10 s: $hot% own" ||
	{ bad "stacktopHotSpin not named within 10 s"; cat "$out"; }
check_cmp "$(worst_unknown <<<"$b5")" "<=" 10 "no [unknown] row above 10% at 10 s"
grep -q "JVM perf map: requested" <<<"$b5" && ok "the header says the map was requested" ||
	bad "no word of the request in the header"
[ ! -e "/tmp/.attach_pid$J" ] && ok "the attach file is cleaned up" ||
	bad "/tmp/.attach_pid$J left behind"
touch late
# the latest block names the late method and has no [unknown] row above 10%
late_named() {
	local b
	b=$(block "$(($(blocks) - 1))") # the last whole one
	grep -q stacktopLateSpin <<<"$b" &&
		awk -v w="$(worst_unknown <<<"$b")" 'BEGIN { exit !(w <= 10) }'
}
n0=$(blocks)
if wait_until 60 late_named; then
	ok "code compiled after the map is named in the same run (block $(blocks), switched at $n0)"
else
	bad "stacktopLateSpin not named after the switch"
	block "$(blocks)"
fi
kill "$ST" 2>/dev/null
alive "$J" && ok "the JVM still runs" || bad "the JVM died"
kill "$J"
wait_until 20 gone "$J"

# A JVM in its own pid and mount namespaces (as in a container): pid 1 in
# there, its /tmp a tmpfs of its own; attach file, socket and map are
# reached through /proc/PID/root with its namespace pid.
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
	# the classes copied into its own /tmp through a descriptor opened
	# before: a checkout under /tmp is hidden by the new one
	start_bg unshare -p -f -m --mount-proc --kill-child sh -c \
		"exec 3<'$CLASSES' && mount -t tmpfs tmpfs /tmp && mkdir /tmp/classes &&
		 cp /proc/self/fd/3/*.class /tmp/classes/ && exec 3<&- &&
		 exec java -cp /tmp/classes JvmHot 300"
	U=$BG_PID
	ns_jvm() {
		local c
		for c in $(pgrep -P "$U"); do
			jvm_busy "$c" && { echo "$c"; return 0; }
		done
		return 1
	}
	wait_until 60 ns_jvm >/dev/null || die "the namespaced JVM did not start"
	N=$(ns_jvm)
	log "namespaced JVM: pid $N, $(grep NSpid "/proc/$N/status" | tr '\t' ' ')"
	nsout=$E2E_TMPDIR/ns.out
	run_ok 90 "$nsout" "the namespaced JVM's profile runs" -b -d 2 -n 5 -l 10 -p "$N"
	nsb=$(awk '/^stacktop /{k++} k == 5' "$nsout")
	grep -q stacktopHotSpin <<<"$nsb" && ok "a namespaced JVM is named within 10 s" ||
		{ bad "the namespaced JVM's hot method is not named"; cat "$nsout"; }
	[ -s "/proc/$N/root/tmp/perf-1.map" ] && ok "its map is in its own /tmp as perf-1.map" ||
		bad "no perf-1.map in the namespaced JVM's /tmp"
	[ ! -e "/proc/$N/root/tmp/.attach_pid1" ] && ok "its attach file is cleaned up" ||
		bad "the namespaced JVM's attach file is left"
	kill "$N" "$U" 2>/dev/null
else
	log "skip: the namespaced JVM needs root and unshare"
fi

# record: the map a JVM writes at its exit names the frames in the file.
rec=$E2E_TMPDIR/rec.folded
run_ok 120 "$E2E_TMPDIR/rec.out" "record -- java -XX:+DumpPerfMapAtExit runs" \
	record --no-runtime-attach -o "$rec" -- sh -c 'echo $$ >jvm.pid; exec "$@"' sh \
	java -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit -cp "$CLASSES" JvmHot 8
read -r total named unknown < <(awk '!/^#/ && NF > 1 {
	n = $NF; t += n
	if ($0 ~ /stacktopHotSpin/) h += n
	if ($0 ~ /\[unknown\]/) u += n
} END { print t + 0, h + 0, u + 0 }' "$rec")
log "record: $total samples, $named in stacktopHotSpin, $unknown through [unknown]"
check_cmp "$total" ">" 50 "record wrote samples"
check_cmp "$named" ">" "$((total / 2))" "record names the hot method from the map written at exit"
check_cmp "$((unknown * 10))" "<=" "$total" "record: at most 10% of stacks through [unknown]"
e2e_finish
