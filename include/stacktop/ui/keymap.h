/*
 * keymap — keys as data: a table of bindings (the key codes, the function
 * that acts on them, their line on the help screen) that drives both a
 * view's dispatch (view_X_key looks the key up) and the help screen (?),
 * and that the man page's key list is checked against
 * (tests/unit/test_ui_keys.c).
 *
 * A table is a const array owned by the module whose state its functions
 * move: ui.c has the keys that mean the same in every view, each view_X.c
 * its own. A binding's function gets the owner's context (the view's
 * state, or a struct of the owner's) as void *, and the key that matched;
 * it answers with a struct view_action (VIEW_ACTION_NONE: the key was not
 * used after all, e.g. Enter with nothing selected).
 *
 * Help lines: a binding with help text starts a line, labelled with its
 * keys' names (or its own label); a binding without help text joins the
 * line above, its label added after two spaces ("b  B"). KEYMAP_QUIET
 * bindings are not on the help screen: another line says them. Nothing
 * here allocates; tables live for the program.
 */
#ifndef STACKTOP_KEYMAP_H
#define STACKTOP_KEYMAP_H

#include <stdbool.h>
#include <stddef.h>

#include "stacktop/ui/view.h"

/* Documented keys of one binding, at most. */
#define KEYMAP_KEYS 7

enum keymap_flag {
	KEYMAP_QUIET = 1u << 0, /* not on the help screen (another line says it) */
	KEYMAP_OWNER = 1u << 8, /* the first bit a table's owner may use for itself */
};

struct keymap_entry {
	int keys[KEYMAP_KEYS]; /* key codes (keys.h), 0-ended: what the man page lists */
	int alias;	       /* one more key doing the same, not documented ('l' for
				  'L'); 0: none */
	struct view_action (*fn)(void *ctx, int key);
	const char *label; /* the keys as the help screen shows them; NULL: their names */
	const char *help;  /* the help line's text; NULL: joins the line above */
	unsigned flags;	   /* enum keymap_flag, and the owner's bits */
};

/* The arrows, PgUp/PgDn and Home/End moving a table's selection with fn,
 * quiet on the help screen (the top view's line says them). keys.h
 * gives their codes. */
#define KEYMAP_MOVE_ENTRY(fn)                                                                      \
	{                                                                                          \
		{KEYS_UP, KEYS_DOWN, KEYS_PGUP, KEYS_PGDN, KEYS_HOME, KEYS_END}, 0, fn, NULL,      \
		    "move selection", KEYMAP_QUIET                                                 \
	}

struct keymap {
	const char *title; /* "Top view": the help's section and the man page's
			      "In the top view:" */
	const struct keymap_entry *entries;
	size_t n;
	bool on_help; /* a section of the help screen (else its view's footer says
			 its keys) */
};

/* The binding of key (one of its keys or its alias), NULL: none. */
const struct keymap_entry *keymap_find(const struct keymap *km, int key);
/* Look key up in km and run its binding on ctx; VIEW_ACTION_NONE when no
 * binding has it. */
struct view_action keymap_act(const struct keymap *km, void *ctx, int key);

/* A key's name as the man page writes it: "q", "space", "Tab", "Enter",
 * "Esc", "Backspace", "Up", "Down", "Left", "Right", "PgUp", "PgDn",
 * "Home", "End"; with arrows, the arrow keys as the help screen draws them
 * (an arrow character). Returns buf. */
const char *keymap_key_name(int key, bool arrows, char *buf, size_t size);
/* An entry's label on the help screen: its label, else its keys' names
 * ("1-4" for a run of digits, arrows side by side). Returns buf. */
const char *keymap_label(const struct keymap_entry *e, char *buf, size_t size);

/* The result of a binding: used or not. */
static inline struct view_action keymap_used(bool used)
{
	return (struct view_action){.kind = used ? VIEW_ACTION_USED : VIEW_ACTION_NONE};
}

#endif
