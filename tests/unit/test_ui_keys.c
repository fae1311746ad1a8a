/*
 * test_ui_keys — the key tables (ui_keymaps, keymap.h) against what the
 * documentation says: the KEYS section of doc/stacktop.1 view by view (a
 * key in a table the man page does not list fails, and the other way
 * round), the key lists of README.md and of --help as a whole; and the
 * tables themselves: no key twice in one table, no view key that a key
 * of every view would take first, each key named.
 *
 * The man page's keys are the tags of its .TP paragraphs (".B L",
 * ".BR b \", \" B", ".B Up Down PgUp PgDn Home End"); a paragraph (after
 * .PP, or first) of one line ending in ':' that names a table's title
 * ("In the top view:") starts that table's part. Run from the top of the
 * tree (doc/, README.md).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cmocka.h>

#include "runner.h"

#include "stacktop/app/opts.h"
#include "stacktop/ui/keymap.h"
#include "stacktop/ui/keys.h"
#include "stacktop/ui/ui.h"

#define MAXK 64	     /* keys in one set */
#define NAME_MAX_ 24 /* bytes of a key's name */

/* A set of key names. */
struct keyset {
	char k[MAXK][NAME_MAX_];
	int n;
};

static void set_add(struct keyset *s, const char *name)
{
	for (int i = 0; i < s->n; i++)
		if (strcmp(s->k[i], name) == 0)
			return;
	assert_true(s->n < MAXK);
	snprintf(s->k[s->n++], NAME_MAX_, "%s", name);
}

static bool set_has(const struct keyset *s, const char *name)
{
	for (int i = 0; i < s->n; i++)
		if (strcmp(s->k[i], name) == 0)
			return true;
	return false;
}

/* Ctrl-C quits through SIGINT, not through a key: the docs may list it. */
static bool not_a_key(const char *name)
{
	return strcmp(name, "Ctrl-C") == 0;
}

/* The documented keys of one table, by the names the man page uses. */
static void table_keys(const struct keymap *km, struct keyset *s)
{
	char name[NAME_MAX_];

	s->n = 0;
	for (size_t i = 0; i < km->n; i++)
		for (int k = 0; k < KEYMAP_KEYS && km->entries[i].keys[k]; k++)
			set_add(s,
				keymap_key_name(km->entries[i].keys[k], false, name, sizeof(name)));
}

/* Every table's documented keys together. */
static void all_keys(struct keyset *s)
{
	const struct keymap *const *maps;
	size_t n = ui_keymaps(&maps);
	struct keyset t;

	s->n = 0;
	for (size_t i = 0; i < n; i++) {
		table_keys(maps[i], &t);
		for (int k = 0; k < t.n; k++)
			set_add(s, t.k[k]);
	}
}

/* Both ways: what one set has that the other lacks. Returns the count of
 * differences, each printed. */
static int compare(const char *what, const struct keyset *tables, const struct keyset *doc)
{
	int bad = 0;

	for (int i = 0; i < tables->n; i++)
		if (!set_has(doc, tables->k[i])) {
			print_message("%s: key %s is in the tables but not documented\n", what,
				      tables->k[i]);
			bad++;
		}
	for (int i = 0; i < doc->n; i++)
		if (!set_has(tables, doc->k[i]) && !not_a_key(doc->k[i])) {
			print_message("%s: documents key %s, which no table has\n", what,
				      doc->k[i]);
			bad++;
		}
	return bad;
}

/* Add the whitespace-separated words of text to s, "\-" read as "-". */
static void add_words(struct keyset *s, const char *text)
{
	char buf[256], *save = NULL;
	size_t o = 0;

	for (const char *p = text; *p && o + 1 < sizeof(buf); p++) {
		if (p[0] == '\\' && p[1] == '-')
			continue; /* the '-' comes next */
		buf[o++] = *p;
	}
	buf[o] = '\0';
	for (char *w = strtok_r(buf, " \t", &save); w; w = strtok_r(NULL, " \t", &save))
		set_add(s, w);
}

/* A .TP tag line: ".B keys..." (all bold: keys), or ".BR k1 \", \" k2"
 * (bold and roman by turns: the bold arguments are keys, the roman ones
 * the words between them). */
static void tag_keys(const char *line, struct keyset *s)
{
	bool alternate = strncmp(line, ".BR ", 4) == 0;
	const char *p = line + (alternate ? 4 : 3);
	char arg[256];
	int i = 0;

	if (!alternate) {
		add_words(s, p);
		return;
	}
	while (*p) {
		size_t o = 0;

		while (*p == ' ')
			p++;
		if (!*p)
			break;
		if (*p == '"') {
			for (p++; *p && *p != '"' && o + 1 < sizeof(arg); p++)
				arg[o++] = *p;
			if (*p == '"')
				p++;
		} else {
			for (; *p && *p != ' ' && o + 1 < sizeof(arg); p++)
				arg[o++] = *p;
		}
		arg[o] = '\0';
		if (i++ % 2 == 0)
			add_words(s, arg);
	}
}

/* The table whose title a section line names ("In the top view:"), -1:
 * none. */
static int section_of(const char *line, const struct keymap *const *maps, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char title[64];
		snprintf(title, sizeof(title), "%s", maps[i]->title);
		for (char *c = title; *c; c++)
			*c = (char)(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
		if (strcasestr(line, title))
			return (int)i;
	}
	return -1;
}

static char *read_all(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long len;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	len = ftell(f);
	assert_true(len > 0);
	rewind(f);
	buf = malloc((size_t)len + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
	buf[len] = '\0';
	fclose(f);
	return buf;
}

/* doc/stacktop.1's KEYS section, table by table. */
static void test_man_page(void **state)
{
	const struct keymap *const *maps;
	size_t nmaps = ui_keymaps(&maps);
	struct keyset man[16] = {0}, t;
	char *text = read_all("doc/stacktop.1"), *save = NULL;
	bool in_keys = false, tag_next = false, after_pp = false, seen[16] = {false};
	int section = -1, bad = 0;

	(void)state;
	assert_true(nmaps <= 16);
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		bool para = after_pp;

		after_pp = strcmp(line, ".PP") == 0 || strcmp(line, ".SH KEYS") == 0;
		if (strncmp(line, ".SH ", 4) == 0) {
			in_keys = strcmp(line, ".SH KEYS") == 0;
			continue;
		}
		if (!in_keys)
			continue;
		if (tag_next) {
			tag_next = false;
			if (section < 0) {
				print_message("stacktop.1: keys '%s' before any view's part\n",
					      line);
				bad++;
			} else {
				tag_keys(line, &man[section]);
			}
			continue;
		}
		if (strncmp(line, ".TP", 3) == 0) {
			tag_next = true;
			continue;
		}
		size_t len = strlen(line);
		if (para && line[0] != '.' && len && line[len - 1] == ':') {
			section = section_of(line, maps, nmaps);
			if (section < 0) {
				print_message("stacktop.1: '%s' names no key table\n", line);
				bad++;
			} else {
				seen[section] = true;
			}
		}
	}
	free(text);
	for (size_t i = 0; i < nmaps; i++) {
		char what[96];

		if (!seen[i]) {
			print_message("stacktop.1: KEYS has no part for the %s\n", maps[i]->title);
			bad++;
		}
		table_keys(maps[i], &t);
		snprintf(what, sizeof(what), "stacktop.1, %s", maps[i]->title);
		bad += compare(what, &t, &man[i]);
		if (!set_has(&man[i], "Ctrl-C") || i == 0)
			continue;
		print_message("%s: Ctrl-C is not a key of this view\n", what);
		bad++;
	}
	assert_int_equal(bad, 0);
}

/* README.md's table under "### Keys": the keys in its first column. */
static void test_readme(void **state)
{
	static const char *const names[] = {"Tab",  "Up",    "Down",	  "Left",  "Right",
					    "PgUp", "PgDn",  "Home",	  "End",   "Enter",
					    "Esc",  "space", "Backspace", "Ctrl-C"};
	char *text = read_all("README.md"), *save = NULL;
	struct keyset doc = {0}, all;
	bool in_keys = false;

	(void)state;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "#", 1) == 0) {
			in_keys = strcmp(line, "### Keys") == 0;
			continue;
		}
		if (!in_keys || strncmp(line, "| ", 2) != 0 || strncmp(line, "| Key ", 6) == 0)
			continue;
		char cell[256], *end = strstr(line + 2, " |");
		size_t len = end ? (size_t)(end - line - 2) : 0;
		snprintf(cell, sizeof(cell), "%.*s", (int)len, line + 2);
		/* `x` is a key; so is a bare word that names one */
		for (char *p = cell; (p = strchr(p, '`'));) {
			char *q = strchr(p + 1, '`');
			if (!q)
				break;
			*q = '\0';
			set_add(&doc, p + 1);
			memset(p, ' ', (size_t)(q - p) + 1);
			p = q + 1;
		}
		for (char *w = strtok(cell, " ,/"); w; w = strtok(NULL, " ,/"))
			for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
				if (strcmp(w, names[i]) == 0)
					set_add(&doc, w);
	}
	free(text);
	assert_true(doc.n > 10); /* the table is there */
	all_keys(&all);
	assert_int_equal(compare("README.md", &all, &doc), 0);
}

/* --help's "Keys:" part: the key column, before the two spaces that start
 * a line's text. */
static void test_usage(void **state)
{
	const char *p = strstr(opts_usage, "\nKeys:\n");
	struct keyset doc = {0}, all;

	(void)state;
	assert_non_null(p);
	for (p += 7; *p && *p != '\n';) {
		const char *eol = strchr(p, '\n'), *text;
		char col[128];

		if (!eol)
			break;
		if (p[0] == ' ' && p[1] == ' ' && p[2] != ' ') {
			text = strstr(p + 2, "  ");
			if (!text || text > eol)
				text = eol;
			snprintf(col, sizeof(col), "%.*s", (int)(text - p - 2), p + 2);
			for (char *w = strtok(col, " ,"); w; w = strtok(NULL, " ,"))
				set_add(&doc, w);
		}
		p = eol + 1;
	}
	assert_true(doc.n > 10);
	all_keys(&all);
	assert_int_equal(compare("--help", &all, &doc), 0);
}

/* The tables: each key once per table (aliases too), named, and none
 * that a key of every view would take first (the views get a key after
 * the global table declined it; the annotate view before). */
static void test_tables(void **state)
{
	const struct keymap *const *maps;
	size_t nmaps = ui_keymaps(&maps);
	char name[NAME_MAX_];
	int bad = 0;

	(void)state;
	assert_true(nmaps >= 5);
	assert_string_equal(maps[0]->title, "Every view");
	for (size_t t = 0; t < nmaps; t++) {
		for (size_t i = 0; i < maps[t]->n; i++) {
			const struct keymap_entry *e = &maps[t]->entries[i];
			int keys[KEYMAP_KEYS + 1], nk = 0;

			assert_non_null(e->fn);
			for (int k = 0; k < KEYMAP_KEYS && e->keys[k]; k++)
				keys[nk++] = e->keys[k];
			if (e->alias)
				keys[nk++] = e->alias;
			assert_true(nk > 0);
			for (int k = 0; k < nk; k++) {
				keymap_key_name(keys[k], false, name, sizeof(name));
				assert_true(strncmp(name, "0x", 2) != 0);
				if (keymap_find(maps[t], keys[k]) != e) {
					print_message("%s: key %s is bound twice\n", maps[t]->title,
						      name);
					bad++;
				}
				if (t == 0 || maps[t] == &view_annotate_keymap ||
				    !keymap_find(maps[0], keys[k]))
					continue;
				print_message("%s: key %s never arrives (a key of every view)\n",
					      maps[t]->title, name);
				bad++;
			}
		}
	}
	assert_int_equal(bad, 0);
}

/* Labels: a run of digits, arrows side by side, words and characters. */
static void test_labels(void **state)
{
	const struct keymap_entry digits = {{'1', '2', '3', '4'}, 0, NULL, NULL, "x", 0};
	const struct keymap_entry arrows = {
	    {KEYS_UP, KEYS_DOWN, KEYS_ENTER}, 0, NULL, NULL, "x", 0};
	const struct keymap_entry chars = {{'s', '>', ' '}, 0, NULL, NULL, "x", 0};
	const struct keymap_entry own = {{KEYS_PGUP}, 0, NULL, "PgUp/Dn", "x", 0};
	char buf[64];

	(void)state;
	assert_string_equal(keymap_label(&digits, buf, sizeof(buf)), "1-4");
	assert_string_equal(keymap_label(&arrows, buf, sizeof(buf)),
			    "\xe2\x86\x91\xe2\x86\x93 Enter");
	assert_string_equal(keymap_label(&chars, buf, sizeof(buf)), "s > space");
	assert_string_equal(keymap_label(&own, buf, sizeof(buf)), "PgUp/Dn");
	assert_string_equal(keymap_key_name(KEYS_BACKSPACE, true, buf, sizeof(buf)), "Backspace");
	assert_string_equal(keymap_key_name(KEYS_LEFT, false, buf, sizeof(buf)), "Left");
	assert_string_equal(keymap_key_name('q', false, buf, sizeof(buf)), "q");
}

TEST_MAIN(NULL, NULL, TEST(test_man_page), TEST(test_readme), TEST(test_usage), TEST(test_tables),
	  TEST(test_labels))
