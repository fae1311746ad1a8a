#!/bin/bash
# test_busyfloor — the busy floor is what stays busy in the pauses between
# bursts (issue 17 item 5, issue 24 item 7):
#   floor 40 1.0 2: the main thread works ~1 s and sleeps 1 s beside two
#   pollers that spin 30 ms of every 100 ms. One-second buckets alias that
#   rhythm into a flat line at an unlucky phase; measured in ~100 ms steps
#   the alert comes in every run, names both pollers (every thread that
#   holds the floor, each with a figure), never the main thread (asleep in
#   the pauses), and never says "never idles";
#   cpuburn 2, two identical spinners pinned to one CPU beside a competitor
#   stopped and continued every second: their CPU line jumps between a third
#   of a core and a whole one, but they never pause: high CPU, no BUSY FLOOR
#   (it came on every CPU-bound job, naming one of the two spinners).
. "$(dirname "$0")/lib.sh"
need_stacktop
need_target floor
need_target cpuburn

start_bg "$TARGETS/floor" 40 1.0 2
FLOOR=$BG_PID
wait_until 3 test -d "/proc/$FLOOR/task" || die "floor did not start"
tid_of() { grep -l "^$1\$" /proc/"$FLOOR"/task/*/comm 2>/dev/null | head -1 | awk -F/ '{ print $5 }'; }
# (a function: wait_until's arguments are expanded once, before it polls)
named_poller2() { [ -n "$(tid_of poller-2)" ]; }
wait_until 3 named_poller2 || die "no poller-2 thread in floor"
POLLER=$(tid_of poller)
POLLER2=$(tid_of poller-2)
[ -n "$POLLER" ] || die "no poller thread in floor"
out=$E2E_TMPDIR/floor.out
start_bg sh -c "exec \"$STACKTOP\" -b -d 1 -n 20 -W 30 -p $FLOOR >\"$out\" 2>\"$out.err\""
both() { grep -E '^! .*BUSY FLOOR' "$out" | grep "poller ($POLLER)" | grep -q "poller-2 ($POLLER2)"; }
if wait_until 18 both; then
	al=$(grep -E '^! .*BUSY FLOOR' "$out" | grep "poller ($POLLER)" | grep "poller-2 ($POLLER2)" | tail -1)
	ok "1 s / 1 s rhythm: BUSY FLOOR names both pollers ($al)"
	# Each named with its floor figure, at least the 5% that makes one.
	for t in "poller ($POLLER)" "poller-2 ($POLLER2)"; do
		f=$(grep -oE "${t//[()]/.} [0-9]+%" <<<"$al" | grep -oE '[0-9]+%$' | tr -d %)
		[ -n "$f" ] && [ "$f" -ge 5 ] && ok "$t named with its floor, $f%" ||
			bad "$t should come with its floor (>= 5%): '$al'"
	done
else
	bad "1 s / 1 s rhythm: no BUSY FLOOR naming poller ($POLLER) and poller-2 ($POLLER2) within 18 s"
	grep -E '^(CPU|!)' "$out" | tail -8
fi
grep -E '^! .*BUSY FLOOR' "$out" | grep -Eq "\\($FLOOR\\)|floor \\(" &&
	bad "the main thread (asleep in the pauses) was named BUSY FLOOR" ||
	ok "the main thread is never named"
grep -q 'never idles' "$out" && bad "'never idles' said of a thread that sleeps between bursts" ||
	ok "no 'never idles'"
kill -KILL "$FLOOR"
wait "$FLOOR" 2>/dev/null

# ---- steady spinners, starved now and then: no floor --------------------------
cpu=$(cut -d- -f1 /sys/devices/system/cpu/online)
start_bg taskset -c "$cpu" "$TARGETS/cpuburn" 2 60
CB=$BG_PID
start_bg taskset -c "$cpu" "$TARGETS/cpuburn" 4 60
RIVAL=$BG_PID
# The rival runs a second, stops a second: the spinners' share of the CPU
# swings between 2/6 and all of it, the shape that read as bursts over a
# floor.
start_bg bash -c "while kill -STOP $RIVAL 2>/dev/null; do sleep 1; kill -CONT $RIVAL; sleep 1; done"
sleep 0.5
alive "$CB" || die "cpuburn did not start"
steady=$E2E_TMPDIR/steady.out
run_ok 40 "$steady" "steady spinners: -b -d 1 -n 16 exits 0" -b -d 1 -n 16 -W 30 -p "$CB"
cpus=$(grep -E '^CPU ' "$steady" | awk '{ print $3 }' | sort -n | sed -n '1p;$p' | tr '\n' ' ')
if grep -qE '^! .*BUSY FLOOR' "$steady"; then
	bad "steady spinners (CPU now between $cpus): $(grep -E '^! .*BUSY FLOOR' "$steady" | tail -1)"
else
	ok "steady spinners (CPU now between $cpus): no BUSY FLOOR in 16 frames"
fi
e2e_finish
