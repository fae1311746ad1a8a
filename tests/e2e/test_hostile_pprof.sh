#!/bin/bash
# test_hostile_pprof — an amplifying profile for `stacktop report`: ~8 KB of
# gzip that inflates to 8 MB of protobuf, four million empty Sample
# messages (field 2, wire type 2, length 0: the bytes 0x12 0x00). The old
# code inflated it whole and unpacked every message (~480 MB resident)
# before finding it invalid. stacktop must refuse it with one sentence on
# stderr, exit 1, and stay small (peak RSS under 64 MiB).
. "$(dirname "$0")/lib.sh"
STACKTOP=${STACKTOP_BIN:-$STACKTOP}
need_stacktop
command -v perl >/dev/null || die "perl is not installed"
[ -x /usr/bin/time ] || die "/usr/bin/time is not installed (package time)"

F=$E2E_TMPDIR/bomb.pb.gz
perl -e 'print "\x12\x00" x 4000000' | gzip -9 >"$F" || die "cannot write $F"
size=$(stat -c %s "$F")
check_cmp "$size" '<' 16384 "the profile is small on disk (bytes)"

out=$E2E_TMPDIR/out
err=$E2E_TMPDIR/err
tv=$E2E_TMPDIR/time
/usr/bin/time -v -o "$tv" timeout -k 5 30 "$STACKTOP" report -b "$F" >"$out" 2>"$err"
rc=$?
check_cmp "$rc" == 1 "stacktop report -b exits 1 (not 0, not a crash or a kill)"
lines=$(wc -l <"$err")
if [ "$lines" = 1 ] && grep -Eq '^stacktop: .*\.$' "$err"; then
	ok "one sentence on stderr: $(cat "$err")"
else
	bad "stderr is not one sentence ($lines lines):"
	head -c 2000 "$err"
fi
if [ -s "$out" ]; then
	bad "something on stdout:"
	head -c 500 "$out"
else
	ok "nothing on stdout"
fi
# time -v measures the child, timeout, whose peak is its largest child's.
peak=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$tv")
check_cmp "$peak" '<' $((64 * 1024)) "peak RSS (KiB) under 64 MiB"
e2e_finish
