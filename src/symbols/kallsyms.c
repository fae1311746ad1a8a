/*
 * kallsyms — kernel function names from /proc/kallsyms (see kallsyms.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stacktop/lib/array.h"
#include "stacktop/lib/pump.h"
#include "stacktop/symbols/kallsyms.h"

struct ksym {
	uint64_t start, end;
	uint32_t name;
};

struct kallsyms {
	bool loaded;
	struct ksym *syms;
	size_t n;
	char *names;
};

int kallsyms_new(struct kallsyms **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void kallsyms_free(struct kallsyms *k)
{
	if (!k)
		return;
	free(k->syms);
	free(k->names);
	free(k);
}

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
}

static void ksyms_reset(struct kallsyms *k)
{
	free(k->syms);
	free(k->names);
	k->syms = NULL;
	k->names = NULL;
	k->n = 0;
}

/* Add one "ADDR TYPE NAME [module]" line; only text symbols are kept. */
static int ksym_add_line(struct kallsyms *k, char *line, size_t *cap, size_t *nlen, size_t *ncap,
			 bool *nonzero)
{
	char *end, *name, type;
	uint64_t addr;
	uint32_t off;
	int err;

	errno = 0;
	addr = strtoull(line, &end, 16);
	if (errno || end == line || (*end != ' ' && *end != '\t'))
		return 0;
	while (*end == ' ' || *end == '\t')
		end++;
	if (!*end) /* "ADDR " and nothing after: no type to step over */
		return 0;
	type = *end++;
	if (*end != ' ' && *end != '\t')
		return 0;
	if (addr)
		*nonzero = true;
	if (type != 't' && type != 'T' && type != 'w' && type != 'W')
		return 0;
	while (*end == ' ' || *end == '\t')
		end++;
	name = end;
	name[strcspn(name, " \t\r\n")] = '\0';
	if (!*name)
		return 0;
	if (array_grow((void **)&k->syms, cap, k->n + 1, sizeof(*k->syms)))
		return -ENOMEM;
	err = array_push_name(&k->names, nlen, ncap, name, &off);
	if (err)
		return err;
	k->syms[k->n++] = (struct ksym){addr, 0, off};
	return 0;
}

/* Sort, drop duplicates, and end each symbol at the next one. */
static void ksyms_finish(struct kallsyms *k, bool nonzero)
{
	size_t i, j = 0;

	k->loaded = true;
	if (!nonzero) {
		ksyms_reset(k);
		return;
	}
	if (k->n)
		qsort(k->syms, k->n, sizeof(*k->syms), ksym_cmp);
	for (i = 0; i < k->n; i++) {
		if (j && k->syms[j - 1].start == k->syms[i].start)
			continue;
		k->syms[j++] = k->syms[i];
	}
	k->n = j;
	for (i = 0; i < j; i++)
		k->syms[i].end =
		    i + 1 < j ? k->syms[i + 1].start : k->syms[i].start + KALLSYMS_LAST_SPAN;
}

int kallsyms_parse(struct kallsyms *k, const char *text)
{
	size_t cap = 0, nlen = 0, ncap = 0;
	bool nonzero = false;
	const char *p = text;
	int err = 0;

	ksyms_reset(k);
	while (*p && !err) {
		size_t len = strcspn(p, "\n");
		char *line = strndup(p, len);

		if (!line) {
			err = -ENOMEM;
			break;
		}
		err = ksym_add_line(k, line, &cap, &nlen, &ncap, &nonzero);
		free(line);
		p += len;
		if (*p)
			p++;
	}
	if (err) {
		ksyms_reset(k);
		return err;
	}
	ksyms_finish(k, nonzero);
	return 0;
}

static int ksyms_load(struct kallsyms *k)
{
	size_t cap = 0, nlen = 0, ncap = 0, lcap = 0;
	bool nonzero = false;
	char *line = NULL;
	FILE *f = fopen("/proc/kallsyms", "re");
	int err = 0;

	if (!f) {
		/* No kallsyms: behave as without permission. */
		ksyms_finish(k, false);
		return 0;
	}
	/* 100k lines and more, each made by the kernel as it is read: the
	 * rings are read in between (pump keeps its own pace). */
	while (!err && getline(&line, &lcap, f) > 0) {
		err = ksym_add_line(k, line, &cap, &nlen, &ncap, &nonzero);
		pump();
	}
	free(line);
	fclose(f);
	if (err) {
		ksyms_reset(k);
		return err;
	}
	ksyms_finish(k, nonzero);
	return 0;
}

int kallsyms_lookup(struct kallsyms *k, uint64_t pc, struct kallsyms_sym *out)
{
	size_t lo;
	int err;

	if (!k->loaded && (err = ksyms_load(k)))
		return err;
	lo = ARRAY_STARTS_AT_OR_BELOW(k->syms, k->n, pc);
	if (lo == 0 || pc >= k->syms[lo - 1].end)
		return -ENOENT;
	out->name = k->names + k->syms[lo - 1].name;
	out->start = k->syms[lo - 1].start;
	out->end = k->syms[lo - 1].end;
	return 0;
}
