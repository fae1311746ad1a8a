#!/bin/bash
# test_hostile_truncated — a target truncates the file its code runs from
# (hostile_truncate: a copy of itself mapped whole, cut to the end of its
# code segment, then new code run). stacktop used to keep every module as a
# live mapping of its file (ELF_C_READ_MMAP): the first CFI lookup for the
# new pcs read a page past the new end and stacktop died of SIGBUS (exit
# 135), in CPU and wall mode alike. Modules are now in-memory copies
# (elfimage): stacktop must exit 0 with a profile, and still name the new
# function from the copy it made before the truncation. A stacktop started
# after the truncation finds no section table: a module without names, no
# crash.
. "$(dirname "$0")/lib.sh"
need_stacktop
need_target hostile_truncate

# start_truncator N: a fresh target (its own copy in $E2E_TMPDIR/tN) that
# truncates after 2 s; pid in $T, its output in $TOUT.
start_truncator() {
	local d=$E2E_TMPDIR/t$1
	mkdir -p "$d"
	TOUT=$d/out
	"$TARGETS/hostile_truncate" "$d" 2 >"$TOUT" 2>&1 &
	T=$!
	BG_PIDS+=("$T")
	wait_until 5 grep -q ready "$TOUT" || die "hostile_truncate did not start"
}

# run_through MODE ARGS...: stacktop attached before the truncation and
# running through it.
run_through() {
	local mode=$1 out=$E2E_TMPDIR/$1.out rc
	shift
	start_truncator "$mode"
	timeout -k 5 40 "$STACKTOP" -b -d 1 -n 5 "$@" -p "$T" >"$out" 2>&1
	rc=$?
	grep -q truncated "$TOUT" || bad "$mode: the target did not truncate its file while stacktop ran"
	check_cmp "$rc" == 0 "$mode: stacktop -b $* exits 0 through the truncation (135 is SIGBUS)"
	grep -q 'hostile_spin_b' "$out" && ok "$mode: the code run after the truncation is named" ||
		{ bad "$mode: hostile_spin_b not in the table"; head -c 3000 "$out"; }
	alive "$T" && ok "$mode: the target still runs" || bad "$mode: the target died"
	kill "$T" 2>/dev/null
}

run_through cpu
run_through wall -w

# Started after the truncation: the file has no section table any more.
start_truncator late
wait_until 6 grep -q truncated "$TOUT" || die "hostile_truncate did not truncate"
out=$E2E_TMPDIR/late.out
timeout -k 5 30 "$STACKTOP" -b -d 1 -n 2 -p "$T" >"$out" 2>&1
rc=$?
check_cmp "$rc" == 0 "stacktop started after the truncation exits 0"
grep -q 'hostile-lib.so' "$out" && ok "the truncated module is in the table (unnamed)" ||
	{ bad "hostile-lib.so not in the table"; head -c 3000 "$out"; }
e2e_finish
