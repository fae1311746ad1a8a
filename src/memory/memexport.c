/*
 * memexport — memhold's code paths as a pprof heap-like profile (see
 * memexport.h). Its tables (strings, functions, mappings, locations) are
 * pprof's own (pprof_tables); this file makes the samples.
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
#include "stacktop/formats/pprof.h"
#include "stacktop/symbols/frames.h"
#include "stacktop/lib/array.h"
#include "stacktop/memory/memhold.h"

/* A frame's name: its function, else module+offset ("[gone]" when the
 * frame is no longer live). */
struct mx_names {
	struct frames *fr;
	char name[512];
};

static const char *mx_label(void *ctx, uint32_t id)
{
	struct mx_names *m = ctx;
	const struct frame *f = frames_line(m->fr, id);

	if (!f)
		snprintf(m->name, sizeof(m->name), "[gone]");
	else if (f->sym.func)
		snprintf(m->name, sizeof(m->name), "%s", f->sym.func);
	else
		snprintf(m->name, sizeof(m->name), "%s+0x%llx", f->sym.module ? f->sym.module : "?",
			 (unsigned long long)f->sym.offset);
	return m->name;
}

int memexport_render(struct memhold *h, struct frames *fr, uint64_t now_ns,
		     const struct memexport_opts *o, char **buf, size_t *len)
{
	Perftools__Profiles__Profile prof = PERFTOOLS__PROFILES__PROFILE__INIT;
	Perftools__Profiles__ValueType vt = PERFTOOLS__PROFILES__VALUE_TYPE__INIT, *vtp = &vt;
	Perftools__Profiles__ValueType pt = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	struct mx_names names = {.fr = fr};
	struct pprof_tables *t = NULL;
	struct memhold_row *rows = NULL;
	Perftools__Profiles__Sample *smp = NULL, **smpp = NULL;
	uint64_t *ids = NULL;
	int64_t *vals = NULL, comment[2];
	uint8_t *packed = NULL;
	int n = 0, e;
	size_t nids = 0, ns = 0;

	if ((e = pprof_tables_new(&t, fr, mx_label, &names)) ||
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
	vt.type = pprof_tables_str(t, "inuse_space");
	vt.unit = pprof_tables_str(t, "bytes");
	pt.type = pprof_tables_str(t, "space");
	pt.unit = vt.unit;
	uint64_t *next = ids;
	for (int i = 0; i < n; i++) {
		int nf = 0;
		size_t nloc;
		const uint32_t *f = memhold_frames(h, rows[i].stack, &nf);
		if (!f || !rows[i].held)
			continue; /* faults only: holds nothing */
		Perftools__Profiles__Sample *s = &smp[ns];
		perftools__profiles__sample__init(s);
		if (pprof_tables_stack(t, f, (size_t)nf, next, &nloc))
			goto out;
		s->location_id = next;
		s->n_location_id = nloc;
		next += nloc;
		vals[ns] = (int64_t)rows[i].held;
		s->value = &vals[ns];
		s->n_value = 1;
		smpp[ns] = s;
		ns++;
	}
	comment[0] = pprof_tables_str(t, "stacktop: bytes mapped by each code path and still "
					 "mapped (mmap/brk traced)");
	comment[1] = pprof_tables_str(t, o->cmdline ? o->cmdline : "");
	if (vt.type < 0 || vt.unit < 0 || pt.type < 0 || comment[0] < 0 || comment[1] < 0 ||
	    pprof_tables_fill(t, &prof))
		goto out;
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	prof.n_sample_type = 1;
	prof.sample_type = &vtp;
	prof.n_sample = ns;
	prof.sample = smpp;
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
	ARRAY_FREE_ALL(packed, ids, vals, smpp, smp, rows);
	pprof_tables_free(t);
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
