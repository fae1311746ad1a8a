#!/bin/bash
# test_demo — the `make demo` workload: its hot path is what a newcomer sees
# first. checksum is the hottest function (the parser thread's ~65%), the
# whole chain parse_file → parse_row → decode_field → checksum and the
# poller's busy_poll are shown, a caller's %Total is at least its callee's,
# and the header counts 7 threads. The parser and the poller (a 2 ms busy
# poll every 20 ms, by the clock) share the CPU: another process's load
# gives the poller more of it, so this runs alone (tests/run.sh SOLO). At
# 499 Hz and every row (-l 200): busy_poll spends most of its own time in
# clock_gettime, so its %Own row can sort far down, and at 99 Hz a 3 s run
# gave the poller too few samples once.
. "$(dirname "$0")/lib.sh"
need_stacktop
need_target demo

# ---- the make demo workload: its hot path is what a newcomer sees first -----------------
out8=$E2E_TMPDIR/demo.out
timeout 30 "$STACKTOP" -b -d 3 -n 1 -r 499 -l 200 -- "$TARGETS/demo" 30 >"$out8" 2>&1
check_cmp "$?" == 0 "demo: stacktop -b -d 3 -n 1 -- demo exits 0"
rows8=$(rows_of "$out8")
first=$(awk 'NR == 1 { print $5 }' <<<"$rows8")
[ "$first" = checksum ] && ok "demo: checksum is the hottest function" ||
	bad "demo: first row by %Own should be checksum, seen '$first'"
for f in decode_field parse_row parse_file run_parser busy_poll run_poller; do
	[ -n "$(field_of "$rows8" "$f" 2)" ] && ok "demo: $f shown" || bad "demo: $f missing"
done
check_cmp "$(field_of "$rows8" parse_row 2)" '>=' "$(field_of "$rows8" decode_field 2)" \
	"demo: parse_row %Total (caller) >= decode_field %Total"
grep -q ' 7 threads' "$out8" && ok "demo: 7 threads in the header (6 + the timer of 'demo 30')" ||
	bad "demo: header should count 7 threads: $(head -n 1 "$out8")"

e2e_finish
