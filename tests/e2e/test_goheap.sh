#!/usr/bin/env bash
# test_goheap — a Go program's own heap beside its RSS, read from its
# memory (runtime.gcController and runtime.memstats, found through its
# .symtab and DWARF; issue 23): for gocpu the MEM line and the memory view
# say "Go heap X of Y, RSS Z: W outside the heap"; for gocpu-stripped
# (-ldflags="-s -w": no symbols, no DWARF) the memory view says the heap
# is not available and why, and the MEM line has no heap. Skips without
# go (make deps-test installs golang-go).
. "$(dirname "$0")/lib.sh"

need_gocpu

start_target 0.5 gocpu
G=$BG_PID
# committed: gocpu keeps almost nothing on its heap (KiB to a few MiB)
heap_case gocpu "$G" Go 0.001 64 '.*collections'
kill "$G"

start_target 0.5 gocpu-stripped
S=$BG_PID
run_ok 30 "$E2E_TMPDIR/stripped.out" "gocpu-stripped: stacktop -b exits 0" -b -d 3 -n 1 -l 3 -p "$S"
grep -q 'MEM Go heap' "$E2E_TMPDIR/stripped.out" &&
	bad "gocpu-stripped: a heap on the MEM line without symbols" || ok "gocpu-stripped: no heap on the MEM line"
memory_view stripped "$S"
expect_in "$E2E_TMPDIR/stripped.mem" "gocpu-stripped: the memory view says why the heap is not read" \
	'^Go heap: not available \(stripped: no symbols\)'
kill "$S"
e2e_finish
