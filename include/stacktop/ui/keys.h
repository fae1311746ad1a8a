/*
 * keys — the key codes the views and the app understand, with no terminal
 * library behind them.
 *
 * A key is a plain character (its byte, 0x00..0xff: 'q', '/', a byte of a
 * UTF-8 sequence) or one of the KEYS_* codes below, which lie above any
 * byte. screen.c is the one place that turns curses keys into these; views
 * and tests include only this header, so a view never sees the screen.
 */
#ifndef STACKTOP_KEYS_H
#define STACKTOP_KEYS_H

enum keys {
	KEYS_NONE = -1, /* no key is waiting */
	KEYS_UP = 0x10000,
	KEYS_DOWN,
	KEYS_LEFT,
	KEYS_RIGHT,
	KEYS_PGUP,
	KEYS_PGDN,
	KEYS_HOME,
	KEYS_END,
	KEYS_ENTER,
	KEYS_ESC,
	KEYS_BACKSPACE,
	KEYS_TAB,
	KEYS_RESIZE, /* the terminal changed size */
};

#endif
