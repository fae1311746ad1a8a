#!/bin/bash
# test_languages — stacktop on native code from other compilers: C++
# (demangled template and namespace names, no frame pointers), Go (its own
# runtime and symbol names) and, when rustc is installed, Rust (demangled,
# hash dropped). Each program has a known hot path; the batch table must show
# its leaf on top (the first row not marked "(inline)": what the compiler
# inlined into it is shown apart) and its callers with %Total ~100. The sources are in
# tests/targets/lang/ and are built here, into the test's temp dir.
. "$(dirname "$0")/lib.sh"
need_stacktop
LANG_SRC=$(cd "$(dirname "$0")/../targets/lang" && pwd)

# run_case NAME BINARY LEAF CALLER...: profile BINARY for 4 s and check rows.
run_case() {
	local name=$1 bin=$2 leaf=$3
	shift 3
	start_bg "$bin"
	local pid=$BG_PID
	sleep 0.5
	if ! alive "$pid"; then
		bad "$name: target did not start"
		return
	fi
	local out=$E2E_TMPDIR/$name.out
	timeout 30 "$STACKTOP" -b -d 2 -n 1 -l 20 -p "$pid" >"$out" 2>&1
	check_cmp "$?" == 0 "$name: stacktop -b exits 0"
	local first
	# The hottest function the code is in: functions the compiler inlined
	# into it (Rust's u64::wrapping_add, ...) are rows of their own, marked
	# "(inline)", and may come first.
	first=$(awk '/%Own/ { on = 1; next } on && !/ \(inline\)/ { sub(/^ *[0-9.]+ +[0-9.]+ +[^ ]+ +[^ ]+ +/, ""); print; exit }' "$out")
	case "$first" in
	"$leaf "* | "$leaf") ok "$name: hottest row (not inlined) is $leaf" ;;
	*) bad "$name: hottest row (not inlined) is '$first', expected $leaf"; cat "$out" ;;
	esac
	local f tot
	for f in "$@"; do
		tot=$(awk -v f="$f" '/%Own/ { on = 1; next } on && index($0, "  " f " ") { print $2; exit }' "$out")
		if [ -z "$tot" ]; then
			bad "$name: caller $f missing (the stack did not unwind through it)"
			continue
		fi
		check_share_min "$tot" 90 "$(samples_in "$out")" "$name: caller $f %Total"
	done
	grep -q 'unwind ok 100.0%' "$out" && ok "$name: every stack unwound" ||
		log "$name: $(grep -o 'unwind ok [^ ]*' "$out")"
	kill "$pid" 2>/dev/null
}

# C++: g++ -O2 without frame pointers; names demangled with their templates,
# shown without parameters.
if command -v g++ >/dev/null; then
	g++ -O2 -g -fomit-frame-pointer -o "$E2E_TMPDIR/cxxburn" "$LANG_SRC/cxxburn.cpp" ||
		die "g++ failed on cxxburn.cpp"
	# Short names by default (issue 24): no parameters; test_names checks
	# --full-names and key v.
	run_case c++ "$E2E_TMPDIR/cxxburn" 'app::Matrix<double>::multiply_rows' 'app::run' main
else
	bad "c++: g++ is not installed (make deps-test installs it)"
fi

# Go: its own linker, runtime frames, .debug_frame-less Go code.
if command -v go >/dev/null; then
	export GOCACHE=$E2E_TMPDIR/gocache GOPATH=$E2E_TMPDIR/gopath GO111MODULE=off HOME=${HOME:-$E2E_TMPDIR}
	(cd "$E2E_TMPDIR" && go build -o goburn "$LANG_SRC/goburn.go") || die "go build failed"
	run_case go "$E2E_TMPDIR/goburn" main.hotLoop main.worker main.main runtime.main
else
	bad "go: the go compiler is not installed (make deps-test installs golang-go)"
fi

# Rust: only where a toolchain is installed (Debian's rustc is not a
# dependency of stacktop's tests).
RUSTC=$(command -v rustc || ls "$HOME"/.cargo/bin/rustc 2>/dev/null || true)
if [ -n "$RUSTC" ]; then
	"$RUSTC" -O -g -o "$E2E_TMPDIR/rsburn" "$LANG_SRC/rsburn.rs" || die "rustc failed"
	run_case rust "$E2E_TMPDIR/rsburn" rsburn::hot_loop rsburn::main main
else
	log "rust: no rustc here, skipped"
fi
e2e_finish
