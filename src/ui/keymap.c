/*
 * keymap — looking keys up in a table of bindings, and naming them (see
 * keymap.h for the contract).
 */
#include "stacktop/ui/keymap.h"

#include <stdio.h>
#include <string.h>

#include "stacktop/ui/keys.h"

const struct keymap_entry *keymap_find(const struct keymap *km, int key)
{
	if (key <= 0)
		return NULL;
	for (size_t i = 0; i < km->n; i++) {
		const struct keymap_entry *e = &km->entries[i];

		if (e->alias == key)
			return e;
		for (int k = 0; k < KEYMAP_KEYS && e->keys[k]; k++)
			if (e->keys[k] == key)
				return e;
	}
	return NULL;
}

struct view_action keymap_act(const struct keymap *km, void *ctx, int key)
{
	const struct keymap_entry *e = keymap_find(km, key);

	return e && e->fn ? e->fn(ctx, key) : keymap_used(false);
}

const char *keymap_key_name(int key, bool arrows, char *buf, size_t size)
{
	static const struct {
		int key;
		const char *name, *arrow;
	} names[] = {
	    {' ', "space", NULL},
	    {KEYS_UP, "Up", "\xe2\x86\x91"},
	    {KEYS_DOWN, "Down", "\xe2\x86\x93"},
	    {KEYS_LEFT, "Left", "\xe2\x86\x90"},
	    {KEYS_RIGHT, "Right", "\xe2\x86\x92"},
	    {KEYS_PGUP, "PgUp", NULL},
	    {KEYS_PGDN, "PgDn", NULL},
	    {KEYS_HOME, "Home", NULL},
	    {KEYS_END, "End", NULL},
	    {KEYS_ENTER, "Enter", NULL},
	    {KEYS_ESC, "Esc", NULL},
	    {KEYS_BACKSPACE, "Backspace", NULL},
	    {KEYS_TAB, "Tab", NULL},
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].key == key) {
			snprintf(buf, size, "%s",
				 arrows && names[i].arrow ? names[i].arrow : names[i].name);
			return buf;
		}
	if (key > ' ' && key < 0x7f)
		snprintf(buf, size, "%c", key);
	else
		snprintf(buf, size, "0x%x", (unsigned)key);
	return buf;
}

static bool is_arrow(int key)
{
	return key >= KEYS_UP && key <= KEYS_RIGHT;
}

const char *keymap_label(const struct keymap_entry *e, char *buf, size_t size)
{
	size_t o = 0;
	char name[32];

	if (e->label) {
		snprintf(buf, size, "%s", e->label);
		return buf;
	}
	buf[0] = '\0';
	for (int k = 0; k < KEYMAP_KEYS && e->keys[k] && o < size; k++) {
		int key = e->keys[k], run = k;

		/* 1 2 3 4 -> "1-4" */
		while (key >= '0' && key <= '9' && run + 1 < KEYMAP_KEYS &&
		       e->keys[run + 1] == e->keys[run] + 1)
			run++;
		keymap_key_name(key, true, name, sizeof(name));
		const char *sep = !k || (is_arrow(key) && is_arrow(e->keys[k - 1])) ? "" : " ";
		if (run - k >= 2) {
			o += (size_t)snprintf(buf + o, size - o, "%s%c-%c", sep, key, e->keys[run]);
			k = run;
		} else {
			o += (size_t)snprintf(buf + o, size - o, "%s%s", sep, name);
		}
	}
	return buf;
}
