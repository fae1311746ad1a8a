/*
 * view_annotate — draws one annotated function (see view_annotate.h).
 *
 * Layout: a title bar (function, module, process, samples, mode), a line
 * saying where the code and source came from (or why not), the column
 * header, the lines, and a footer of keys. Instructions are
 * "PCT  ADDR  INSTRUCTION"; source lines sit in the address column,
 * indented, so they read as the program text between the instructions. The
 * hottest instructions (at least half the hottest's samples) are bold red,
 * those with 5% or more yellow. Text arrives sanitized from annotate.c.
 */
#include "stacktop/ui/view_annotate.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stacktop/ui/keymap.h"
#include "stacktop/ui/keys.h"
#include "stacktop/lib/text.h"

static const char *const mode_names[VIEW_ANNOTATE_MODES] = {"mixed", "instructions only",
							    "source only"};

static bool shown(const struct view_annotate_state *st, const struct annotate_line *l)
{
	switch (st->mode) {
	case VIEW_ANNOTATE_INSNS:
		return l->kind == ANNOTATE_INSN;
	case VIEW_ANNOTATE_SOURCE:
		return l->kind != ANNOTATE_INSN;
	default:
		return true;
	}
}

int view_annotate_count(const struct view_annotate_state *st)
{
	int n = 0;

	for (size_t i = 0; i < st->a.n; i++)
		n += shown(st, &st->a.lines[i]);
	return n;
}

/* The k-th line the mode shows, or NULL. */
static const struct annotate_line *nth(const struct view_annotate_state *st, int k)
{
	for (size_t i = 0; i < st->a.n; i++)
		if (shown(st, &st->a.lines[i]) && k-- == 0)
			return &st->a.lines[i];
	return NULL;
}

static uint64_t hottest(const struct annotate *a)
{
	uint64_t m = 0;

	for (size_t i = 0; i < a->n; i++)
		if (a->lines[i].kind == ANNOTATE_INSN && a->lines[i].count > m)
			m = a->lines[i].count;
	return m;
}

static void draw_line(const struct view_annotate_state *st, const struct annotate_line *l,
		      uint64_t top, struct grid *g, int y, bool sel)
{
	const struct annotate *a = &st->a;
	char pct[16] = "", addr[24] = "";
	uint16_t attr = 0;
	bool with_pct = l->kind == ANNOTATE_INSN || st->mode == VIEW_ANNOTATE_SOURCE;

	if (with_pct && l->count && a->total)
		snprintf(pct, sizeof(pct), "%5.1f%%", 100.0 * (double)l->count / (double)a->total);
	if (l->kind == ANNOTATE_INSN) {
		snprintf(addr, sizeof(addr), "0x%" PRIx64, l->addr);
		if (l->count && l->count * 2 >= top)
			attr = GRID_BOLD | GRID_COLOR(GRID_C_RED);
		else if (l->count && a->total && l->count * 20 >= a->total)
			attr = GRID_COLOR(GRID_C_YELLOW);
		grid_printf(g, 0, y, attr, g->w, "%6s  %14s  %s", pct, addr, l->text);
	} else {
		attr = l->kind == ANNOTATE_SRC ? GRID_COLOR(GRID_C_CYAN) : GRID_DIM;
		grid_printf(g, 0, y, attr, g->w, "%6s  %s", pct, l->text);
	}
	if (sel)
		grid_attr(g, 0, y, g->w, GRID_REVERSE);
}

void view_annotate_render(const struct view_annotate_state *st, struct grid *g)
{
	const struct annotate *a = &st->a;
	char func[200], mod[128], where[32];
	uint64_t top = hottest(a);
	int y = 0, body, k;

	grid_clear(g);
	text_fit(a->m.func, g->w / 2, func, sizeof(func));
	text_sanitize(a->m.module, mod, sizeof(mod));
	grid_fill(g, 0, 0, g->w, L' ', GRID_COLOR(GRID_C_HEADER));
	if (a->m.pid > 0)
		snprintf(where, sizeof(where), "pid %d", a->m.pid);
	else
		snprintf(where, sizeof(where), "saved profile");
	grid_printf(g, 0, y++, GRID_COLOR(GRID_C_HEADER) | GRID_BOLD, g->w,
		    "annotate %s  %s  %s  %" PRIu64 " samples  [%s]", func, mod, where, a->total,
		    mode_names[st->mode]);
	if (st->which[0])
		grid_printf(g, 0, y++, 0, g->w, "%s", st->which);
	if (a->note[0])
		grid_printf(g, 0, y++, GRID_DIM, g->w, "%s", a->note);
	if (!a->n)
		return;
	if (st->mode == VIEW_ANNOTATE_SOURCE)
		grid_printf(g, 0, y++, GRID_BOLD, g->w, "%6s  %s", "PCT", "SOURCE");
	else
		grid_printf(g, 0, y++, GRID_BOLD, g->w, "%6s  %14s  %s", "PCT", "ADDR",
			    "INSTRUCTION");
	body = g->h - y - (st->batch ? 0 : 1);
	for (k = st->batch ? 0 : st->scroll; body > 0; k++, body--) {
		const struct annotate_line *l = nth(st, k);

		if (!l)
			break;
		draw_line(st, l, top, g, y++, !st->batch && k == st->selected);
	}
	if (!st->batch && st->status && st->status[0])
		grid_printf(g, 0, g->h - 1, GRID_BOLD, g->w, "%s", st->status);
	else if (!st->batch)
		grid_printf(g, 0, g->h - 1, GRID_COLOR(GRID_C_HEADER), g->w,
			    "Esc back  a source/mixed/instructions  Enter call: callee  "
			    "Up/Down/PgUp/PgDn move  q quit");
}

/* ---- keys ---- */

/* What the keys' functions get: the state, and where to put the request. */
struct annotate_key_ctx {
	struct view_annotate_state *st;
	uint64_t *target;
	enum view_annotate_req req;
};

static struct view_action ann_close(void *ctx, int key)
{
	(void)key;
	((struct annotate_key_ctx *)ctx)->req = VIEW_ANNOTATE_CLOSE;
	return keymap_used(true);
}

static struct view_action ann_mode(void *ctx, int key)
{
	struct view_annotate_state *st = ((struct annotate_key_ctx *)ctx)->st;

	(void)key;
	st->mode = (enum view_annotate_mode)((st->mode + 1) % VIEW_ANNOTATE_MODES);
	st->selected = st->scroll = 0;
	return keymap_used(true);
}

static struct view_action ann_move(void *ctx, int key)
{
	struct view_annotate_state *st = ((struct annotate_key_ctx *)ctx)->st;
	int n = view_annotate_count(st), page = st->page > 1 ? st->page : 10;

	view_move_selection(&st->selected, key, page);
	if (st->selected >= n)
		st->selected = n - 1;
	if (st->selected < 0)
		st->selected = 0;
	if (st->selected < st->scroll)
		st->scroll = st->selected;
	if (st->selected >= st->scroll + page)
		st->scroll = st->selected - page + 1;
	return keymap_used(true);
}

/* Enter on a call: follow it to the callee. */
static struct view_action ann_follow(void *ctx, int key)
{
	struct annotate_key_ctx *c = ctx;
	const struct annotate_line *l = nth(c->st, c->st->selected);

	(void)key;
	if (l && l->call) {
		*c->target = l->target;
		c->req = VIEW_ANNOTATE_FOLLOW;
	}
	return keymap_used(true);
}

/* Not on the help screen: the annotate view's footer says its keys. */
static const struct keymap_entry annotate_keys[] = {
    {{'a'}, 0, ann_mode, NULL, "source / mixed / instructions", 0},
    {{KEYS_ENTER}, 0, ann_follow, NULL, "on a call: the callee", 0},
    {{KEYS_ESC}, 0, ann_close, NULL, "back", 0},
    {{KEYS_UP, KEYS_DOWN, KEYS_PGUP, KEYS_PGDN, KEYS_HOME, KEYS_END},
     0,
     ann_move,
     "\xe2\x86\x91\xe2\x86\x93 PgUp/Dn",
     "move (Home, End)",
     0},
};

const struct keymap view_annotate_keymap = {
    "Annotate view", annotate_keys, sizeof(annotate_keys) / sizeof(annotate_keys[0]), false};

enum view_annotate_req view_annotate_key(struct view_annotate_state *st, int key, uint64_t *target)
{
	struct annotate_key_ctx c = {st, target, VIEW_ANNOTATE_USED};

	if (keymap_act(&view_annotate_keymap, &c, key).kind == VIEW_ACTION_NONE)
		return VIEW_ANNOTATE_NONE;
	return c.req;
}

void view_annotate_close(struct view_annotate_state *st)
{
	if (st->open)
		annotate_close(&st->a);
	st->open = false;
	st->which[0] = '\0';
	st->selected = st->scroll = 0;
}

/* ---- opening (the ui's side of the keys) ---- */

static int open_match(struct view_annotate_state *st, const struct window *w, struct sym *sy,
		      const char *const *srcdirs, struct annotate_match *m, char *msg, size_t msize)
{
	struct annotate_addr *c;
	char name[160];
	size_t n;
	int err;

	m->only_pid = st->pid;
	if ((err = annotate_count(w, m, &c, &n)))
		return err;
	free(c);
	if (!m->self) {
		text_sanitize(m->func, name, sizeof(name));
		snprintf(msg, msize,
			 "%s has no samples of its own in the window: nothing to annotate", name);
		return -ENOENT;
	}
	view_annotate_close(st);
	if ((err = annotate_open(&st->a, sy, m, srcdirs)))
		return err;
	st->open = true;
	st->selected = st->scroll = 0;
	view_annotate_update(st, w);
	return 0;
}

int view_annotate_open_frame(struct view_annotate_state *st, const struct window *w, struct sym *sy,
			     const char *const *srcdirs, const struct frame *f, char *msg,
			     size_t msize)
{
	struct annotate_match m;

	if (annotate_match_frame(f, &m)) {
		snprintf(msg, msize, "annotate needs a function: this row has no name");
		return -ENOENT;
	}
	st->mode = VIEW_ANNOTATE_MIXED; /* a new look starts mixed; following a call keeps it */
	return open_match(st, w, sy, srcdirs, &m, msg, msize);
}

int view_annotate_open_name(struct view_annotate_state *st, const struct window *w, struct sym *sy,
			    const char *const *srcdirs, const char *name, char *msg, size_t msize)
{
	struct annotate_match m;
	char others[400], shown[160], which[512];
	int nm, err;

	text_sanitize(name, shown, sizeof(shown));
	if ((err = annotate_find(w, name, &m, &nm, others, sizeof(others)))) {
		if (err == -ENOENT)
			snprintf(msg, msize, "no function named '%s' has samples of its own yet",
				 shown);
		return err;
	}
	which[0] = '\0';
	if (nm > 1) {
		char fn[200];

		text_sanitize(m.func, fn, sizeof(fn));
		if (snprintf(which, sizeof(which),
			     "%s (%s): the hottest of %d functions matching '%s'; also: %s", fn,
			     m.module, nm, shown, others) < 0)
			which[0] = '\0';
	}
	if ((err = open_match(st, w, sy, srcdirs, &m, msg, msize)))
		return err;
	text_sanitize(which, st->which, sizeof(st->which));
	return 0;
}

int view_annotate_follow(struct view_annotate_state *st, const struct window *w, struct sym *sy,
			 const char *const *srcdirs, uint64_t target, char *msg, size_t msize)
{
	struct annotate_match m;

	if (annotate_find_addr(w, st->a.m.pid, target, &m)) {
		snprintf(msg, msize, "the callee at 0x%" PRIx64 " has no samples of its own",
			 target);
		return -ENOENT;
	}
	return open_match(st, w, sy, srcdirs, &m, msg, msize);
}

void view_annotate_update(struct view_annotate_state *st, const struct window *w)
{
	if (st->open)
		annotate_update(&st->a, w);
}
