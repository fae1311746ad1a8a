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

/* 120,000 text symbols and more on a current kernel, half of them the
 * __pfx_ padding before a function: each symbol ends where the next one
 * starts (no end kept), a function's name shares the bytes of its __pfx_
 * name just before it, and the arrays are cut to size once read. The
 * kernel's text and modules lie within a few GiB: once sorted, a table
 * that spans less than 4 GiB keeps 32-bit offsets from its first start
 * (8 bytes a symbol instead of 16). */
struct ksym {
	uint64_t start;
	uint32_t name;
};

struct ksym32 {
	uint32_t off; /* from base */
	uint32_t name;
};

struct kallsyms {
	bool loaded;
	struct ksym *syms;     /* while reading, and when the span is 4 GiB or more */
	struct ksym32 *syms32; /* else */
	uint64_t base;
	size_t n;
	char *names;
	uint32_t last; /* offset of the name pushed last (while reading) */
};

#define PFX "__pfx_"
#define PFX_LEN (sizeof(PFX) - 1)

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
	free(k->syms32);
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
	free(k->syms32);
	k->syms = NULL;
	k->syms32 = NULL;
	k->names = NULL;
	k->n = 0;
	k->last = 0;
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
	/* "foo" right after "__pfx_foo": the tail of that name */
	if (*nlen && !strncmp(k->names + k->last, PFX, PFX_LEN) &&
	    !strcmp(k->names + k->last + PFX_LEN, name))
		off = k->last + (uint32_t)PFX_LEN;
	else if ((err = array_push_name(&k->names, nlen, ncap, name, &off)))
		return err;
	k->last = off;
	k->syms[k->n++] = (struct ksym){addr, off};
	return 0;
}

/* The kernel lists its own symbols in address order, then each module's:
 * sort what follows the sorted run alone and merge it in from the end
 * with a copy of it (qsort's buffer for the whole table would be
 * megabytes). */
static void ksyms_sort(struct kallsyms *k)
{
	size_t run = 1, i, j, out = k->n;
	struct ksym *tail;

	while (run < k->n && ksym_cmp(&k->syms[run - 1], &k->syms[run]) <= 0)
		run++;
	if (run >= k->n)
		return;
	j = k->n - run;
	qsort(k->syms + run, j, sizeof(*k->syms), ksym_cmp);
	if (ksym_cmp(&k->syms[run - 1], &k->syms[run]) <= 0)
		return;
	if (!(tail = malloc(j * sizeof(*tail)))) {
		qsort(k->syms, k->n, sizeof(*k->syms), ksym_cmp);
		return;
	}
	memcpy(tail, k->syms + run, j * sizeof(*tail));
	for (i = run; j > 0;)
		k->syms[--out] =
		    i > 0 && ksym_cmp(&k->syms[i - 1], &tail[j - 1]) > 0 ? k->syms[--i] : tail[--j];
	free(tail);
}

/* Sort, drop duplicates, and give back what the arrays hold spare. */
static void ksyms_finish(struct kallsyms *k, bool nonzero, size_t nlen)
{
	size_t i, j = 0;
	void *p;

	k->loaded = true;
	if (!nonzero) {
		ksyms_reset(k);
		return;
	}
	ksyms_sort(k);
	for (i = 0; i < k->n; i++) {
		if (j && k->syms[j - 1].start == k->syms[i].start)
			continue;
		k->syms[j++] = k->syms[i];
	}
	k->n = j;
	if (j && k->syms[j - 1].start - k->syms[0].start <= UINT32_MAX) {
		/* in place, by bytes: entry i is read before anything past
		 * 8 (i + 1) is written */
		unsigned char *raw = (unsigned char *)k->syms;
		k->base = k->syms[0].start;
		for (i = 0; i < j; i++) {
			struct ksym w;
			memcpy(&w, raw + i * sizeof(w), sizeof(w));
			struct ksym32 n = {(uint32_t)(w.start - k->base), w.name};
			memcpy(raw + i * sizeof(n), &n, sizeof(n));
		}
		k->syms = NULL;
		k->syms32 = (p = realloc(raw, j * sizeof(struct ksym32))) ? p : (void *)raw;
	} else if (j && (p = realloc(k->syms, j * sizeof(*k->syms)))) {
		k->syms = p;
	}
	if (nlen && (p = realloc(k->names, nlen)))
		k->names = p;
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
	ksyms_finish(k, nonzero, nlen);
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
		ksyms_finish(k, false, 0);
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
	ksyms_finish(k, nonzero, nlen);
	return 0;
}

static uint64_t ksym_start(const struct kallsyms *k, size_t i)
{
	return k->syms32 ? k->base + k->syms32[i].off : k->syms[i].start;
}

int kallsyms_lookup(struct kallsyms *k, uint64_t pc, struct kallsyms_sym *out)
{
	size_t lo;
	int err;

	if (!k->loaded && (err = ksyms_load(k)))
		return err;
	if (k->syms32) {
		size_t hi = k->n;
		lo = 0;
		if (pc < k->base)
			return -ENOENT;
		uint64_t key = pc - k->base;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (k->syms32[mid].off <= key)
				lo = mid + 1;
			else
				hi = mid;
		}
	} else {
		lo = ARRAY_STARTS_AT_OR_BELOW(k->syms, k->n, pc);
	}
	if (lo == 0)
		return -ENOENT;
	out->start = ksym_start(k, lo - 1);
	out->end = lo < k->n ? ksym_start(k, lo) : out->start + KALLSYMS_LAST_SPAN;
	if (pc >= out->end)
		return -ENOENT;
	out->name = k->names + (k->syms32 ? k->syms32[lo - 1].name : k->syms[lo - 1].name);
	return 0;
}
