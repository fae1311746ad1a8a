#!/bin/bash
# test_cost — what stacktop reads each second follows the target, never the
# number of processes on the machine: a batch run at 99 Hz on cpuburn (under
# strace; skipped without it) opens no directory but the target's own under
# /proc, never /proc itself, and no file of any other process than the
# target. (What that costs in CPU, with and without 2,000 more processes,
# is measured by `make bench`: bench/checks.sh, and bench/cost.sh at length.
# Before stacktop stopped scanning /proc for zombie children it was 6-7x.)
#
# COST_STACKTOP=/path runs another binary (to see this test fail on an old
# one). Every process started here is killed on exit (by pid).
. "$(dirname "$0")/lib.sh"
STACKTOP=${COST_STACKTOP:-$STACKTOP}
need_stacktop
need_target cpuburn
trap e2e_cleanup_trees EXIT

start_target 1 cpuburn 2
CB=$BG_PID

if command -v strace >/dev/null; then
	trace=$E2E_TMPDIR/trace
	strace -f -qq -e trace=open,openat,openat2 -o "$trace" \
		"$STACKTOP" -b -d 1 -n 3 -r 99 -p "$CB" >"$E2E_TMPDIR/batch.out" 2>&1 ||
		bad "stacktop -b -n 3 under strace failed: $(tail -n 2 "$E2E_TMPDIR/batch.out")"
	grep -q "^samples" "$E2E_TMPDIR/batch.out" || bad "no batch output under strace"
	opens=$(grep -o '"/proc[^"]*"' "$trace" | tr -d '"')
	n=$(grep -c . <<<"$opens")
	check_cmp "$n" ">" 5 "strace saw stacktop open procfs files"
	if grep -qxE '/proc/?' <<<"$opens"; then
		bad "stacktop opened /proc itself (a scan of every process)"
	else
		ok "stacktop never opened /proc itself"
	fi
	others=$(grep -E '^/proc/[0-9]+' <<<"$opens" | grep -vE "^/proc/$CB(/|\$)" | sort -u | head -n 5)
	if [ -z "$others" ]; then
		ok "no file of another process than the target was opened"
	else
		bad "stacktop opened files of other processes: $(tr '\n' ' ' <<<"$others")"
	fi
else
	log "strace not installed: the check of what is opened is skipped"
fi

e2e_finish
