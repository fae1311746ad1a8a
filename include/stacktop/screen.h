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

#include "stacktop/grid.h"
#include "stacktop/keys.h"

/* The key codes live in keys.h (views include only that); these names
 * stay for the app's key handling. */
#define SCREEN_KEY_NONE KEYS_NONE
#define SCREEN_KEY_UP KEYS_UP
#define SCREEN_KEY_DOWN KEYS_DOWN
#define SCREEN_KEY_LEFT KEYS_LEFT
#define SCREEN_KEY_RIGHT KEYS_RIGHT
#define SCREEN_KEY_PGUP KEYS_PGUP
#define SCREEN_KEY_PGDN KEYS_PGDN
#define SCREEN_KEY_HOME KEYS_HOME
#define SCREEN_KEY_END KEYS_END
#define SCREEN_KEY_ENTER KEYS_ENTER
#define SCREEN_KEY_ESC KEYS_ESC
#define SCREEN_KEY_BACKSPACE KEYS_BACKSPACE
#define SCREEN_KEY_TAB KEYS_TAB
#define SCREEN_KEY_RESIZE KEYS_RESIZE

/* 0, or -ENOTTY when stdin/stdout is not a terminal curses can drive. */
int screen_init(void);
void screen_fini(void);
bool screen_active(void);
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
