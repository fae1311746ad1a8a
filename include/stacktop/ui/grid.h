/*
 * grid — a rectangle of character cells that views draw into.
 *
 * Views never touch curses: they render into a struct grid, which the screen
 * module blits to the terminal and batch mode prints as plain lines. A cell
 * holds one Unicode code point (wide characters take two cells: the second
 * one holds GRID_CONT) and a set of attributes. The grid owns its cells; the
 * caller owns the struct. Writers clip at the grid's edges, so a view may
 * draw without checking bounds.
 */
#ifndef STACKTOP_GRID_H
#define STACKTOP_GRID_H

#include <stddef.h>
#include <stdint.h>
#include <wchar.h>

/* Attribute bits. Colours are a small palette index in the top bits. */
enum {
	GRID_BOLD = 1 << 0,
	GRID_REVERSE = 1 << 1,
	GRID_DIM = 1 << 2,
	GRID_UNDERLINE = 1 << 3,
};
#define GRID_COLOR_SHIFT 8
#define GRID_COLOR(c) ((uint16_t)((c) << GRID_COLOR_SHIFT))
#define GRID_COLOR_OF(a) (((a) >> GRID_COLOR_SHIFT) & 0xff)

/* Palette: the screen maps these to curses colour pairs. */
enum grid_color {
	GRID_C_DEFAULT = 0,
	GRID_C_RED,
	GRID_C_GREEN,
	GRID_C_YELLOW,
	GRID_C_BLUE,
	GRID_C_MAGENTA,
	GRID_C_CYAN,
	GRID_C_WHITE,
	GRID_C_ALERT,  /* white on red: alerts */
	GRID_C_HEADER, /* black on cyan: column headers, title bars */
	GRID_C_GC,     /* black on yellow: a garbage collector's boxes in the icicle */
	GRID_C_COUNT
};

#define GRID_CONT ((wchar_t)-1) /* right half of a double-width char */

struct cell {
	wchar_t ch;
	uint16_t attr;
};

struct grid {
	int w, h;
	struct cell *cells;
};

int grid_init(struct grid *g, int w, int h); /* cells are spaces */
void grid_free(struct grid *g);
int grid_resize(struct grid *g, int w, int h); /* clears */
void grid_clear(struct grid *g);
struct cell *grid_at(struct grid *g, int x, int y); /* NULL outside */

/* Write UTF-8 text at (x, y), at most maxw columns (maxw < 0: to the right
 * edge). Control characters and invalid UTF-8 show as '?'. Returns the
 * number of columns written. */
int grid_put(struct grid *g, int x, int y, const char *utf8, uint16_t attr, int maxw);
/* printf into the grid; same clipping. */
int grid_printf(struct grid *g, int x, int y, uint16_t attr, int maxw, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
/* Fill a run of cells with one character. */
void grid_fill(struct grid *g, int x, int y, int n, wchar_t ch, uint16_t attr);
/* Set attributes on a run of cells (keeps their characters). */
void grid_attr(struct grid *g, int x, int y, int n, uint16_t attr);

/* Row y as UTF-8 text, trailing spaces removed. Returns bytes written
 * (excluding the NUL) or -ENOSPC. */
int grid_row_text(const struct grid *g, int y, char *buf, size_t size);

#endif
