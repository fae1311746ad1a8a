#!/bin/bash
# test_switch — a switch-heavy target's kernel share agrees with perf's for
# the same kind of event (issue 24, item 3):
#
#   pingpong 2 200   two pongs here, their pings in a child: thousands of
#                    wake-ups and switches a second
#
#   per-CPU   stacktop's default (per-CPU cpu-clock events, the process
#             filter) beside `perf record -a` (per-CPU), the target's own
#             samples only;
#   per-task  `stacktop --events inherit` beside `perf record -p`.
#
# Each pair samples the same seconds at the same rate, at the same time, so
# the load around the test moves both alike. The figure compared is
# finish_task_switch's share of the target's samples as the leaf
# (stacktop's %Own): within SHARE_SIGMAS standard errors of the difference
# of two shares (both counts), plus the half point of printed rounding.
# A per-task clock that expires while its task is switched out fires just
# after the task is switched back in, in finish_task_switch (18-20% here
# against 4% per-CPU): the two kinds differ by design, and each must match
# perf's own figure for that kind, not the other's (bench/switch.sh prints
# all four).
. "$(dirname "$0")/lib.sh"
need_stacktop
need_target pingpong
command -v perf >/dev/null || die "perf is not installed (linux-perf)"
SECS=3

start_bg "$TARGETS/pingpong" 2 200
T=$BG_PID
sleep 0.5

# st_share OUT: "PCT N" — finish_task_switch's %Own and the samples of a
# batch output.
st_share() {
	awk '/^samples [0-9]/ && !n { n = $2; gsub(",", "", n) }
		$5 ~ /^finish_task_switch/ && f == "" { f = $1 }
		END { printf "%.2f %d\n", f + 0, n }' "$1"
}
# perf_share DATA: the same from a perf.data, the target's samples only.
perf_share() {
	perf script -i "$1" -F pid,ip,sym 2>/dev/null | awk -v p="$T" '$1 == p { n++
		if ($3 ~ /^finish_task_switch/) f++ } END { printf "%.2f %d\n", (n ? 100 * f / n : 0), n }'
}
# same WHAT A NA B NB: |A - B| within SHARE_SIGMAS standard errors of the
# difference of two binomial shares (A over NA samples, B over NB).
same() {
	local t
	t=$(awk -v a="$2" -v na="$3" -v b="$4" -v nb="$5" -v k="$SHARE_SIGMAS" 'BEGIN {
		if (na < 1 || nb < 1) { print -1; exit }
		p = (a * na + b * nb) / (na + nb) / 100
		printf "%.2f", k * sqrt(p * (1 - p) * (1 / na + 1 / nb)) * 100 + 0.5 }')
	if awk -v a="$2" -v b="$4" -v t="$t" 'BEGIN { d = a - b; exit !(t >= 0 && (d < 0 ? -d : d) <= t) }'; then
		ok "$1: finish_task_switch $2% of $3 samples, perf $4% of $5 (within $t)"
	else
		bad "$1: finish_task_switch $2% of $3 samples, perf $4% of $5: more than $t apart"
	fi
}

# pair NAME PERF_ARGS -- STACKTOP_ARGS: both at once over the same seconds.
pair() {
	local name=$1 pa=() sa=()
	shift
	while [ "$1" != -- ]; do pa+=("$1") && shift; done
	shift
	sa=("$@")
	perf record -q -e cpu-clock -F 999 "${pa[@]}" -o "$E2E_TMPDIR/$name.data" -- sleep "$SECS" \
		>"$E2E_TMPDIR/$name.perf" 2>&1 &
	local pp=$!
	timeout 30 "$STACKTOP" -b -r 999 -d "$SECS" -n 1 -l 80 "${sa[@]}" -p "$T" \
		>"$E2E_TMPDIR/$name.out" 2>&1 || bad "$name: stacktop exited $?: $(tail -n 1 "$E2E_TMPDIR/$name.out")"
	wait "$pp" || bad "$name: perf record exited $?: $(tail -n 1 "$E2E_TMPDIR/$name.perf")"
	# shellcheck disable=SC2046
	same "$name" $(st_share "$E2E_TMPDIR/$name.out") $(perf_share "$E2E_TMPDIR/$name.data")
}

pair per-CPU -a -- 
pair per-task -p "$T" -- --events inherit
e2e_finish
