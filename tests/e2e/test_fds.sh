#!/bin/bash
# test_fds — file descriptors: a sampler holds some per thread (perf: one
# event; wall: four /proc files), so under a low RLIMIT_NOFILE not every
# thread can be sampled. stacktop raises its soft limit to the hard one at
# start; when even that is too low, the threads it could not sample are
# counted in the header with the reason, what it does sample still unwinds,
# and it exits 0.
#
#   manythreads (100 sleeping threads, a busy main thread), attached with
#   `ulimit -n 64` (soft and hard): "N threads not sampled: too many open
#   files" in cpu mode with per-task events (--events inherit: an event per
#   thread and CPU) and in wall mode, named frames of the target, exit 0;
#   cpu mode's default per-CPU events need one descriptor per CPU: every
#   thread sampled under the same limit;
#   only the soft limit at 64: raised, every thread sampled.
. "$(dirname "$0")/lib.sh"
need_stacktop
need_target manythreads

trap e2e_cleanup_trees EXIT

start_target 0.5 manythreads 100
T=$BG_PID
nthreads=$(ls /proc/"$T"/task | wc -l)
check_cmp "$nthreads" '>=' 101 "target runs $nthreads threads"

for mode in cpu wall; do
	out=$E2E_TMPDIR/$mode.txt
	events=()
	[ "$mode" = cpu ] && events=(--events inherit)
	(
		ulimit -n 64 || exit 99
		exec "$STACKTOP" --mode "$mode" "${events[@]}" -b -n 3 -d 1 -p "$T"
	) >"$out" 2>&1
	rc=$?
	check_cmp "$rc" '==' 0 "$mode: exit status 0 with ulimit -n 64 (got $rc)"
	line=$(grep -m1 -E '[0-9]+ threads? not sampled: too many open files' "$out")
	if [ -n "$line" ]; then
		ok "$mode: header says '$(grep -oE '[0-9]+ threads? not sampled: too many open files' <<<"$line")'"
	else
		bad "$mode: no 'N threads not sampled: too many open files' in the header"
		sed -n 1,12p "$out"
	fi
	# The words the header always had are still there.
	grep -qE '^samples [0-9,]+ .*unwind ok' "$out" && ok "$mode: the header's other words stay" ||
		bad "$mode: header lost its samples/unwind words"
	# Named frames of the target's own binary: descriptors were left to
	# open it for unwinding and symbols.
	if grep -qE '(busy_bit|run_worker|main) \((manythreads.c|target.h)\) +manythreads' "$out"; then
		ok "$mode: the sampled threads still unwind into named frames"
	else
		bad "$mode: no named frame of manythreads: descriptors left for unwinding?"
		tail -n 12 "$out"
	fi
done

# Per-CPU events: one descriptor per CPU, however many threads.
out=$E2E_TMPDIR/percpu.txt
(
	ulimit -n 64 || exit 99
	exec "$STACKTOP" -b -n 2 -d 1 -p "$T"
) >"$out" 2>&1
check_cmp "$?" '==' 0 "per-CPU events under ulimit -n 64: exit status 0"
if grep -q 'per-task events' "$out"; then
	log "per-CPU events not allowed here: nothing to check"
elif grep -qE 'not sampled' "$out"; then
	bad "per-CPU events under ulimit -n 64: threads not sampled"
	sed -n 1,3p "$out"
else
	ok "per-CPU events under ulimit -n 64: every thread sampled"
fi

# Only the soft limit is low: stacktop raises it to the hard limit.
hard=$(ulimit -H -n)
if [ "$hard" = unlimited ] || [ "$hard" -ge 1024 ]; then
	out=$E2E_TMPDIR/soft.txt
	(
		ulimit -S -n 64 || exit 99
		exec "$STACKTOP" -b -n 2 -d 1 -p "$T"
	) >"$out" 2>&1
	rc=$?
	check_cmp "$rc" '==' 0 "soft limit 64: exit status 0"
	if grep -q 'not sampled' "$out"; then
		bad "soft limit 64 (hard $hard) was not raised: $(grep -m1 'not sampled' "$out")"
	else
		ok "soft limit 64 raised to the hard limit: every thread sampled"
	fi
else
	log "skip: hard RLIMIT_NOFILE is $hard"
fi

e2e_finish
