/*
 * screen — the only module that includes curses: terminal set-up and
 * teardown, colours, keys, size, and blitting a struct grid.
 *
 * screen_init puts the terminal in cbreak/noecho mode with the keypad on
 * and the cursor hidden; screen_fini restores it and is safe to call twice,
 * from atexit and from a fatal-signal handler. Keys come back as plain
 * characters or KEYS_* codes (keys.h), so the caller never sees curses.
 * SIGWINCH is delivered to main (through its signalfd), which then calls
 * screen_resize.
 */
#ifndef STACKTOP_SCREEN_H
#define STACKTOP_SCREEN_H

#include <stdbool.h>

#include "stacktop/ui/grid.h"
#include "stacktop/ui/keys.h"

/* 0, or -ENOTTY when stdin/stdout is not a terminal curses can drive. */
int screen_init(void);
void screen_fini(void);
void screen_size(int *w, int *h);
/* Re-read the terminal size after SIGWINCH. */
void screen_resize(void);
/* Draw the grid (sized to the screen) and refresh. */
void screen_draw(const struct grid *g);
/* Next key, or KEYS_NONE when none is waiting (non-blocking). */
int screen_getkey(void);
/* The fd that becomes readable when a key is waiting (stdin). */
int screen_fd(void);

#endif
