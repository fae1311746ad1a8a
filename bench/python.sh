#!/bin/bash
# bench/python.sh — what reading a CPython thread's Python stack costs per
# sample, first sight and cached (bench/python.c says what each column is),
# for Debian's python3.11 and every pyenv CPython 3.8-3.13 found. Not a
# test: prints a table.
. "$(dirname "$0")/lib.sh"
bench_init stacktop-python
make -s -C "$ROOT" build/bench/python >/dev/null || exit 1
pys=()
[ -x /usr/bin/python3.11 ] && pys+=(/usr/bin/python3.11)
for d in /root/.pyenv/versions/3.{8,9,10,11,12,13}.*; do
	m=${d##*/}
	m=${m%.*}
	[ -x "$d/bin/python$m" ] && pys+=("$d/bin/python$m")
done
"$ROOT/build/bench/python" "$ROOT/tests/targets" "${pys[@]}"
