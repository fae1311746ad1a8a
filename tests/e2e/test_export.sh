#!/bin/bash
# test_export — `stacktop record` to each format, read back by the tools
# that really read those formats, and by `stacktop report`:
#
#   pprof       `go tool pprof -top` (Debian golang-go) lists leaf_a/b/c of
#               cpuburn (true shares 60/30/10 of the worker's CPU) within 3
#               points, and says it is a cpu profile with our period;
#   folded      a checker that follows FlameGraph's format exactly (every
#               line "frame;frame;... COUNT", no empty frame, an integer
#               count; with --per-thread a "name-TID" root);
#   speedscope  validated with ajv against the file-format schema shipped in
#               the npm package `speedscope`, plus the meaning checks a
#               schema cannot express (frame indices in range, one weight per
#               sample, endValue = sum of weights), and the same shares;
#   report      `stacktop report FILE -b -n 1` shows the same leaf shares as
#               the file (within a point), for pprof and folded;
#
# and the user errors: an existing file without --force, a truncated gzip
# given to report. The npm packages are installed into build/npm on first
# use (the npm registry must be reachable then).
. "$(dirname "$0")/lib.sh"
need_stacktop
need_target cpuburn

NPM_DIR=$ROOT/build/npm
GOENV_DIR=$E2E_TMPDIR/go
mkdir -p "$GOENV_DIR"

# ---- the readers -------------------------------------------------------------
have_go=1
command -v go >/dev/null 2>&1 || { have_go=0; bad "go is not installed (make deps-test installs golang-go)"; }
have_node=1
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
	have_node=0
	bad "node/npm are not installed (make deps-test installs nodejs npm)"
elif [ ! -f "$NPM_DIR/node_modules/speedscope/dist/release/file-format-schema.json" ] ||
	[ ! -d "$NPM_DIR/node_modules/ajv" ]; then
	log "installing the npm packages speedscope and ajv into $NPM_DIR"
	mkdir -p "$NPM_DIR"
	if ! npm install --prefix "$NPM_DIR" --no-audit --no-fund --loglevel=error speedscope ajv \
		>"$E2E_TMPDIR/npm.log" 2>&1; then
		have_node=0
		bad "npm install speedscope ajv failed: $(tail -n 3 "$E2E_TMPDIR/npm.log")"
	fi
fi
SCHEMA=$NPM_DIR/node_modules/speedscope/dist/release/file-format-schema.json

gopprof() {
	HOME=$GOENV_DIR GOCACHE=$GOENV_DIR/cache GOPATH=$GOENV_DIR/path GOFLAGS= GOTOOLCHAIN=local \
		go tool pprof -symbolize=none "$@"
}

# ---- the target --------------------------------------------------------------
start_target 0.7 cpuburn 1 # 0.7 s: past its calibration, then only the worker burns CPU
CB=$BG_PID

# 4 s at 499 Hz over one busy thread: ~2000 samples, so 3 points are > 2.7
# standard deviations at p = 0.6; widened on a busy machine like
# test_batch_shares does.
tol_for() {
	awk -v n="${1:-0}" 'BEGIN { t = (n > 0) ? 3.5 * sqrt(0.24 / n) * 100 : 3; printf "%.1f", (t > 3 ? t : 3) }'
}
absdiff() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; printf "%.2f", (d < 0 ? -d : d) }'; }

record() { # record FILE [OPTIONS...]
	local f=$1
	shift
	timeout 30 "$STACKTOP" record -d 4 -r 499 -p "$CB" -o "$f" "$@" >"$f.out" 2>"$f.err"
}

# ---- pprof -------------------------------------------------------------------
PB=$E2E_TMPDIR/cb.pb.gz
record "$PB"
rc=$?
check_cmp "$rc" == 0 "record -o cb.pb.gz exits 0 ($(tail -n 1 "$PB.err"))"
[ -s "$PB" ] || bad "record wrote no pprof file"
magic=$(od -An -tx1 -N2 "$PB" 2>/dev/null | tr -d ' ')
[ "$magic" = 1f8b ] && ok "the .pb.gz file is gzip" || bad "the .pb.gz file should start with 1f 8b, not '$magic'"
declare -A PPROF_SHARE
if [ "$have_go" = 1 ] && [ -s "$PB" ]; then
	top=$E2E_TMPDIR/pprof.top
	if gopprof -top -nodecount=200 "$PB" >"$top" 2>"$top.err"; then
		ok "go tool pprof -top reads the file"
	else
		bad "go tool pprof -top failed: $(tail -n 3 "$top.err")"
	fi
	grep -q '^Type: cpu' "$top" && ok "pprof says Type: cpu" || bad "pprof should say 'Type: cpu': $(head -n 5 "$top")"
	# samples: total / the period; the count sample type must be there too
	gopprof -raw "$PB" >"$top.raw" 2>/dev/null
	grep -q 'samples/count' "$top.raw" && grep -q 'cpu/nanoseconds' "$top.raw" &&
		ok "sample types samples/count and cpu/nanoseconds" ||
		bad "sample types should be samples/count cpu/nanoseconds: $(grep -m1 -i 'sample' "$top.raw")"
	grep -q 'Period: 2004008' "$top.raw" && ok "period 1/499 s in ns (2004008)" ||
		bad "period should be 2004008 ns: $(grep -m1 Period "$top.raw")"
	nsamp=$(awk '/^Samples:/ { s = 1; next } s && /^ *[0-9]+ +[0-9]+:/ { n += $1 } /^Locations/ { s = 0 } END { print n + 0 }' "$top.raw")
	TOL=$(tol_for "$nsamp")
	# cum% column (5th): leaf_a's total, like %Total in the top view (a
	# timer interrupt sometimes sits above the leaf)
	for spec in leaf_a:60 leaf_b:30 leaf_c:10; do
		f=${spec%%:*} want=${spec#*:}
		cum=$(awk -v f="$f" '$6 == f { sub("%", "", $5); print $5; exit }' "$top")
		if [ -z "$cum" ]; then
			bad "go tool pprof -top does not list $f"
			continue
		fi
		PPROF_SHARE[$f]=$cum
		check_cmp "$(absdiff "$cum" "$want")" '<=' "$TOL" "pprof: $f cum $cum% within $TOL points of $want ($nsamp samples)"
	done
	for f in run_worker work_unit depth_8; do
		grep -qw "$f" "$top" && ok "pprof lists caller $f" || bad "pprof does not list caller $f"
	done
fi

# ---- folded ------------------------------------------------------------------
FO=$E2E_TMPDIR/cb.folded
record "$FO" --per-thread
rc=$?
check_cmp "$rc" == 0 "record -o cb.folded --per-thread exits 0 ($(tail -n 1 "$FO.err"))"
# The FlameGraph format, exactly: STACK SPACE COUNT where COUNT is an
# integer, STACK is frames joined by ';' with none empty; no CR, no tab.
# Besides: stacktop's own comments "# stacktop: {...}" (the run summary,
# then a block per second), which end in '}' so FlameGraph skips them.
badlines=$(awk '
	/^# stacktop: \{[^}]*\}$/ { next }
	!/^[^ ].* [0-9]+$/ { print NR ": " $0; next }
	{ stack = $0; sub(/ [0-9]+$/, "", stack)
	  if (stack ~ /^;|;;|;$/ || stack ~ /[\t\r]/) print NR ": " $0 }' "$FO" | head -n 3)
if [ -s "$FO" ] && [ -z "$badlines" ]; then
	ok "every folded line is 'frame;...;frame COUNT' ($(wc -l <"$FO") lines)"
else
	bad "folded lines break the FlameGraph format: ${badlines:-empty file}"
fi
grep -q '^# stacktop: {second=0}$' "$FO" && ok "the samples of second 0 are a block" ||
	bad "no '# stacktop: {second=0}' block"
grep -qE '^# stacktop: \{wall_s=[0-9.]+ cpu_s=[0-9.]+ avg_cpu=[0-9.]+ peak_cpu=[0-9.]+ peak_rss=[0-9]+\}$' "$FO" &&
	ok "the run summary is a comment" || bad "no run summary comment"
# one line per stack and second: no stack twice in a second's block
dups=$(awk '/^# stacktop: \{second=/ { b++ } !/^#/ { st = $0; sub(/ [0-9]*$/, "", st); print b " " st }' "$FO" |
	sort | uniq -d | head -n 1)
[ -z "$dups" ] && ok "no stack appears twice in a second" || bad "stack written twice: $dups"
# --per-thread: every root is name-TID, the worker's is worker-0-TID
roots=$(grep -v '^#' "$FO" | cut -d';' -f1 | sort -u)
if ! grep -qvE -- '-[0-9]+$' <<<"$roots"; then ok "every root is a name-TID thread frame"; else
	bad "roots that are not name-TID: $(grep -vE -- '-[0-9]+$' <<<"$roots" | head -n 3)"; fi
grep -qE '^worker-0-[0-9]+$' <<<"$roots" && ok "the worker's root is worker-0-TID" ||
	bad "no worker-0-TID root among: $(head -n 5 <<<"$roots")"
grep -q 'run_worker;work_unit;depth_1;depth_2;depth_3;depth_4;depth_5;depth_6;depth_7;depth_8;leaf_a' "$FO" &&
	ok "the whole chain run_worker;...;depth_8;leaf_a is there" ||
	bad "the chain run_worker;work_unit;depth_1..8;leaf_a is missing"
declare -A FOLD_SHARE
ftotal=$(awk '!/^#/ { n += $NF } END { print n + 0 }' "$FO")
TOL=$(tol_for "$ftotal")
for spec in leaf_a:60 leaf_b:30 leaf_c:10; do
	f=${spec%%:*} want=${spec#*:}
	s=$(awk -v f="$f" '!/^#/ { c = $NF; st = $0; sub(/ [0-9]+$/, "", st); n = split(st, fr, ";")
		for (i = 1; i <= n; i++) if (fr[i] == f) { m += c; break } }
		END { printf "%.2f", (T > 0 ? 100 * m / T : 0) }' T="$ftotal" "$FO")
	FOLD_SHARE[$f]=$s
	check_cmp "$(absdiff "$s" "$want")" '<=' "$TOL" "folded: $f $s% within $TOL points of $want ($ftotal samples)"
done
# kernel frames, if any, carry the _[k] mark (timer interrupts land on the worker)
if grep -q 'asm_sysvec\|irq\|_raw_spin' "$FO"; then
	grep -qE '(asm_sysvec|irq|_raw_spin)[A-Za-z0-9_.]*_\[k\]' "$FO" && ok "kernel frames are marked _[k]" ||
		bad "kernel frames without the _[k] mark: $(grep -m1 -oE '[^;]*(asm_sysvec|irq)[^;]*' "$FO")"
fi

# ---- speedscope --------------------------------------------------------------
SS=$E2E_TMPDIR/cb.speedscope.json
record "$SS"
rc=$?
check_cmp "$rc" == 0 "record -o cb.speedscope.json exits 0 ($(tail -n 1 "$SS.err"))"
if [ "$have_node" = 1 ] && [ -s "$SS" ]; then
	cat >"$E2E_TMPDIR/check_speedscope.js" <<'EOF'
// usage: node check_speedscope.js SCHEMA FILE -> "ok leaf_a=.. leaf_b=.. leaf_c=.." or errors
const fs = require('fs');
const Ajv = require('ajv');
const schema = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const data = JSON.parse(fs.readFileSync(process.argv[3], 'utf8'));
const ajv = new Ajv({ strict: false, allErrors: true });
const validate = ajv.compile(schema);
const errs = [];
if (!validate(data)) errs.push('schema: ' + ajv.errorsText(validate.errors));
const frames = data.shared.frames;
const share = {}; let total = 0;
for (const p of data.profiles || []) {
  if (p.type !== 'sampled') { errs.push('profile type ' + p.type); continue; }
  if (p.samples.length !== p.weights.length) errs.push('samples and weights differ in length');
  const sum = p.weights.reduce((a, b) => a + b, 0);
  if (Math.abs(sum - (p.endValue - p.startValue)) > 1e-6 * Math.max(1, sum)) errs.push(`endValue ${p.endValue} != sum ${sum}`);
  p.samples.forEach((s, i) => {
    const names = new Set();
    for (const f of s) {
      if (!Number.isInteger(f) || f < 0 || f >= frames.length) { errs.push('frame index out of range: ' + f); return; }
      names.add(frames[f].name);
    }
    total += p.weights[i];
    for (const n of names) share[n] = (share[n] || 0) + p.weights[i];
  });
}
if (errs.length) { console.log(errs.slice(0, 5).join('\n')); process.exit(1); }
const pct = (n) => (total ? 100 * (share[n] || 0) / total : 0).toFixed(2);
console.log(`ok unit=${data.profiles[0].unit} leaf_a=${pct('leaf_a')} leaf_b=${pct('leaf_b')} leaf_c=${pct('leaf_c')} samples=${data.profiles.reduce((a, p) => a + p.samples.length, 0)}`);
EOF
	res=$(NODE_PATH=$NPM_DIR/node_modules node "$E2E_TMPDIR/check_speedscope.js" "$SCHEMA" "$SS" 2>&1)
	case $res in
	ok*) ok "speedscope JSON validates against speedscope's file-format-schema.json ($res)" ;;
	*) bad "speedscope JSON check failed: $res" ;;
	esac
	grep -q '"unit":"seconds"' "$SS" && ok "weights in seconds" || bad "weights should be in seconds"
	# weights are seconds, so shares need no sample count: use the folded one
	TOL=$(tol_for "$ftotal")
	for spec in leaf_a:60 leaf_b:30 leaf_c:10; do
		f=${spec%%:*} want=${spec#*:}
		s=$(sed -n "s/.* $f=\([0-9.]*\).*/\1/p" <<<"$res")
		[ -n "$s" ] && check_cmp "$(absdiff "$s" "$want")" '<=' "$TOL" "speedscope: $f $s% within $TOL points of $want"
	done
fi

# ---- stacktop report: the same shares, offline --------------------------------
report_check() { # report_check FILE LABEL SHARES(assoc name)
	local file=$1 label=$2
	local -n want=$3
	local out=$E2E_TMPDIR/report-$label.out rows f tot
	timeout 20 "$STACKTOP" report -b -n 1 -l 60 "$file" >"$out" 2>"$out.err"
	check_cmp "$?" == 0 "stacktop report -b -n 1 $label file exits 0 ($(head -n 1 "$out.err"))"
	rows=$(rows_of "$out")
	for f in leaf_a leaf_b leaf_c; do
		tot=$(field_of "$rows" "$f" 2)
		if [ -z "$tot" ] || [ -z "${want[$f]:-}" ]; then
			bad "report ($label): $f missing (table: ${tot:-none}, file: ${want[$f]:-none})"
			continue
		fi
		check_cmp "$(absdiff "$tot" "${want[$f]}")" '<=' 1 "report ($label): $f %Total $tot within a point of the file's ${want[$f]}"
	done
}
[ -s "$PB" ] && [ "$have_go" = 1 ] && report_check "$PB" pprof PPROF_SHARE
[ -s "$FO" ] && report_check "$FO" folded FOLD_SHARE

# ---- user errors -------------------------------------------------------------
timeout 20 "$STACKTOP" record -d 1 -p "$CB" -o "$FO" >"$E2E_TMPDIR/exists.out" 2>&1
rc=$?
check_cmp "$rc" '!=' 0 "record onto an existing file without --force fails"
grep -q 'exists; use --force' "$E2E_TMPDIR/exists.out" && ok "and says: $(head -n 1 "$E2E_TMPDIR/exists.out")" ||
	bad "the error should say 'exists; use --force': $(head -n 2 "$E2E_TMPDIR/exists.out")"
before=$(md5sum <"$FO")
timeout 20 "$STACKTOP" record -d 1 -r 99 -p "$CB" -o "$FO" --force >"$E2E_TMPDIR/force.out" 2>&1
check_cmp "$?" == 0 "record --force replaces it"
[ "$(md5sum <"$FO")" != "$before" ] && ok "the file was replaced" || bad "--force left the old file"
ln -s "$E2E_TMPDIR/victim" "$E2E_TMPDIR/link.folded"
timeout 20 "$STACKTOP" record -d 1 -p "$CB" -o "$E2E_TMPDIR/link.folded" --force >"$E2E_TMPDIR/link.out" 2>&1
check_cmp "$?" '!=' 0 "record onto a symbolic link fails, even with --force"
[ ! -e "$E2E_TMPDIR/victim" ] && ok "nothing written through the link" || bad "a file was created through the link"

if [ -s "$PB" ]; then
	head -c $(($(stat -c %s "$PB") / 2)) "$PB" >"$E2E_TMPDIR/trunc.pb.gz"
	timeout 20 "$STACKTOP" report -b -n 1 "$E2E_TMPDIR/trunc.pb.gz" >"$E2E_TMPDIR/trunc.out" 2>&1
	rc=$?
	check_cmp "$rc" '>=' 1 "report of a truncated gzip exits non-zero"
	grep -q 'truncated gzip' "$E2E_TMPDIR/trunc.out" && ok "and says: $(grep -m1 truncated "$E2E_TMPDIR/trunc.out")" ||
		bad "report should say 'truncated gzip': $(head -n 2 "$E2E_TMPDIR/trunc.out")"
fi
printf 'main;work\n' >"$E2E_TMPDIR/nocount.folded"
timeout 20 "$STACKTOP" report -b -n 1 "$E2E_TMPDIR/nocount.folded" >"$E2E_TMPDIR/nocount.out" 2>&1
check_cmp "$?" '>=' 1 "report of a folded line without a count exits non-zero"
grep -q 'no sample count' "$E2E_TMPDIR/nocount.out" && ok "and says: $(head -n 1 "$E2E_TMPDIR/nocount.out")" ||
	bad "report should say 'no sample count': $(head -n 2 "$E2E_TMPDIR/nocount.out")"

check_target_healthy "$CB" "after recording" burns
e2e_finish
