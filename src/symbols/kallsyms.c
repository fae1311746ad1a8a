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
 * kernel's text and modules lie in one 4 GiB window: while every address
 * has the first one's upper 32 bits, a symbol is 8 bytes (its lower 32
 * bits and its name), from the first line on; an address outside that
 * window turns the table into 16-byte entries. */
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
	bool wide;	       /* syms, not syms32 */
	struct ksym *syms;     /* an address outside base's 4 GiB was seen */
	struct ksym32 *syms32; /* else */
	uint64_t base;	       /* the upper 32 bits of the first address */
	size_t n, cap;
	char *names;
	uint32_t last; /* offset of the name pushed last (while reading) */
};

#define PFX "__pfx_"
#define PFX_LEN (sizeof(PFX) - 1)
#define HIGH(a) ((a) & ~(uint64_t)UINT32_MAX)

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
	return ARRAY_CMP(x->start, y->start) ?: ARRAY_CMP(x->name, y->name);
}

static int ksym32_cmp(const void *a, const void *b)
{
	const struct ksym32 *x = a, *y = b;
	return ARRAY_CMP(x->off, y->off) ?: ARRAY_CMP(x->name, y->name);
}

static void ksyms_reset(struct kallsyms *k)
{
	free(k->syms);
	free(k->names);
	free(k->syms32);
	k->syms = NULL;
	k->syms32 = NULL;
	k->names = NULL;
	k->wide = false;
	k->n = k->cap = 0;
	k->last = 0;
}

static uint64_t ksym_start(const struct kallsyms *k, size_t i)
{
	return k->wide ? k->syms[i].start : k->base + k->syms32[i].off;
}

/* The 8-byte entries made 16-byte ones: an address outside the window. */
static int ksyms_widen(struct kallsyms *k)
{
	struct ksym *w = malloc((k->n + 1) * sizeof(*w));
	if (!w)
		return -ENOMEM;
	for (size_t i = 0; i < k->n; i++)
		w[i] = (struct ksym){ksym_start(k, i), k->syms32[i].name};
	free(k->syms32);
	k->syms32 = NULL;
	k->syms = w;
	k->cap = k->n + 1;
	k->wide = true;
	return 0;
}

static int ksym_push(struct kallsyms *k, uint64_t addr, uint32_t name)
{
	int err;
	if (k->n == 0 && !k->wide)
		k->base = HIGH(addr);
	if (!k->wide && HIGH(addr) != k->base && (err = ksyms_widen(k)))
		return err;
	if (k->wide) {
		if (array_grow((void **)&k->syms, &k->cap, k->n + 1, sizeof(*k->syms)))
			return -ENOMEM;
		k->syms[k->n++] = (struct ksym){addr, name};
	} else {
		if (array_grow((void **)&k->syms32, &k->cap, k->n + 1, sizeof(*k->syms32)))
			return -ENOMEM;
		k->syms32[k->n++] = (struct ksym32){(uint32_t)(addr - k->base), name};
	}
	return 0;
}

/* Add one "ADDR TYPE NAME [module]" line; only text symbols are kept. */
static int ksym_add_line(struct kallsyms *k, char *line, size_t *nlen, size_t *ncap, bool *nonzero)
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
	/* "foo" right after "__pfx_foo": the tail of that name */
	if (*nlen && !strncmp(k->names + k->last, PFX, PFX_LEN) &&
	    !strcmp(k->names + k->last + PFX_LEN, name))
		off = k->last + (uint32_t)PFX_LEN;
	else if ((err = array_push_name(&k->names, nlen, ncap, name, &off)))
		return err;
	k->last = off;
	return ksym_push(k, addr, off);
}

/* The kernel lists its own symbols in address order, then each module's:
 * sort what follows the sorted run alone and merge it in from the end
 * with a copy of it (qsort's buffer for the whole table would be
 * megabytes). n entries of sz bytes. */
static void ksyms_sort(void *arr, size_t n, size_t sz, int (*cmp)(const void *, const void *))
{
	unsigned char *a = arr, *tail;
	size_t run = 1, i, j, out = n;

	while (run < n && cmp(a + (run - 1) * sz, a + run * sz) <= 0)
		run++;
	if (run >= n)
		return;
	j = n - run;
	qsort(a + run * sz, j, sz, cmp);
	if (cmp(a + (run - 1) * sz, a + run * sz) <= 0)
		return;
	if (!(tail = malloc(j * sz))) {
		qsort(a, n, sz, cmp);
		return;
	}
	memcpy(tail, a + run * sz, j * sz);
	for (i = run; j > 0;) {
		out--;
		if (i > 0 && cmp(a + (i - 1) * sz, tail + (j - 1) * sz) > 0)
			memcpy(a + out * sz, a + --i * sz, sz);
		else
			memcpy(a + out * sz, tail + --j * sz, sz);
	}
	free(tail);
}

/* Sort, drop duplicates, and give back what the arrays hold spare. */
static void ksyms_finish(struct kallsyms *k, bool nonzero, size_t nlen)
{
	size_t i, j = 0, sz = k->wide ? sizeof(*k->syms) : sizeof(*k->syms32);
	unsigned char *a = k->wide ? (void *)k->syms : (void *)k->syms32;
	void *p;

	k->loaded = true;
	if (!nonzero) {
		ksyms_reset(k);
		return;
	}
	ksyms_sort(a, k->n, sz, k->wide ? ksym_cmp : ksym32_cmp);
	for (i = 0; i < k->n; i++) {
		if (j && ksym_start(k, j - 1) == ksym_start(k, i))
			continue;
		memmove(a + j++ * sz, a + i * sz, sz);
	}
	k->n = j;
	if (j && (p = realloc(a, j * sz))) {
		if (k->wide)
			k->syms = p;
		else
			k->syms32 = p;
	}
	if (nlen && (p = realloc(k->names, nlen)))
		k->names = p;
}

int kallsyms_parse(struct kallsyms *k, const char *text)
{
	size_t nlen = 0, ncap = 0;
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
		err = ksym_add_line(k, line, &nlen, &ncap, &nonzero);
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
	size_t nlen = 0, ncap = 0, lcap = 0;
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
		err = ksym_add_line(k, line, &nlen, &ncap, &nonzero);
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

int kallsyms_lookup(struct kallsyms *k, uint64_t pc, struct kallsyms_sym *out)
{
	size_t lo;
	int err;

	if (!k->loaded && (err = ksyms_load(k)))
		return err;
	if (!k->wide) {
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
	out->name = k->names + (k->wide ? k->syms[lo - 1].name : k->syms32[lo - 1].name);
	return 0;
}
