#!/bin/bash
# test_hostile_munmap — one munmap over hundreds of thousands of regions the
# memory tracer recorded (issue 28 item 6). hostile_munmap, on SIGUSR1,
# maps a PROT_NONE reservation, punches 200,000 one-page holes in it from
# the bottom up (each refilled at once, so the kernel keeps one mapping:
# vm.max_map_count is no limit), then unmaps the reservation with one call.
# The tracer sees every munmap (never sampled, no stack copied), so it holds
# ~200,000-250,000 regions before the last call.
# Before memhold kept regions in chunks, that last munmap moved the rest of
# one sorted array once per region removed: measured here, pre-fix stacktop
# was still stuck in it 150 s later (killed by its timeout), refreshes
# stopped; now `-b -d 1` prints its next refreshes a second apart, as it
# would without the target. The bound, 3 refreshes in the 30 s after the
# target's munmap, is room for a loaded machine and 5x below the quadratic
# figure, not a benchmark.
# Needs root (tracing mmap: CAP_PERFMON and tracefs).
. "$(dirname "$0")/lib.sh"
need_stacktop
need_target hostile_munmap
[ "$(id -u)" = 0 ] || { log "SKIP: tracing mmap needs root (CAP_PERFMON, tracefs)"; e2e_finish; }

TOUT=$E2E_TMPDIR/target.out
"$TARGETS/hostile_munmap" 200000 >"$TOUT" 2>&1 &
T=$!
BG_PIDS+=("$T")
wait_until 5 grep -q ready "$TOUT" || die "hostile_munmap did not start: $(head -c 300 "$TOUT")"

# Small stack copies: the mmap records of the refills fit the rings better
# (what is lost only leaves gaps; the munmap records copy no stack). As
# many refreshes as it takes: the test ends it.
out=$E2E_TMPDIR/memory.out
"$STACKTOP" -b -d 1 -n 1000 --view memory --stack-size 512 -p "$T" >"$out" 2>"$out.err" &
S=$!
BG_PIDS+=("$S")
# refreshes: how many stacktop has printed so far.
refreshes() { grep -c '^stacktop' "$out"; }
wait_until 15 grep -q '^stacktop' "$out" || die "no first refresh from stacktop: $(head -c 300 "$out.err")"
# The tracer runs from the first refresh on: now the regions.
kill -USR1 "$T"
wait_until 90 grep -q '^done' "$TOUT" || die "hostile_munmap did not finish its holes: $(cat "$TOUT")"
n0=$(refreshes)
log "target: $(grep '^done' "$TOUT") holes punched, then one munmap of the reservation (refresh $n0)"
alive "$S" || die "stacktop ended: $(tail -c 300 "$out.err")"

# Three more refreshes, the munmap's among them, within 30 s.
if wait_until 30 eval '[ "$(refreshes)" -ge $((n0 + 3)) ]'; then
	ok "stacktop prints 3 more refreshes within 30 s of the munmap over every region"
else
	bad "stacktop printed $(($(refreshes) - n0)) refreshes in the 30 s after the munmap over every region (quadratic?)"
fi
kill -TERM "$S"
wait_until 10 gone "$S" && ok "SIGTERM ends it" || { bad "stacktop still running 10 s after SIGTERM"; kill -KILL "$S"; }
last=$E2E_TMPDIR/memory.last
awk '/^stacktop/ { b = "" } { b = b $0 "\n" } END { printf "%s", b }' "$out" >"$last"
grep -q 'CODE PATHS holding it' "$last" && ok "the last refresh has the code paths" ||
	{ bad "no code paths in the last refresh"; head -c 2000 "$last"; }
# The reservation (~1.6 GiB of address space) is gone: reserve_space holds no MiB or GiB.
if grep -E '^ *[0-9.]+ (MiB|GiB) .*reserve_space' "$last"; then
	bad "reserve_space still holds its reservation after the munmap"
else
	ok "the reservation unmapped is not held by reserve_space"
fi
check_target_healthy "$T" "after the munmap"
e2e_finish
