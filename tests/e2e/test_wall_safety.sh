#!/bin/bash
# test_wall_safety — the ptrace sampler never leaves a target stopped or
# traced, against the waiter target (threads blocked on a lock, a pipe and
# sleeps, so most stops interrupt a system call):
#
#   - kill -9, SIGTERM, SIGHUP and Ctrl-C of stacktop in the TUI, in wall
#     and in cpu mode: every thread not T/t, TracerPid 0, and the lockers
#     still hand their lock over (the target makes progress);
#   - kill -9 at random moments of a fast batch run (-r 500), where a kill
#     is likely to land between PTRACE_INTERRUPT and PTRACE_CONT;
#   - a target stopped with SIGSTOP before attaching stays stopped after
#     stacktop exits (normally, and by kill -9) and resumes with SIGCONT;
#   - a target that exits while it is sampled: stacktop says so and exits.
# Every target is killed by the EXIT trap (lib.sh).
#
# STACKTOP_BIN overrides the binary (to try a build before it lands).
. "$(dirname "$0")/lib.sh"
STACKTOP=${STACKTOP_BIN:-$STACKTOP}
need_stacktop
need_target waiter
need_tmux

nthreads_is() { [ "$(ls "/proc/$1/task" 2>/dev/null | wc -l)" -eq "$2" ]; }
start_waiter() {
	start_bg "$TARGETS/waiter" "${1:-300}"
	W=$BG_PID
	wait_until 3 nthreads_is "$W" 5 || die "waiter did not start its threads"
	sleep 0.2
}

# The lockers' voluntary context switches: they grow only while the
# target runs (each lock hand-over is a sleep and a wake-up).
switches() { awk '/^voluntary_ctxt_switches:/ { s += $2 } END { print s + 0 }' /proc/"$1"/task/*/status 2>/dev/null; }
switches_past() { [ "$(switches "$1")" -gt "$2" ]; }
# More than 20 switches, polled for up to 3 s (~0.1 s when it runs; a
# stopped target makes none however long we wait).
check_progress() {
	local a b
	a=$(switches "$1")
	wait_until 3 switches_past "$1" $((a + 20))
	b=$(switches "$1")
	check_cmp "$((b - a))" '>' 20 "$2: the target's threads still run (context switches within 3 s)"
}

# all_stopped PID: every thread in group-stop (T), none traced.
all_stopped() {
	local t st
	for t in /proc/"$1"/task/*; do
		st=$(proc_state "${t#/proc/}") || continue
		[ "$st" = T ] || return 1
	done
	[ -z "$(proc_tracers "$1")" ]
}
none_stopped() { [ -z "$(proc_stopped_threads "$1")" ]; }

start_waiter
# ---- the TUI, killed or quit in every way, in both modes -----------------------------
for mode in wall cpu; do
	if [ "$mode" = wall ]; then ARGS=(-w -r 200) WANT='take_lock'; else ARGS=() WANT='stacktop +pid'; fi
	for how in KILL TERM HUP INT-key; do
		tm_attach "$WANT" "$mode, $how" "${ARGS[@]}" -p "$W" || continue
		if [ "$how" = INT-key ]; then
			tm_keys C-c
		else
			kill -"$how" "$ST"
		fi
		wait_until 3 gone "$ST" && ok "$mode, $how: stacktop exits" ||
			{ bad "$mode, $how: stacktop $ST still running after 3 s"; kill -KILL "$ST" 2>/dev/null; }
		sleep 0.2
		check_target_healthy "$W" "$mode, $how"
		check_progress "$W" "$mode, $how"
	done
done
tm_stop

# ---- kill -9 at random moments of a fast wall run ---------------------------------------
bad_rounds=0
for i in $(seq 12); do
	"$STACKTOP" -b -w -r 500 -d 0.5 -n 100 -p "$W" >/dev/null 2>&1 &
	ST=$!
	sleep "0.$((RANDOM % 6 + 3))$((RANDOM % 10))"
	kill -KILL "$ST"
	wait "$ST" 2>/dev/null
	s=$(proc_stopped_threads "$W") t=$(proc_tracers "$W")
	for k in $(seq 20); do
		[ -z "$s$t" ] && break
		sleep 0.05
		s=$(proc_stopped_threads "$W") t=$(proc_tracers "$W")
	done
	if [ -n "$s$t" ]; then
		bad_rounds=$((bad_rounds + 1))
		log "round $i: stopped '$s' traced '$t'"
	fi
done
check_cmp "$bad_rounds" == 0 "kill -9 at 12 random moments of -r 500: rounds leaving a thread stopped or traced"
check_target_healthy "$W" "after the kill -9 rounds"
check_progress "$W" "after the kill -9 rounds"

# ---- SIGSTOP before attaching: stays stopped ------------------------------------------------
kill -STOP "$W"
wait_until 3 all_stopped "$W" || bad "SIGSTOP: the waiter did not stop"
OUT=$E2E_TMPDIR/stopped.out
timeout 20 "$STACKTOP" -b -w -d 1 -n 2 -p "$W" >"$OUT" 2>&1
rc=$?
[ "$rc" = 0 ] && ok "stopped target: stacktop -b -w exits 0" || bad "stopped target: exit $rc: $(tail -n 3 "$OUT")"
if wait_until 2 all_stopped "$W"; then
	ok "stopped target: still stopped (T) and untraced after stacktop"
else
	bad "stopped target: after stacktop: stopped '$(proc_stopped_threads "$W")' traced '$(proc_tracers "$W")'"
fi
# The same, with stacktop killed by SIGKILL while sampling.
"$STACKTOP" -b -w -r 200 -d 1 -n 100 -p "$W" >/dev/null 2>&1 &
ST=$!
sleep 0.7
kill -KILL "$ST"
wait "$ST" 2>/dev/null
if wait_until 2 all_stopped "$W"; then
	ok "stopped target: still stopped (T) and untraced after kill -9 of stacktop"
else
	bad "stopped target: after kill -9: stopped '$(proc_stopped_threads "$W")' traced '$(proc_tracers "$W")'"
fi
kill -CONT "$W"
wait_until 2 none_stopped "$W" && ok "stopped target: SIGCONT resumes it" || bad "stopped target: after SIGCONT: stopped '$(proc_stopped_threads "$W")'"
check_progress "$W" "after SIGCONT"

# ---- SIGSTOP and SIGCONT while sampled: the user's job control works -----------------------
"$STACKTOP" -b -w -r 100 -d 1 -n 100 -p "$W" >/dev/null 2>&1 &
ST=$!
sleep 0.5
kill -STOP "$W"
stopped_or_listening() {
	local t st
	for t in /proc/"$1"/task/*; do
		st=$(proc_state "${t#/proc/}") || continue
		case $st in T | t) ;; *) return 1 ;; esac
	done
}
wait_until 3 stopped_or_listening "$W" && ok "SIGSTOP while sampled: the target stops" || bad "SIGSTOP while sampled: states '$(proc_stopped_threads "$W")'"
a=$(switches "$W")
sleep 1
b=$(switches "$W")
# Running, the lockers alone switch ~200 times a second; stopped, only our
# interrupts of the listening threads (which re-trap at once) count.
check_cmp "$((b - a))" '<=' 20 "SIGSTOP while sampled: stacktop does not resume it (context switches in 1 s)"
kill -CONT "$W"
wait_until 3 none_stopped "$W" && ok "SIGCONT while sampled: the target resumes" || bad "SIGCONT while sampled: stopped '$(proc_stopped_threads "$W")'"
check_progress "$W" "SIGCONT while sampled"
kill -TERM "$ST"
wait "$ST" 2>/dev/null
check_target_healthy "$W" "after SIGSTOP/SIGCONT while sampled"

# ---- a target that exits mid-sampling -------------------------------------------------------
start_bg "$TARGETS/waiter" 2
E=$BG_PID
wait_until 3 nthreads_is "$E" 5 || bad "short waiter did not start"
OUT=$E2E_TMPDIR/exit.out
t0=$(date +%s)
timeout 30 "$STACKTOP" -b -w -r 200 -d 1 -n 20 -p "$E" >"$OUT" 2>&1
rc=$?
t1=$(date +%s)
[ "$rc" = 0 ] && ok "exiting target: stacktop exits 0" || bad "exiting target: exit $rc: $(tail -n 3 "$OUT")"
grep -q "exited" "$OUT" && ok "exiting target: stacktop says it exited: $(grep -m1 -o '[^ ]*target [^!]*exited[^ ]*' "$OUT")" ||
	bad "exiting target: no 'exited' in the output"
# a deadline, not a measurement: ~2 s when it ends with the target, 20 s if not
check_cmp "$((t1 - t0))" '<=' 12 "exiting target: stacktop ends soon after (seconds)"

e2e_finish
