#!/bin/bash
# bench/inline.sh — the cost of inline expansion per frame and per sample,
# first sight of a pc vs cached. Not a test: prints a table (bench/inline.c
# says what each column is; bench/README.md shows a run).
#
#   bash bench/inline.sh [LIBC_PCS]     (default 2000 libc pcs)
. "$(dirname "$0")/lib.sh"
bench_init stacktop-inline
make -s -C "$ROOT" build/bench/inline targets >/dev/null || exit 1
"$ROOT/build/bench/inline" "$ROOT/build/targets/inltest" "${1:-2000}"
