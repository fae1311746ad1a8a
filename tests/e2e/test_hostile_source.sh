#!/bin/bash
# test_hostile_source — annotate never shows a file the target names in its
# line table unless the target's user could read it, and never opens procfs
# (issue 28, item 8). hostile_source's two hot functions claim to be written
# in /etc/shadow (lines 1-5) and in /proc/kmsg.
#   - live, the target running as nobody: annotating shadow_loop shows no
#     line of /etc/shadow (0640 root:shadow), only file:line markers;
#   - offline as root (report --annotate of a recording): the same, since a
#     saved profile may come from anyone;
#   - kmsg_loop, whoever runs the target: /proc/kmsg is never read (strace
#     -y shows every read's file).
. "$(dirname "$0")/lib.sh"
need_stacktop
need_target hostile_source
[ "$(id -u)" = 0 ] || { log "skip: needs root (the point is what root shows)"; e2e_finish; exit 0; }
[ -r /etc/shadow ] || { log "skip: no /etc/shadow"; e2e_finish; exit 0; }
command -v setpriv >/dev/null || die "setpriv is missing (util-linux)"

T=$E2E_TMPDIR
out=$T/out
# nobody must reach the binary: a copy in a world-readable directory
bin=$(mktemp -d /tmp/stacktop-e2e-hs.XXXXXX)
cp "$TARGETS/hostile_source" "$bin/"
chmod 755 "$bin" "$bin/hostile_source"

# shows_shadow FILE: does FILE hold any of /etc/shadow's first lines?
shows_shadow() {
	local l
	while IFS= read -r l; do
		[ -n "$l" ] && grep -qF -- "$l" "$1" && return 0
	done < <(head -n 5 /etc/shadow)
	return 1
}

# annotated_no_shadow UNANNOTATED SHOWN NOT_SHOWN: $out annotates
# shadow_loop (else die UNANNOTATED) and holds no line of /etc/shadow
# (bad SHOWN, ok NOT_SHOWN).
annotated_no_shadow() {
	grep -q '^annotate shadow_loop ' "$out" || { cat "$out"; die "$1"; }
	if shows_shadow "$out"; then
		bad "$2"
	else
		ok "$3"
	fi
}

start_bg setpriv --reuid=65534 --regid=65534 --clear-groups "$bin/hostile_source" 60
HP=$BG_PID
sleep 0.3
alive "$HP" || die "hostile_source did not start"
"$STACKTOP" -b -n 1 -d 1.5 -r 499 --annotate shadow_loop -p "$HP" >"$out" 2>&1 ||
	{ cat "$out"; die "batch --annotate shadow_loop failed"; }
annotated_no_shadow "shadow_loop not annotated" \
	"live: a line of /etc/shadow was shown for a target running as nobody" \
	"live: no line of /etc/shadow shown (the target's user cannot read it)"
grep -q 'shadow:[0-9]' "$out" && grep -q 'source not readable' "$out" ||
	{ cat "$out"; die "no file:line markers, or no word that the source is not readable"; }
ok "live: file:line markers and the reason instead of the text"

# offline, as root, from a recording of the same program
"$STACKTOP" record -d 1.5 -r 499 -o "$T/hs.pb.gz" -p "$HP" >/dev/null 2>&1 || die "record failed"
"$STACKTOP" report -b -n 1 --annotate shadow_loop "$T/hs.pb.gz" >"$out" 2>&1 ||
	{ cat "$out"; die "report --annotate shadow_loop failed"; }
annotated_no_shadow "shadow_loop not annotated offline" \
	"offline as root: a line of /etc/shadow was shown" "offline as root: no line of /etc/shadow shown"
kill "$HP" 2>/dev/null

# /proc/kmsg: never read, even for a target running as root
if command -v strace >/dev/null; then
	start_target 0.3 hostile_source 60
	RP=$BG_PID
	strace -f -y -e trace=read,pread64 -o "$T/strace" \
		"$STACKTOP" -b -n 1 -d 1.5 -r 499 --annotate kmsg_loop -p "$RP" >"$out" 2>&1 ||
		{ cat "$out"; die "batch --annotate kmsg_loop failed"; }
	grep -q '^annotate kmsg_loop ' "$out" || { cat "$out"; die "kmsg_loop not annotated"; }
	if grep -q '</proc/kmsg>' "$T/strace"; then
		bad "/proc/kmsg was read: $(grep -m1 '</proc/kmsg>' "$T/strace")"
	else
		ok "/proc/kmsg never read (procfs is refused whatever a line table says)"
	fi
	kill "$RP" 2>/dev/null
else
	log "skip: strace missing, the /proc/kmsg check needs it"
fi
rm -rf "$bin"
e2e_finish
