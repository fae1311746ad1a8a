#!/bin/bash
# test_series — the CPU series in batch mode (issue 3) against floor: main
# thread ~1 s of work / ~1.5 s of sleep, thread "poller" spins at a constant
# ~30% of a core: within ~15 s the CPU floor is above 15% and the BUSY FLOOR
# alert names poller (and no other thread). It compares the poller's CPU
# with the floor stacktop computes, so it runs alone (tests/run.sh SOLO);
# the memory series are test_series_mem's.
#
# Batch output read here (after each block's header):
#   CPU now N%  peak N%  [base N%  ]floor N%  (% of one core)
#   ! BUSY FLOOR: thread poller (TID) burns >= N% of a core every second   (while true)
#
# Every process started here (and any child it forked) is killed on exit.
. "$(dirname "$0")/lib.sh"
need_stacktop
need_target floor

trap e2e_cleanup_trees EXIT

# last_line FILE REGEX: the last line of FILE matching REGEX.
last_line() { grep -E -- "$2" "$1" 2>/dev/null | tail -n 1; }

# pct_of LINE WORD: the number in "WORD N%" (e.g. "floor 31%").
pct_of() { sed -nE "s/(^|.*[^[:alnum:]_])$2 +([0-9]+(\.[0-9]+)?) *%.*/\2/p" <<<"$1" | head -n 1; }

# dump FILE WHAT: the tail of an output, for a failed check.
dump() {
	log "---- $2: last lines of the output"
	tail -n 25 "$1" | sed 's/^/  | /'
	[ -s "$1.err" ] && { log "---- stderr"; tail -n 5 "$1.err" | sed 's/^/  | /'; }
}

# ---- start floor and a batch stacktop on it ---------------------------------
start_bg "$TARGETS/floor"
FLOOR=$BG_PID
sleep 0.3
alive "$FLOOR" || die "target $FLOOR did not start"
POLLER=
for t in /proc/"$FLOOR"/task/*; do
	[ "$(cat "$t/comm" 2>/dev/null)" = poller ] && POLLER=${t##*/}
done
[ -n "$POLLER" ] || die "floor target has no thread named poller"

F_OUT=$E2E_TMPDIR/floor.out
T0=$(date +%s)
start_bg sh -c "exec \"$STACKTOP\" -b -d 1 -n 70 -W 60 -p $FLOOR >\"$F_OUT\" 2>\"$F_OUT.err\""
elapsed() { echo $(($(date +%s) - T0)); }

# ---- floor: CPU floor > 15% and the BUSY FLOOR alert names poller -------------
floor_ok() {
	local cpu al f
	cpu=$(last_line "$F_OUT" '^CPU ')
	f=$(pct_of "$cpu" floor)
	al=$(tail -n 60 "$F_OUT" | grep -E '^! .*BUSY FLOOR' | tail -n 1)
	[ -n "$f" ] && awk -v f="$f" 'BEGIN { exit !(f > 15) }' && [[ $al == *poller* ]]
}
if wait_until 20 floor_ok; then
	ok "floor: CPU floor above 15% and BUSY FLOOR names poller after $(elapsed) s"
else
	bad "floor: within 20 s expected a 'CPU ... floor N%' line with N > 15 and a '! ... BUSY FLOOR ... poller' line"
	dump "$F_OUT" floor
fi
cpu=$(last_line "$F_OUT" '^CPU ')
log "floor: $cpu"
for w in now floor peak; do
	[ -n "$(pct_of "$cpu" "$w")" ] && ok "floor: CPU line has '$w N%'" ||
		bad "floor: CPU line should have '$w N%', seen: '$cpu'"
done
f=$(pct_of "$cpu" floor)
check_cmp "$f" '>' 15 "floor: CPU floor (poller ~30% every second)"
check_cmp "$f" '<' 60 "floor: CPU floor below the main thread's bursts"
check_cmp "$(pct_of "$cpu" peak)" '>=' "$(awk -v f="$f" 'BEGIN { print f + 10 }')" \
	"floor: CPU peak at least 10 points above the floor (the main thread's bursts)"
al=$(grep -E '^! .*BUSY FLOOR' "$F_OUT" | tail -n 1)
log "floor: $al"
if [[ $al == *poller* ]]; then
	ok "floor: BUSY FLOOR alert names poller"
	# If the alert gives a TID, it must be the poller's.
	tid=$(sed -nE 's/.*poller \(([0-9]+)\).*/\1/p' <<<"$al")
	if [ -n "$tid" ]; then
		check_cmp "$tid" == "$POLLER" "floor: BUSY FLOOR alert gives poller's TID"
	fi
else
	bad "floor: no '! ... BUSY FLOOR ... poller' alert line"
fi
if grep -E '^! .*BUSY FLOOR' "$F_OUT" | grep -qE 'idler|thread floor'; then
	bad "floor: a BUSY FLOOR alert names idler or the main thread: $(grep -E '^! .*BUSY FLOOR' "$F_OUT" | grep -E 'idler|thread floor' | tail -n 1)"
else
	ok "floor: BUSY FLOOR never names idler or the main thread"
fi

check_target_healthy "$FLOOR" "target $FLOOR"
e2e_finish
