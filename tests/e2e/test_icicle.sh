#!/bin/bash
# test_icicle — the icicle view (key 2) on the tree target, whose call tree
# is known: main → worker → {alpha → alpha_leaf 50%, beta 30%,
# gamma → {gamma_x, gamma_y} 20%}. Checks the box widths against the true
# shares, zoom (Enter) and zoom out (Esc), search, the bottom-up view (f),
# and that the selection survives refreshes. Everything started here is
# killed by lib.sh's EXIT trap (by pid).
. "$(dirname "$0")/lib.sh"
need_stacktop
need_target tree
need_tmux

start_target 0.3 tree
TREE=$BG_PID

# 999 Hz: a few thousand samples in a few seconds, so sampling noise on a
# 50% share stays around 1 point (the check allows 4 standard errors of the
# sample count and a column either way).
tm_start 200 50 "$STACKTOP" -r 999 -W 20 -p "$TREE"
tm_wait 8 'alpha_leaf' || { tm_dump "top view"; die "top view never showed alpha_leaf"; }
tm_key_expect 2 4 '^\[worker' "the icicle shows a [worker] row" "no [worker] row in the icicle"
sleep 5 # samples for the shares

scr=$E2E_TMPDIR/screen

# width_of NAME: width in columns of the first box "[NAME ...]" on screen
# (from its "[" to the next "]"); empty when there is none.
width_of() {
	awk -v n="$1" '{
		i = index($0, "[" n " ")
		if (!i) i = index($0, "[" n "]")
		if (!i) next
		rest = substr($0, i + 1)
		j = index(rest, "]")
		if (j) { print j + 1; exit }
	}' "$scr"
}

# The row index (0-based) of the first line starting with "[NAME".
row_of() { awk -v n="$1" 'index($0, "[" n) == 1 { print NR - 1; exit }' "$scr"; }

# share PART WHOLE: 100 * PART / WHOLE with one decimal.
share() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1f", 100 * a / b }'; }

# near VALUE TRUE: |VALUE - TRUE| <= TOL
near() { awk -v v="$1" -v t="$2" -v tol="$TOL" 'BEGIN { d = v - t; if (d < 0) d = -d; exit !(v != "" && d <= tol) }'; }

tm_screen >"$scr"
W=$(width_of worker)
N=$(samples_in "$scr")
check_cmp "$W" '>=' 190 "worker spans (almost) the whole 200 columns"
for pair in alpha:50 beta:30 gamma:20; do
	name=${pair%%:*} want=${pair##*:}
	TOL=$(awk -v t="$(share_tol "$want" "$N")" -v w="$W" 'BEGIN { printf "%.1f", t + (w > 0 ? 100 / w : 0) }')
	w=$(width_of "$name")
	s=$(share "$w" "$W")
	if near "$s" "$want"; then
		ok "$name box is $s% of worker's width (true share $want% +- $TOL over $N samples, $w of $W columns)"
	else
		bad_dump "widths" "$name box should be $want% +- $TOL of worker's width ($N samples), seen '$s%' ($w of $W columns)"
	fi
done
ra=$(row_of alpha) rw=$(row_of worker)
check_cmp "$ra" == "$((rw + 1))" "alpha's row is just below worker's"
[ -n "$(width_of alpha_leaf)" ] && ok "alpha_leaf below alpha" || bad "no alpha_leaf box"
grep -q 'selected: all' "$scr" && ok "detail line shows the selection (all)" ||
	bad_dump "detail" "no 'selected: all' detail line"
grep -q 'if free' "$scr" && ok "detail line has the Amdahl ceiling" || bad "no 'if free' in the detail line"

# ---- search -------------------------------------------------------------------
tm_keys / g a m m a Enter
if tm_wait 3 'search: gamma +3 matches'; then
	ok "/gamma: 3 matches (gamma, gamma_x, gamma_y)"
	tm_screen >"$scr"
	pct=$(grep -o 'search: gamma  3 matches [0-9.]*%' "$scr" | grep -o '[0-9.]*%$' | tr -d %)
	near "$pct" 20 && ok "/gamma: combined share $pct% (true 20%)" ||
		bad "/gamma: combined share should be 20 +-3, seen '$pct'"
	grep -q 'selected: gamma ' "$scr" && ok "/gamma: the first match is selected" ||
		bad_dump "search" "/gamma: gamma not selected"
else
	bad_dump "search" "/gamma: no '3 matches' on screen"
fi
# gamma_x and gamma_y are equally heavy: either may come first (left-heavy)
tm_keys n
if tm_wait 3 'selected: gamma_[xy]'; then
	first=$(tm_screen | grep -o 'selected: gamma_[xy]')
	ok "n: next match ${first#selected: }"
	tm_keys n
	# polled until redrawn: the screen right after the key may still be
	# the first one's (a loaded run read it before the redraw)
	other_shown() { local s; s=$(tm_screen | grep -o 'selected: gamma_[xy]'); [ -n "$s" ] && [ "$s" != "$first" ]; }
	wait_until 3 other_shown && ok "n again: the other one" ||
		bad_dump "n n" "n again: expected the other of gamma_x/gamma_y"
else
	bad_dump "n" "n: neither gamma_x nor gamma_y selected"
fi
tm_keys Escape
tm_wait_gone 3 'matches' && ok "Esc at the root clears the search" || bad "Esc did not clear the search"

# ---- zoom / zoom out -------------------------------------------------------------
tm_keys / '^' w o r k e r '$' Enter
tm_wait 3 'selected: worker' || { tm_dump "select worker"; bad "could not select worker by search"; }
tm_keys Escape Enter
zoomed() {
	tm_screen >"$scr"
	# breadcrumb ends in "worker NN%", the first icicle row is worker, 200 wide
	grep -Eq '>  worker [0-9.]+%$' "$scr" &&
		awk 'index($0, "[worker") == 1 && length($0) == 200 && substr($0, 200) == "]" { f = 1 } END { exit !f }' "$scr" &&
		! grep -q '^\[main' "$scr"
}
if wait_until 3 zoomed; then
	ok "Enter: zoomed on worker (breadcrumb ends in worker, its box spans all 200 columns)"
else
	bad_dump "zoom" "Enter: expected the breadcrumb to end in worker and [worker] to span 200 columns"
fi
zoomed_out() {
	tm_screen >"$scr"
	grep -Eq '>  main [0-9.]+%$' "$scr" && grep -q '^\[main' "$scr"
}
tm_keys Escape
if wait_until 3 zoomed_out; then
	ok "Esc: zoomed out one level (breadcrumb ends in main)"
else
	bad_dump "zoom out" "Esc: expected the breadcrumb to end in main"
fi
tm_keys Escape Escape Escape Escape Escape
tm_wait 3 '^all 100%' && ok "Esc again: back at the root" || bad_dump "root" "Esc: not back at the root"

# ---- the selection survives refreshes ----------------------------------------------
tm_keys / '^' b e t a '$' Enter Escape
if tm_wait 3 'selected: beta '; then
	tm_screen >"$scr.1"
	sleep 2.5
	tm_screen >"$scr.2"
	cmp -s "$scr.1" "$scr.2" && bad "the screen did not change over 2.5 s (not live?)" ||
		ok "the icicle updates live"
	grep -q 'selected: beta ' "$scr.2" && ok "after 2.5 s of refreshes beta is still selected" ||
		bad_dump "refresh" "selection lost over a refresh"
	grep -q 'aged out' "$scr.2" && bad "beta reported as aged out" || ok "no aged-out notice"
else
	bad_dump "select beta" "could not select beta"
fi

# ---- bottom-up ---------------------------------------------------------------------------
tm_keys f
bottom_up() {
	tm_screen >"$scr"
	local first
	first=$(awk '/^\[all/ { getline; print; exit }' "$scr")
	grep -q 'bottom-up: all' "$scr" &&
		[[ $first == *"[alpha_leaf"* && $first == *"[beta"* ]] &&
		[[ $first != *"[main"* && $first != *"[worker"* ]]
}
if wait_until 3 bottom_up; then
	ok "f: bottom-up, the leaf functions (alpha_leaf, beta) are on the first row"
	grep -q 'selected: beta ' "$scr" && ok "f: beta stays selected" || bad "f: beta not selected"
	# against the four leaves of the tree (kernel leaves, e.g. interrupts
	# taken in alpha_leaf, are leaves of their own bottom-up)
	wl=$(width_of alpha_leaf) wb=$(width_of beta) wx=$(width_of gamma_x) wy=$(width_of gamma_y)
	s=$(share "$wl" "$((wl + wb + ${wx:-0} + ${wy:-0}))")
	near "$s" 50 && ok "f: alpha_leaf is $s% of the leaf boxes (true 50%)" ||
		bad "f: alpha_leaf should be 50% +-3 of the leaf boxes, seen '$s%' ($wl $wb $wx $wy)"
else
	bad_dump "bottom-up" "f: expected 'bottom-up' and the leaf functions on the first row"
fi
tm_keys f
tm_wait 3 '^\[worker' && ok "f again: top-down" || bad "f again: not top-down"

# ---- Enter on a top-view row jumps into the icicle ------------------------------------------
tm_keys 1
tm_wait 3 '%Own' || bad "1: top view not back"
tm_keys Enter # the first row: alpha_leaf (50% self), a leaf: opens bottom-up
if tm_wait 3 'selected: alpha_leaf'; then
	ok "Enter on the top row: the icicle opens on alpha_leaf"
	tm_match 'bottom-up' && ok "a leaf-only function opens bottom-up" || bad "expected bottom-up for a leaf"
else
	bad_dump "jump" "Enter on the top row: alpha_leaf not selected in the icicle"
fi

# ---- too small, quit ------------------------------------------------------------------------------
tm_resize 50 10
tm_wait 3 'too small' && ok "50x10: terminal too small notice" || bad_dump "small" "50x10: no too-small notice"
tm_resize 200 50
tm_wait 3 'selected: ' && ok "200x50: icicle back" || bad "200x50: icicle not back"
tm_keys q
wait_until 3 tm_dead && ok "q quits" || bad "q did not quit"
check_target_healthy "$TREE" "after q" burns

e2e_finish
