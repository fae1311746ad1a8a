#!/bin/bash
# test_jit — JIT code named from the target's perf map (/tmp/perf-PID.map):
# the jit target spins in code it copied into anonymous memory and names it
# there. The map is trusted only when owned by the target's user or root: a
# map owned by someone else must not name anything.
. "$(dirname "$0")/lib.sh"
need_stacktop
need_target jit

start_bg "$TARGETS/jit" 60
J=$BG_PID
wait_until 3 test -s "/tmp/perf-$J.map" || die "jit did not write /tmp/perf-$J.map"
out=$E2E_TMPDIR/jit.out
timeout 30 "$STACKTOP" -b -d 2 -n 1 -l 5 -p "$J" >"$out" 2>&1
check_cmp "$?" == 0 "stacktop -b on the jit target exits 0"
row=$(awk '/%Own/ { getline; print; exit }' "$out")
grep -q 'JIT code unnamed' "$out" && bad "the JIT hint shows though the perf map names the code" ||
	ok "named JIT code: no hint"
case "$row" in
*jit_spin_loop*'[jit]'*) ok "hottest row is jit_spin_loop in [jit]: $row" ;;
*) bad "hottest row should be jit_spin_loop [jit], is: $row"; cat "$out" ;;
esac
kill "$J"

# Not owned by the target's user nor root: ignored, the code stays unnamed.
if [ "$(id -u)" = 0 ]; then
	start_bg "$TARGETS/jit" 60
	J2=$BG_PID
	wait_until 3 test -s "/tmp/perf-$J2.map" || die "jit did not write its map"
	chown 65534:65534 "/tmp/perf-$J2.map"
	out2=$E2E_TMPDIR/jit2.out
	timeout 30 "$STACKTOP" -b -d 2 -n 1 -l 5 -p "$J2" >"$out2" 2>&1
	check_cmp "$?" == 0 "stacktop -b on the jit target (foreign map) exits 0"
	if grep -q jit_spin_loop "$out2"; then
		bad "a perf map owned by uid 65534 was trusted"
		cat "$out2"
	else
		ok "a perf map owned by another user is not trusted: $(awk '/%Own/ { getline; print; exit }' "$out2")"
	fi
	kill "$J2"
	rm -f "/tmp/perf-$J2.map"
else
	log "not root: the ownership case needs chown, skipped"
fi

# No perf map at all: "[unknown]+0x…" comes with the hint that names the
# file and, for a JIT stacktop cannot tell, the flags of each runtime (issue 17
# item 2; issue 23: never only the node flag)
start_bg "$TARGETS/jit" 60
J3=$BG_PID
wait_until 3 test -s "/tmp/perf-$J3.map" || die "jit did not write its map"
rm -f "/tmp/perf-$J3.map"
out3=$E2E_TMPDIR/jit3.out
timeout 30 "$STACKTOP" -b -d 2 -n 1 -l 5 -p "$J3" >"$out3" 2>&1
grep -q "JIT code unnamed: no /tmp/perf-$J3.map (the JIT writes it: node --perf-basic-prof, Python 3.12+ -X perf" "$out3" &&
	ok "no perf map: the hint names /tmp/perf-$J3.map and --perf-basic-prof" ||
	{ bad "no perf map: no hint"; cat "$out3"; }
kill "$J3"
e2e_finish
