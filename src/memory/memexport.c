/*
 * memexport — memhold's code paths as a pprof heap-like profile (see
 * memexport.h).
 *
 * Tables: strings (index 0 is ""), one Function per (name, file), one
 * Location per frame id (its pc, one Line), no Mapping (the frames keep
 * module names only; pprof accepts locations without one). Lookups are
 * linear: a memory profile has tens of code paths, not thousands.
 */
#include "stacktop/memory/memexport.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "profile.pb-c.h"
#include "stacktop/formats/atomicfile.h"
#include "stacktop/formats/gzip.h"
#include "stacktop/symbols/frames.h"
#include "stacktop/lib/array.h"
#include "stacktop/memory/memhold.h"

struct tables {
	char **str;
	size_t nstr, capstr;
	Perftools__Profiles__Function *fn;
	size_t nfn, capfn;
	Perftools__Profiles__Location *loc;
	Perftools__Profiles__Line *line;
	Perftools__Profiles__Line **linep;
	size_t nloc, caploc, capline, caplinep;
	uint32_t *loc_of; /* frame id → location id (0: none yet) */
};

static int64_t str_of(struct tables *t, const char *s)
{
	for (size_t i = 0; i < t->nstr; i++)
		if (!strcmp(t->str[i], s))
			return (int64_t)i;
	if (array_grow((void **)&t->str, &t->capstr, t->nstr + 1, sizeof(*t->str)) ||
	    !(t->str[t->nstr] = strdup(s)))
		return -ENOMEM;
	return (int64_t)t->nstr++;
}

static int64_t fn_of(struct tables *t, int64_t name, int64_t file)
{
	for (size_t i = 0; i < t->nfn; i++)
		if (t->fn[i].name == name && t->fn[i].filename == file)
			return (int64_t)t->fn[i].id;
	if (array_grow((void **)&t->fn, &t->capfn, t->nfn + 1, sizeof(*t->fn)))
		return -ENOMEM;
	Perftools__Profiles__Function *f = &t->fn[t->nfn];
	perftools__profiles__function__init(f);
	f->id = t->nfn + 1;
	f->name = f->system_name = name;
	f->filename = file;
	t->nfn++;
	return (int64_t)f->id;
}

static int64_t loc_of(struct tables *t, struct frames *fr, uint32_t id)
{
	if (t->loc_of[id])
		return t->loc_of[id];
	const struct frame *f = frames_line(fr, id);
	char name[512];
	if (!f)
		snprintf(name, sizeof(name), "[gone]");
	else if (f->sym.func)
		snprintf(name, sizeof(name), "%s", f->sym.func);
	else
		snprintf(name, sizeof(name), "%s+0x%llx", f->sym.module ? f->sym.module : "?",
			 (unsigned long long)f->sym.offset);
	int64_t n = str_of(t, name);
	int64_t file = str_of(t, f && f->has_line && f->sym.file ? f->sym.file : "");
	int64_t fn = n < 0 || file < 0 ? -ENOMEM : fn_of(t, n, file);
	if (fn < 0 || array_grow((void **)&t->loc, &t->caploc, t->nloc + 1, sizeof(*t->loc)) ||
	    array_grow((void **)&t->line, &t->capline, t->nloc + 1, sizeof(*t->line)) ||
	    array_grow((void **)&t->linep, &t->caplinep, t->nloc + 1, sizeof(*t->linep)))
		return -ENOMEM;
	Perftools__Profiles__Line *ln = &t->line[t->nloc];
	perftools__profiles__line__init(ln);
	ln->function_id = (uint64_t)fn;
	ln->line = f && f->has_line && f->sym.line > 0 ? f->sym.line : 0;
	Perftools__Profiles__Location *l = &t->loc[t->nloc];
	perftools__profiles__location__init(l);
	l->id = t->nloc + 1;
	l->address = f ? f->pc : 0;
	t->nloc++;
	t->loc_of[id] = (uint32_t)l->id;
	return (int64_t)l->id;
}

static void tables_free(struct tables *t)
{
	for (size_t i = 0; i < t->nstr; i++)
		free(t->str[i]);
	ARRAY_FREE_ALL(t->str, t->fn, t->loc, t->line, t->linep, t->loc_of);
}

int memexport_render(struct memhold *h, struct frames *fr, uint64_t now_ns,
		     const struct memexport_opts *o, char **buf, size_t *len)
{
	Perftools__Profiles__Profile prof = PERFTOOLS__PROFILES__PROFILE__INIT;
	Perftools__Profiles__ValueType vt = PERFTOOLS__PROFILES__VALUE_TYPE__INIT, *vtp = &vt;
	Perftools__Profiles__ValueType pt = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	struct tables t = {0};
	struct memhold_row *rows = NULL;
	Perftools__Profiles__Sample *smp = NULL, **smpp = NULL;
	Perftools__Profiles__Location **locp = NULL;
	Perftools__Profiles__Function **fnp = NULL;
	uint64_t *ids = NULL;
	int64_t *vals = NULL, comment[2];
	uint8_t *packed = NULL;
	int n = 0, e = -ENOMEM;
	size_t nids = 0, ns = 0;

	if (!(t.loc_of = calloc(frames_span(fr) + 1, sizeof(*t.loc_of))) || str_of(&t, "") < 0 ||
	    (e = memhold_rank(h, now_ns, &rows, &n)))
		goto out;
	e = -ENOMEM;
	for (int i = 0; i < n; i++) {
		int nf = 0;
		if (memhold_frames(h, rows[i].stack, &nf))
			nids += (size_t)nf;
	}
	if (!(smp = calloc((size_t)n + 1, sizeof(*smp))) ||
	    !(smpp = calloc((size_t)n + 1, sizeof(*smpp))) ||
	    !(vals = calloc((size_t)n + 1, sizeof(*vals))) ||
	    !(ids = calloc(nids + 1, sizeof(*ids))))
		goto out;
	vt.type = str_of(&t, "inuse_space");
	vt.unit = str_of(&t, "bytes");
	pt.type = str_of(&t, "space");
	pt.unit = vt.unit;
	uint64_t *next = ids;
	for (int i = 0; i < n; i++) {
		int nf = 0;
		const uint32_t *f = memhold_frames(h, rows[i].stack, &nf);
		if (!f || !rows[i].held)
			continue; /* faults only: holds nothing */
		Perftools__Profiles__Sample *s = &smp[ns];
		perftools__profiles__sample__init(s);
		s->location_id = next;
		for (int k = nf - 1; k >= 0; k--) { /* leaf first */
			int64_t l = loc_of(&t, fr, f[k]);
			if (l < 0)
				goto out;
			*next++ = (uint64_t)l;
		}
		s->n_location_id = (size_t)(next - s->location_id);
		vals[ns] = (int64_t)rows[i].held;
		s->value = &vals[ns];
		s->n_value = 1;
		smpp[ns] = s;
		ns++;
	}
	comment[0] = str_of(&t, "stacktop: bytes mapped by each code path and still mapped "
				"(mmap/brk traced)");
	comment[1] = str_of(&t, o->cmdline ? o->cmdline : "");
	if (!(locp = calloc(t.nloc + 1, sizeof(*locp))) || !(fnp = calloc(t.nfn + 1, sizeof(*fnp))))
		goto out;
	for (size_t i = 0; i < t.nloc; i++) {
		t.linep[i] = &t.line[i];
		t.loc[i].line = &t.linep[i];
		t.loc[i].n_line = 1;
		locp[i] = &t.loc[i];
	}
	for (size_t i = 0; i < t.nfn; i++)
		fnp[i] = &t.fn[i];
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	prof.n_sample_type = 1;
	prof.sample_type = &vtp;
	prof.n_sample = ns;
	prof.sample = smpp;
	prof.n_location = t.nloc;
	prof.location = locp;
	prof.n_function = t.nfn;
	prof.function = fnp;
	prof.n_string_table = t.nstr;
	prof.string_table = t.str;
	prof.time_nanos = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
	prof.duration_nanos = (int64_t)(o->duration_s * 1e9);
	prof.period_type = &pt;
	prof.period = 1;
	prof.n_comment = o->cmdline ? 2 : 1;
	prof.comment = comment;
	size_t plen = perftools__profiles__profile__get_packed_size(&prof);
	if (!(packed = malloc(plen + 1)))
		goto out;
	perftools__profiles__profile__pack(&prof, packed);
	e = gzip_compress(packed, plen, buf, len);
out:
	ARRAY_FREE_ALL(packed, locp, fnp, ids, vals, smpp, smp, rows);
	tables_free(&t);
	return e;
}

int memexport_write(struct memhold *h, struct frames *fr, uint64_t now_ns,
		    const struct memexport_opts *o, const char *path, char *err, size_t errsz)
{
	char *buf = NULL;
	size_t len = 0;
	int e;

	if ((e = atomicfile_check(path, o->force, err, errsz)))
		return e;
	if ((e = memexport_render(h, fr, now_ns, o, &buf, &len))) {
		snprintf(err, errsz, "cannot build the memory profile: %s.", strerror(-e));
		return e;
	}
	e = atomicfile_write(path, buf, len, o->force, o->file_mode, err, errsz);
	free(buf);
	return e;
}
