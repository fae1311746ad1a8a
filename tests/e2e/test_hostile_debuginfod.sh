#!/bin/bash
# test_hostile_debuginfod — a debuginfod server that answers the stripped
# cpuburn's build-id with a "3 GiB" debug file (its Content-Length) and
# streams zeros at 8 MiB/s for as long as the client reads
# (tests/targets/hostile_debuginfod.py), issue 28 item 9. stacktop caps a
# debug file at 2 GiB (DEBUGINFOD_MAXSIZE, and its progress callback), so
# the transfer is refused on its announced size: the header says the file
# was not found, the client cache stays (nearly) empty during and after a
# 6 s run, the server saw its stream cut early, and the run prints its
# refreshes and exits 0. Before the cap the
# transfer ran until the 30 s fetch timeout, the cache's temporary file
# growing ~8 MiB a second (5.8 GB from a fast server), left behind when
# stacktop exited.
# DEBUGINFOD_CACHE_PATH is a fresh directory of this test.
. "$(dirname "$0")/lib.sh"
need_stacktop
need_target cpuburn-stripped
command -v python3 >/dev/null || die "python3 is not installed"
export DEBUGINFOD_CACHE_PATH=$E2E_TMPDIR/cache
mkdir -p "$DEBUGINFOD_CACHE_PATH"

start_target 0.3 cpuburn-stripped 1
T=$BG_PID

SLOG=$E2E_TMPDIR/server.log
: >"$SLOG"
python3 "$ROOT/tests/targets/hostile_debuginfod.py" "$E2E_TMPDIR/port" "$SLOG" 8 \
	>"$E2E_TMPDIR/server.out" 2>&1 &
BG_PIDS+=("$!")
wait_until 20 test -s "$E2E_TMPDIR/port" ||
	die "the hostile server did not start: $(head -c 1000 "$E2E_TMPDIR/server.out")"
PORT=$(cat "$E2E_TMPDIR/port")

# cache_kib: what the client cache holds, in KiB.
cache_kib() { du -sk "$DEBUGINFOD_CACHE_PATH" 2>/dev/null | awk '{ print $1 + 0 }'; }

out=$E2E_TMPDIR/batch.out
timeout -k 3 40 "$STACKTOP" -b -d 1 -n 6 -l 5 --debuginfod="http://127.0.0.1:$PORT" -p "$T" \
	>"$out" 2>"$out.err" &
S=$!
BG_PIDS+=("$S")
peak=0
while alive "$S"; do
	k=$(cache_kib)
	[ "$k" -gt "$peak" ] && peak=$k
	sleep 0.2
done
wait "$S"
check_cmp "$?" == 0 "stacktop -b -n 6 --debuginfod=hostile exits 0"
check_cmp "$(grep -c '^stacktop ' "$out")" == 6 "all 6 refreshes printed"
# Refused on its size: "not found", not pending for the whole run.
last=$(awk '/^stacktop /{ buf = "" } { buf = buf $0 "\n" } END { printf "%s", buf }' "$out")
printf '%s\n' "$last" | grep -q 'debuginfod: 0 fetched, 1 not found' &&
	ok "the last refresh says the oversized file was not fetched ('0 fetched, 1 not found')" ||
	{ bad "the last header does not say '0 fetched, 1 not found'"; printf '%s\n' "$last" | head -3; }
# 2 MiB: room for what curl had buffered before the size was seen; the
# stream brings 8 MiB a second.
check_cmp "$peak" '<' 2048 "the client cache never held 2 MiB of the 3 GiB file (KiB, peak while running)"
check_cmp "$(cache_kib)" '<' 2048 "nor after the run (KiB)"
grep -q '^GET /buildid/[0-9a-f]*/debuginfo sent' "$SLOG" && ok "the server was asked for the debug file" ||
	bad "the server saw no request for the debug file: $(cat "$SLOG")"
sent=$(awk '{ s += $NF } END { print s + 0 }' "$SLOG")
# One second of the stream: room for a loaded machine to schedule the
# fetch thread and for the loopback socket's buffers (128 KiB seen here;
# before the cap it ran until the run ended, ~15 MiB in 6 s).
check_cmp "$sent" "<" $((8 << 20)) "the stream was cut early (bytes the server could send)"
check_target_healthy "$T" "after the hostile server" burns
e2e_finish
