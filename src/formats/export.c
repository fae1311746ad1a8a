/*
 * export — the window's samples as folded stacks, pprof or speedscope.
 *
 * Contract: export_render builds the whole file in memory (one malloc'd
 * buffer, the caller frees), export_write_fd writes that buffer, and
 * export_write puts it on disk safely. The window is only read: its count
 * array is walked once, stacks are rebuilt by following node parents, and
 * no pointer into the window is kept across a call that could move it.
 *
 * Stacks are "selected" first (struct sel): thread filter, kernel frames
 * dropped on request, the icicle zoom prefix, so the three writers see the
 * same samples. A stack left with no frame (kernel-only with hide_kernel) is
 * not written: no format can hold an empty stack.
 *
 * Names: a frame is named as the icicle names it (function, "module+0xOFF",
 * "0xPC", "name (inline)" for an inlined function). Inlined functions are
 * marked as the readers expect them: folded "name_[i]" (FlameGraph's
 * stackcollapse-perf.pl --inline), pprof one Location per pc with a Line
 * per inlined function, innermost first, and the function it was inlined
 * into last (pprof's own model; it prints the others "(inline)"). Every
 * string written is valid UTF-8 (invalid bytes and control
 * characters become '?', which no reader chokes on), and folded names also
 * lose ';' (the frame separator), since a line is "a;b;c COUNT" split at
 * the last space (FlameGraph's flamegraph.pl and stackcollapse-*.pl).
 *
 * Safe files (DESIGN.md, safety rules): the data is written to a fresh
 * temporary file next to the target (mkostemp: O_CREAT|O_EXCL, which never
 * follows a symbolic link), then renamed into place with RENAME_NOREPLACE
 * (rename(2) never follows a link at the destination either; with --force a
 * plain rename replaces the file atomically). So a disk-full error leaves
 * nothing behind and never truncates the file the user asked to replace.
 * renameat2 needs Linux 3.15 and is not on every file system; then link(2),
 * which fails with EEXIST just the same, does the no-overwrite step.
 */
#include "stacktop/formats/export.h"
#include "stacktop/lib/hashidx.h"
#include "stacktop/lib/array.h"
#include "stacktop/lib/strpool.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "profile.pb-c.h"
#include "stacktop/lib/text.h"
#include "stacktop/model/window.h"

#ifndef STACKTOP_VERSION
#define STACKTOP_VERSION "dev"
#endif

#define SPEEDSCOPE_SCHEMA "https://www.speedscope.app/file-format-schema.json"

/* ---- formats ---- */

int export_format_parse(const char *name, enum export_format *out)
{
	static const struct {
		const char *name;
		enum export_format f;
	} names[] = {
	    {"folded", EXPORT_FOLDED}, {"pprof", EXPORT_PPROF}, {"speedscope", EXPORT_SPEEDSCOPE}};

	for (size_t i = 0; name && i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i].name)) {
			*out = names[i].f;
			return 0;
		}
	return -EINVAL;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n > m && !strcmp(s + n - m, suffix);
}

int export_format_from_path(const char *path, enum export_format *out)
{
	if (!path)
		return -EINVAL;
	if (ends_with(path, ".folded") || ends_with(path, ".txt"))
		*out = EXPORT_FOLDED;
	else if (ends_with(path, ".pb.gz") || ends_with(path, ".pprof") || ends_with(path, ".pb"))
		*out = EXPORT_PPROF;
	else if (ends_with(path, ".json"))
		*out = EXPORT_SPEEDSCOPE;
	else
		return -EINVAL;
	return 0;
}

void export_summary_text(const struct export_summary *s, char *buf, size_t size)
{
	snprintf(buf, size, "wall_s=%.3f cpu_s=%.3f avg_cpu=%.1f peak_cpu=%.1f peak_rss=%llu",
		 s->wall_s, s->cpu_s, s->avg_cpu, s->peak_cpu, (unsigned long long)s->peak_rss);
}

/* One "key=number" of the summary; false when s does not start with it. */
static bool summary_field(const char *s, const char *key, double *v)
{
	size_t n = strlen(key);
	char *end;

	if (strncmp(s, key, n) || s[n] != '=')
		return false;
	errno = 0;
	*v = strtod(s + n + 1, &end);
	return end != s + n + 1 && !errno && isfinite(*v) && *v >= 0 && *v < 1e15;
}

int export_summary_parse(const char *s, size_t len, struct export_summary *out)
{
	char buf[256];
	double v[5];
	static const char *const keys[5] = {"wall_s", "cpu_s", "avg_cpu", "peak_cpu", "peak_rss"};
	char *save = NULL, *tok;
	unsigned seen = 0;

	if (len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = 0;
	for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
		for (int k = 0; k < 5; k++)
			if (summary_field(tok, keys[k], &v[k]))
				seen |= 1u << k;
	if (seen != 0x1f)
		return -EINVAL;
	*out = (struct export_summary){.wall_s = v[0],
				       .cpu_s = v[1],
				       .avg_cpu = v[2],
				       .peak_cpu = v[3],
				       .peak_rss = (uint64_t)v[4]};
	return 0;
}

const char *export_format_ext(enum export_format f)
{
	switch (f) {
	case EXPORT_FOLDED:
		return ".folded";
	case EXPORT_PPROF:
		return ".pb.gz";
	case EXPORT_SPEEDSCOPE:
		return ".speedscope.json";
	}
	return "";
}

/* ---- a growable byte buffer; a failed allocation sticks ---- */

struct sbuf {
	char *p;
	size_t n, cap;
	bool oom;
};

static bool sbuf_reserve(struct sbuf *b, size_t more)
{
	size_t cap;
	char *p;

	if (b->oom)
		return false;
	if (b->n + more + 1 <= b->cap)
		return true;
	cap = b->cap ? b->cap : 4096;
	while (cap < b->n + more + 1)
		cap *= 2;
	if (!(p = realloc(b->p, cap))) {
		b->oom = true;
		return false;
	}
	b->p = p;
	b->cap = cap;
	return true;
}

static void sbuf_add(struct sbuf *b, const char *s, size_t n)
{
	if (!sbuf_reserve(b, n))
		return;
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = '\0';
}

static void sbuf_str(struct sbuf *b, const char *s)
{
	sbuf_add(b, s, strlen(s));
}

static void __attribute__((format(printf, 2, 3))) sbuf_printf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !sbuf_reserve(b, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(b->p + b->n, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->n += (size_t)n;
}

/* ---- a small u64 → u32 map (function and frame keys) ---- */

struct u64map {
	uint64_t *key;
	uint32_t *val; /* 0 = empty; values are ids + 1 */
	size_t n, mask;
};

static int u64map_grow(struct u64map *m)
{
	size_t nslots = m->val ? (m->mask + 1) * 2 : 256;
	uint64_t *key = calloc(nslots, sizeof(*key));
	uint32_t *val = calloc(nslots, sizeof(*val));

	if (!key || !val) {
		free(key);
		free(val);
		return -ENOMEM;
	}
	for (size_t i = 0; m->val && i <= m->mask; i++) {
		size_t j;
		if (!m->val[i])
			continue;
		for (j = hashidx_mix64(m->key[i]) & (nslots - 1); val[j];
		     j = (j + 1) & (nslots - 1))
			;
		key[j] = m->key[i];
		val[j] = m->val[i];
	}
	free(m->key);
	free(m->val);
	m->key = key;
	m->val = val;
	m->mask = nslots - 1;
	return 0;
}

/* The value stored under k, or 0; with add, store add_val (nonzero) when
 * absent. -ENOMEM. */
static int64_t u64map_get(struct u64map *m, uint64_t k, uint32_t add_val)
{
	size_t j;

	if (!m->val || (m->n + 1) * 2 > m->mask + 1)
		if (u64map_grow(m))
			return -ENOMEM;
	for (j = hashidx_mix64(k) & m->mask; m->val[j]; j = (j + 1) & m->mask)
		if (m->key[j] == k)
			return m->val[j];
	if (add_val) {
		m->key[j] = k;
		m->val[j] = add_val;
		m->n++;
	}
	return 0;
}

static void u64map_free(struct u64map *m)
{
	free(m->key);
	free(m->val);
	memset(m, 0, sizeof(*m));
}

/* ---- names ---- */

/* Valid UTF-8 without control characters; in folded names also no ';'.
 * Malloc'd copy. */
static char *clean_name(const char *in, bool folded)
{
	size_t n = strlen(in), o = 0;
	char *out = malloc(n + 1);
	uint32_t cp;
	int len;

	if (!out)
		return NULL;
	while (*in) {
		len = text_utf8_decode(in, &cp);
		if (len <= 0 || text_is_control(cp) || (folded && cp == ';')) {
			out[o++] = '?';
			in += len > 0 ? len : 1;
			continue;
		}
		memcpy(out + o, in, (size_t)len);
		o += (size_t)len;
		in += len;
	}
	out[o] = '\0';
	return out;
}

/* The raw label of a frame, as the icicle shows it ("name (inline)" for
 * an inlined function). */
static void frame_label(const struct frame *f, char *buf, size_t size)
{
	if (f->has_sym && f->sym.func)
		snprintf(buf, size, "%s%s", f->sym.func, f->sym.inlined ? " (inline)" : "");
	else if (f->has_sym && f->sym.module)
		snprintf(buf, size, "%s+0x%llx", f->sym.module, (unsigned long long)f->sym.offset);
	else
		snprintf(buf, size, "0x%llx", (unsigned long long)f->pc);
}

/* ---- selection: the stacks every writer sees ---- */

struct sel_stack {
	int tid;
	int64_t second; /* seconds since the first bucket (per_second), else -1 */
	uint64_t count;
	size_t off, n; /* frame ids root first: sel.frames[off .. off+n) */
};

struct sel {
	struct sel_stack *st;
	size_t nst, capst;
	uint32_t *frames;
	size_t nframes, capframes;
	char **label; /* per window frame id: clean label, filled lazily */
	size_t nlabel;
	uint64_t total;
};

static void sel_free(struct sel *s)
{
	for (size_t i = 0; i < s->nlabel; i++)
		free(s->label[i]);
	free(s->label);
	free(s->st);
	free(s->frames);
	memset(s, 0, sizeof(*s));
}

/* The cleaned label of frame id (folded rules: no ';'), cached. */
static const char *sel_label(struct sel *s, struct window *w, uint32_t id)
{
	char buf[4096];

	if (id >= s->nlabel)
		return "?";
	if (!s->label[id]) {
		frame_label(frames_get(window_frames(w), id), buf, sizeof(buf));
		s->label[id] = clean_name(buf, true);
	}
	return s->label[id] ? s->label[id] : "?";
}

static bool sel_zoom_match(struct sel *s, struct window *w, const struct export_opts *o,
			   const uint32_t *fr, size_t n)
{
	if ((size_t)o->nzoom > n)
		return false;
	for (int i = 0; i < o->nzoom; i++) {
		char *z = clean_name(o->zoom[i] ? o->zoom[i] : "", true);
		bool eq = z && !strcmp(z, sel_label(s, w, fr[i]));
		free(z);
		if (!eq)
			return false;
	}
	return true;
}

/* Walk leaf → root, keep what the options select, store root first; the
 * counts wc[0..ncounts) of one bucket (second >= 0) or of the sum (-1). */
static int sel_add(struct sel *s, struct window *w, const struct export_opts *o,
		   const struct window_count *wc, size_t ncounts, int64_t second)
{
	uint32_t tmp[4096];

	if (array_grow((void **)&s->st, &s->capst, s->nst + ncounts + 1, sizeof(*s->st)))
		return -ENOMEM;
	for (size_t i = 0; i < ncounts; i++) {
		size_t n = 0;
		uint32_t node = wc[i].node;

		if (!wc[i].count || (o->tid && wc[i].tid != o->tid))
			continue;
		while (node != WINDOW_ROOT && n < sizeof(tmp) / sizeof(tmp[0])) {
			const struct window_node *nd = window_node(w, node);
			const struct frame *f;
			if (!nd)
				break;
			f = frames_get(window_frames(w), nd->frame);
			if (f && !(o->hide_kernel && f->kernel))
				tmp[n++] = nd->frame;
			node = nd->parent;
		}
		for (size_t a = 0, b = n ? n - 1 : 0; a < b; a++, b--) {
			uint32_t t = tmp[a];
			tmp[a] = tmp[b];
			tmp[b] = t;
		}
		if (!n || (o->nzoom > 0 && !sel_zoom_match(s, w, o, tmp, n)))
			continue;
		if (array_grow((void **)&s->frames, &s->capframes, s->nframes + n, sizeof(*s->frames)))
			return -ENOMEM;
		memcpy(s->frames + s->nframes, tmp, n * sizeof(*tmp));
		s->st[s->nst++] = (struct sel_stack){.tid = wc[i].tid,
						     .second = second,
						     .count = wc[i].count,
						     .off = s->nframes,
						     .n = n};
		s->nframes += n;
		s->total += wc[i].count;
	}
	return 0;
}

/* The first live bucket's number, for seconds counted from the start. */
static uint64_t sel_first_bucket(const struct window *w)
{
	uint64_t first = UINT64_MAX, num;
	size_t n;

	for (size_t k = 0; k < window_nbuckets(w); k++)
		if (window_bucket_counts(w, k, &num, &n) && num < first)
			first = num;
	return first;
}

static int sel_build(struct sel *s, struct window *w, const struct export_opts *o)
{
	size_t ncounts;
	const struct window_count *wc;
	uint64_t first, num, bns = window_bucket_ns(w);
	int err = 0;

	memset(s, 0, sizeof(*s));
	s->nlabel = frames_span(window_frames(w));
	if (!(s->label = calloc(s->nlabel + 1, sizeof(*s->label))))
		return -ENOMEM;
	if (!o->per_second) {
		wc = window_counts(w, &ncounts);
		return sel_add(s, w, o, wc, ncounts, -1);
	}
	/* Bucket by bucket, oldest first (the ring slot order is not time). */
	first = sel_first_bucket(w);
	for (size_t k = 0; k < window_nbuckets(w) && !err && first != UINT64_MAX; k++)
		if ((wc = window_bucket_counts(w, k, &num, &ncounts)))
			err = sel_add(s, w, o, wc, ncounts,
				      (int64_t)((num - first) * bns / 1000000000ull));
	return err;
}

static int cmp_tid(const void *a, const void *b)
{
	const struct sel_stack *x = a, *y = b;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

/* "name-TID" for per-thread roots; name cleaned for the format. */
static char *thread_root(const struct export_opts *o, int tid, bool folded)
{
	const char *name = o->thread_name ? o->thread_name(o->ctx, tid) : NULL;
	char buf[512];

	snprintf(buf, sizeof(buf), "%s-%d", name && *name ? name : "thread", tid);
	return clean_name(buf, folded);
}

/* ---- folded ---- */

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

static int render_folded(struct window *w, const struct export_opts *o, struct sel *s,
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
			char *root = thread_root(o, s->st[i].tid, true);
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
				char *c = clean_name(f->sym.func, true);
				sbuf_str(&b, c ? c : "?");
				sbuf_str(&b, "_[i]");
				free(c);
			} else {
				sbuf_str(&b, sel_label(s, w, id));
			}
			if (frames_get(window_frames(w), id)->kernel)
				sbuf_str(&b, "_[k]");
			else if (frames_get(window_frames(w), id)->has_sym &&
				 frames_get(window_frames(w), id)->sym.jit)
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
		export_summary_text(o->summary, sum, sizeof(sum));
		sbuf_printf(out, "# %s{%s}\n", EXPORT_FOLDED_TAG, sum);
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

/* ---- pprof ---- */

struct pp {
	struct strpool str;
	struct u64map fn_of;  /* (name idx, file idx) → function id */
	struct u64map map_of; /* module idx → mapping id */
	uint32_t *loc_of;     /* window frame id → location id (0 = none yet) */
	Perftools__Profiles__Function *fn;
	size_t nfn, capfn;
	Perftools__Profiles__Mapping *map;
	size_t nmap, capmap;
	/* per mapping: pc - ELF address, once a frame with an origin came */
	struct pp_bias {
		uint64_t bias;
		bool set;
	} *bias;
	size_t capbias;
	Perftools__Profiles__Location *loc;
	size_t nloc, caploc;
	Perftools__Profiles__Line *line; /* loc[i]'s lines: line[first[i] .. first[i] + nline[i]) */
	size_t nline, capline;
	size_t *first, *nlines; /* per location */
	size_t capfirst, capnlines;
};

static int64_t pp_str(struct pp *p, const char *s)
{
	char *c = clean_name(s ? s : "", false);
	int64_t i;

	if (!c)
		return -ENOMEM;
	i = strpool_index(&p->str, c, strlen(c));
	free(c);
	return i;
}

/* A location's address: the pc, or for a saved profile's frame that kept
 * its origin the ELF address (its synthetic pc means nothing). */
static uint64_t pp_address(const struct frame *f)
{
	return f->pid == 0 && f->origin.path ? f->origin.elf_addr : f->pc;
}

/* Annotate (issue 16) reads code back from the binary: the mapping names
 * its full path and build-id, and file_offset is set so that address -
 * memory_start + file_offset is the ELF address (the file offset for the
 * usual text segment, whose offset equals its address). */
static int pp_origin(struct pp *p, Perftools__Profiles__Mapping *m, const struct frame *f)
{
	struct pp_bias *b = &p->bias[m->id - 1];
	int64_t path, bid;

	if (!b->set && f->origin.path) {
		if ((path = pp_str(p, f->origin.path)) < 0 ||
		    (bid = pp_str(p, f->origin.build_id ? f->origin.build_id : "")) < 0)
			return -ENOMEM;
		m->filename = path;
		m->build_id = bid;
		b->bias = pp_address(f) - f->origin.elf_addr;
		b->set = true;
	}
	if (b->set)
		m->file_offset = m->memory_start - b->bias;
	return 0;
}

static int64_t pp_mapping(struct pp *p, const struct frame *f)
{
	const char *mod = f->has_sym && f->sym.module ? f->sym.module
			  : f->kernel		      ? "[kernel]"
						      : "[unknown]";
	int64_t mi = pp_str(p, mod), id;
	Perftools__Profiles__Mapping *m;

	if (mi < 0)
		return mi;
	uint64_t pc = pp_address(f);

	if ((id = u64map_get(&p->map_of, (uint64_t)mi, 0)) != 0) {
		m = &p->map[id - 1];
		if (pc < m->memory_start)
			m->memory_start = pc;
		if (pc >= m->memory_limit)
			m->memory_limit = pc + 1;
		return pp_origin(p, m, f) ? -ENOMEM : id;
	}
	if (array_grow((void **)&p->map, &p->capmap, p->nmap + 1, sizeof(*p->map)) ||
	    array_grow((void **)&p->bias, &p->capbias, p->nmap + 1, sizeof(*p->bias)))
		return -ENOMEM;
	m = &p->map[p->nmap];
	perftools__profiles__mapping__init(m);
	m->id = p->nmap + 1;
	m->filename = mi;
	m->memory_start = pc;
	m->memory_limit = pc + 1;
	m->has_functions = true;
	p->bias[p->nmap] = (struct pp_bias){0};
	p->nmap++;
	if (u64map_get(&p->map_of, (uint64_t)mi, (uint32_t)m->id) < 0 || pp_origin(p, m, f))
		return -ENOMEM;
	return (int64_t)m->id;
}

static int64_t pp_function(struct pp *p, int64_t name, int64_t file)
{
	uint64_t key = (uint64_t)name << 32 | (uint64_t)file;
	int64_t id = u64map_get(&p->fn_of, key, 0);
	Perftools__Profiles__Function *fn;

	if (id)
		return id;
	if (array_grow((void **)&p->fn, &p->capfn, p->nfn + 1, sizeof(*p->fn)))
		return -ENOMEM;
	fn = &p->fn[p->nfn];
	perftools__profiles__function__init(fn);
	fn->id = p->nfn + 1;
	fn->name = name;
	fn->system_name = name;
	fn->filename = file;
	p->nfn++;
	if (u64map_get(&p->fn_of, key, (uint32_t)fn->id) < 0)
		return -ENOMEM;
	return (int64_t)fn->id;
}

/* One Line of a location: window frame id's function and line. An
 * inlined function is named plainly: the Line list says it is inlined. */
static int pp_line(struct pp *p, struct window *w, struct sel *s, uint32_t id,
		   const struct frame *f, int64_t *map)
{
	int64_t name, file, fn;

	if (f->has_sym && f->sym.func && f->sym.inlined)
		name = pp_str(p, f->sym.func);
	else
		name = pp_str(p, sel_label(s, w, id));
	if (name < 0 || (file = pp_str(p, f->has_line && f->sym.file ? f->sym.file : "")) < 0 ||
	    (fn = pp_function(p, name, file)) < 0 || (*map = pp_mapping(p, f)) < 0)
		return -ENOMEM;
	if (array_grow((void **)&p->line, &p->capline, p->nline + 1, sizeof(*p->line)))
		return -ENOMEM;
	perftools__profiles__line__init(&p->line[p->nline]);
	p->line[p->nline].function_id = (uint64_t)fn;
	p->line[p->nline].line = f->has_line && f->sym.line > 0 ? f->sym.line : 0;
	p->nline++;
	if (file > 0)
		p->map[*map - 1].has_filenames = true;
	if (f->has_line && f->sym.line > 0)
		p->map[*map - 1].has_line_numbers = true;
	return 0;
}

/* The location of window frames ids[0 .. n), made on first use: one
 * frame, or the inline levels of a pc (innermost first) and, last, the
 * frame of the function they were inlined into, whose id keys it. */
static int64_t pp_location(struct pp *p, struct window *w, struct sel *s, const uint32_t *ids,
			   size_t n)
{
	uint32_t key = ids[n - 1];
	const struct frame *f = NULL;
	Perftools__Profiles__Location *l;
	int64_t map = 0;

	if (p->loc_of[key])
		return p->loc_of[key];
	if (array_grow((void **)&p->loc, &p->caploc, p->nloc + 1, sizeof(*p->loc)) ||
	    array_grow((void **)&p->first, &p->capfirst, p->nloc + 1, sizeof(*p->first)) ||
	    array_grow((void **)&p->nlines, &p->capnlines, p->nloc + 1, sizeof(*p->nlines)))
		return -ENOMEM;
	p->first[p->nloc] = p->nline;
	for (size_t k = 0; k < n; k++) {
		f = frames_line(window_frames_mut(w), ids[k]); /* pprof carries lines */
		if (pp_line(p, w, s, ids[k], f, &map))
			return -ENOMEM;
	}
	p->nlines[p->nloc] = n;
	l = &p->loc[p->nloc];
	perftools__profiles__location__init(l);
	l->id = p->nloc + 1;
	l->mapping_id = (uint64_t)map;
	l->address = pp_address(f);
	p->nloc++;
	p->loc_of[key] = (uint32_t)l->id;
	return (int64_t)l->id;
}

static void reverse_ids(uint32_t *v, size_t n)
{
	for (size_t lo = 0, hi = n; lo + 1 < hi; lo++, hi--) {
		uint32_t t = v[lo];
		v[lo] = v[hi - 1];
		v[hi - 1] = t;
	}
}

/* How many frames from stack[k] on (leaf first) make one location: the
 * inline levels of a pc and the frame they were inlined into. */
static size_t pp_group(struct window *w, const uint32_t *stack, size_t k, size_t n)
{
	const struct frame *f0 = frames_get(window_frames(w), stack[k]), *f;
	size_t j = k;

	while (j < n && (f = frames_get(window_frames(w), stack[j])) && f->has_sym &&
	       f->sym.inlined && f->pid == f0->pid && f->pc == f0->pc)
		j++;
	if (j == k || j == n)
		return 1; /* not inlined, or cut from its function: its own location */
	f = frames_get(window_frames(w), stack[j]);
	return f && !f->sym.inlined && f->pid == f0->pid && f->pc == f0->pc ? j - k + 1 : 1;
}

static void pp_free(struct pp *p)
{
	strpool_free(&p->str);
	u64map_free(&p->fn_of);
	u64map_free(&p->map_of);
	free(p->loc_of);
	free(p->fn);
	free(p->map);
	free(p->bias);
	free(p->loc);
	free(p->line);
	free(p->first);
	free(p->nlines);
}

int export_gzip(const uint8_t *in, size_t n, char **buf, size_t *len)
{
	z_stream z = {0};
	uLong bound;
	char *out;
	int rc;

	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
	    Z_OK)
		return -ENOMEM;
	bound = deflateBound(&z, (uLong)n) + 64;
	if (!(out = malloc(bound))) {
		deflateEnd(&z);
		return -ENOMEM;
	}
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)n;
	z.next_out = (Bytef *)out;
	z.avail_out = (uInt)bound;
	rc = deflate(&z, Z_FINISH);
	*len = z.total_out;
	deflateEnd(&z);
	if (rc != Z_STREAM_END) {
		free(out);
		return -EIO;
	}
	*buf = out;
	return 0;
}

/* export_gzip appended to out. */
static int gzip_buf(const uint8_t *in, size_t n, struct sbuf *out)
{
	char *gz;
	size_t len;
	int err = export_gzip(in, n, &gz, &len);

	if (err)
		return err;
	sbuf_add(out, gz, len);
	free(gz);
	return out->oom ? -ENOMEM : 0;
}

static int render_pprof(struct window *w, const struct export_opts *o, struct sel *s,
			struct sbuf *out)
{
	Perftools__Profiles__Profile prof = PERFTOOLS__PROFILES__PROFILE__INIT;
	Perftools__Profiles__ValueType vt[2], pt = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	Perftools__Profiles__ValueType *vtp[2] = {&vt[0], &vt[1]};
	Perftools__Profiles__Sample *smp = NULL, **smpp = NULL;
	Perftools__Profiles__Label *lab = NULL, **labp = NULL;
	Perftools__Profiles__Location **locp = NULL;
	Perftools__Profiles__Function **fnp = NULL;
	Perftools__Profiles__Mapping **mapp = NULL;
	Perftools__Profiles__Line **linep = NULL;
	uint64_t *locids = NULL;
	int64_t *vals = NULL, comment[5];
	const char *mode = o->mode ? o->mode : "cpu";
	int64_t period_ns = (int64_t)(o->period_s * 1e9 + 0.5);
	size_t nvals = period_ns > 0 ? 2 : 1, ncomment = 0;
	struct pp p = {0};
	uint8_t *packed = NULL;
	int64_t k_tid, k_thread, k_mode, k_ns, k_second;
	struct timespec now;
	char buf[1024];
	int err = -ENOMEM;

	if (pp_str(&p, "") != 0 ||
	    !(p.loc_of = calloc(frames_span(window_frames(w)) + 1, sizeof(*p.loc_of))))
		goto out;
	perftools__profiles__value_type__init(&vt[0]);
	perftools__profiles__value_type__init(&vt[1]);
	vt[0].type = pp_str(&p, "samples");
	vt[0].unit = pp_str(&p, "count");
	k_mode = pp_str(&p, mode);
	k_ns = pp_str(&p, "nanoseconds");
	vt[1].type = k_mode;
	vt[1].unit = k_ns;
	k_tid = pp_str(&p, "tid");
	k_thread = pp_str(&p, "thread");
	k_second = pp_str(&p, "second");
	if (vt[0].type < 0 || vt[0].unit < 0 || k_mode < 0 || k_ns < 0 || k_tid < 0 ||
	    k_thread < 0 || k_second < 0)
		goto out;

	/* Samples: leaf first; values [count, count × period]. */
	if (!(smp = calloc(s->nst + 1, sizeof(*smp))) ||
	    !(smpp = calloc(s->nst + 1, sizeof(*smpp))) ||
	    !(lab = calloc(3 * s->nst + 1, sizeof(*lab))) ||
	    !(labp = calloc(3 * s->nst + 1, sizeof(*labp))) ||
	    !(locids = calloc(s->nframes + 1, sizeof(*locids))) ||
	    !(vals = calloc(nvals * s->nst + 1, sizeof(*vals))))
		goto out;
	for (size_t i = 0; i < s->nst; i++) {
		const struct sel_stack *st = &s->st[i];
		const char *tname = o->thread_name ? o->thread_name(o->ctx, st->tid) : NULL;
		size_t nl = 0;

		perftools__profiles__sample__init(&smp[i]);
		/* Leaf first; inline levels share their function's location. */
		uint32_t *leaf_first = &s->frames[st->off];
		size_t nloc = 0;
		int64_t li = 0;
		reverse_ids(leaf_first, st->n);
		for (size_t k = 0; k < st->n && li >= 0;) {
			size_t g = pp_group(w, leaf_first, k, st->n);
			li = pp_location(&p, w, s, leaf_first + k, g);
			locids[st->off + nloc++] = (uint64_t)li;
			k += g;
		}
		reverse_ids(leaf_first, st->n); /* the selection stays root first */
		if (li < 0)
			goto out;
		smp[i].location_id = &locids[st->off];
		smp[i].n_location_id = nloc;
		vals[i * nvals] = (int64_t)st->count;
		if (nvals > 1)
			vals[i * nvals + 1] = (int64_t)st->count * period_ns;
		smp[i].value = &vals[i * nvals];
		smp[i].n_value = nvals;
		Perftools__Profiles__Label *l = &lab[3 * i];
		perftools__profiles__label__init(&l[0]);
		l[0].key = k_tid;
		l[0].num = st->tid;
		labp[3 * i] = &l[0];
		nl = 1;
		if (tname && *tname) {
			int64_t v = pp_str(&p, tname);
			if (v < 0)
				goto out;
			perftools__profiles__label__init(&l[nl]);
			l[nl].key = k_thread;
			l[nl].str = v;
			labp[3 * i + nl] = &l[nl];
			nl++;
		}
		if (st->second >= 0) {
			perftools__profiles__label__init(&l[nl]);
			l[nl].key = k_second;
			l[nl].num = st->second;
			labp[3 * i + nl] = &l[nl];
			nl++;
		}
		smp[i].label = &labp[3 * i];
		smp[i].n_label = nl;
		smpp[i] = &smp[i];
	}
	/* Comments: who wrote it, and any narrowing the user applied. */
	snprintf(buf, sizeof(buf), "stacktop %s%s%s", STACKTOP_VERSION, o->cmdline ? ": " : "",
		 o->cmdline ? o->cmdline : "");
	comment[ncomment++] = pp_str(&p, buf);
	if (o->tid) {
		snprintf(buf, sizeof(buf), "thread %d only", o->tid);
		comment[ncomment++] = pp_str(&p, buf);
	}
	if (o->hide_kernel)
		comment[ncomment++] = pp_str(&p, "kernel frames hidden");
	if (o->summary) {
		char sum[256];
		export_summary_text(o->summary, sum, sizeof(sum));
		snprintf(buf, sizeof(buf), "%s{%s}", EXPORT_FOLDED_TAG, sum);
		comment[ncomment++] = pp_str(&p, buf);
	}
	if (o->nzoom > 0) {
		struct sbuf z = {0};
		sbuf_str(&z, "zoomed to ");
		for (int i = 0; i < o->nzoom; i++)
			sbuf_printf(&z, "%s%s", i ? ";" : "", o->zoom[i] ? o->zoom[i] : "");
		comment[ncomment++] = z.oom ? -ENOMEM : pp_str(&p, z.p);
		free(z.p);
	}
	for (size_t i = 0; i < ncomment; i++)
		if (comment[i] < 0)
			goto out;

	if (!(locp = calloc(p.nloc + 1, sizeof(*locp))) ||
	    !(fnp = calloc(p.nfn + 1, sizeof(*fnp))) || !(mapp = calloc(p.nmap + 1, sizeof(*mapp))))
		goto out;
	for (size_t i = 0; i < p.nloc; i++)
		locp[i] = &p.loc[i];
	for (size_t i = 0; i < p.nfn; i++)
		fnp[i] = &p.fn[i];
	for (size_t i = 0; i < p.nmap; i++)
		mapp[i] = &p.map[i];

	/* protobuf-c wants Line **: one pointer per line, a run per location. */
	if (!(linep = calloc(p.nline + 1, sizeof(*linep))))
		goto out;
	for (size_t i = 0; i < p.nline; i++)
		linep[i] = &p.line[i];
	for (size_t i = 0; i < p.nloc; i++) {
		p.loc[i].line = &linep[p.first[i]];
		p.loc[i].n_line = p.nlines[i];
	}

	prof.n_sample_type = nvals;
	prof.sample_type = vtp;
	prof.n_sample = s->nst;
	prof.sample = smpp;
	prof.n_mapping = p.nmap;
	prof.mapping = mapp;
	prof.n_location = p.nloc;
	prof.location = locp;
	prof.n_function = p.nfn;
	prof.function = fnp;
	prof.n_string_table = p.str.n;
	prof.string_table = p.str.s;
	if (period_ns > 0) {
		pt.type = k_mode;
		pt.unit = k_ns;
		prof.period_type = &pt;
		prof.period = period_ns;
		prof.default_sample_type = k_mode;
	}
	clock_gettime(CLOCK_REALTIME, &now);
	prof.duration_nanos = (int64_t)(o->duration_s * 1e9);
	prof.time_nanos = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec - prof.duration_nanos;
	prof.n_comment = ncomment;
	prof.comment = comment;

	size_t len = perftools__profiles__profile__get_packed_size(&prof);
	if (!(packed = malloc(len + 1)))
		goto out;
	perftools__profiles__profile__pack(&prof, packed);
	err = gzip_buf(packed, len, out);
out:
	free(linep);
	free(packed);
	free(locp);
	free(fnp);
	free(mapp);
	free(smp);
	free(smpp);
	free(lab);
	free(labp);
	free(locids);
	free(vals);
	pp_free(&p);
	return err;
}

/* ---- speedscope ---- */

static void json_str(struct sbuf *b, const char *s)
{
	sbuf_add(b, "\"", 1);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\') {
			char e[2] = {'\\', (char)c};
			sbuf_add(b, e, 2);
		} else if (c < 0x20) {
			sbuf_printf(b, "\\u%04x", c);
		} else {
			sbuf_add(b, s, 1);
		}
	}
	sbuf_add(b, "\"", 1);
}

/* Shared frames, one per (name, file); *idx maps window frame id → index. */
static int ss_frames(struct window *w, struct sel *s, struct sbuf *out, uint32_t **idx)
{
	struct strpool names = {0}, files = {0};
	struct u64map key = {0};
	uint32_t nf = 0;
	int err = 0;

	if (!(*idx = calloc(frames_span(window_frames(w)) + 1, sizeof(**idx))))
		return -ENOMEM;
	sbuf_str(out, "\"shared\":{\"frames\":[");
	for (size_t i = 0; i < s->nframes && !err; i++) {
		uint32_t id = s->frames[i];
		const struct frame *f = frames_line(window_frames_mut(w), id);
		const char *file = f->has_line && f->sym.file ? f->sym.file : "";
		char *cf = clean_name(file, false);
		const char *label = sel_label(s, w, id);
		int64_t ni = strpool_index(&names, label, strlen(label));
		int64_t fi = cf ? strpool_index(&files, cf, strlen(cf)) : -ENOMEM;
		int64_t got;

		if ((*idx)[id] || ni < 0 || fi < 0) {
			err = ni < 0 || fi < 0 ? -ENOMEM : 0;
			free(cf);
			continue;
		}
		got = u64map_get(&key, (uint64_t)ni << 32 | (uint64_t)fi, nf + 1);
		if (got < 0) {
			err = -ENOMEM;
		} else if (got) {
			(*idx)[id] = (uint32_t)got;
		} else {
			(*idx)[id] = ++nf;
			sbuf_str(out, nf > 1 ? ",{\"name\":" : "{\"name\":");
			json_str(out, sel_label(s, w, id));
			if (*cf) {
				sbuf_str(out, ",\"file\":");
				json_str(out, cf);
				if (f->sym.line > 0)
					sbuf_printf(out, ",\"line\":%d", f->sym.line);
			}
			sbuf_str(out, "}");
		}
		free(cf);
	}
	sbuf_str(out, "]}");
	strpool_free(&names);
	strpool_free(&files);
	u64map_free(&key);
	return err;
}

/* One sampled profile over stacks [from, to) of s. */
static void ss_profile(struct sbuf *out, struct sel *s, size_t from, size_t to, const char *name,
		       const uint32_t *idx, double period_s)
{
	double end = 0;

	sbuf_str(out, "{\"type\":\"sampled\",\"name\":");
	json_str(out, name);
	sbuf_printf(out, ",\"unit\":\"%s\",\"startValue\":0,\"samples\":[",
		    period_s > 0 ? "seconds" : "none");
	for (size_t i = from; i < to; i++) {
		sbuf_str(out, i > from ? ",[" : "[");
		for (size_t k = 0; k < s->st[i].n; k++)
			sbuf_printf(out, "%s%u", k ? "," : "",
				    idx[s->frames[s->st[i].off + k]] - 1);
		sbuf_str(out, "]");
	}
	sbuf_str(out, "],\"weights\":[");
	for (size_t i = from; i < to; i++) {
		double wgt =
		    period_s > 0 ? (double)s->st[i].count * period_s : (double)s->st[i].count;
		end += wgt;
		if (period_s > 0)
			sbuf_printf(out, "%s%.9g", i > from ? "," : "", wgt);
		else /* counts: exact, whatever their size */
			sbuf_printf(out, "%s%llu", i > from ? "," : "",
				    (unsigned long long)s->st[i].count);
	}
	sbuf_printf(out, "],\"endValue\":%.9g}", end);
}

static int render_speedscope(struct window *w, const struct export_opts *o, struct sel *s,
			     struct sbuf *out)
{
	uint32_t *idx = NULL;
	char *name = clean_name(o->cmdline && *o->cmdline ? o->cmdline : "stacktop", false);
	int err;

	if (!name)
		return -ENOMEM;
	sbuf_str(out, "{\"$schema\":\"" SPEEDSCOPE_SCHEMA
		      "\",\"exporter\":\"stacktop " STACKTOP_VERSION "\",\"name\":");
	json_str(out, name);
	sbuf_str(out, ",\"activeProfileIndex\":0,");
	/* What the format has no place for, so `report` can read it back:
	 * speedscope ignores keys it does not know. */
	sbuf_printf(out, "\"stacktop\":{\"mode\":\"%s\"",
		    o->mode && !strcmp(o->mode, "wall") ? "wall" : "cpu");
	if (o->period_s > 0)
		sbuf_printf(out, ",\"period_s\":%.9g", o->period_s);
	if (o->duration_s > 0)
		sbuf_printf(out, ",\"duration_s\":%.9g", o->duration_s);
	sbuf_str(out, "},");
	if ((err = ss_frames(w, s, out, &idx)))
		goto out;
	sbuf_str(out, ",\"profiles\":[");
	if (o->per_thread) {
		qsort(s->st, s->nst, sizeof(*s->st), cmp_tid);
		for (size_t i = 0, j; i < s->nst; i = j) {
			char *root = thread_root(o, s->st[i].tid, false);
			for (j = i; j < s->nst && s->st[j].tid == s->st[i].tid; j++)
				;
			if (i)
				sbuf_str(out, ",");
			ss_profile(out, s, i, j, root ? root : "thread", idx, o->period_s);
			free(root);
		}
	} else {
		ss_profile(out, s, 0, s->nst, name, idx, o->period_s);
	}
	sbuf_str(out, "]}\n");
out:
	free(idx);
	free(name);
	return err ? err : out->oom ? -ENOMEM : 0;
}

/* ---- entry points ---- */

int export_render(struct window *w, const struct export_opts *o, char **buf, size_t *len, char *err,
		  size_t errsz)
{
	struct sbuf out = {0};
	struct sel s;
	int rc;

	*buf = NULL;
	*len = 0;
	if (!w || !o) {
		text_errf(err, errsz, "nothing to export.");
		return -EINVAL;
	}
	rc = sel_build(&s, w, o);
	if (!rc) {
		switch (o->format) {
		case EXPORT_FOLDED:
			rc = render_folded(w, o, &s, &out);
			break;
		case EXPORT_PPROF:
			rc = render_pprof(w, o, &s, &out);
			break;
		case EXPORT_SPEEDSCOPE:
			rc = render_speedscope(w, o, &s, &out);
			break;
		default:
			rc = -EINVAL;
		}
	}
	sel_free(&s);
	if (!rc && out.oom)
		rc = -ENOMEM;
	if (rc) {
		free(out.p);
		text_errf(err, errsz, "cannot build the profile: %s.", strerror(-rc));
		return rc;
	}
	if (!out.p && !(out.p = calloc(1, 1))) {
		text_errf(err, errsz, "cannot build the profile: %s.", strerror(ENOMEM));
		return -ENOMEM;
	}
	*buf = out.p;
	*len = out.n;
	return 0;
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t k = write(fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		if (k == 0)
			return -EIO;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

int export_write_fd(struct window *w, const struct export_opts *o, int fd, char *err, size_t errsz)
{
	char *buf;
	size_t len;
	int rc = export_render(w, o, &buf, &len, err, errsz);

	if (rc)
		return rc;
	if ((rc = write_all(fd, buf, len)))
		text_errf(err, errsz, "cannot write the profile: %s.", strerror(-rc));
	free(buf);
	return rc;
}

/* Put the temporary file at path without replacing anything; -EEXIST. */
static int link_noreplace(const char *tmp, const char *path)
{
	if (renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -errno;
	if (link(tmp, path) != 0)
		return -errno;
	unlink(tmp);
	return 0;
}

int export_write(struct window *w, const struct export_opts *o, const char *path, char *err,
		 size_t errsz)
{
	char *buf = NULL, *tmp = NULL, *slash;
	struct stat st;
	size_t len;
	int fd = -1, rc;

	if (!path || !*path) {
		text_errf(err, errsz, "no output file given.");
		return -EINVAL;
	}
	if (lstat(path, &st) == 0) {
		if (S_ISLNK(st.st_mode)) {
			text_errf(err, errsz, "%s is a symbolic link; not writing through it.",
				  path);
			return -ELOOP;
		}
		if (!o->force) {
			text_errf(err, errsz, "%s exists; use --force to overwrite it.", path);
			return -EEXIST;
		}
		if (!S_ISREG(st.st_mode)) {
			text_errf(err, errsz, "%s is not a regular file; not replacing it.", path);
			return -EINVAL;
		}
	}
	if ((rc = export_render(w, o, &buf, &len, err, errsz)))
		return rc;
	/* The temporary file sits in the target's directory, so rename is
	 * atomic and a full or read-only file system shows up here. */
	if (asprintf(&tmp, "%s", path) < 0) {
		tmp = NULL;
		rc = -ENOMEM;
		text_errf(err, errsz, "cannot write %s: %s.", path, strerror(ENOMEM));
		goto out;
	}
	slash = strrchr(tmp, '/');
	{
		char *t2 = NULL;
		if (slash)
			*slash = '\0';
		if (asprintf(&t2, "%s/.stacktop-XXXXXX", slash ? (*tmp ? tmp : "/") : ".") < 0) {
			rc = -ENOMEM;
			text_errf(err, errsz, "cannot write %s: %s.", path, strerror(ENOMEM));
			goto out;
		}
		free(tmp);
		tmp = t2;
	}
	if ((fd = mkostemp(tmp, O_CLOEXEC)) < 0) {
		rc = -errno;
		text_errf(err, errsz, "cannot create %s: %s.", path, strerror(-rc));
		free(tmp);
		tmp = NULL;
		goto out;
	}
	if (fchmod(fd, o->file_mode ? o->file_mode : 0600) != 0 || (rc = write_all(fd, buf, len)) != 0 ||
	    (rc = close(fd) ? -errno : 0) != 0) {
		if (!rc)
			rc = -errno;
		text_errf(err, errsz, "cannot write %s: %s.", path, strerror(-rc));
		goto out;
	}
	fd = -1;
	if (o->force)
		rc = rename(tmp, path) ? -errno : 0;
	else
		rc = link_noreplace(tmp, path);
	if (rc == -EEXIST)
		text_errf(err, errsz, "%s exists; use --force to overwrite it.", path);
	else if (rc)
		text_errf(err, errsz, "cannot write %s: %s.", path, strerror(-rc));
out:
	if (fd >= 0)
		close(fd);
	if (tmp && rc)
		unlink(tmp);
	free(tmp);
	free(buf);
	return rc;
}
