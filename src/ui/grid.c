/*
 * grid — a rectangle of character cells that views draw into.
 *
 * The grid owns cells[] (w * h, row major); the caller owns struct grid and
 * calls grid_free. Every writer clips at the edges, so views draw blindly.
 *
 * Wide characters take two cells, the right one holding GRID_CONT. Writers
 * keep that invariant: overwriting either half of a wide character blanks
 * the other half, and a wide character that would straddle the clip edge is
 * replaced by a space rather than drawn half. Text goes through the
 * locale-independent decoder in text.c: control characters and invalid
 * UTF-8 become '?', zero-width code points (combining marks) are dropped so
 * a cell always holds exactly one column's worth.
 */
#include "stacktop/ui/grid.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stacktop/lib/text.h"

int grid_init(struct grid *g, int w, int h)
{
	g->w = g->h = 0;
	g->cells = NULL;
	return grid_resize(g, w, h);
}

void grid_free(struct grid *g)
{
	free(g->cells);
	g->cells = NULL;
	g->w = g->h = 0;
}

int grid_resize(struct grid *g, int w, int h)
{
	struct cell *c;

	if (w < 0 || h < 0 || w > 100000 || h > 100000)
		return -EINVAL;
	/* One spare cell so a 0x0 grid still has a valid pointer. */
	c = realloc(g->cells, ((size_t)w * (size_t)h + 1) * sizeof(*c));
	if (!c)
		return -ENOMEM;
	g->cells = c;
	g->w = w;
	g->h = h;
	grid_clear(g);
	return 0;
}

void grid_clear(struct grid *g)
{
	size_t i, n = (size_t)g->w * (size_t)g->h;

	for (i = 0; i < n; i++) {
		g->cells[i].ch = L' ';
		g->cells[i].attr = 0;
	}
}

struct cell *grid_at(struct grid *g, int x, int y)
{
	if (x < 0 || y < 0 || x >= g->w || y >= g->h)
		return NULL;
	return &g->cells[(size_t)y * (size_t)g->w + (size_t)x];
}

/* Store one narrow cell, repairing any wide character it cuts in half. */
static void set_cell(struct grid *g, int x, int y, wchar_t ch, uint16_t attr)
{
	struct cell *c = grid_at(g, x, y), *n;

	if (!c)
		return;
	if (c->ch == GRID_CONT && (n = grid_at(g, x - 1, y)))
		n->ch = L' ';
	if ((n = grid_at(g, x + 1, y)) && n->ch == GRID_CONT)
		n->ch = L' ';
	c->ch = ch;
	c->attr = attr;
}

int grid_put(struct grid *g, int x, int y, const char *utf8, uint16_t attr, int maxw)
{
	int end, col = x, len, cw;
	uint32_t cp;

	if (!utf8 || y < 0 || y >= g->h)
		return 0;
	end = g->w;
	if (maxw >= 0 && (long)x + maxw < end)
		end = x + maxw;
	while (col < end && (len = text_utf8_decode(utf8, &cp)) != 0) {
		if (len < 0 || text_is_control(cp)) {
			cp = '?';
			if (len < 0)
				len = 1;
		}
		utf8 += len;
		cw = text_cp_width(cp);
		if (cw == 0)
			continue;
		if (cw == 2 && col + 1 >= end) {
			/* Would straddle the right edge: blank the half that fits. */
			if (col >= 0)
				set_cell(g, col, y, L' ', attr);
			col++;
			break;
		}
		if (cw == 2 && col == -1) {
			/* Straddles the left edge: blank the visible right half. */
			set_cell(g, 0, y, L' ', attr);
			col += 2;
			continue;
		}
		if (col >= 0) {
			set_cell(g, col, y, (wchar_t)cp, attr);
			if (cw == 2) {
				set_cell(g, col + 1, y, L' ', attr);
				grid_at(g, col + 1, y)->ch = GRID_CONT;
			}
		}
		col += cw;
	}
	if (col > end)
		col = end;
	return col - x;
}

int grid_printf(struct grid *g, int x, int y, uint16_t attr, int maxw, const char *fmt, ...)
{
	char buf[512], *p = buf;
	va_list ap;
	int n, r;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return 0;
	if ((size_t)n >= sizeof(buf)) {
		p = malloc((size_t)n + 1);
		if (!p)
			return 0;
		va_start(ap, fmt);
		vsnprintf(p, (size_t)n + 1, fmt, ap);
		va_end(ap);
	}
	r = grid_put(g, x, y, p, attr, maxw);
	if (p != buf)
		free(p); /* cppcheck-suppress autovarInvalidDeallocation ; only the malloc'd copy */
	return r;
}

void grid_fill(struct grid *g, int x, int y, int n, wchar_t ch, uint16_t attr)
{
	int i;

	/* A fill of wide or control characters would break the cell model. */
	if (ch == GRID_CONT || ch < 0x20 || text_cp_width((uint32_t)ch) != 1)
		ch = L'?';
	for (i = 0; i < n; i++)
		if (x + i >= 0 && x + i < g->w)
			set_cell(g, x + i, y, ch, attr);
}

void grid_attr(struct grid *g, int x, int y, int n, uint16_t attr)
{
	struct cell *c;
	int i;

	for (i = 0; i < n; i++)
		if ((c = grid_at(g, x + i, y)))
			c->attr = attr;
}

int grid_row_text(const struct grid *g, int y, char *buf, size_t size)
{
	const struct cell *row;
	size_t o = 0, keep = 0;
	char enc[4];
	uint32_t cp;
	int x, len;

	if (size == 0)
		return -ENOSPC;
	buf[0] = 0;
	if (y < 0 || y >= g->h)
		return 0;
	row = &g->cells[(size_t)y * (size_t)g->w];
	for (x = 0; x < g->w; x++) {
		if (row[x].ch == GRID_CONT)
			continue;
		cp = (uint32_t)row[x].ch;
		if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || text_is_control(cp))
			cp = '?';
		len = text_utf8_encode(cp, enc);
		if (o + (size_t)len >= size) {
			/* Only an error if something but blanks is cut off. */
			for (; x < g->w; x++)
				if (row[x].ch != L' ' && row[x].ch != GRID_CONT)
					return -ENOSPC;
			break;
		}
		memcpy(buf + o, enc, (size_t)len);
		o += (size_t)len;
		if (row[x].ch != L' ')
			keep = o;
	}
	buf[keep] = 0;
	return (int)keep;
}
