#!/usr/bin/env bash
# test_go — Go binaries named, lined and unwound from Go's own tables
# (issue 23): gocpu built as production builds are (go build
# -ldflags="-s -w": no .symtab, no DWARF, and Go emits no .eh_frame) and
# as is. Its busy goroutine runs main.outer -> main.middle -> main.leafA |
# leafB | leafC -> main.spin for 6 : 3 : 1 rounds of one loop, so the
# leaves' totals are 60/30/10% of main.outer's whatever the load; shares
# are checked against that truth with tolerances from the sample count.
# Wall mode: Go's parked Ms (stopm, notesleep, futex) and its network
# poller (netpoll, epoll) are idle, not lock; a thread stopped as Go's
# signal handler starts is unwound into the goroutine it interrupted.
# Skips when go is not installed (make deps-test installs golang-go).
. "$(dirname "$0")/lib.sh"

need_gocpu

# total ROWS FUNC: FUNC's %Total (0 when it has no row).
total() {
	local t
	t=$(field_of "$1" "$2" 2)
	echo "${t:-0}"
}

# cpu_case NAME: stacktop -b on build/targets/NAME; names, shares, unwinding.
cpu_case() {
	local name=$1 out=$E2E_TMPDIR/$1.out rows n outer hex f want seen unw
	start_target 0.5 "$name"
	run_ok 40 "$out" "$name: stacktop -b exits 0" -b -r 499 -d 3 -n 1 -l 60 -p "$BG_PID"
	kill "$BG_PID" 2>/dev/null
	rows=$(rows_of "$out")
	n=$(samples_in "$out")
	# No row is an address: every hot pc has its Go name.
	hex=$(awk -v m="$name+0x" '$1 + 0 >= 2 && index($5, m) == 1 { print $5 }' <<<"$rows")
	[ -z "$hex" ] && ok "$name: no hot row is an address" ||
		bad "$name: rows without a name: $(echo $hex)"
	outer=$(total "$rows" main.outer)
	check_share_min "$outer" 90 "$n" "$name: main.outer holds the busy goroutine's samples"
	# The leaves' totals, as shares of main.outer's: spin has no frame,
	# so a frame-pointer walk would hand its leaf's time to main.middle.
	local m
	m=$(awk -v o="$outer" -v n="$n" 'BEGIN { printf "%d", o * n / 100 }')
	for f in leafA:60 leafB:30 leafC:10; do
		want=${f#*:}
		seen=$(awk -v t="$(total "$rows" "main.${f%:*}")" -v o="$outer" \
			'BEGIN { printf "%.1f", (o > 0 ? 100 * t / o : 0) }')
		check_share "$seen" "$want" "$m" "$name: main.${f%:*} total (% of main.outer)"
	done
	# (.symtab calls the assembly function runtime.goexit.abi0)
	check_share_min "$(awk -v a="$(total "$rows" runtime.goexit)" \
		-v b="$(total "$rows" runtime.goexit.abi0)" 'BEGIN { print a + b }')" 90 "$n" \
		"$name: stacks end at runtime.goexit (where Go's goroutines start)"
	# file:line from the pclntab (stripped) or DWARF: the leaf row names its file.
	grep -Eq ' main\.leafA \(gocpu\.go' "$out" && ok "$name: main.leafA shows gocpu.go" ||
		bad "$name: main.leafA has no file: $(grep 'main.leafA' "$out")"
	# Go's inline tree: mix, inlined into spin, is a frame of its own.
	check_share_min "$(awk '$5 == "main.mix" && $6 == "(inline)" { print $2; exit }' <<<"$rows")" \
		20 "$n" "$name: main.mix (inline) seen in spin"
	unw=$(grep -oE 'unwind ok [0-9.]+%' "$out" | tail -n 1 | grep -oE '[0-9.]+')
	check_cmp "${unw:-0}" '>=' 80 "$name: unwind ok"
}

cpu_case gocpu-stripped
cpu_case gocpu

# Wall mode: every thread, running or not. The Ms Go parks wait in
# futexsleep under notesleep/stopm, its poller in epoll_wait under
# netpoll: idle. Nothing of the target contends for a lock.
start_target 0.5 gocpu-stripped
out=$E2E_TMPDIR/wall.out
run_ok 40 "$out" "wall: stacktop -w -b exits 0" -w -b -d 3 -n 1 -l 60 -p "$BG_PID"
kill "$BG_PID" 2>/dev/null
check_cmp "$(split_pct "$out" lock)" '<=' 5 "wall: Go's parked threads are not lock"
check_cmp "$(split_pct "$out" idle)" '>=' 20 "wall: Go's parked threads are idle"
kind=$(awk '$6 == "runtime.futex" { print $5; exit }' <<<"$(rows_of "$out")")
[ "$kind" = idle ] && ok "wall: runtime.futex is idle" ||
	bad "wall: runtime.futex is '$kind', expected idle: $(grep 'wall time' "$out")"
# A stop that comes as Go's signal handler starts (sysmon's SIGURG every
# 10 ms to the busy goroutine: 1-6% of the samples) has the goroutine's
# registers in the ucontext and its stack elsewhere: copied at the stop,
# those samples unwind to runtime.goexit like the others (before, each
# ended at the interrupted main.spin, truncated).
unw=$(grep -oE 'unwind ok [0-9.]+%' "$out" | tail -n 1 | grep -oE '[0-9.]+')
check_cmp "${unw:-0}" '>=' 99 "wall: unwind ok (samples in Go's signal handler too)"

# CPU mode, gosig: its main thread is flooded with SIGURG, so samples land
# in Go's handler on the signal stack (a few percent), where perf's stack
# copy ends before the goroutine's frames. Past the signal frame the
# kernel's frame-pointer walk at the sample continues, where each frame
# checks out: those samples reach runtime.goexit (before: none, every one
# ended at the interrupted pc), and never with a frame skipped: main.burn
# under all 21 main.deep calls, main.deep under 1 to 21.
start_target 0.5 gosig
out=$E2E_TMPDIR/gosig.folded
run_ok 40 "$out.log" "gosig: stacktop record exits 0" record -r 999 -d 2 -o "$out" -p "$BG_PID"
kill "$BG_PID" 2>/dev/null
read -r hn hc hbad < <(awk '!/^#/ && /;runtime\.sigreturn;/ {
	n = $NF; h += n
	if ($1 !~ /^runtime\.goexit;runtime\.main;main\.main;/) next
	c += n
	s = $1; sub(/;runtime\.sigreturn;.*/, "", s); sub(/^runtime\.goexit;runtime\.main;main\.main;/, "", s)
	s = s ";"; d = gsub(/main\.deep;/, "", s)
	if (!(d == 21 && (s == "main.burn;" || s == "main.burn;main.tail;") || d >= 1 && s == "")) bad += n
} END { print h + 0, c + 0, bad + 0 }' "$out")
if [ "$hn" -gt 0 ]; then
	check_share_min "$(awk -v c="$hc" -v h="$hn" 'BEGIN { printf "%.1f", 100 * c / h }')" 80 \
		"$hn" "gosig: samples in Go's signal handler unwound to runtime.goexit"
else
	log "gosig: no sample in Go's signal handler (a loaded machine?)"
fi
check_cmp "$hbad" == 0 "gosig: no frame skipped past the signal frame"

e2e_finish
