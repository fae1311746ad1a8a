/*
 * pprof — perftools.profiles.Profile (src/formats/profile.proto, through
 * protobuf-c), gzip-compressed, as `go tool pprof` reads it: written and
 * read (see pprof.h).
 *
 * Writing: the tables are built as the selected stacks are walked, each
 * entry made on first use and found again through a hashidx: strings
 * (strpool), one Function per (name, file), one Mapping per module name,
 * one Location per pc (keyed by the window frame id of the function the
 * pc's inline levels were inlined into).
 *
 * Reading: the input is outside data (a file from another machine), so
 * every index is checked before use: string indices against the table,
 * location/function/mapping ids against what the file defines (a hashidx
 * per kind); protobuf-c checks the wire format itself. What unpack
 * allocates goes through a counting ProtobufCAllocator that refuses more
 * than PPROF_UNPACK_RATIO times the protobuf's size plus 16 MiB (an empty
 * Sample is 2 bytes on the wire and ~100 in memory: a file of nothing else
 * must not pass).
 */
#include "stacktop/formats/pprof.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "profile.pb-c.h"
#include "stacktop/formats/export.h"
#include "stacktop/formats/gzip.h"
#include "stacktop/formats/selection.h"
#include "stacktop/formats/stackset.h"
#include "stacktop/lib/array.h"
#include "stacktop/lib/hashidx.h"
#include "stacktop/lib/sbuf.h"
#include "stacktop/lib/strpool.h"
#include "stacktop/lib/text.h"
#include "stacktop/model/summary.h"
#include "stacktop/model/window.h"
#include "stacktop/symbols/frames.h"

#ifndef STACKTOP_VERSION
#define STACKTOP_VERSION "dev"
#endif

#define PPROF_UNPACK_RATIO 32
#define PPROF_UNPACK_BASE (16ull << 20)
#define PPROF_UNPACK_OVERHEAD 16 /* what malloc adds to each block */

/* ---- writing ---- */

struct pprof_tables {
	struct frames *fr;
	pprof_label_fn label;
	void *ctx;
	struct strpool str;
	struct hashidx fn_of;  /* (name, file) → function index (id - 1) */
	struct hashidx map_of; /* module name → mapping index (id - 1) */
	uint32_t *loc_of;      /* window frame id → location id (0 = none yet) */
	Perftools__Profiles__Function *fn;
	size_t nfn, capfn;
	Perftools__Profiles__Mapping *map;
	size_t nmap, capmap;
	/* per mapping: its module's string (the key of map_of: an origin
	 * replaces the filename), and pc - ELF address, once a frame with an
	 * origin came */
	struct pp_bias {
		int64_t module;
		uint64_t bias;
		bool set;
	} * bias;
	size_t capbias;
	Perftools__Profiles__Location *loc;
	size_t nloc, caploc;
	Perftools__Profiles__Line *line; /* loc[i]'s lines: line[first[i] .. first[i] + nline[i]) */
	size_t nline, capline;
	size_t *first, *nlines; /* per location */
	size_t capfirst, capnlines;
	uint32_t *leaf_first; /* a stack's ids, leaf first */
	size_t capleaf;
	/* what pprof_tables_fill hands the profile: protobuf-c's pointer arrays */
	Perftools__Profiles__Location **locp;
	Perftools__Profiles__Function **fnp;
	Perftools__Profiles__Mapping **mapp;
	Perftools__Profiles__Line **linep;
};

static int64_t pp_str(struct pprof_tables *p, const char *s)
{
	char *c = selection_clean(s ? s : "", false);
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
static int pp_origin(struct pprof_tables *p, Perftools__Profiles__Mapping *m, const struct frame *f)
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

static bool map_hash(const void *ctx, uint32_t id, uint64_t *hash)
{
	*hash = hashidx_mix64((uint64_t)((const struct pprof_tables *)ctx)->bias[id].module);
	return true;
}

static bool map_eq(const void *ctx, uint32_t id, const void *key)
{
	return ((const struct pprof_tables *)ctx)->bias[id].module == *(const int64_t *)key;
}

static int64_t pp_mapping(struct pprof_tables *p, const struct frame *f)
{
	const char *mod = f->has_sym && f->sym.module ? f->sym.module
			  : f->kernel		      ? "[kernel]"
						      : "[unknown]";
	int64_t mi = pp_str(p, mod), id;
	Perftools__Profiles__Mapping *m;

	if (mi < 0)
		return mi;
	uint64_t pc = pp_address(f), h = hashidx_mix64((uint64_t)mi);

	if ((id = hashidx_find(&p->map_of, h, map_eq, p, &mi, NULL)) >= 0) {
		m = &p->map[id];
		if (pc < m->memory_start)
			m->memory_start = pc;
		if (pc >= m->memory_limit)
			m->memory_limit = pc + 1;
		return pp_origin(p, m, f) ? -ENOMEM : id + 1;
	}
	if (array_grow((void **)&p->map, &p->capmap, p->nmap + 1, sizeof(*p->map)) ||
	    array_grow((void **)&p->bias, &p->capbias, p->nmap + 1, sizeof(*p->bias)) ||
	    hashidx_reserve(&p->map_of, p->nmap, p->nmap, 16, map_hash, p))
		return -ENOMEM;
	m = &p->map[p->nmap];
	perftools__profiles__mapping__init(m);
	m->id = p->nmap + 1;
	m->filename = mi;
	m->memory_start = pc;
	m->memory_limit = pc + 1;
	m->has_functions = true;
	p->bias[p->nmap] = (struct pp_bias){.module = mi};
	hashidx_put(&p->map_of, h, (uint32_t)p->nmap);
	p->nmap++;
	if (pp_origin(p, m, f))
		return -ENOMEM;
	return (int64_t)m->id;
}

/* A function's key: its name and file in the string table. */
struct fn_key {
	int64_t name, file;
};

static uint64_t fn_key_hash(int64_t name, int64_t file)
{
	return hashidx_mix64((uint64_t)name << 32 | (uint64_t)file);
}

static bool fn_hash(const void *ctx, uint32_t id, uint64_t *hash)
{
	const Perftools__Profiles__Function *fn = &((const struct pprof_tables *)ctx)->fn[id];

	*hash = fn_key_hash(fn->name, fn->filename);
	return true;
}

static bool fn_eq(const void *ctx, uint32_t id, const void *key)
{
	const Perftools__Profiles__Function *fn = &((const struct pprof_tables *)ctx)->fn[id];
	const struct fn_key *k = key;

	return fn->name == k->name && fn->filename == k->file;
}

static int64_t pp_function(struct pprof_tables *p, int64_t name, int64_t file)
{
	struct fn_key key = {name, file};
	uint64_t h = fn_key_hash(name, file);
	int64_t id = hashidx_find(&p->fn_of, h, fn_eq, p, &key, NULL);
	Perftools__Profiles__Function *fn;

	if (id >= 0)
		return id + 1;
	if (array_grow((void **)&p->fn, &p->capfn, p->nfn + 1, sizeof(*p->fn)) ||
	    hashidx_reserve(&p->fn_of, p->nfn, p->nfn, 256, fn_hash, p))
		return -ENOMEM;
	fn = &p->fn[p->nfn];
	perftools__profiles__function__init(fn);
	fn->id = p->nfn + 1;
	fn->name = name;
	fn->system_name = name;
	fn->filename = file;
	hashidx_put(&p->fn_of, h, (uint32_t)p->nfn);
	p->nfn++;
	return (int64_t)fn->id;
}

/* One Line of a location: window frame id's function and line. An
 * inlined function is named plainly: the Line list says it is inlined. */
static int pp_line(struct pprof_tables *p, uint32_t id, const struct frame *f, int64_t *map)
{
	int64_t name, file, fn;

	if (f->has_sym && f->sym.func && f->sym.inlined)
		name = pp_str(p, f->sym.func);
	else
		name = pp_str(p, p->label(p->ctx, id));
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
static int64_t pp_location(struct pprof_tables *p, const uint32_t *ids, size_t n)
{
	static const struct frame gone; /* a frame no longer live: no name, pc 0 */
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
		f = frames_line(p->fr, ids[k]); /* pprof carries lines */
		if (!f)
			f = &gone;
		if (pp_line(p, ids[k], f, &map))
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

/* How many frames from stack[k] on (leaf first) make one location: the
 * inline levels of a pc and the frame they were inlined into. */
static size_t pp_group(const struct frames *fr, const uint32_t *stack, size_t k, size_t n)
{
	const struct frame *f0 = frames_get(fr, stack[k]), *f;
	size_t j = k;

	while (f0 && j < n && (f = frames_get(fr, stack[j])) && f->has_sym && f->sym.inlined &&
	       f->pid == f0->pid && f->pc == f0->pc)
		j++;
	if (j == k || j == n)
		return 1; /* not inlined, or cut from its function: its own location */
	f = frames_get(fr, stack[j]);
	return f && !f->sym.inlined && f->pid == f0->pid && f->pc == f0->pc ? j - k + 1 : 1;
}

int pprof_tables_new(struct pprof_tables **out, struct frames *fr, pprof_label_fn label, void *ctx)
{
	struct pprof_tables *p = calloc(1, sizeof(*p));

	*out = NULL;
	if (!p)
		return -ENOMEM;
	p->fr = fr;
	p->label = label;
	p->ctx = ctx;
	if (pp_str(p, "") != 0 || !(p->loc_of = calloc(frames_span(fr) + 1, sizeof(*p->loc_of)))) {
		pprof_tables_free(p);
		return -ENOMEM;
	}
	*out = p;
	return 0;
}

int64_t pprof_tables_str(struct pprof_tables *p, const char *s)
{
	return pp_str(p, s);
}

int pprof_tables_stack(struct pprof_tables *p, const uint32_t *root_first, size_t n, uint64_t *loc,
		       size_t *nloc)
{
	*nloc = 0;
	if (array_grow((void **)&p->leaf_first, &p->capleaf, n + 1, sizeof(*p->leaf_first)))
		return -ENOMEM;
	for (size_t k = 0; k < n; k++)
		p->leaf_first[k] = root_first[n - 1 - k];
	for (size_t k = 0; k < n;) {
		size_t g = pp_group(p->fr, p->leaf_first, k, n);
		int64_t li = pp_location(p, p->leaf_first + k, g);

		if (li < 0)
			return (int)li;
		loc[(*nloc)++] = (uint64_t)li;
		k += g;
	}
	return 0;
}

int pprof_tables_fill(struct pprof_tables *p, Perftools__Profiles__Profile *prof)
{
	if (!(p->locp = calloc(p->nloc + 1, sizeof(*p->locp))) ||
	    !(p->fnp = calloc(p->nfn + 1, sizeof(*p->fnp))) ||
	    !(p->mapp = calloc(p->nmap + 1, sizeof(*p->mapp))) ||
	    !(p->linep = calloc(p->nline + 1, sizeof(*p->linep))))
		return -ENOMEM;
	for (size_t i = 0; i < p->nfn; i++)
		p->fnp[i] = &p->fn[i];
	for (size_t i = 0; i < p->nmap; i++)
		p->mapp[i] = &p->map[i];
	/* protobuf-c wants Line **: one pointer per line, a run per location. */
	for (size_t i = 0; i < p->nline; i++)
		p->linep[i] = &p->line[i];
	for (size_t i = 0; i < p->nloc; i++) {
		p->loc[i].line = &p->linep[p->first[i]];
		p->loc[i].n_line = p->nlines[i];
		p->locp[i] = &p->loc[i];
	}
	prof->n_mapping = p->nmap;
	prof->mapping = p->mapp;
	prof->n_location = p->nloc;
	prof->location = p->locp;
	prof->n_function = p->nfn;
	prof->function = p->fnp;
	prof->n_string_table = p->str.n;
	prof->string_table = p->str.s;
	return 0;
}

void pprof_tables_free(struct pprof_tables *p)
{
	if (!p)
		return;
	strpool_free(&p->str);
	hashidx_free(&p->fn_of);
	hashidx_free(&p->map_of);
	ARRAY_FREE_ALL(p->loc_of, p->fn, p->map, p->bias, p->loc, p->line, p->first, p->nlines,
		       p->leaf_first, p->locp, p->fnp, p->mapp, p->linep);
	free(p);
}

/* Labels a sample may carry: tid, pid, process, thread, second. */
#define PP_LABELS 5

/* A process root frame's comm ("COMM (PID)" without " (PID)") as a string
 * of the table: its index, or -ENOMEM. */
static int64_t pp_process_name(struct pprof_tables *p, const char *func)
{
	char comm[96];
	const char *cut = func ? strrchr(func, '(') : NULL;
	size_t n = cut && cut > func ? (size_t)(cut - func - 1) : func ? strlen(func) : 0;

	snprintf(comm, sizeof(comm), "%.*s", (int)(n < sizeof(comm) ? n : sizeof(comm) - 1),
		 func ? func : "");
	return pprof_tables_str(p, comm);
}

/* pprof_render's names: the selection's labels (as the icicle shows them). */
struct pp_labels {
	struct selection *s;
	struct window *w;
};

static const char *pp_label(void *ctx, uint32_t id)
{
	const struct pp_labels *l = ctx;

	return selection_label(l->s, l->w, id);
}

/* gzip_compress appended to out. */
static int gzip_buf(const uint8_t *in, size_t n, struct sbuf *out)
{
	char *gz;
	size_t len;
	int err = gzip_compress(in, n, &gz, &len);

	if (err)
		return err;
	sbuf_add(out, gz, len);
	free(gz);
	return out->oom ? -ENOMEM : 0;
}

static int pprof_render(struct window *w, const struct export_opts *o, struct selection *s,
			struct sbuf *out)
{
	Perftools__Profiles__Profile prof = PERFTOOLS__PROFILES__PROFILE__INIT;
	Perftools__Profiles__ValueType vt[2], pt = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	Perftools__Profiles__ValueType *vtp[2] = {&vt[0], &vt[1]};
	Perftools__Profiles__Sample *smp = NULL, **smpp = NULL;
	Perftools__Profiles__Label *lab = NULL, **labp = NULL;
	uint64_t *locids = NULL;
	int64_t *vals = NULL, comment[8];
	const char *mode = o->mode ? o->mode : "cpu";
	int64_t period_ns = (int64_t)(o->period_s * 1e9 + 0.5);
	size_t nvals = period_ns > 0 ? 2 : 1, ncomment = 0;
	struct pp_labels names = {s, w};
	struct pprof_tables *p = NULL;
	uint8_t *packed = NULL;
	int64_t k_tid, k_thread, k_mode, k_ns, k_second, k_pid, k_process;
	struct timespec now;
	char buf[1024];
	int err = -ENOMEM;

	if (pprof_tables_new(&p, window_frames_mut(w), pp_label, &names))
		goto out;
	perftools__profiles__value_type__init(&vt[0]);
	perftools__profiles__value_type__init(&vt[1]);
	vt[0].type = pprof_tables_str(p, "samples");
	vt[0].unit = pprof_tables_str(p, "count");
	k_mode = pprof_tables_str(p, mode);
	k_ns = pprof_tables_str(p, "nanoseconds");
	vt[1].type = k_mode;
	vt[1].unit = k_ns;
	k_tid = pprof_tables_str(p, "tid");
	k_thread = pprof_tables_str(p, "thread");
	k_second = pprof_tables_str(p, "second");
	k_pid = pprof_tables_str(p, "pid");
	k_process = pprof_tables_str(p, "process");
	if (vt[0].type < 0 || vt[0].unit < 0 || k_mode < 0 || k_ns < 0 || k_tid < 0 ||
	    k_thread < 0 || k_second < 0 || k_pid < 0 || k_process < 0)
		goto out;

	/* Samples: leaf first; values [count, count × period]. */
	if (!(smp = calloc(s->nst + 1, sizeof(*smp))) ||
	    !(smpp = calloc(s->nst + 1, sizeof(*smpp))) ||
	    !(lab = calloc(PP_LABELS * s->nst + 1, sizeof(*lab))) ||
	    !(labp = calloc(PP_LABELS * s->nst + 1, sizeof(*labp))) ||
	    !(locids = calloc(s->nframes + 1, sizeof(*locids))) ||
	    !(vals = calloc(nvals * s->nst + 1, sizeof(*vals))))
		goto out;
	for (size_t i = 0; i < s->nst; i++) {
		const struct selection_stack *st = &s->st[i];
		const char *tname = o->thread_name ? o->thread_name(o->ctx, st->tid) : NULL;
		size_t nl = 0;

		size_t nloc;

		perftools__profiles__sample__init(&smp[i]);
		/* Leaf first; inline levels share their function's location. */
		if (pprof_tables_stack(p, &s->frames[st->off], st->n, &locids[st->off], &nloc))
			goto out;
		smp[i].location_id = &locids[st->off];
		smp[i].n_location_id = nloc;
		vals[i * nvals] = (int64_t)st->count;
		if (nvals > 1)
			vals[i * nvals + 1] = (int64_t)st->count * period_ns;
		smp[i].value = &vals[i * nvals];
		smp[i].n_value = nvals;
		Perftools__Profiles__Label *l = &lab[PP_LABELS * i];
		perftools__profiles__label__init(&l[0]);
		l[0].key = k_tid;
		l[0].num = st->tid;
		labp[PP_LABELS * i] = &l[0];
		nl = 1;
		/* The whole machine: its process as labels too (tagfocus). */
		const struct frame *root =
		    st->n ? frames_get(window_frames(w), s->frames[st->off]) : NULL;
		if (frame_is_process(root)) {
			int64_t v = pp_process_name(p, root->sym.func);
			if (v < 0)
				goto out;
			perftools__profiles__label__init(&l[nl]);
			l[nl].key = k_pid;
			l[nl].num = root->pid;
			labp[PP_LABELS * i + nl] = &l[nl];
			nl++;
			perftools__profiles__label__init(&l[nl]);
			l[nl].key = k_process;
			l[nl].str = v;
			labp[PP_LABELS * i + nl] = &l[nl];
			nl++;
		}
		if (tname && *tname) {
			int64_t v = pprof_tables_str(p, tname);
			if (v < 0)
				goto out;
			perftools__profiles__label__init(&l[nl]);
			l[nl].key = k_thread;
			l[nl].str = v;
			labp[PP_LABELS * i + nl] = &l[nl];
			nl++;
		}
		if (st->second >= 0) {
			perftools__profiles__label__init(&l[nl]);
			l[nl].key = k_second;
			l[nl].num = st->second;
			labp[PP_LABELS * i + nl] = &l[nl];
			nl++;
		}
		smp[i].label = &labp[PP_LABELS * i];
		smp[i].n_label = nl;
		smpp[i] = &smp[i];
	}
	/* Comments: who wrote it, and any narrowing the user applied. */
	snprintf(buf, sizeof(buf), "stacktop %s%s%s", STACKTOP_VERSION, o->cmdline ? ": " : "",
		 o->cmdline ? o->cmdline : "");
	comment[ncomment++] = pprof_tables_str(p, buf);
	if (o->tid) {
		snprintf(buf, sizeof(buf), "thread %d only", o->tid);
		comment[ncomment++] = pprof_tables_str(p, buf);
	}
	if (o->pid) {
		snprintf(buf, sizeof(buf), "process %d only", o->pid);
		comment[ncomment++] = pprof_tables_str(p, buf);
	}
	if (o->hide_kernel)
		comment[ncomment++] = pprof_tables_str(p, "kernel frames hidden");
	if (o->summary) {
		char sum[256];
		summary_text(o->summary, sum, sizeof(sum));
		snprintf(buf, sizeof(buf), "%s{%s}", EXPORT_FOLDED_TAG, sum);
		comment[ncomment++] = pprof_tables_str(p, buf);
	}
	if (o->ncpu) {
		struct sbuf cb = {0};
		sbuf_printf(&cb, "%s{", EXPORT_FOLDED_TAG);
		summary_cpu_text(o->cpu, o->ncpu, &cb);
		sbuf_str(&cb, "}");
		if (!cb.oom)
			comment[ncomment++] = pprof_tables_str(p, cb.p);
		free(cb.p);
	}
	int64_t at;
	if (selection_cpu_at(s, o, &at)) {
		char t[64];
		summary_cpu_at_text(at, t, sizeof(t));
		snprintf(buf, sizeof(buf), "%s{%s}", EXPORT_FOLDED_TAG, t);
		comment[ncomment++] = pprof_tables_str(p, buf);
	}
	if (o->nzoom > 0) {
		struct sbuf z = {0};
		sbuf_str(&z, "zoomed to ");
		for (int i = 0; i < o->nzoom; i++)
			sbuf_printf(&z, "%s%s", i ? ";" : "", o->zoom[i] ? o->zoom[i] : "");
		comment[ncomment++] = z.oom ? -ENOMEM : pprof_tables_str(p, z.p);
		free(z.p);
	}
	for (size_t i = 0; i < ncomment; i++)
		if (comment[i] < 0)
			goto out;

	if (pprof_tables_fill(p, &prof))
		goto out;
	prof.n_sample_type = nvals;
	prof.sample_type = vtp;
	prof.n_sample = s->nst;
	prof.sample = smpp;
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
	ARRAY_FREE_ALL(packed, smp, smpp, lab, labp, locids, vals);
	pprof_tables_free(p);
	return err;
}

/* ---- reading ---- */

/* Message ids (location, function, mapping) → index in their array: a
 * hashidx over the array, sized once for all of it (never rebuilt, so a
 * duplicate id, which keeps its first index, is never re-indexed). */
struct idmap {
	struct hashidx ix;
	uint64_t (*id_of)(const void *arr, size_t i);
	const void *arr;
};

static bool idmap_eq(const void *ctx, uint32_t i, const void *key)
{
	const struct idmap *m = ctx;

	return m->id_of(m->arr, i) == *(const uint64_t *)key;
}

static bool idmap_hash(const void *ctx, uint32_t i, uint64_t *hash)
{
	const struct idmap *m = ctx;

	*hash = hashidx_mix64(m->id_of(m->arr, i));
	return true;
}

static int idmap_build(struct idmap *m, size_t n, uint64_t (*id_of)(const void *arr, size_t i),
		       const void *arr)
{
	size_t nslots = 16, slot;

	m->id_of = id_of;
	m->arr = arr;
	while (nslots < n * 2 + 2)
		nslots *= 2;
	if (hashidx_reserve(&m->ix, 0, 0, nslots, idmap_hash, m))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		uint64_t id = id_of(arr, i);
		if (id && hashidx_find(&m->ix, hashidx_mix64(id), idmap_eq, m, &id, &slot) < 0)
			hashidx_set(&m->ix, slot, (uint32_t)i); /* ids are nonzero */
	}
	return 0;
}

static bool idmap_get(const struct idmap *m, uint64_t id, size_t *out)
{
	int64_t i = id ? hashidx_find(&m->ix, hashidx_mix64(id), idmap_eq, m, &id, NULL) : -1;

	if (i < 0)
		return false;
	*out = (size_t)i;
	return true;
}

static void idmap_free(struct idmap *m)
{
	hashidx_free(&m->ix);
}

static uint64_t loc_id(const void *a, size_t i)
{
	return ((Perftools__Profiles__Location *const *)a)[i]->id;
}
static uint64_t fn_id(const void *a, size_t i)
{
	return ((Perftools__Profiles__Function *const *)a)[i]->id;
}
static uint64_t map_id(const void *a, size_t i)
{
	return ((Perftools__Profiles__Mapping *const *)a)[i]->id;
}

struct pctx {
	struct stackset *r;
	const Perftools__Profiles__Profile *p;
	struct idmap locs, fns, maps;
	const char *bad; /* what was wrong, for the message */
};

/* String i of the table, or NULL (bad set) when out of range. */
static const char *pstr(struct pctx *c, int64_t i)
{
	if (i < 0 || (uint64_t)i >= c->p->n_string_table) {
		c->bad = "a string index is out of range";
		return NULL;
	}
	return c->p->string_table[i] ? c->p->string_table[i] : "";
}

static const char *pooled(struct pctx *c, const char *s)
{
	return s && *s ? strpool_str(stackset_strings(c->r), s, strlen(s)) : NULL;
}

static bool is_kernel_mapping(const char *f)
{
	return !strncmp(f, "[kernel", 7) || !strncmp(f, "vmlinux", 7);
}

/* Where a location's code is, as stacktop writes it (an absolute path and
 * a build-id; address - memory_start + file_offset is the ELF address), for
 * annotating offline. false when the mapping does not say. */
static bool pprof_origin(struct pctx *c, const Perftools__Profiles__Mapping *m, const char *fname,
			 uint64_t address, struct frame_origin *o)
{
	const char *bid = pstr(c, m->build_id);

	if (fname[0] != '/' || !bid || !*bid || address < m->memory_start)
		return false;
	o->path = fname;
	o->build_id = bid;
	o->elf_addr = address - m->memory_start + m->file_offset;
	return true;
}

/* Push the frames of location li, outermost (last line) first. */
static int pprof_location(struct pctx *c, struct stackset_ids *st, size_t li)
{
	const Perftools__Profiles__Location *l = c->p->location[li];
	const char *module = NULL;
	struct frame_origin origin;
	bool kernel = false, has_origin = false;
	size_t mi;

	if (l->mapping_id) {
		const char *fname;
		if (!idmap_get(&c->maps, l->mapping_id, &mi)) {
			c->bad = "a location refers to a missing mapping";
			return -EINVAL;
		}
		if (!(fname = pstr(c, c->p->mapping[mi]->filename)))
			return -EINVAL;
		kernel = is_kernel_mapping(fname);
		if (*fname && !(module = pooled(c, text_basename(fname))))
			return -ENOMEM;
		has_origin =
		    !kernel && pprof_origin(c, c->p->mapping[mi], fname, l->address, &origin);
	}
	if (l->n_line == 0) {
		char buf[64];
		struct stackset_frame f = {.module = module, .kernel = kernel};
		int64_t id;
		snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)l->address);
		if (!(f.func = pooled(c, buf)) || (id = stackset_frame(c->r, &f)) < 0)
			return -ENOMEM;
		return stackset_ids_push(st, (uint32_t)id);
	}
	for (size_t k = l->n_line; k-- > 0;) {
		const Perftools__Profiles__Line *ln = l->line[k];
		const Perftools__Profiles__Function *fn;
		/* Lines are innermost first: all but the last are inlined. */
		struct stackset_frame f = {.module = module,
					   .kernel = kernel,
					   .inlined = k + 1 < l->n_line,
					   .origin =
					       has_origin && k + 1 == l->n_line ? &origin : NULL};
		const char *name, *file;
		size_t fi;
		int64_t id;

		if (!idmap_get(&c->fns, ln->function_id, &fi)) {
			c->bad = "a line refers to a missing function";
			return -EINVAL;
		}
		fn = c->p->function[fi];
		if (!(name = pstr(c, fn->name)) || !(file = pstr(c, fn->filename)))
			return -EINVAL;
		if (!*name && !(name = pstr(c, fn->system_name)))
			return -EINVAL;
		f.func = pooled(c, *name ? name : "[unknown]");
		f.file = *file ? pooled(c, text_basename(file)) : NULL;
		f.line = ln->line > 0 && ln->line < INT32_MAX ? (int)ln->line : 0;
		if (!f.func || (*file && !f.file))
			return -ENOMEM;
		if ((id = stackset_frame(c->r, &f)) < 0)
			return (int)id;
		if (stackset_ids_push(st, (uint32_t)id))
			return -ENOMEM;
	}
	return 0;
}

/* Which value is the weight, and by what it is divided. */
static void pprof_weight_index(struct pctx *c, size_t *vi, int64_t *div)
{
	const Perftools__Profiles__Profile *p = c->p;
	const char *s;

	*div = 1;
	for (size_t i = 0; i < p->n_sample_type; i++)
		if ((s = pstr(c, p->sample_type[i]->unit)) && !strcmp(s, "count")) {
			*vi = i;
			return;
		}
	c->bad = NULL;
	*vi = p->n_sample_type - 1;
	for (size_t i = 0; p->default_sample_type && i < p->n_sample_type; i++)
		if (p->sample_type[i]->type == p->default_sample_type)
			*vi = i;
	if (p->period > 0)
		*div = p->period;
}

static int pprof_sample_thread(struct pctx *c, const Perftools__Profiles__Sample *s, int *tid,
			       int32_t *second)
{
	const char *name = NULL;

	*tid = STACKSET_TID_ANY;
	*second = -1;
	for (size_t i = 0; i < s->n_label; i++) {
		const char *k = pstr(c, s->label[i]->key);
		if (!k)
			return -EINVAL;
		if ((!strcmp(k, "tid") || !strcmp(k, "thread_id")) && s->label[i]->num > 0 &&
		    s->label[i]->num <= INT32_MAX)
			*tid = (int)s->label[i]->num;
		else if (!strcmp(k, "second") && s->label[i]->num >= 0 &&
			 s->label[i]->num <= INT32_MAX)
			*second = (int32_t)s->label[i]->num;
		else if (!strcmp(k, "thread") || !strcmp(k, "thread_name")) {
			const char *v = pstr(c, s->label[i]->str);
			if (!v)
				return -EINVAL;
			if (*v && !(name = pooled(c, v)))
				return -ENOMEM;
		}
	}
	if (*tid != STACKSET_TID_ANY || name)
		return stackset_thread(c->r, *tid, name);
	return 0;
}

/* stacktop's summary comment "stacktop: {wall_s=...}", when there. */
static void pprof_comments(struct pctx *c)
{
	static const char tag[] = EXPORT_FOLDED_TAG "{";
	size_t tl = sizeof(tag) - 1;
	struct summary sum;

	for (size_t i = 0; i < c->p->n_comment; i++) {
		const char *s = pstr(c, c->p->comment[i]);
		size_t n = s ? strlen(s) : 0;
		if (s && n > tl + 1 && !strncmp(s, tag, tl) && s[n - 1] == '}' &&
		    !summary_parse(s + tl, n - tl - 1, &sum))
			stackset_set_summary(c->r, &sum);
		if (s && n > tl + 1 && !strncmp(s, tag, tl) && s[n - 1] == '}')
			stackset_parse_cpu(c->r, s + tl, n - tl - 1);
	}
	c->bad = NULL; /* a bad comment index is not worth refusing the file */
}

static int load_pprof_msg(struct pctx *c)
{
	const Perftools__Profiles__Profile *p = c->p;
	struct stackset *r = c->r;
	struct stackset_ids st = {0};
	uint64_t max = 0, scale;
	int64_t div;
	size_t vi;
	int err = 0;

	if (p->n_string_table == 0 || (p->string_table[0] && p->string_table[0][0])) {
		c->bad = "its string table does not start with \"\"";
		return -EINVAL;
	}
	if (p->n_sample_type == 0) {
		c->bad = "it declares no sample types";
		return -EINVAL;
	}
	if (idmap_build(&c->locs, p->n_location, loc_id, p->location) ||
	    idmap_build(&c->fns, p->n_function, fn_id, p->function) ||
	    idmap_build(&c->maps, p->n_mapping, map_id, p->mapping))
		return -ENOMEM;
	pprof_weight_index(c, &vi, &div);
	if (c->bad)
		return -EINVAL;
	if (p->period_type) {
		const char *t = pstr(c, p->period_type->type), *u = pstr(c, p->period_type->unit);
		if (!t || !u)
			return -EINVAL;
		if (!strcmp(t, "cpu") || !strcmp(t, "wall"))
			stackset_set_mode(r, !strcmp(t, "cpu") ? "cpu" : "wall");
		if (p->period > 0 && !strcmp(u, "nanoseconds"))
			stackset_set_period_s(r, (double)p->period / 1e9);
	}
	if (p->duration_nanos > 0)
		stackset_set_duration_s(r, (double)p->duration_nanos / 1e9);
	pprof_comments(c);
	for (size_t i = 0; i < p->n_sample; i++) {
		if (p->sample[i]->n_value != p->n_sample_type) {
			c->bad = "a sample has the wrong number of values";
			return -EINVAL;
		}
		if (p->sample[i]->value[vi] > 0 && (uint64_t)(p->sample[i]->value[vi] / div) > max)
			max = (uint64_t)(p->sample[i]->value[vi] / div);
	}
	scale = stackset_scale(max);
	for (size_t i = 0; i < p->n_sample && !err; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];
		int64_t v = s->value[vi];
		uint64_t wgt;
		int32_t second;
		int tid;

		if (v <= 0)
			continue;
		wgt = ((uint64_t)v + (uint64_t)div / 2) / (uint64_t)div;
		if (!wgt)
			wgt = 1;
		if ((err = pprof_sample_thread(c, s, &tid, &second)))
			break;
		st.n = 0;
		for (size_t k = s->n_location_id; k-- > 0 && !err;) {
			size_t li;
			if (!idmap_get(&c->locs, s->location_id[k], &li)) {
				c->bad = "a sample refers to a missing location";
				err = -EINVAL;
				break;
			}
			err = pprof_location(c, &st, li);
		}
		if (!err)
			err = stackset_add(r, tid, second, st.v, st.n, wgt, scale);
	}
	free(st.v);
	return err;
}

/* protobuf-c's allocations, counted against a budget (see the head). */
struct budget {
	size_t used, limit;
	bool over;
};

static void *budget_alloc(void *data, size_t size)
{
	struct budget *b = data;
	size_t cost = size + PPROF_UNPACK_OVERHEAD;

	if (size > b->limit || cost > b->limit - b->used) {
		b->over = true;
		return NULL;
	}
	b->used += cost;
	return malloc(size);
}

static void budget_free(void *data, void *ptr)
{
	free(ptr);
}

size_t pprof_unpack_limit(size_t len)
{
	if (len > (SIZE_MAX - PPROF_UNPACK_BASE) / PPROF_UNPACK_RATIO)
		return SIZE_MAX;
	return len * PPROF_UNPACK_RATIO + PPROF_UNPACK_BASE;
}

static int pprof_load(struct stackset *r, const void *bytes, size_t len, const char *name,
		      char *err, size_t errsz)
{
	const uint8_t *data = bytes;
	struct pctx c = {.r = r};
	struct budget b = {.limit = pprof_unpack_limit(len)};
	ProtobufCAllocator pa = {.alloc = budget_alloc, .free = budget_free, .allocator_data = &b};
	Perftools__Profiles__Profile *p;
	int rc;

	stackset_set_format(r, STACKSET_PPROF);
	p = perftools__profiles__profile__unpack(&pa, len, data);
	if (!p && b.over) {
		text_errf(err, errsz,
			  "%s: unpacking it would take more than %zu MiB (%d times its size plus "
			  "%llu MiB); not loading it.",
			  name, b.limit >> 20, PPROF_UNPACK_RATIO, PPROF_UNPACK_BASE >> 20);
		return -EFBIG;
	}
	if (!p) {
		text_errf(err, errsz, "%s: corrupt protobuf; not a pprof profile.", name);
		return -EINVAL;
	}
	c.p = p;
	rc = load_pprof_msg(&c);
	stackset_load_errf(r, rc, name, "corrupt pprof profile", c.bad, err, errsz);
	idmap_free(&c.locs);
	idmap_free(&c.fns);
	idmap_free(&c.maps);
	perftools__profiles__profile__free_unpacked(p, &pa);
	return rc;
}

/* Binary (protobuf) or text? Protobuf starts with field tags and lengths,
 * which are control bytes; the text formats have none but tab/CR/LF (in
 * the first 512 bytes; report inflates gzip before it asks). */
static bool pprof_sniff(const uint8_t *d, size_t n)
{
	for (size_t i = 0; i < n && i < 512; i++)
		if (d[i] < 0x20 && d[i] != '\n' && d[i] != '\r' && d[i] != '\t')
			return true;
	return false;
}

static const char *const pprof_suffixes[] = {".pb.gz", ".pprof", ".pb", NULL};

/* name, ext, suffixes, render, load, sniff (format.h) */
const struct format_ops pprof_format = {"pprof",      ".pb.gz",	  pprof_suffixes,
					pprof_render, pprof_load, pprof_sniff};
