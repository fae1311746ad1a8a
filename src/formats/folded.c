/*
 * folded — FlameGraph's folded stacks, written and read (see folded.h).
 *
 * Writing: one line per selected stack, names joined by ';', then the
 * lines sorted (by second first with per_second) and identical neighbours
 * merged: different pcs of one function are different frame ids but the
 * same name stack.
 *
 * Reading: two passes over the lines. The first checks every line and
 * finds the largest count (the weights' scale) and whether every root is
 * "name-TID"; the second stores the stacks. A line is split at its LAST
 * space (names may hold spaces); "#" comment and blank lines are skipped
 * except stacktop's own (the second of the lines that follow, the run's
 * summary); "_[k]" marks a kernel frame, "_[j]" JIT and "_[i]" inlined are
 * stripped too, as FlameGraph's stackcollapse scripts write them.
 */
#include "stacktop/formats/folded.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stacktop/formats/export.h"
#include "stacktop/formats/selection.h"
#include "stacktop/formats/stackset.h"
#include "stacktop/lib/sbuf.h"
#include "stacktop/lib/strpool.h"
#include "stacktop/lib/text.h"
#include "stacktop/model/summary.h"
#include "stacktop/model/window.h"
#include "stacktop/symbols/frames.h"

#define FOLDED_MAX_LINE (1u << 20)

/* ---- writing ---- */

struct fline {
	char *text;
	int64_t second;
	uint64_t count;
};

static int cmp_fline(const void *a, const void *b)
{
	const struct fline *x = a, *y = b;
	if (x->second != y->second)
		return x->second < y->second ? -1 : 1;
	return strcmp(x->text, y->text);
}

static int folded_render(struct window *w, const struct export_opts *o, struct selection *s,
			 struct sbuf *out)
{
	struct fline *lines = calloc(s->nst + 1, sizeof(*lines));
	size_t nl = 0;
	int err = 0;

	if (!lines)
		return -ENOMEM;
	for (size_t i = 0; i < s->nst && !err; i++) {
		struct sbuf b = {0};
		if (o->per_thread) {
			char *root = selection_thread_root(o, s->st[i].tid, true);
			sbuf_str(&b, root ? root : "thread");
			free(root);
		}
		for (size_t k = 0; k < s->st[i].n; k++) {
			uint32_t id = s->frames[s->st[i].off + k];
			const struct frame *f = frames_get(window_frames(w), id);
			if (b.n)
				sbuf_add(&b, ";", 1);
			if (f->has_sym && f->sym.func && f->sym.inlined) {
				/* FlameGraph's mark of an inlined function (perf
				 * script | stackcollapse-perf.pl --inline). */
				char *c = selection_clean(f->sym.func, true);
				sbuf_str(&b, c ? c : "?");
				sbuf_str(&b, "_[i]");
				free(c);
			} else {
				sbuf_str(&b, selection_label(s, w, id));
			}
			if (f->kernel)
				sbuf_str(&b, "_[k]");
			else if (f->has_sym && f->sym.jit)
				sbuf_str(&b, "_[j]");
		}
		if (b.oom) {
			free(b.p);
			err = -ENOMEM;
			break;
		}
		lines[nl++] =
		    (struct fline){.text = b.p, .second = s->st[i].second, .count = s->st[i].count};
	}
	qsort(lines, nl, sizeof(*lines), cmp_fline);
	if (o->summary) {
		char sum[256];
		summary_text(o->summary, sum, sizeof(sum));
		sbuf_printf(out, "# %s{%s}\n", EXPORT_FOLDED_TAG, sum);
	}
	if (o->ncpu) {
		sbuf_printf(out, "# %s{", EXPORT_FOLDED_TAG);
		summary_cpu_text(o->cpu, o->ncpu, out);
		sbuf_str(out, "}\n");
	}
	int64_t at;
	if (selection_cpu_at(s, o, &at)) {
		char t[64];
		summary_cpu_at_text(at, t, sizeof(t));
		sbuf_printf(out, "# %s{%s}\n", EXPORT_FOLDED_TAG, t);
	}
	for (size_t i = 0; i < nl && !err; i++) {
		uint64_t c = lines[i].count;
		/* A block per second (a comment FlameGraph skips: it does not end
		 * in a number); the reader keeps the second of each line. */
		if (lines[i].second >= 0 && (i == 0 || lines[i - 1].second != lines[i].second))
			sbuf_printf(out, "# %s{second=%lld}\n", EXPORT_FOLDED_TAG,
				    (long long)lines[i].second);
		/* Different pcs of one function are different frame ids: merge
		 * the identical name stacks they make. */
		while (i + 1 < nl && lines[i].second == lines[i + 1].second &&
		       !strcmp(lines[i].text, lines[i + 1].text))
			c += lines[++i].count;
		sbuf_printf(out, "%s %llu\n", lines[i].text, (unsigned long long)c);
	}
	for (size_t i = 0; i < nl; i++)
		free(lines[i].text);
	free(lines);
	return err ? err : out->oom ? -ENOMEM : 0;
}

/* ---- reading ---- */

/* One line split: [stack, stack_end) and its count. 0, 1 (skip: blank or
 * comment) or -EINVAL. */
static int folded_split(const char *line, size_t len, const char **end, uint64_t *count)
{
	size_t i = len, d;
	uint64_t c = 0;

	while (i && (line[i - 1] == ' ' || line[i - 1] == '\t' || line[i - 1] == '\r'))
		i--;
	if (i == 0 || line[0] == '#')
		return 1;
	d = i;
	while (d && line[d - 1] != ' ' && line[d - 1] != '\t')
		d--;
	if (d == 0)
		return -EINVAL; /* no space: no count */
	/* COUNT: digits, optionally ".digits" (FlameGraph accepts decimals). */
	size_t k = d;
	if (k == i || line[k] < '0' || line[k] > '9')
		return -EINVAL;
	for (; k < i && line[k] >= '0' && line[k] <= '9'; k++) {
		if (c > (UINT64_MAX - 9) / 10)
			return -ERANGE;
		c = c * 10 + (uint64_t)(line[k] - '0');
	}
	if (k < i && line[k] == '.') {
		bool up = k + 1 < i && line[k + 1] >= '5' && line[k + 1] <= '9';
		for (k++; k < i && line[k] >= '0' && line[k] <= '9'; k++)
			;
		if (up && c < UINT64_MAX)
			c++;
	}
	if (k != i)
		return -EINVAL;
	while (d && (line[d - 1] == ' ' || line[d - 1] == '\t'))
		d--;
	*end = line + d;
	*count = c;
	return 0;
}

/* "name-TID" → tid (and the name's length); false when not that shape. */
bool folded_thread_root(const char *s, size_t n, int *tid, size_t *namelen)
{
	size_t d = n;
	long v = 0;

	while (d && s[d - 1] >= '0' && s[d - 1] <= '9')
		d--;
	if (d == n || d < 2 || s[d - 1] != '-' || n - d > 9)
		return false;
	for (size_t i = d; i < n; i++)
		v = v * 10 + (s[i] - '0');
	if (v <= 0)
		return false;
	*tid = (int)v;
	*namelen = d - 1;
	return true;
}

/* Our own comment "# stacktop: {second=N}" or "{wall_s=...}" (see
 * export.h): the second of the lines that follow, or the run's summary.
 * Any other comment is skipped as before. */
static void folded_comment(struct stackset *r, const char *line, size_t ll, int32_t *second)
{
	struct summary sum;
	static const char tag[] = "# " EXPORT_FOLDED_TAG "{";
	size_t tl = sizeof(tag) - 1;
	long v;
	char *end;

	while (ll && (line[ll - 1] == '\r' || line[ll - 1] == ' '))
		ll--;
	if (ll <= tl || strncmp(line, tag, tl) || line[ll - 1] != '}')
		return;
	line += tl;
	ll -= tl + 1;
	if (ll > 7 && !strncmp(line, "second=", 7)) {
		errno = 0;
		v = strtol(line + 7, &end, 10);
		if (!errno && end == line + ll && v >= 0 && v <= INT32_MAX)
			*second = (int32_t)v;
		return;
	}
	if (!summary_parse(line, ll, &sum))
		stackset_set_summary(r, &sum);
	stackset_parse_cpu(r, line, ll);
}

/* Walk the lines; call fn on each stack with its line number. */
struct fwalk {
	struct stackset *r;
	bool per_thread;
	bool load; /* false: the checking pass */
	uint64_t max, scale;
	size_t nlines;
	int32_t second; /* of the lines that follow, -1: none said */
	struct stackset_ids frames;
};

static int folded_frame(struct fwalk *fw, const char *s, size_t n)
{
	struct stackset_frame f = {0};
	int64_t id;

	if (n >= 4 && s[n - 4] == '_' && s[n - 3] == '[' && s[n - 1] == ']' &&
	    (s[n - 2] == 'k' || s[n - 2] == 'j' || s[n - 2] == 'i')) {
		f.kernel = s[n - 2] == 'k';
		f.jit = s[n - 2] == 'j';
		f.inlined = s[n - 2] == 'i';
		n -= 4;
	}
	if (n == 0)
		return 0;
	if (!(f.func = strpool_str(stackset_strings(fw->r), s, n)))
		return -ENOMEM;
	if (f.kernel && !(f.module = strpool_str(stackset_strings(fw->r), "[kernel]", 8)))
		return -ENOMEM;
	if ((id = stackset_frame(fw->r, &f)) < 0)
		return (int)id;
	return stackset_ids_push(&fw->frames, (uint32_t)id);
}

static int folded_line(struct fwalk *fw, const char *s, const char *end, uint64_t count)
{
	int tid = STACKSET_TID_ANY, err;
	const char *p = s;
	size_t namelen;

	fw->frames.n = 0;
	if (fw->per_thread) {
		const char *semi = memchr(s, ';', (size_t)(end - s));
		const char *re = semi ? semi : end;
		if (folded_thread_root(s, (size_t)(re - s), &tid, &namelen)) {
			const char *name = strpool_str(stackset_strings(fw->r), s, namelen);
			if (!name || (err = stackset_thread(fw->r, tid, name)))
				return -ENOMEM;
			p = semi ? semi + 1 : end;
		}
	}
	while (p < end) {
		const char *semi = memchr(p, ';', (size_t)(end - p));
		const char *fe = semi ? semi : end;
		if ((err = folded_frame(fw, p, (size_t)(fe - p))))
			return err;
		p = semi ? semi + 1 : end;
	}
	return stackset_add(fw->r, tid, fw->second, fw->frames.v, fw->frames.n, count, fw->scale);
}

static int folded_load(struct stackset *r, const void *bytes, size_t len, const char *name,
		       char *err, size_t errsz)
{
	const char *data = bytes;
	struct fwalk fw = {.r = r, .per_thread = true, .scale = 1, .second = -1};
	int rc = 0;

	stackset_set_format(r, STACKSET_FOLDED);
	for (int pass = 0; pass < 2 && !rc; pass++) {
		size_t lineno = 0, off = 0;
		fw.load = pass == 1;
		fw.scale = stackset_scale(fw.max);
		while (off < len && !rc) {
			const char *line = data + off, *nl = memchr(line, '\n', len - off);
			size_t ll = nl ? (size_t)(nl - line) : len - off;
			const char *end;
			uint64_t count;
			int tid;
			size_t nlen;

			off += ll + (nl ? 1 : 0);
			lineno++;
			if (ll > FOLDED_MAX_LINE) {
				text_errf(
				    err, errsz,
				    "%s: line %zu is longer than 1 MiB; not a folded profile.",
				    name, lineno);
				return -EINVAL;
			}
			if (memchr(line, '\0', ll)) {
				text_errf(err, errsz,
					  "%s: line %zu holds a NUL byte; not a folded profile.",
					  name, lineno);
				return -EINVAL;
			}
			if (fw.load && ll && line[0] == '#')
				folded_comment(r, line, ll, &fw.second);
			rc = folded_split(line, ll, &end, &count);
			if (rc == 1) {
				rc = 0;
				continue;
			}
			if (rc) {
				text_errf(err, errsz,
					  "%s: line %zu has no sample count (expected "
					  "\"frame;frame COUNT\").",
					  name, lineno);
				return -EINVAL;
			}
			if (!fw.load) {
				const char *semi = memchr(line, ';', (size_t)(end - line));
				size_t rl = (size_t)((semi ? semi : end) - line);
				if (end == line) {
					text_errf(err, errsz,
						  "%s: line %zu has a count but no frames.", name,
						  lineno);
					return -EINVAL;
				}
				if (!folded_thread_root(line, rl, &tid, &nlen))
					fw.per_thread = false;
				if (count > fw.max)
					fw.max = count;
				fw.nlines++;
				continue;
			}
			if ((rc = folded_line(&fw, line, end, count)) == -EFBIG)
				text_errf(err, errsz, STACKSET_TOO_MANY_FRAMES, name,
					  stackset_max_ids(r));
			else if (rc)
				text_errf(err, errsz, "%s: cannot load line %zu: %s.", name, lineno,
					  strerror(-rc));
		}
		if (!fw.nlines) {
			text_errf(err, errsz,
				  "%s holds no stacks (expected lines \"frame;frame COUNT\").",
				  name);
			rc = -EINVAL;
		}
	}
	free(fw.frames.v);
	return rc;
}

static const char *const folded_suffixes[] = {".folded", ".txt", NULL};

/* name, ext, suffixes, render, load, sniff (format.h) */
const struct format_ops folded_format = {"folded",	".folded",   folded_suffixes,
					 folded_render, folded_load, NULL};
