# lib.sh — helpers for the end-to-end tests (sourced, not run).
#
# A test sources this file, calls the helpers, and ends with `e2e_finish`,
# which exits 0 only if no check failed. Checks do not stop the test at the
# first failure (so one run shows every problem); `die` does.
#
# Everything a test starts is cleaned up by one EXIT trap: background
# processes started with `start_bg` (killed by pid, never by name), and the
# test's private tmux server (socket stacktop-e2e-$$).
#
#   ROOT, STACKTOP, TARGETS   the repo, build/stacktop, build/targets
#   ok MSG / bad MSG          record a passed / failed check
#   check_cmp A OP B MSG      numeric comparison with awk (OP: < <= > >= == !=)
#   share_tol P N             the tolerance of a share P% over N samples, in points
#   check_share SEEN WANT N MSG   a share within share_tol of its true value
#   check_share_min SEEN MIN N MSG / check_share_max SEEN MAX N MSG
#                             a share not below MIN (not above MAX) by more than share_tol
#   samples_in FILE           the last "samples N" count in a batch output or screen
#   die MSG                   fail and stop now
#   run_ok SECS OUT MSG ARGS...  stacktop ARGS under timeout, stdout in OUT,
#                             stderr in OUT.err; ok MSG when it exits 0
#   need_stacktop, need_target NAME, need_tmux
#   start_bg CMD...           start in the background; pid in $BG_PID
#   start_target SECS NAME ARGS...  start_bg build/targets/NAME, wait SECS,
#                             die if it is gone; pid in $BG_PID
#   start_cpuburn SECS ARGS...  need stacktop and cpuburn; start cpuburn ARGS
#                             as in start_target; pid in $CB
#   start_tui_cpuburn SECS    need stacktop, cpuburn and tmux; start cpuburn
#                             (1 worker) as in start_target; pid in $CB
#   kill_tree PID             SIGKILL PID and all its descendants
#   e2e_cleanup_trees         EXIT trap for tests whose targets fork: tmux
#                             first, then every start_bg pid's whole tree
#   wait_until SECS CMD...    poll CMD every 0.1 s until it succeeds
#   proc_cpu_ticks PID        utime+stime of a process (clock ticks)
#   proc_stopped_threads PID  "tid:state" of threads in T/t, or nothing
#   proc_tracers PID          "tid:tracerpid" of traced threads, or nothing
#   check_target_healthy PID  alive, CPU time increasing if it burns, not stopped, not traced
#   tm_start W H CMD          new detached tmux session running CMD under a
#                             wrapper that records its status (TM_EXEC=1: exec'd)
#   tm_stop                   end the command (SIGTERM) and the tmux server
#   tm_attach WANT LABEL ARGS...  stacktop ARGS in a fresh 120x40 tmux until the
#                             screen shows WANT, then a moment; its pid in ST
#   tm_keys KEYS...           tmux send-keys
#   tm_key_expect KEY SECS REGEX OKMSG BADMSG   press KEY, ok when the screen
#                             matches REGEX within SECS, else dump it and die
#   tm_screen                 capture the pane as text
#   bad_dump LABEL MSG        bad MSG, then the screen (tm_dump LABEL)
#   tm_wait SECS REGEX        wait until the screen matches (grep -E)
#   tm_wait_gone SECS REGEX   wait until the screen stops matching
#   tm_resize W H             resize the window
#   tm_pid / tm_dead / tm_status   the command's pid, has it exited, its status
#   tm_selected               the function on the selected (reverse video) row
#   tm_dump LABEL             print the screen into the log
#   expect_in FILE MSG PAT... every pattern is in FILE (else bad MSG, and FILE's head)
#   rows_of FILE              the rows of the last top table in FILE
#   field_of ROWS FUNC COL    a column of FUNC's row

set -u

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
STACKTOP=$ROOT/build/stacktop
TARGETS=$ROOT/build/targets
TMUX_SOCK=stacktop-e2e-$$
E2E_FAILS=0
E2E_PASSES=0
BG_PIDS=()
E2E_TMPDIR=$(mktemp -d /tmp/stacktop-e2e.XXXXXX)
TEST_NAME=$(basename "$0" .sh)

log() { printf '[%s] %s\n' "$TEST_NAME" "$*"; }
ok() {
	E2E_PASSES=$((E2E_PASSES + 1))
	printf '[%s] ok   %s\n' "$TEST_NAME" "$*"
}
bad() {
	E2E_FAILS=$((E2E_FAILS + 1))
	printf '[%s] FAIL %s\n' "$TEST_NAME" "$*"
}
die() {
	bad "$*"
	exit 1
}

# check_cmp A OP B MSG: numeric comparison (floats fine); ok or bad with both values.
check_cmp() {
	local a=$1 op=$2 b=$3 msg=$4
	if [ -n "$a" ] && awk -v a="$a" -v b="$b" "BEGIN { exit !((a + 0) $op (b + 0)) }"; then
		ok "$msg ($a $op $b)"
	else
		bad "$msg: expected $op $b, seen '${a}'"
	fi
}

# run_ok SECS OUT MSG ARGS...: stacktop ARGS under timeout SECS, stdout in
# OUT and stderr in OUT.err; check_cmp that it exited 0 (ok or bad MSG).
run_ok() {
	local secs=$1 out=$2 msg=$3
	shift 3
	timeout "$secs" "$STACKTOP" "$@" >"$out" 2>"$out.err"
	check_cmp "$?" == 0 "$msg"
}

# ---- shares ----------------------------------------------------------------
# A share read off a profile is a count over N samples: its sampling noise
# is that of a binomial proportion, one standard error sqrt(p (1 - p) / N).
# Tests compare shares within SHARE_SIGMAS (4) standard errors, so a correct
# profile fails about once in 16,000 checks, and the tolerance shrinks as
# samples grow instead of being a fixed number of points; plus half a point
# for the rounding of printed shares (the wall time line prints whole %).
# Fewer samples (a busy machine) widen it by themselves; no test compares a
# sample count itself.
SHARE_SIGMAS=${SHARE_SIGMAS:-4}

# share_tol P N: the tolerance, in points, of a share whose true value is P%.
share_tol() {
	awk -v p="$1" -v n="${2:-0}" -v k="$SHARE_SIGMAS" 'BEGIN {
		p /= 100; if (p < 0) p = 0; if (p > 1) p = 1
		if (n + 0 < 1) { print 0; exit } # no count: no room, the check fails and says so
		printf "%.1f", k * sqrt(p * (1 - p) / n) * 100 + 0.5 }'
}

# check_share SEEN WANT N MSG: |SEEN - WANT| within share_tol WANT N.
check_share() {
	local t
	t=$(share_tol "$2" "$3")
	if [ -n "$1" ] && awk -v a="$1" -v b="$2" -v t="$t" 'BEGIN { d = a - b; exit !((d < 0 ? -d : d) <= t) }'; then
		ok "$4 ($1, true $2 +- $t over $3 samples)"
	else
		bad "$4: expected $2 +- $t ($SHARE_SIGMAS standard errors over $3 samples), seen '${1}'"
	fi
}

# check_share_min SEEN MIN N MSG: SEEN >= MIN - share_tol MIN N (and _max: <=
# MAX + tol): a bound the true share keeps, checked through the noise.
check_share_min() {
	local t
	t=$(share_tol "$2" "$3")
	check_cmp "$1" '>=' "$(awk -v m="$2" -v t="$t" 'BEGIN { print m - t }')" "$4 (at least $2 - $t over $3 samples)"
}
check_share_max() {
	local t
	t=$(share_tol "$2" "$3")
	check_cmp "$1" '<=' "$(awk -v m="$2" -v t="$t" 'BEGIN { print m + t }')" "$4 (at most $2 + $t over $3 samples)"
}

# samples_in FILE: N of the last "samples N" in FILE (a batch header line, or
# the TUI's header on a screen capture), commas dropped; 0 if none.
samples_in() {
	awk '{ for (i = 1; i < NF; i++) if ($i == "samples" && $(i + 1) ~ /^[0-9][0-9,]*$/) n = $(i + 1) }
		END { gsub(",", "", n); print n + 0 }' "$1"
}

e2e_cleanup() {
	local p
	tm_stop
	for p in "${BG_PIDS[@]}"; do
		kill -KILL "$p" 2>/dev/null
	done
	for p in "${BG_PIDS[@]}"; do
		wait "$p" 2>/dev/null
	done
	rm -rf "$E2E_TMPDIR"
}
trap e2e_cleanup EXIT
trap 'exit 130' INT TERM HUP

e2e_finish() {
	log "$E2E_PASSES passed, $E2E_FAILS failed"
	[ "$E2E_FAILS" -eq 0 ] && exit 0
	exit 1
}

need_stacktop() {
	[ -x "$STACKTOP" ] || die "$STACKTOP is missing: run make all"
}

need_target() {
	[ -x "$TARGETS/$1" ] || die "$TARGETS/$1 is missing: run make targets"
}

need_tmux() {
	command -v tmux >/dev/null || die "tmux is not installed (make deps-test)"
}

# start_bg CMD...: run in the background, stdout/stderr to files in the tmp dir.
start_bg() {
	"$@" >"$E2E_TMPDIR/bg.$#.$RANDOM.out" 2>&1 &
	BG_PID=$!
	BG_PIDS+=("$BG_PID")
}

# start_target SECS NAME ARGS...: start a test target, give it SECS to come
# up (and get past its calibration), die if it is not running by then.
start_target() {
	local settle=$1 name=$2
	shift 2
	start_bg "$TARGETS/$name" "$@"
	sleep "$settle"
	alive "$BG_PID" || die "$name did not start"
}

# start_waiter: stacktop and waiter are there, and waiter 120 runs with its
# five threads started, its pid in W (test_wall and test_wall_errors).
start_waiter() {
	need_stacktop
	need_target waiter
	start_bg "$TARGETS/waiter" 120
	W=$BG_PID
	wait_until 3 threads_at_least "$W" 5 || die "waiter did not start its threads"
	sleep 0.3
}
threads_at_least() { [ "$(ls "/proc/$1/task" 2>/dev/null | wc -l)" -ge "$2" ]; }

# start_cpuburn SECS ARGS...: stacktop and cpuburn are there, and cpuburn
# ARGS runs (start_target SECS), its pid in CB.
start_cpuburn() {
	local settle=$1
	shift
	need_stacktop
	need_target cpuburn
	start_target "$settle" cpuburn "$@"
	CB=$BG_PID
}

# start_gcchurn: the Java program that churns a small heap (GcChurn,
# -Xmx32m, G1) in the background, its pid in BG_PID; 1 and a SKIP said
# when there is no java or no class (make targets compiles it with javac).
start_gcchurn() {
	if ! command -v java >/dev/null || [ ! -f "$ROOT/build/java/GcChurn.class" ]; then
		log "SKIP java: no java or no build/java/GcChurn.class (make targets with javac installed)"
		return 1
	fi
	start_bg java -Xmx32m -XX:+UseG1GC -cp "$ROOT/build/java" GcChurn 60
}

# start_tui_cpuburn SECS: the set-up of the TUI tests that watch cpuburn.
start_tui_cpuburn() {
	need_stacktop
	need_target cpuburn
	need_tmux
	start_target "$1" cpuburn 1
	CB=$BG_PID
}

# kill_tree PID: PID and all its descendants (found by parent pid, not name).
kill_tree() {
	local c
	for c in $(pgrep -P "$1" 2>/dev/null); do
		kill_tree "$c"
	done
	kill -KILL "$1" 2>/dev/null
}

# e2e_cleanup_trees: the EXIT trap of a test whose targets fork children:
# stacktop first (so it detaches from the targets it watches), then every
# background process with all its descendants, then the usual cleanup.
e2e_cleanup_trees() {
	local p
	tm_stop
	for p in "${BG_PIDS[@]}"; do
		kill_tree "$p"
	done
	e2e_cleanup
}

# wait_until SECS CMD...: 0 as soon as CMD succeeds, 1 after SECS.
wait_until() {
	local end
	end=$(($(date +%s%3N) + $(awk -v s="$1" 'BEGIN { printf "%d", s * 1000 }')))
	shift
	while :; do
		"$@" && return 0
		[ "$(date +%s%3N)" -ge "$end" ] && return 1
		sleep 0.1
	done
}

alive() { [ -d "/proc/$1" ] && [ "$(proc_state "$1")" != Z ]; }
gone() { ! alive "$1"; }

# The state letter of a process or thread (from its stat: the field after
# the last ')', since comm may hold spaces and parentheses).
proc_state() {
	local s
	s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	s=${s##*) }
	printf '%s\n' "${s%% *}"
}

proc_cpu_ticks() {
	local s
	s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	s=${s##*) }
	# after ')': state(3) ppid pgrp session tty tpgid flags minflt cminflt
	# majflt cmajflt utime(14) stime(15)
	awk '{ print $12 + $13 }' <<<"$s"
}

proc_stopped_threads() {
	local t st
	for t in /proc/"$1"/task/*; do
		st=$(proc_state "${t#/proc/}") || continue
		case $st in T | t) printf '%s:%s ' "${t##*/}" "$st" ;; esac
	done
}

proc_tracers() {
	local t tp
	for t in /proc/"$1"/task/*; do
		tp=$(awk '/^TracerPid:/ { print $2 }' "$t/status" 2>/dev/null) || continue
		[ -n "$tp" ] && [ "$tp" != 0 ] && printf '%s:%s ' "${t##*/}" "$tp"
	done
}

# check_target_healthy PID WHAT [burns]: the target is alive, no thread is
# stopped or traced, and (with "burns") its CPU time still increases.
check_target_healthy() {
	local pid=$1 what=$2 burns=${3:-} s t a b
	if ! alive "$pid"; then
		bad "$what: target $pid is gone (state $(proc_state "$pid" 2>/dev/null))"
		return
	fi
	ok "$what: target still alive"
	s=$(proc_stopped_threads "$pid")
	if [ -z "$s" ]; then ok "$what: no target thread stopped"; else bad "$what: target threads stopped: $s"; fi
	t=$(proc_tracers "$pid")
	if [ -z "$t" ]; then ok "$what: TracerPid 0 in every thread"; else bad "$what: target still traced: $t"; fi
	if [ -n "$burns" ]; then
		# > 2 ticks, polled for up to 2 s: the machine may be shared and
		# busy (a stopped target gets none however long we wait)
		a=$(proc_cpu_ticks "$pid")
		wait_until 2 ticks_past "$pid" $((a + 2))
		b=$(proc_cpu_ticks "$pid")
		check_cmp "$((b - a))" '>' 2 "$what: target CPU time keeps increasing (ticks within 2 s)"
	fi
}

# ticks_past PID N: PID has used more than N clock ticks of CPU.
ticks_past() { [ "$(proc_cpu_ticks "$1")" -gt "$2" ] 2>/dev/null; }

# ---- tmux ---------------------------------------------------------------

tm() { tmux -L "$TMUX_SOCK" "$@"; }

# tm_start W H CMD: CMD runs under a small bash wrapper that records its
# exit status (128+N for signal N) in $E2E_TMPDIR/status: tmux 3.3 keeps no
# status for a command killed by a signal. The wrapper traps (does not
# ignore) INT/TERM/HUP, so CMD gets them with their default disposition and
# the wrapper survives to write the status. The pane stays after exit
# (remain-on-exit) for a last capture. With TM_EXEC=1, CMD is exec'd
# instead: it is then the session leader and the pane's pid (no status).
tm_start() {
	local w=$1 h=$2
	shift 2
	printf 'set -g remain-on-exit on\nset -g status off\nset -g history-limit 0\n' >"$E2E_TMPDIR/tmux.conf"
	rm -f "$E2E_TMPDIR/status"
	printf '%s\n' "trap : INT TERM HUP QUIT" "$*" "echo \$? >$E2E_TMPDIR/status" >"$E2E_TMPDIR/run.sh"
	local cmd="exec bash $E2E_TMPDIR/run.sh"
	[ -n "${TM_EXEC:-}" ] && cmd="exec $*"
	TERM=xterm-256color tm -f "$E2E_TMPDIR/tmux.conf" new-session -d -s e2e -x "$w" -y "$h" \
		"$cmd" || die "tmux new-session failed"
	tm set -g window-size manual >/dev/null
	tm resize-window -t e2e -x "$w" -y "$h" >/dev/null
}

# tm_stop: end the pane commands, then the tmux server. The wrapper traps
# SIGHUP, so killing the server alone would leave the command on a dead
# terminal: SIGTERM it first (SIGKILL after 2 s).
tm_stop() {
	local w c i any left=()
	for w in $(tm list-panes -a -F '#{pane_pid}' 2>/dev/null); do
		grep -q "$E2E_TMPDIR/run.sh" "/proc/$w/cmdline" 2>/dev/null || continue
		for c in $(pgrep -P "$w"); do
			kill -TERM "$c" 2>/dev/null && left+=("$c")
		done
	done
	for i in $(seq 20); do
		any=0
		for c in "${left[@]}"; do alive "$c" && any=1; done
		[ "$any" = 0 ] && break
		sleep 0.1
	done
	for c in "${left[@]}"; do kill -KILL "$c" 2>/dev/null; done
	tm kill-server >/dev/null 2>&1
	# A server on its way out still answers on its socket, and a new
	# session started then dies with it ("server exited unexpectedly"):
	# wait until it has gone.
	for i in $(seq 30); do
		tm has-session >/dev/null 2>&1 || break
		sleep 0.1
	done
	rm -f "${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/$TMUX_SOCK"
}
tm_keys() { tm send-keys -t e2e "$@"; }
# tm_key_expect KEY SECS REGEX OKMSG BADMSG: press KEY and expect the screen
# to match REGEX within SECS ("key KEY: OKMSG"); else dump it and die.
tm_key_expect() {
	tm_keys "$1"
	if tm_wait "$2" "$3"; then
		ok "key $1: $4"
	else
		tm_dump "after key $1"
		die "key $1: $5"
	fi
}
tm_screen() { tm capture-pane -p -t e2e; }
# the command's pid (the wrapper's child)
tm_pid() {
	local w c i
	w=$(tm display-message -p -t e2e '#{pane_pid}' 2>/dev/null) || return 1
	if [ -n "${TM_EXEC:-}" ]; then
		printf '%s\n' "$w"
		return
	fi
	for i in $(seq 30); do
		c=$(pgrep -P "$w" | head -n 1)
		[ -n "$c" ] && break
		sleep 0.1
	done
	printf '%s\n' "$c"
}
tm_dead() { [ "$(tm display-message -p -t e2e '#{pane_dead}' 2>/dev/null)" = 1 ]; }
# The exit status of the pane's command (128+N if killed by signal N), from
# the wrapper; empty if it has not exited.
tm_status() {
	local i
	for i in $(seq 20); do
		[ -s "$E2E_TMPDIR/status" ] && break
		sleep 0.1
	done
	cat "$E2E_TMPDIR/status" 2>/dev/null
}
tm_size() { tm display-message -p -t e2e '#{window_width}x#{window_height}'; }

tm_match() { tm_screen | grep -Eq -- "$1"; }
tm_nomatch() { ! tm_match "$1"; }
tm_wait() { wait_until "$1" tm_match "$2"; }
tm_wait_gone() { wait_until "$1" tm_nomatch "$2"; }

tm_resize() {
	tm resize-window -t e2e -x "$1" -y "$2" >/dev/null
}

# tm_attach WANT LABEL ARGS...: a fresh stacktop ARGS in tmux (120x40)
# until the screen shows WANT (it samples for real), then a few more
# samples so it is mid-run, not starting; its pid in ST. 1, with LABEL's
# failure said and the screen, when WANT never came.
tm_attach() {
	local want=$1 label=$2
	shift 2
	tm_stop
	tm_start 120 40 "$STACKTOP" "$@"
	if ! tm_wait 8 "$want"; then
		bad_dump "$label" "$label: stacktop never showed '$want'"
		return 1
	fi
	ST=$(tm_pid)
	sleep 0.3
}

# tm_dump LABEL: print the screen into the log (for a failed check).
tm_dump() {
	log "---- screen ($1, $(tm_size)) ----"
	tm_screen | sed 's/^/  | /'
	log "----"
}

# bad_dump LABEL MSG: bad MSG, then the screen as LABEL (tm_dump).
bad_dump() {
	bad "$2"
	tm_dump "$1"
}

# ---- stacktop's top table, as text ------------------------------------------

# rows_of FILE: the table rows of the LAST block in a batch output (or of a
# screen capture): lines after the last header line holding %Own, up to the
# first blank line. Each row: %Own %Total OwnTime TotalTime Function... Module.
# tid_named PID NAME: the TID of PID's thread called NAME.
tid_named() {
	local t
	for t in /proc/"$1"/task/*; do
		[ "$(cat "$t/comm" 2>/dev/null)" = "$2" ] && { echo "${t##*/}"; return 0; }
	done
	return 1
}

# split_pct FILE KIND: the KIND percentage of the last "wall time:" line of
# a batch output (0 if KIND is absent; status 1 if there is no such line).
split_pct() {
	local line
	line=$(grep 'wall time:' "$1" | tail -n 1)
	[ -n "$line" ] || return 1
	grep -oE "$2 [0-9]+%" <<<"$line" | grep -oE '[0-9]+' || echo 0
}

# expect_in FILE MSG PATTERN...: every grep -E PATTERN is in FILE: ok MSG;
# else bad MSG and the head of FILE, to see what was there instead.
expect_in() {
	local file=$1 msg=$2 p
	shift 2
	for p in "$@"; do
		if ! grep -Eq -- "$p" "$file"; then
			bad "$msg (no '$p')"
			head -c 2000 "$file"
			return 1
		fi
	done
	ok "$msg"
}

rows_of() {
	awk '/%Own/ { n = 0; delete r; inrow = 1; next }
	     inrow && /^[[:space:]]*$/ { inrow = 0; next }
	     inrow && $1 ~ /^[0-9.]+$/ && $2 ~ /^[0-9.]+$/ { r[++n] = $0 }
	     END { for (i = 1; i <= n; i++) print r[i] }' "$1"
}

# field_of ROWS FUNC COL: column COL (1 = %Own, 2 = %Total) of the first row
# whose function (5th field) is FUNC; empty if none.
field_of() {
	awk -v f="$2" -v c="$3" '$5 == f { print $c; exit }' <<<"$1"
}

# tm_selected: the function (5th field) of the row drawn in reverse video,
# the selection. capture-pane -e keeps the attributes as SGR sequences; the
# selected row starts with one that sets 7 (reverse).
tm_selected() {
	tm capture-pane -p -e -t e2e |
		awk '/^\033\[([0-9]+;)*7(;[0-9]+)*m/ {
			gsub(/\033\[[0-9;]*m/, "")
			if ($1 ~ /^[0-9.]+$/) { print $5; exit }
		}'
}

# stacktop_bg SECS OUT ARGS...: stacktop ARGS in the background under a
# SECS timeout, its output in OUT (stderr in OUT.err); S is the timeout's
# pid (wait on it for the status), ST stacktop's own (its /proc).
stacktop_bg() {
	local secs=$1 out=$2
	shift 2
	timeout -k 3 "$secs" "$STACKTOP" "$@" >"$out" 2>"$out.err" &
	S=$!
	BG_PIDS+=("$S")
	wait_until 10 pgrep -P "$S" >/dev/null || die "stacktop did not start"
	ST=$(pgrep -P "$S")
}

# hwm_at PID SECS: PID's peak RSS (VmHWM, KiB) once it has run SECS
# seconds; nothing if it did not (the caller dies: this runs in $(...)).
hwm_at() {
	wait_until 60 eval '[ "$(ps -o etimes= -p '"$1"' 2>/dev/null || echo 0)" -ge '"$2"' ]' ||
		return 1
	awk '/^VmHWM:/ { print $2 }' "/proc/$1/status"
}

# hwm_rises PID FROM TO KIB: of the one-second steps from FROM to TO
# seconds of PID's run, in how many its peak RSS rose by KIB or more: a
# bound on memory that grows without end which one late allocation cannot
# fail. Sets HWM_RISES and HWM_STEPS ("+12 +0 ...", logged).
hwm_rises() {
	local pid=$1 from=$2 to=$3 kib=$4 prev h t
	prev=$(hwm_at "$pid" "$from")
	[ -n "$prev" ] || die "no VmHWM of pid $pid"
	HWM_RISES=0 HWM_STEPS=""
	for t in $(seq $((from + 1)) "$to"); do
		h=$(hwm_at "$pid" "$t")
		[ -n "$h" ] || die "no VmHWM of pid $pid at $t s (it did not run that long)"
		[ $((h - prev)) -ge "$kib" ] && HWM_RISES=$((HWM_RISES + 1))
		HWM_STEPS="$HWM_STEPS +$((h - prev))"
		prev=$h
	done
	log "VmHWM steps (KiB) from $from s to $to s:$HWM_STEPS"
}

# need_gocpu: the Go targets (gocpu and gocpu-stripped, built by
# tests/targets/go.mk), or the test ends in a skip when go is not installed
# (make deps-test installs golang-go).
need_gocpu() {
	need_stacktop
	[ -x "$TARGETS/gocpu-stripped" ] && [ -x "$TARGETS/gocpu" ] && [ -x "$TARGETS/gosig" ] && return 0
	command -v go >/dev/null || {
		log "skip: go is not installed (make deps-test installs golang-go)"
		e2e_finish
	}
	die "$TARGETS/gocpu-stripped is missing: run make targets"
}

# memory_view LABEL PID: stacktop's memory view of PID, in
# $E2E_TMPDIR/LABEL.mem (stderr in LABEL.mem.err).
memory_view() {
	run_ok 30 "$E2E_TMPDIR/$1.mem" "$1: stacktop --view memory exits 0" -b -d 2 -n 1 -l 3 --view memory -p "$2"
}

# check_heap LABEL OUT RUNTIME MIN MAX: the batch output OUT has the MEM
# line's "RUNTIME heap X of Y, RSS Z: W outside the heap", and its
# committed heap Y is within [MIN, MAX] MiB.
check_heap() {
	local line comm
	line=$(grep -o "MEM $3 heap [0-9.]* [KMG]iB of [0-9.]* [KMG]iB, RSS [0-9.]* [KMG]iB: [0-9.]* [KMG]iB outside the heap" "$2")
	if [ -z "$line" ]; then
		bad "$1: no 'MEM $3 heap X of Y, RSS Z: W outside the heap' line"
		cat "$2" "$2.err"
		return
	fi
	ok "$1: $line"
	comm=$(echo "$line" | awk '{ for (i = 1; i < NF; i++) if ($i == "of") { v = $(i + 1); u = $(i + 2) } }
		END { sub(",", "", u); print (u == "KiB" ? v / 1024 : u == "GiB" ? v * 1024 : v) }')
	check_cmp "$comm" '>=' "$4" "$1: committed heap (MiB) is read"
	check_cmp "$comm" '<=' "$5" "$1: committed heap (MiB) at most $5"
}

# heap_case LABEL PID RUNTIME MIN MAX [MORE]: stacktop -b of PID shows the
# MEM line's RUNTIME heap with MIN to MAX MiB committed (check_heap), and
# its memory view the heap line (then MORE, a regex, on that line).
heap_case() {
	local out=$E2E_TMPDIR/$1.out
	run_ok 30 "$out" "$1: stacktop -b exits 0" -b -d 3 -n 1 -l 3 -p "$2"
	check_heap "$1" "$out" "$3" "$4" "$5"
	memory_view "$1" "$2"
	expect_in "$E2E_TMPDIR/$1.mem" "$1: the memory view shows the heap line" "^$3 heap [0-9.]* [KMG]iB of ${6:-}"
}
