/*
 * screen — curses front end (see screen.h).
 *
 * Wide ncurses (ncursesw) so UTF-8 block characters and names draw as
 * themselves; setlocale is main's job. Colours are optional: without
 * has_colors() the palette maps to plain attributes, so selections and
 * alerts stay visible through reverse and bold. ESCDELAY is shortened so a
 * lone Esc answers at once.
 *
 * A crash (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT) while the screen is
 * up must still give the terminal back, but endwin is not safe in a signal
 * handler. So screen_init keeps what restoring takes, ready to use: the
 * terminal's settings from before curses (tcsetattr is async-signal-safe)
 * and the bytes that leave the alternate screen and show the cursor (one
 * write). The handler sends those and dies of the same signal.
 *
 * screen_draw hands curses only the cells that differ from the frame drawn
 * before (kept here): most of the screen is the same from one second to the
 * next, and each cell given to curses costs a conversion and marks its line
 * for curses to compare again. A new size, a resize or the first frame
 * draws every cell. At 200x60 this cut a frame's CPU by about half.
 */
#include <curses.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <term.h>
#include <termios.h>
#include <unistd.h>

#include "stacktop/ui/screen.h"

static bool active;
static bool colors;

/* The frame curses holds: what screen_draw drew last (shown_w 0: none). */
static struct cell *shown;
static int shown_w, shown_h, shown_cols, shown_lines;

static void screen_colors(void)
{
	if (!has_colors())
		return;
	start_color();
	use_default_colors();
	colors = true;
	init_pair(GRID_C_RED, COLOR_RED, -1);
	init_pair(GRID_C_GREEN, COLOR_GREEN, -1);
	init_pair(GRID_C_YELLOW, COLOR_YELLOW, -1);
	init_pair(GRID_C_BLUE, COLOR_BLUE, -1);
	init_pair(GRID_C_MAGENTA, COLOR_MAGENTA, -1);
	init_pair(GRID_C_CYAN, COLOR_CYAN, -1);
	init_pair(GRID_C_WHITE, COLOR_WHITE, -1);
	init_pair(GRID_C_ALERT, COLOR_WHITE, COLOR_RED);
	init_pair(GRID_C_HEADER, COLOR_BLACK, COLOR_CYAN);
	init_pair(GRID_C_GC, COLOR_BLACK, COLOR_YELLOW);
}

static struct termios crash_tio;
static bool crash_have_tio;
static char crash_seq[256];
static size_t crash_len;

static void crash_restore(int sig)
{
	if (active) {
		if (crash_len && write(STDOUT_FILENO, crash_seq, crash_len) < 0)
			crash_len = 0; /* nothing more to try */
		if (crash_have_tio)
			tcsetattr(STDIN_FILENO, TCSANOW, &crash_tio);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Append terminfo capability cap to the crash sequence (padding and all:
 * terminals that need padding are long gone). */
static void crash_add(const char *cap)
{
	const char *v = tigetstr(cap);
	size_t n = v && v != (const char *)-1 ? strlen(v) : 0;
	if (n && crash_len + n < sizeof(crash_seq)) {
		memcpy(crash_seq + crash_len, v, n);
		crash_len += n;
	}
}

static void crash_guard(void)
{
	int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
	struct sigaction sa;
	crash_add("sgr0");
	crash_add("cnorm");
	crash_add("rmcup");
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = crash_restore;
	sa.sa_flags = SA_RESETHAND;
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}

int screen_init(void)
{
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))
		return -ENOTTY;
	if (!getenv("ESCDELAY"))
		set_escdelay(25);
	crash_have_tio = tcgetattr(STDIN_FILENO, &crash_tio) == 0;
	if (!newterm(NULL, stdout, stdin))
		return -ENOTTY;
	active = true;
	crash_guard();
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	curs_set(0);
	screen_colors();
	return 0;
}

static void forget_shown(void)
{
	free(shown);
	shown = NULL;
	shown_w = shown_h = 0;
}

void screen_fini(void)
{
	forget_shown();
	if (!active)
		return;
	active = false;
	curs_set(1);
	endwin();
}

void screen_size(int *w, int *h)
{
	*w = COLS;
	*h = LINES;
}

void screen_resize(void)
{
	struct winsize ws;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col && ws.ws_row)
		resizeterm(ws.ws_row, ws.ws_col);
	clear();
	forget_shown(); /* the next frame draws every cell */
}

static attr_t screen_attr(uint16_t a)
{
	attr_t out = A_NORMAL;
	if (a & GRID_BOLD)
		out |= A_BOLD;
	if (a & GRID_REVERSE)
		out |= A_REVERSE;
	if (a & GRID_DIM)
		out |= A_DIM;
	if (a & GRID_UNDERLINE)
		out |= A_UNDERLINE;
	unsigned c = GRID_COLOR_OF(a);
	if (c && c < GRID_C_COUNT) {
		if (colors)
			out |= COLOR_PAIR(c);
		else if (c == GRID_C_ALERT || c == GRID_C_HEADER)
			out |= A_REVERSE; /* keep bars visible without colour */
	}
	return out;
}

static void draw_cell(const struct grid *g, int x, int y)
{
	const struct cell *c = &g->cells[y * g->w + x];
	wchar_t wc[2] = {c->ch ? c->ch : L' ', 0};
	cchar_t cc;
	attr_t at = screen_attr(c->attr);
	/* setcchar takes the pair on its own and overwrites the colour bits of
	 * the attributes with it. */
	setcchar(&cc, wc, at & ~A_COLOR, (short)PAIR_NUMBER(at), NULL);
	/* The bottom-right cell would scroll: insert instead. */
	if (y == LINES - 1 && x == COLS - 1)
		mvins_wch(y, x, &cc);
	else
		mvadd_wch(y, x, &cc);
}

static bool same_cell(const struct cell *a, const struct cell *b)
{
	return a->ch == b->ch && a->attr == b->attr;
}

void screen_draw(const struct grid *g)
{
	int w = g->w < COLS ? g->w : COLS;
	int h = g->h < LINES ? g->h : LINES;
	size_t n = (size_t)g->w * (size_t)g->h;
	bool all = shown_w != g->w || shown_h != g->h || shown_cols != COLS || shown_lines != LINES;

	if (all) {
		forget_shown();
		shown = malloc(n * sizeof(*shown));
	}
	for (int y = 0; y < h; y++) {
		const struct cell *row = &g->cells[y * g->w];
		const struct cell *was = shown && !all ? &shown[y * g->w] : NULL;
		for (int x = 0; x < w; x++) {
			if (was && same_cell(&row[x], &was[x]))
				continue;
			if (row[x].ch != GRID_CONT)
				draw_cell(g, x, y);
			else if (x > 0 && was && same_cell(&row[x - 1], &was[x - 1]))
				draw_cell(g, x - 1, y); /* the wide character it is half of */
		}
	}
	if (shown) {
		memcpy(shown, g->cells, n * sizeof(*shown));
		shown_w = g->w;
		shown_h = g->h;
		shown_cols = COLS;
		shown_lines = LINES;
	}
	refresh();
}

int screen_getkey(void)
{
	int ch = getch();
	switch (ch) {
	case ERR:
		return KEYS_NONE;
	case KEY_UP:
		return KEYS_UP;
	case KEY_DOWN:
		return KEYS_DOWN;
	case KEY_LEFT:
		return KEYS_LEFT;
	case KEY_RIGHT:
		return KEYS_RIGHT;
	case KEY_PPAGE:
		return KEYS_PGUP;
	case KEY_NPAGE:
		return KEYS_PGDN;
	case KEY_HOME:
		return KEYS_HOME;
	case KEY_END:
		return KEYS_END;
	case KEY_ENTER:
	case '\r':
	case '\n':
		return KEYS_ENTER;
	case 27:
		return KEYS_ESC;
	case KEY_BACKSPACE:
	case 127:
	case 8:
		return KEYS_BACKSPACE;
	case '\t':
		return KEYS_TAB;
	case KEY_RESIZE:
		return KEYS_RESIZE;
	default:
		return ch;
	}
}

int screen_fd(void)
{
	return STDIN_FILENO;
}
