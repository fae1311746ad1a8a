#!/bin/bash
# test_debuginfod — --debuginfod names a stripped binary through a real
# debuginfod server, in the background; without the flag nothing ever
# connects, even with DEBUGINFOD_URLS set.
#
#   1. no flag, DEBUGINFOD_URLS pointing at a listener that records every
#      connection: the listener sees none, the hot function stays unnamed;
#   2. --debuginfod=URL of a listener that accepts and never answers: the
#      header says "debuginfod: 1 pending" and refreshes keep their pace
#      (the fetch does not block), and the listener saw the request;
#   3. --debuginfod with DEBUGINFOD_URLS of a local `debuginfod -F` serving
#      the unstripped twin (build/targets/cpuburn, same build-id): the
#      stripped target's leaf_a gets its name with its share (~60%).
# DEBUGINFOD_CACHE_PATH is a fresh directory of this test.
. "$(dirname "$0")/lib.sh"
need_stacktop
need_target cpuburn-stripped
command -v debuginfod >/dev/null || die "debuginfod is not installed (make deps-test)"
export DEBUGINFOD_CACHE_PATH=$E2E_TMPDIR/cache

# http_get PORT PATH: the body of a plain HTTP/1.0 GET (bash's /dev/tcp).
http_get() {
	local r
	exec 3<>"/dev/tcp/127.0.0.1/$1" || return 1
	printf 'GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' "$2" >&3
	r=$(timeout 5 cat <&3)
	exec 3<&-
	printf '%s\n' "$r"
}

# A listener on a free port that logs one line per connection and answers
# nothing (keeps each connection open). Port in $LPORT.
start_listener() {
	local log=$1
	: >"$log"
	start_bg perl -MIO::Socket::INET -e '
		my $s = IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => 0,
			Listen => 16, ReuseAddr => 1) or die "listen: $!";
		open(my $p, ">", $ARGV[1]) or die; print $p $s->sockport, "\n"; close $p;
		my @keep;
		while (my $c = $s->accept) {
			open(my $l, ">>", $ARGV[0]) or die; print $l "connection\n"; close $l;
			push @keep, $c;
		}' "$log" "$log.port"
	wait_until 5 test -s "$log.port" || die "the listener did not start"
	LPORT=$(cat "$log.port")
}

start_target 0.3 cpuburn-stripped 1
T=$BG_PID

# 1. No flag: no network, whatever DEBUGINFOD_URLS says.
start_listener "$E2E_TMPDIR/quiet.log"
out=$E2E_TMPDIR/noflag.out
DEBUGINFOD_URLS=http://127.0.0.1:$LPORT timeout 30 "$STACKTOP" -b -d 1 -n 2 -l 5 -p "$T" >"$out" 2>&1
check_cmp "$?" == 0 "without --debuginfod: stacktop -b exits 0"
check_cmp "$(wc -l <"$E2E_TMPDIR/quiet.log")" == 0 \
	"without --debuginfod: nothing connected to DEBUGINFOD_URLS"
grep -q 'leaf_a' "$out" && bad "without --debuginfod: leaf_a named (from where?)" ||
	ok "without --debuginfod: the stripped leaf stays unnamed"
grep -q 'debuginfod' "$out" && bad "without --debuginfod: the header mentions debuginfod" ||
	ok "without --debuginfod: the header says nothing of it"

# 2. A server that never answers: pending, and the refreshes keep coming.
start_listener "$E2E_TMPDIR/stuck.log"
out=$E2E_TMPDIR/stuck.out
t0=$(date +%s.%N)
timeout 30 "$STACKTOP" -b -d 1 -n 3 -l 5 --debuginfod="http://127.0.0.1:$LPORT" -p "$T" >"$out" 2>&1
rc=$?
t1=$(date +%s.%N)
check_cmp "$rc" == 0 "stuck server: stacktop -b exits 0"
check_cmp "$(grep -c '^stacktop ' "$out")" == 3 "stuck server: all 3 refreshes printed"
# a deadline, not a measurement: ~3 s, against the fetch's 30 s timeout if waited for
check_cmp "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" "<" 15 \
	"stuck server: 3 refreshes and exit in under 15 s (never waits for the fetch)"
grep -q 'debuginfod: 1 pending' "$out" && ok "stuck server: the header says 'debuginfod: 1 pending'" ||
	{ bad "stuck server: no 'debuginfod: 1 pending' in the header"; head -3 "$out"; }
check_cmp "$(wc -l <"$E2E_TMPDIR/stuck.log")" ">=" 1 "stuck server: --debuginfod did connect"

# 3. A real debuginfod serving the unstripped twin.
mkdir -p "$E2E_TMPDIR/srv"
cp "$TARGETS/cpuburn" "$E2E_TMPDIR/srv/"
buildid=$(readelf -n "$TARGETS/cpuburn-stripped" | sed -n 's/.*Build ID: //p')
[ -n "$buildid" ] || die "cpuburn-stripped has no build-id"
PORT=
for _ in 1 2 3 4 5; do
	p=$((20000 + RANDOM % 40000))
	start_bg debuginfod -F "$E2E_TMPDIR/srv" -p "$p" -d "$E2E_TMPDIR/db.sqlite"
	D=$BG_PID
	if wait_until 10 http_get "$p" /metrics >/dev/null 2>&1 && alive "$D"; then
		PORT=$p
		break
	fi
	kill "$D" 2>/dev/null
done
[ -n "$PORT" ] || die "debuginfod did not start on a free port"
# It scans in the background: wait until it serves the build-id.
served() { http_get "$PORT" /metrics | grep -Eq '^found_debuginfo_total\{[^}]*\} [1-9]'; }
wait_until 20 served || die "debuginfod did not index the unstripped cpuburn in 20 s"
ok "debuginfod serves build-id $buildid on port $PORT"

out=$E2E_TMPDIR/fetch.out
DEBUGINFOD_URLS=http://127.0.0.1:$PORT timeout 30 "$STACKTOP" -b -d 1 -n 4 -l 8 --debuginfod -p "$T" >"$out" 2>&1
check_cmp "$?" == 0 "--debuginfod: stacktop -b exits 0"
last=$(awk '/^stacktop /{ buf = "" } { buf = buf $0 "\n" } END { printf "%s", buf }' "$out")
share=$(printf '%s\n' "$last" | awk '/ leaf_a \(cpuburn\.c\) +cpuburn-stripped/ { print $1; exit }')
check_share "${share:-}" 60 "$(printf '%s\n' "$last" | samples_in /dev/stdin)" \
	"--debuginfod: the stripped target's leaf_a is named, with its share"
printf '%s\n' "$last" | grep -q 'debuginfod: 1 fetched' && ok "--debuginfod: the header says 'debuginfod: 1 fetched'" ||
	{ bad "--debuginfod: no 'debuginfod: 1 fetched'"; printf '%s\n' "$last" | head -3; }
[ -f "$DEBUGINFOD_CACHE_PATH/$buildid/debuginfo" ] && ok "--debuginfod: the file is in the client cache" ||
	bad "--debuginfod: nothing in $DEBUGINFOD_CACHE_PATH/$buildid"

# Bad input: one sentence, exit 2 (options) or 1.
out=$E2E_TMPDIR/bad.out
"$STACKTOP" -b -n 1 --debuginfod=ftp://x -p "$T" >"$out" 2>&1
check_cmp "$?" == 2 "--debuginfod=ftp://x is refused"
grep -q "invalid --debuginfod value" "$out" && ok "...with a sentence" || { bad "no sentence"; cat "$out"; }
DEBUGINFOD_URLS= timeout 10 "$STACKTOP" -b -n 1 --debuginfod -p "$T" >"$out" 2>&1
rc=$?
check_cmp "$rc" ">=" 1 "--debuginfod without servers fails ($rc)"
grep -q "needs a server" "$out" && ok "...saying it needs a server" || { bad "no sentence"; cat "$out"; }
check_target_healthy "$T" "after profiling" burns
e2e_finish
