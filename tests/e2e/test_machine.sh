#!/bin/bash
# test_machine — the whole machine (`stacktop -a`, issue 26) against four
# programs of ours among whatever else the box runs:
#
#   cpuburn 1 3600.$$   one steady worker in leaf_a/b/c (its seconds make a
#                       command line no other process has, for the filter)
#   floor               a poller holding a busy floor in busy_poll
#   stuck               a thread in D (vfork) and a zombie child it never reaps
#   leak 4              RSS climbing 4 MiB/s (stairs)
#
#   batch   `-a -b -d 1`, read as it is written until the last whole refresh
#           says it all (>= 10 s of history: the verdicts' MACHINE_MIN_S):
#           the rows of our pids (first field) carry cpuburn's leaf as its
#           HOTTEST and no busy floor, floor's "busy floor … busy_poll",
#           the zombie's parent, stuck's D and zombie child, leak's stairs;
#           the alerts lines name floor's busy floor and the zombie with its
#           parent; "Top functions (whole machine):" follows with a Process
#           column;
#   two     `-a -b -n 2` beside the batch (no wall time of its own): two
#           refreshes at 1 s, the floor decided on fine steps (0.2 s):
#           floor's row and the alerts "busy floor N% in busy_poll",
#           cpuburn's leaf and no busy floor, the zombie with its parent;
#   TUI     200x50: the process table; / and the cpuburn's command line,
#           Enter: one row left, Enter narrows every view to it (the header
#           says the pid, the top view leaf_a); Esc: the table (filtered),
#           Esc: every process; 2 then 0: the table again; at 80x24 no line
#           wider than 80, the header and the column header shown;
#   record  `record -a`: folded lines "cpuburn (PID);…", pprof labels pid;
#   errors  unprivileged -a (when perf_event_paranoid > 0): exit 1 and one
#           sentence "… needs root or CAP_PERFMON …"; -a -p and -a -w exit 2.
#
# Shares are not compared: the verdicts are the product of each process's
# own history, so the test runs beside others. Every process started here
# (and its children) is killed on exit.
. "$(dirname "$0")/lib.sh"
need_stacktop
for t in cpuburn floor stuck leak; do need_target "$t"; done
need_tmux

trap e2e_cleanup_trees EXIT

MARK=3600.$$
start_target 0.1 cpuburn 1 "$MARK"
CB=$BG_PID
start_target 0.1 floor
FL=$BG_PID
start_target 0.1 stuck
SK=$BG_PID
start_target 0.1 leak 4
LK=$BG_PID

# zombie_of PID: PID's child in state Z (stuck forks it at start).
zombie_of() {
	local c
	for c in $(pgrep -P "$1"); do
		[ "$(proc_state "$c")" = Z ] && printf '%s\n' "$c" && return 0
	done
	return 1
}
wait_until 10 zombie_of "$SK" >/dev/null || die "stuck ($SK) has no zombie child"
ZB=$(zombie_of "$SK")
log "cpuburn $CB, floor $FL, stuck $SK (zombie $ZB), leak $LK"

# ==== batch =====================================================================
OUT=$E2E_TMPDIR/batch.out
LAST=$E2E_TMPDIR/last
BATCH_OUT=$E2E_TMPDIR/batch.live
"$STACKTOP" -a -b -d 1 -n 90 >"$BATCH_OUT" 2>"$BATCH_OUT.err" &
ST=$!
BG_PIDS+=("$ST")
QUICK=$E2E_TMPDIR/two.out
timeout 60 "$STACKTOP" -a -b -n 2 >"$QUICK" 2>"$QUICK.err" &
QK=$!
BG_PIDS+=("$QK")

# last_of FILE: its last whole refresh (from its "stacktop  whole machine"
# header to the blank line after the top table; one being written is left
# out). last_refresh: the batch output's, into $LAST.
last_of() {
	awk '/^stacktop  whole machine/ { buf = ""; on = 1; own = 0 }
	     on { buf = buf $0 "\n" }
	     on && /^ *%Own/ { own = 1; next }
	     on && own && /^$/ { last = buf; on = 0 }
	     END { printf "%s", last }' "$1"
}
last_refresh() {
	cp "$BATCH_OUT" "$OUT"
	last_of "$OUT" >"$LAST"
}
# table [FILE]: the process table of a refresh ($LAST) (its rows); alerts:
# its alerts lines; row_pid PID [FILE]: PID's row.
table() { awk '/^ *PID USER/ { on = 1; next } on && /^$/ { exit } on' "${1:-$LAST}"; }
alerts() { awk '/^ *PID USER/ { exit } /^!/' "${1:-$LAST}" | tr '\n' ' '; }
row_pid() { table "${2:-}" | awk -v p="$1" '$1 == p { print; exit }'; }

# The checks on the last refresh, each "ok|bad MESSAGE" on a line.
batch_checks() {
	local r a
	r=$(row_pid "$CB")
	if [[ $r =~ leaf_[abc] ]] && [[ $r != *"busy floor"* ]]; then
		echo "ok cpuburn ($CB): HOTTEST ${BASH_REMATCH[0]}, no busy floor"
	else
		echo "bad cpuburn ($CB): want HOTTEST leaf_a/b/c and no busy floor: '$r'"
	fi
	r=$(row_pid "$FL")
	[[ $r =~ busy\ floor\ [0-9]+%\ in\ busy_poll ]] &&
		echo "ok floor ($FL): '${BASH_REMATCH[0]}'" ||
		echo "bad floor ($FL): want 'busy floor N% in busy_poll': '$r'"
	r=$(row_pid "$ZB")
	[[ $r == *"zombie (parent $SK stuck)"* ]] &&
		echo "ok zombie ($ZB): zombie (parent $SK stuck)" ||
		echo "bad zombie ($ZB): want 'zombie (parent $SK stuck)': '$r'"
	r=$(row_pid "$SK")
	[[ $r =~ stuck\ D\ [0-9ms]+ ]] && [[ $r == *"1 zombie child"* ]] &&
		echo "ok stuck ($SK): '${BASH_REMATCH[0]}' and its zombie child" ||
		echo "bad stuck ($SK): want 'stuck D Ns' and '1 zombie child': '$r'"
	r=$(row_pid "$LK")
	[[ $r == *stairs* ]] && echo "ok leak ($LK): stairs" || echo "bad leak ($LK): want stairs: '$r'"
	a=$(alerts)
	[[ $a =~ busy\ floor:\ floor\ \($FL\) ]] &&
		echo "ok alerts: '${BASH_REMATCH[0]}'" ||
		echo "bad alerts: want 'busy floor: floor ($FL)': '$a'"
	[[ $a == *"zombie: $ZB defunct, parent stuck ($SK)"* ]] &&
		echo "ok alerts: zombie $ZB with its parent stuck ($SK)" ||
		echo "bad alerts: want 'zombie: $ZB defunct, parent stuck ($SK)': '$a'"
	if grep -q '^Top functions (whole machine):$' "$LAST" &&
		grep -Eq '^ *%Own .*Process .*Function' "$LAST"; then
		echo "ok 'Top functions (whole machine):' with a Process column"
	else
		echo "bad no 'Top functions (whole machine):' and Process column after the table"
	fi
}
all_hold() {
	last_refresh
	[ -s "$LAST" ] && ! batch_checks | grep -q '^bad'
}
# The verdicts need 10 s of history; 80 s for a loaded box. A refresh a
# second: looked at once a second (the output grows ~12 KiB a refresh).
end=$(($(date +%s) + 80))
while [ "$(date +%s)" -lt "$end" ] && alive "$ST" && ! all_hold; do
	sleep 1
done
last_refresh
kill -TERM "$ST" 2>/dev/null
[ -s "$LAST" ] || die "no whole refresh in the batch output: $(head -c 600 "$OUT")"
log "refreshes: $(grep -c '^stacktop  whole machine' "$OUT")"
while read -r verdict msg; do
	if [ "$verdict" = ok ]; then ok "$msg"; else bad "$msg"; fi
done < <(batch_checks)
if [ "$E2E_FAILS" -gt 0 ]; then
	log "---- last refresh ----"
	cut -c1-200 "$LAST" | sed 's/^/  | /'
fi

# ==== two refreshes =============================================================
f0=$E2E_FAILS
wait "$QK"
check_cmp $? == 0 "-a -b -n 2 exits 0"
QLAST=$E2E_TMPDIR/two.last
last_of "$QUICK" >"$QLAST"
check_cmp "$(grep -c '^stacktop  whole machine' "$QUICK")" == 2 "-a -b -n 2: two refreshes"
r=$(row_pid "$FL" "$QLAST")
[[ $r =~ busy\ floor\ [0-9]+%\ in\ busy_poll ]] &&
	ok "-n 2: floor ($FL) '${BASH_REMATCH[0]}'" ||
	bad "-n 2: floor ($FL): want 'busy floor N% in busy_poll': '$r'"
a=$(alerts "$QLAST")
[[ $a =~ busy\ floor:\ floor\ \($FL\)\ [0-9]+%\ in\ busy_poll ]] &&
	ok "-n 2: alerts '${BASH_REMATCH[0]}'" ||
	bad "-n 2: alerts: want 'busy floor: floor ($FL) N% in busy_poll': '$a'"
r=$(row_pid "$CB" "$QLAST")
if [[ $r =~ leaf_[abc] ]] && [[ $r != *"busy floor"* ]]; then
	ok "-n 2: cpuburn ($CB): HOTTEST ${BASH_REMATCH[0]}, no busy floor"
else
	bad "-n 2: cpuburn ($CB): want HOTTEST leaf_a/b/c and no busy floor: '$r'"
fi
r=$(row_pid "$ZB" "$QLAST")
[[ $r == *"zombie (parent $SK stuck)"* ]] && ok "-n 2: zombie ($ZB): zombie (parent $SK stuck)" ||
	bad "-n 2: zombie ($ZB): want 'zombie (parent $SK stuck)': '$r'"
if [ "$E2E_FAILS" -gt "$f0" ]; then
	log "---- -n 2, last refresh ----"
	cut -c1-200 "$QLAST" | sed 's/^/  | /'
fi

# ==== TUI =======================================================================
# tm_row PID: the row of PID on the screen (first field).
tm_row() { tm_screen | awk -v p="$1" '$1 == p { print; exit }'; }
tm_rows_of() { [ -n "$(tm_row "$1")" ]; }

mkdir -p "$E2E_TMPDIR/w"
tm_start 200 50 "$STACKTOP" -a --output-dir "$E2E_TMPDIR/w"
tm_wait 15 'PID USER +CPU%' || { tm_dump start; die "no process table"; }
ok "the process table shows"
wait_until 10 tm_rows_of "$FL" || bad_dump "rows" "floor ($FL) not in the table"

tm_keys /
tm_keys -l "$MARK"
if tm_wait 5 "filter: $MARK.{1,3}  1 of [0-9]+"; then
	ok "/ $MARK: the filter is said with its count"
else
	bad_dump filter "/ $MARK: no 'filter: $MARK  1 of N' on the column header line"
fi
tm_keys Enter
tm_wait_gone 5 "filter: $MARK[^ ]" || bad_dump "filter Enter" "Enter: the filter is still being typed"
scr=$E2E_TMPDIR/screen
tm_screen >"$scr"
pids=$(awk '/PID USER/ { on = 1; next } on && $1 ~ /^[0-9]+$/ { print $1 }' "$scr" | tr '\n' ' ')
[ "$pids" = "$CB " ] && ok "filtered: only cpuburn's row ($CB)" ||
	bad_dump filtered "filtered: want only $CB, the rows are '$pids'"
tm_keys Enter
if tm_wait 8 "cpuburn $CB" && tm_wait 8 'leaf_a' && tm_match '%Own'; then
	ok "Enter: narrowed to cpuburn $CB, the top view shows leaf_a"
else
	bad_dump narrowed "Enter: want the header 'cpuburn $CB' and leaf_a in the top view"
fi
# w, narrowed: the profile of that process alone, named for it, its stacks
# without the process's root frame (as -p would have written them).
tm_keys w
if tm_wait 5 "wrote .*stacktop-$CB-.*\(this process only\)"; then
	wf=$(ls "$E2E_TMPDIR/w"/stacktop-"$CB"-*.pb.gz 2>/dev/null | head -n 1)
	"$STACKTOP" report -b "$wf" >"$E2E_TMPDIR/w.rep" 2>&1
	if grep -q 'leaf_a' "$E2E_TMPDIR/w.rep" && ! grep -q '(pid\|[a-z] ([0-9]*)' "$E2E_TMPDIR/w.rep"; then
		ok "w narrowed: $(basename "$wf") holds cpuburn's leaf_a and no process root"
	else
		bad "w narrowed: $wf: want leaf_a and no 'comm (pid)' rows: $(head -n 12 "$E2E_TMPDIR/w.rep")"
	fi
else
	bad_dump "w" "w narrowed: no 'wrote …stacktop-$CB-… (this process only)'"
fi
tm_keys Escape
if tm_wait 5 'PID USER +CPU%' && tm_match "filter: $MARK"; then
	ok "Esc: back to the table, the filter kept"
else
	bad_dump "esc" "Esc: want the process table with the filter"
fi
# tm_nrows: the process rows on the screen.
tm_nrows() { tm_screen | awk '/PID USER/ { on = 1; next } on && $1 ~ /^[0-9]+$/ { n++ } END { print n + 0 }'; }
many_rows() { [ "$(tm_nrows)" -gt 5 ] && tm_nomatch 'filter:'; }
tm_keys Escape
if wait_until 5 many_rows; then
	ok "Esc again: the filter gone, every process ($(tm_nrows) rows on screen)"
else
	bad_dump "esc2" "Esc again: want every process back"
fi
tm_keys 2
tm_wait 5 'all 100' || bad_dump icicle "key 2: no icicle view"
tm_keys 0
tm_wait 5 'PID USER +CPU%' && ok "0 from the icicle: the process table" ||
	bad_dump "key 0" "key 0 from the icicle: no process table"

tm_resize 80 24
sleep 1.5 # a refresh at the new size
tm_screen >"$scr"
# in characters, not bytes (block sparklines, arrows, the ellipsis)
wide=$(LC_ALL=C.UTF-8 bash -c 'n=0; while IFS= read -r l; do [ ${#l} -gt 80 ] && n=$((n + 1)); done; echo $n' <"$scr")
check_cmp "$wide" == 0 "80x24: no line wider than 80"
grep -q 'whole machine' "$scr" && grep -Eq 'PID USER +CPU%' "$scr" &&
	ok "80x24: the header and the column header shown" ||
	bad_dump "80x24" "80x24: want the header and the column header"
tm_stop

# ==== record ====================================================================
F=$E2E_TMPDIR/m.folded
run_ok 30 "$E2E_TMPDIR/rec.out" "record -a -d 3 -o m.folded exits 0" record -a -d 3 -o "$F"
log "record: $(tail -n 1 "$E2E_TMPDIR/rec.out.err")"
n=$(grep -c "^cpuburn ($CB);" "$F" 2>/dev/null)
check_cmp "${n:-0}" '>' 0 "folded: lines start with 'cpuburn ($CB);'"
grep -q "^floor ($FL);" "$F" && ok "folded: floor ($FL) has its root frame" ||
	bad "folded: no line starts with 'floor ($FL);'"
PB=$E2E_TMPDIR/m.pb.gz
run_ok 30 "$E2E_TMPDIR/recpb.out" "record -a -d 3 -o m.pb.gz exits 0" record -a -d 3 -o "$PB"
log "record: $(tail -n 1 "$E2E_TMPDIR/recpb.out.err")"
if command -v go >/dev/null; then
	G=$E2E_TMPDIR/go
	# -raw: every sample with its labels (-tags lists the busiest values only)
	raw=$(HOME=$G GOCACHE=$G/cache GOPATH=$G/path GOFLAGS= GOTOOLCHAIN=local \
		go tool pprof -symbolize=none -raw "$PB" 2>&1)
	grep -q "pid:\[$CB\]" <<<"$raw" && grep -q "process:\[cpuburn\]" <<<"$raw" &&
		ok "pprof: samples labelled pid $CB and process cpuburn" ||
		bad "pprof: no sample labelled pid:[$CB] process:[cpuburn] in go tool pprof -raw: $(head -c 600 <<<"$raw")"
else
	log "SKIP pprof labels: no go (go tool pprof -tags)"
fi

# ==== errors ====================================================================
para=$(cat /proc/sys/kernel/perf_event_paranoid)
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
	log "SKIP unprivileged -a: not root or no setpriv"
elif [ "$para" -gt 0 ]; then
	timeout 20 setpriv --reuid=65534 --regid=65534 --clear-groups "$STACKTOP" -a -b -n 1 \
		>"$E2E_TMPDIR/np.out" 2>"$E2E_TMPDIR/np.err"
	check_cmp $? == 1 "unprivileged -a exits 1 (paranoid $para)"
	check_cmp "$(wc -l <"$E2E_TMPDIR/np.err")" == 1 "unprivileged -a: one line on stderr"
	grep -q 'needs root or CAP_PERFMON' "$E2E_TMPDIR/np.err" &&
		ok "unprivileged -a: '$(cat "$E2E_TMPDIR/np.err")'" ||
		bad "unprivileged -a: want 'needs root or CAP_PERFMON': '$(cat "$E2E_TMPDIR/np.err")'"
else
	timeout 30 setpriv --reuid=65534 --regid=65534 --clear-groups "$STACKTOP" -a -b -n 1 \
		>"$E2E_TMPDIR/np.out" 2>"$E2E_TMPDIR/np.err"
	check_cmp $? == 0 "unprivileged -a runs (paranoid $para allows it)"
fi
timeout 10 "$STACKTOP" -a -p "$CB" -b -n 1 >/dev/null 2>"$E2E_TMPDIR/ap.err"
check_cmp $? == 2 "-a -p PID exits 2"
grep -q 'give it without -p PID' "$E2E_TMPDIR/ap.err" && ok "-a -p: '$(cat "$E2E_TMPDIR/ap.err")'" ||
	bad "-a -p: want 'give it without -p PID': '$(cat "$E2E_TMPDIR/ap.err")'"
timeout 10 "$STACKTOP" -a -w -b -n 1 >/dev/null 2>"$E2E_TMPDIR/aw.err"
check_cmp $? == 2 "-a -w exits 2"
grep -q 'wall mode' "$E2E_TMPDIR/aw.err" && ok "-a -w: '$(cat "$E2E_TMPDIR/aw.err")'" ||
	bad "-a -w: want a sentence on wall mode: '$(cat "$E2E_TMPDIR/aw.err")'"

e2e_finish
