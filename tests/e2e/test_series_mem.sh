#!/bin/bash
# test_series_mem — the memory series in batch mode (issue 3), against two
# targets with known behaviour, run side by side:
#
#   leak   4 MiB/s allocated and never freed: with -W 30, the memory verdict
#          says stairs within 60 s, with a slope within 20% of 4 MiB/s;
#   churn  up to 200 MiB over 10 s, then all freed, again and again: the
#          verdict says rollercoaster, and no leak (stairs) alert ever shows.
#
# The leak never gets an RSS rhythm ("RSS swings every"); churn, when its
# rhythm came within the run, swings every 10-12 s.
#
# Batch output read here (after each block's header):
#   MEM N MiB RSS (...)  ... <verdict: STAIRS | ROLLERCOASTER | FLAT> ... +4.0 MiB/s ...
#
# Every process started here (and any child it forked) is killed on exit.
. "$(dirname "$0")/lib.sh"
need_stacktop
need_target leak
need_target churn

trap e2e_cleanup_trees EXIT

# last_line FILE REGEX: the last line of FILE matching REGEX.
last_line() { grep -E -- "$2" "$1" 2>/dev/null | tail -n 1; }

# mib_per_s LINE: the first memory slope in LINE ("+240 MiB/min",
# "+4.0 MiB/s", "+14 GiB/h", "4.1MiB/s") converted to MiB/s; empty if none.
mib_per_s() {
	grep -oE '[+-]?[0-9]+(\.[0-9]+)? ?(B|KiB|MiB|GiB|TiB)/(s|sec|min|h)' <<<"$1" | head -n 1 |
		awk '{
			s = $0; sub(/ /, "", s)
			match(s, /^[+-]?[0-9.]+/); v = substr(s, 1, RLENGTH); rest = substr(s, RLENGTH + 1)
			split(rest, p, "/"); u = p[1]; per = p[2]
			f = (u == "B") ? 1 / 1048576 : (u == "KiB") ? 1 / 1024 : (u == "MiB") ? 1 : (u == "GiB") ? 1024 : 1048576
			d = (per == "min") ? 60 : (per == "h") ? 3600 : 1
			printf "%.3f\n", v * f / d
		}'
}

# dump FILE WHAT: the tail of an output, for a failed check.
dump() {
	log "---- $2: last lines of the output"
	tail -n 25 "$1" | sed 's/^/  | /'
	[ -s "$1.err" ] && { log "---- stderr"; tail -n 5 "$1.err" | sed 's/^/  | /'; }
}

# ---- start the two targets and a batch stacktop on each -----------------------
start_bg "$TARGETS/leak" 4
LEAK=$BG_PID
start_bg "$TARGETS/churn"
CHURN=$BG_PID
sleep 0.3
for p in "$LEAK" "$CHURN"; do
	alive "$p" || die "target $p did not start"
done

L_OUT=$E2E_TMPDIR/leak.out
C_OUT=$E2E_TMPDIR/churn.out
T0=$(date +%s)
start_bg sh -c "exec \"$STACKTOP\" -b -d 1 -n 70 -W 30 -p $LEAK >\"$L_OUT\" 2>\"$L_OUT.err\""
start_bg sh -c "exec \"$STACKTOP\" -b -d 1 -n 70 -W 30 -p $CHURN >\"$C_OUT\" 2>\"$C_OUT.err\""
elapsed() { echo $(($(date +%s) - T0)); }

# ---- churn and leak: wait for both verdicts (they run side by side) -----------
# The verdict word is upper case in the MEM line (ROLLERCOASTER, STAIRS):
# compare in lower case.
churn_ok() { local l; l=$(last_line "$C_OUT" '^MEM '); [[ ${l,,} == *rollercoaster* ]]; }
leak_ok() { local l; l=$(last_line "$L_OUT" '^MEM '); [[ ${l,,} == *stairs* ]]; }
both_ok() { churn_ok && leak_ok; }
wait_until $((55 - $(elapsed))) both_ok # the whole test stays under a minute

# leak: stairs, slope within 20% of 4 MiB/s
if leak_ok; then
	ok "leak: verdict stairs after $(elapsed) s"
	sleep 2 # two more refreshes: the slope from a slightly longer series
else
	bad "leak: within 55 s of the start the MEM line should say stairs"
	dump "$L_OUT" leak
fi
mem=$(last_line "$L_OUT" '^MEM ')
log "leak: $mem"
slope=$(mib_per_s "$mem")
if [ -n "$slope" ]; then
	check_cmp "$slope" '>=' 3.2 "leak: slope $slope MiB/s at least 4 MiB/s - 20%"
	check_cmp "$slope" '<=' 4.8 "leak: slope $slope MiB/s at most 4 MiB/s + 20%"
else
	bad "leak: no slope like '+4.0 MiB/s' or '+240 MiB/min' in the MEM line: '$mem'"
fi
grep -qE '^! .*([Ss]tairs|STAIRS|[Ll]eak|LEAK|MEM|[Mm]emory)' "$L_OUT" &&
	ok "leak: a memory alert line is shown" ||
	bad "leak: no '! ...' memory alert (stairs / leak) line"

# churn: rollercoaster, never a leak alert
if churn_ok; then
	ok "churn: verdict rollercoaster after $(elapsed) s"
else
	bad "churn: within 55 s of the start the MEM line should say rollercoaster"
	dump "$C_OUT" churn
fi
log "churn: $(last_line "$C_OUT" '^MEM ')"
leaks=$(grep -nE '^! .*([Ss]tairs|STAIRS|[Ll]eak|LEAK)' "$C_OUT")
if [ -z "$leaks" ]; then
	ok "churn: no leak alert in $(grep -c '^MEM ' "$C_OUT") refreshes"
else
	n=$(grep -c '^MEM ' "$C_OUT")
	bad "churn: leak alert shown (healthy churn must not be called a leak): $(head -n 1 <<<"$leaks") ($(wc -l <<<"$leaks") of $n refreshes)"
	grep -nE '^MEM ' "$C_OUT" | head -n 15 | sed 's/^/  | /'
fi
if grep -E '^MEM ' "$C_OUT" | grep -q stairs; then
	bad "churn: a MEM verdict said stairs: $(grep -E '^MEM ' "$C_OUT" | grep stairs | head -n 1)"
else
	ok "churn: no MEM verdict said stairs"
fi

# The RSS's rhythm (proc/rhythm on its falls): a leak never falls, so never
# swings; churn's sawtooth (a fall every ~11 s) needs 4 falls, ~44 s, so it
# may come after the checks above: when it has, its period is churn's.
if grep -q 'RSS swings' "$L_OUT"; then
	bad "leak: an RSS rhythm: $(grep -o 'RSS swings[^!]*' "$L_OUT" | tail -n 1)"
else
	ok "leak: no RSS rhythm"
fi
swing=$(grep -oE 'RSS swings every [0-9]+ s' "$C_OUT" | tail -n 1)
if [ -z "$swing" ]; then
	log "churn: no RSS rhythm yet after $(grep -c '^MEM ' "$C_OUT") refreshes"
elif [ "$(awk '{ print $4 }' <<<"$swing")" -ge 10 ] && [ "$(awk '{ print $4 }' <<<"$swing")" -le 12 ]; then
	ok "churn: $(grep -o 'RSS swings[^!]*' "$C_OUT" | tail -n 1)"
else
	bad "churn: the RSS should swing every 10-12 s: $swing"
fi

for p in "$LEAK" "$CHURN"; do
	check_target_healthy "$p" "target $p"
done
e2e_finish
