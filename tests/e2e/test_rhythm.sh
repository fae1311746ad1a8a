#!/bin/bash
# test_rhythm — spikes on a cadence (issue 27): the rhythm target spins 5%
# of a core and a full core for 2 s every 5 s (spike_burn): within 36
# one-second frames the alerts line says "CPU spikes every 5 s" (period
# within 1 s) in the last two frames (the test needs 5-6 spikes: about
# 22-27 s, 32 once under load; it runs alone (SOLO): beside seven other tests a regular 5 s series went unreported); cpuburn (steady) and the same spikes at random times
# (rhythm r5) watched as long get no rhythm line. Both run at once (~33 s). The spike is a full core over
# a 5% level: the rhythm threshold (twice the lower quartile, at least +10
# points) is 15%, so a spike squeezed to a fifth of a core by other load
# still counts (once, over a 10% level, spikes squeezed to 20-25% were
# missed). The same line names spike_burn as what rises in the spikes.
# Offline: record (run during the watch) keeps the per-second CPU and where
# it sits among its seconds, report shows the rhythm and names its riser.
# Both rhythm targets run at nice -10: beside other tests (and this test's
# own cpuburn) a spike once got 15% of a core and was missed, and a
# cadence with a hole is no rhythm; the weight keeps their spikes whole.
# cpuburn too: at nice 0 on a machine loaded by others it lost its core to
# each of rhythm's spikes, and its own CPU then spiked every 5 s (a rhythm).
. "$(dirname "$0")/lib.sh"
need_stacktop
need_target rhythm
need_target cpuburn

start_bg nice -n -10 "$TARGETS/rhythm" 5 2 5 60
RH=$BG_PID
start_bg nice -n -10 "$TARGETS/cpuburn" 1 60
CB=$BG_PID
# The same spikes at random times (exponential gaps of mean 5 s): no rhythm.
start_bg nice -n -10 "$TARGETS/rhythm" r5 2 5 60
RR=$BG_PID
wait_until 3 alive "$RH" || die "rhythm did not start"
wait_until 3 alive "$CB" || die "cpuburn did not start"
wait_until 3 alive "$RR" || die "rhythm r5 did not start"
rh_out=$E2E_TMPDIR/rhythm.out
cb_out=$E2E_TMPDIR/cpuburn.out
start_bg sh -c "exec \"$STACKTOP\" -b -d 1 -n 36 -p $CB >\"$cb_out\" 2>\"$cb_out.err\""
CBTOP=$BG_PID
rr_out=$E2E_TMPDIR/random.out
start_bg sh -c "exec \"$STACKTOP\" -b -d 1 -n 36 -p $RR >\"$rr_out\" 2>\"$rr_out.err\""
RRTOP=$BG_PID
# Meanwhile a record of the rhythm target (checked offline below): during
# the watch its seconds cost nothing (after it, 3 s were 3 s more of a solo
# test), so it records 34, ending before the 36 frames do: long enough for
# the rhythm most runs (the live watch finds it at 22-27 s), and then its
# riser.
rec=$E2E_TMPDIR/rhythm.folded
start_bg timeout 60 "$STACKTOP" record -d 34 -o "$rec" -p "$RH"
REC=$BG_PID
run_ok 60 "$rh_out" "rhythm: -b -d 1 -n 36 exits 0" -b -d 1 -n 36 -p "$RH"
wait "$CBTOP"
check_cmp "$?" == 0 "cpuburn: -b -d 1 -n 36 exits 0"
wait "$RRTOP"
check_cmp "$?" == 0 "random spikes: -b -d 1 -n 36 exits 0"

# The alerts of each frame (empty when none), one line a frame.
frame_alerts() {
	awk '/^samples / { if (n++) print a; a = "" } /^! / { a = $0 } END { if (n) print a }' "$1"
}
frames=$(frame_alerts "$rh_out" | wc -l)
first=$(frame_alerts "$rh_out" | grep -n 'CPU spikes' | head -1 | cut -d: -f1)
last=$(frame_alerts "$rh_out" | tail -2)
cpus=$(grep -E '^CPU now' "$rh_out" | awk '{ print $3 }' | tr '\n' ' ')
if [ "$(grep -c 'CPU spikes every' <<<"$last")" = 2 ]; then
	periods=$(grep -oE 'CPU spikes every [0-9]+ s' <<<"$last" | awk '{ print $4 }' | sort -u | tr '\n' ' ')
	bad_p=$(for p in $periods; do [ "$p" -ge 4 ] && [ "$p" -le 6 ] || echo "$p"; done)
	[ -z "$bad_p" ] && ok "the last 2 of $frames frames (from frame $first) say the CPU spikes every ${periods}s: $(tail -1 <<<"$last")" ||
		bad "period should be 5 s +-1: $(tail -1 <<<"$last")"
else
	bad "the last 2 of $frames frames should say 'CPU spikes every 5 s' (CPU: $cpus): $last"
fi
# What rises in the spikes: spike_burn, named on the rhythm line (model/spikes).
# The riser is named on the tick the rhythm is found (the calm seconds
# before it are taken from the window then): a rhythm on the last 2
# frames has it on the last; the frames between the rhythm and its riser
# are logged.
riser=$(frame_alerts "$rh_out" | grep -n 'during spikes: spike_burn' | head -1 | cut -d: -f1)
if grep -q 'during spikes: spike_burn +[0-9]* pts' <<<"$(tail -1 <<<"$last")"; then
	ok "the rhythm line names spike_burn: $(grep -oE 'during spikes: .*' <<<"$last" | tail -1)"
	log "the riser came $((riser - first)) frames after the rhythm (frame $first)"
elif [ -z "$first" ] || [ "$first" -eq "$frames" ]; then
	log "no rhythm before the last frame: no riser to check"
else
	bad "the last frame should name spike_burn 'during spikes' (rhythm from frame $first): $last"
fi
grep -q 'spike_burn' "$rh_out" && ok "spike_burn in the profile" || bad "no spike_burn in the profile"

if grep -q 'CPU spikes' "$cb_out"; then
	bad "steady cpuburn got a rhythm: $(grep 'CPU spikes' "$cb_out" | tail -1) (CPU: $(grep -E '^CPU now' "$cb_out" | awk '{ print $3 }' | tr '\n' ' '))"
else
	ok "steady cpuburn: no rhythm line in $(grep -c '^samples ' "$cb_out") frames"
fi
if grep -q 'CPU spikes' "$rr_out"; then
	bad "random spikes got a rhythm: $(grep 'CPU spikes' "$rr_out" | tail -1) (CPU: $(grep -E '^CPU now' "$rr_out" | awk '{ print $3 }' | tr '\n' ' '))"
else
	ok "random spikes: no rhythm line in $(grep -c '^samples ' "$rr_out") frames (CPU: $(grep -E '^CPU now' "$rr_out" | awk '{ print $3 }' | tr '\n' ' '))"
fi

# Offline (record keeps the per-second CPU and where it sits among the
# seconds): a recorded file's "stacktop: {cpu_1s=...}" comment has the
# run's seconds, and "{cpu_1s_at=K}" places them; report -b of the record
# says the rhythm when its 34 s were enough (a loaded machine may squeeze
# a spike), and then names spike_burn (unless its spikes were squeezed to
# a second: their CPU points then straddle the seconds). Report -b of a file whose CPU
# spikes 2 s every 5 s (60 s of it, spike_burn's samples in the spike
# seconds) says so and names spike_burn; without the comments, no CPU
# line and no rhythm.
wait "$REC"
check_cmp "$?" == 0 "record -d 34 exits 0"
ncpu=$(grep -oE '^# stacktop: \{cpu_1s=[0-9.,]*\}$' "$rec" | tr -cd , | wc -c)
check_cmp "$ncpu" ">=" 1 "record keeps the per-second CPU (commas in cpu_1s)"
grep -qE '^# stacktop: \{cpu_1s_at=-?[0-9]+\}$' "$rec" && ok "record places it (cpu_1s_at)" ||
	bad "record should write cpu_1s_at: $(grep '^# stacktop: {cpu' "$rec" | cut -c1-80)"
run_ok 30 "$E2E_TMPDIR/rec.out" "report -b of the record exits 0" report -b "$rec"
rec_line=$(grep '^! CPU spikes' "$E2E_TMPDIR/rec.out")
if [ -z "$rec_line" ]; then
	log "the 34 s record has no rhythm (CPU: $(grep -oE 'cpu_1s=[0-9.,]*' "$rec"))"
elif grep -q 'during spikes: spike_burn +[0-9]* pts' <<<"$rec_line"; then
	ok "report of the record names the riser: $rec_line"
elif grep -qE '[0-9.]+ s each' <<<"$rec_line" && [ "$(grep -oE '[0-9.]+ s each' <<<"$rec_line" | awk '{ print ($1 < 1.5) }')" = 1 ]; then
	# Squeezed to a second (a loaded machine), a spike's CPU point
	# straddles two one-second buckets by the tick's phase: its seconds
	# split, and the comparison may not hold (once, 1 s to 19%).
	log "the record's spikes are squeezed to a second, no riser: $rec_line"
else
	bad "report of the record should name spike_burn 'during spikes': $rec_line"
fi
spiky() { [ $(($1 % 5)) -lt 2 ] && [ "$1" -ge 3 ]; }
cpus=$(for i in $(seq 0 59); do spiky "$i" && echo 100.0 || echo 5.0; done | paste -sd,)
{
	printf '# stacktop: {cpu_1s=%s}\n# stacktop: {cpu_1s_at=0}\n' "$cpus"
	for i in $(seq 0 59); do
		echo "# stacktop: {second=$i}"
		spiky "$i" && echo "main;spike_burn $((45 + i % 7))"
		echo "main;steady_burn $((4 + i % 3))"
	done
} >"$E2E_TMPDIR/off.folded"
run_ok 30 "$E2E_TMPDIR/off.out" "report -b of a file with a rhythm exits 0" report -b "$E2E_TMPDIR/off.folded"
grep -q '^! CPU spikes every 5 s.*during spikes: spike_burn +[0-9]* pts' "$E2E_TMPDIR/off.out" && ok "report shows the rhythm and its riser: $(grep 'CPU spikes' "$E2E_TMPDIR/off.out")" ||
	bad "report should say 'CPU spikes every 5 s' and name spike_burn: $(head -5 "$E2E_TMPDIR/off.out")"
grep -v '^# stacktop' "$E2E_TMPDIR/off.folded" >"$E2E_TMPDIR/plain.folded"
run_ok 30 "$E2E_TMPDIR/plain.out" "report -b of a file without CPU exits 0" report -b "$E2E_TMPDIR/plain.folded"
grep -qE '^CPU |CPU spikes' "$E2E_TMPDIR/plain.out" && bad "no CPU line without cpu_1s: $(grep -E '^CPU |spikes' "$E2E_TMPDIR/plain.out")" ||
	ok "a file without cpu_1s: no CPU line, no rhythm"
kill -KILL "$RH" "$CB" "$RR" 2>/dev/null
wait "$RH" "$CB" "$RR" 2>/dev/null
e2e_finish
