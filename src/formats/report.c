/*
 * report — a saved profile as a source of samples, for `stacktop report
 * FILE`: parsed once into a list of stacks, delivered by a sampler.
 *
 * Input is outside data (a file from another machine), so every parser here
 * is a fuzz entry point (tests/fuzz/fuzz_folded.c, fuzz_pprof.c) and every
 * bad input ends in one sentence, never a crash:
 *
 *  - gzip (magic 1f 8b) is inflated with zlib, at most REPORT_MAX_INFLATE
 *    bytes (a small file must not inflate into all of memory); an input
 *    that ends before the gzip trailer is "truncated".
 *  - pprof is unpacked with protobuf-c (generated from src/proto/
 *    profile.proto), then every index is checked before use: string
 *    indices against the table, location/function/mapping ids against
 *    what the file defines. protobuf-c checks the wire format itself.
 *  - anything else that looks like text is folded stacks, the FlameGraph
 *    format: "frame;frame;frame COUNT", split at the LAST space (names may
 *    hold spaces), '#' comment and blank lines skipped, "_[k]" marks a
 *    kernel frame ("_[j]" JIT, "_[i]" inlined are stripped too), as
 *    FlameGraph's stackcollapse scripts write them.
 *
 * Frames: one named frame of the frames table per distinct (kernel?, module,
 * function, file, line) (frames_named: the table copies the strings), so
 * the top view's by-function and by-line keys and the icicle's merge by
 * name work as on a live window.
 *
 * Stacks: frame ids (outermost first) in one flat array, plus (offset,
 * length, tid, weight) per stack.
 *
 * Memory: what a file makes us allocate is proportional to its size, so a
 * small hostile file cannot take the machine's memory (the caps are listed
 * in report.h's head and the man page):
 *  - the file itself: at most REPORT_MAX_FILE;
 *  - gzip: at most REPORT_INFLATE_RATIO times the compressed size plus
 *    1 MiB, and never more than REPORT_MAX_INFLATE;
 *  - protobuf-c: what unpack allocates goes through a counting
 *    ProtobufCAllocator that refuses more than REPORT_UNPACK_RATIO times
 *    the protobuf's size plus 16 MiB (an empty Sample is 2 bytes on the
 *    wire and ~100 in memory: a file of nothing else must not pass);
 *  - frame ids: REPORT_IDS_PER_BYTE per byte of profile data plus 1 Mi,
 *    and never more than REPORT_MAX_FRAMES (a pprof location with many
 *    inlined lines, referenced by many samples, multiplies the input);
 *  - a folded line: 1 MiB.
 * The sizes inside (buffers, the frames table, per-stack records) grow
 * with what was admitted, by a constant factor.
 *
 *  - speedscope JSON (a '{' first): parsed whole with json-c (depth
 *    capped by its tokener), at most REPORT_MAX_JSON bytes, since the
 *    parsed tree costs tens of bytes per byte of input. Only "sampled"
 *    profiles; frame indices are checked against shared.frames. Weights
 *    with unit "none" are counts; in time units they become counts by the
 *    period stacktop writes in its own "stacktop" object (mode, period_s,
 *    duration_s), else by the smallest weight (the file knows times and
 *    shares, not counts).
 *
 * Threads: pprof "tid" (num) and "thread" (str) labels, as export writes
 * them; speedscope profiles named "name-TID" (one per thread). Folded
 * files written with --per-thread start every stack with "name-TID"; when
 * every line's root has that shape it becomes the thread (name and tid)
 * instead of a frame.
 */
#include "stacktop/formats/report.h"
#include "stacktop/lib/array.h"
#include "stacktop/lib/strpool.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <json.h>

#include "profile.pb-c.h"
#include "stacktop/symbols/frames.h"
#include "stacktop/sample/sampler.h"
#include "stacktop/lib/text.h"
#include "stacktop/proc/waits.h"
#include "stacktop/model/window.h"

#define REPORT_MAX_FILE (1ull << 30)
#define REPORT_MAX_INFLATE (512ull << 20)
#define REPORT_INFLATE_RATIO 64
#define REPORT_INFLATE_BASE (1ull << 20)
#define REPORT_UNPACK_RATIO 32
#define REPORT_UNPACK_BASE (16ull << 20)
#define REPORT_UNPACK_OVERHEAD 16 /* what malloc adds to each block */
#define REPORT_MAX_LINE (1u << 20)
#define REPORT_MAX_JSON (64u << 20) /* json-c's tree: tens of bytes per byte */
#define REPORT_MAX_FRAMES (1u << 25) /* 128 MiB of frame ids */
#define REPORT_IDS_PER_BYTE 8
#define REPORT_IDS_BASE (1u << 20)
#define TOO_MANY_FRAMES "%s: its stacks hold more frames than its size allows (%zu); not loading it."

/* ---- the report ---- */

struct thread {
	int tid;
	const char *name; /* pooled */
};

/* One stored stack: ids[off .. off + n) of struct report. */
struct rstack {
	size_t off;
	uint32_t n;
	uint32_t weight;
	int tid;
	int32_t second; /* since the recording's start, or -1: not said */
};

struct report {
	enum report_format format;
	struct frames *fr;	/* borrowed */
	struct strpool strings; /* names, modules, files (parsing) */
	uint32_t *ids;
	size_t nids, capids;
	struct rstack *stacks;
	size_t nstacks, capstacks;
	struct thread *threads;
	size_t nthreads, capthreads;
	double period_s, duration_s;
	const char *mode;
	uint64_t samples;
	int last_tid;	 /* report_add's cache: tid already in threads[] */
	size_t untimed;	 /* stacks without a second */
	struct export_summary summary;
	bool have_summary;
	size_t max_ids; /* frame ids the input's size allows */
};

/* What a parser hands to report_frame. */
struct rframe {
	const char *func, *module, *file; /* pooled or NULL */
	int line;
	bool kernel, jit, inlined;
	const struct frame_origin *origin; /* where its code is (pprof), or NULL */
};

/* The named frame for f. */
static int64_t report_frame(struct report *r, const struct rframe *f)
{
	struct sym_info si = {
	    .func = f->func,
	    .module = f->module,
	    .file = f->file,
	    .line = f->line,
	    .kernel = f->kernel,
	    .jit = f->jit,
	    .inlined = f->inlined,
	};

	return frames_named_at(r->fr, &si, f->origin);
}

static int report_thread(struct report *r, int tid, const char *name)
{
	for (size_t i = 0; i < r->nthreads; i++)
		if (r->threads[i].tid == tid) {
			if (!r->threads[i].name)
				r->threads[i].name = name;
			return 0;
		}
	if (array_grow((void **)&r->threads, &r->capthreads, r->nthreads + 1, sizeof(*r->threads)))
		return -ENOMEM;
	r->threads[r->nthreads++] = (struct thread){.tid = tid, .name = name};
	return 0;
}

/* The wait kind a leaf frame names ("[sleep]", "[lock]", ... as wall mode
 * writes them, module "[wait]" or none), or SAMPLE_WAIT_NONE. */
static enum sample_wait leaf_wait(const struct frames *fr, uint32_t id)
{
	const struct frame *f = frames_get(fr, id);

	if (!f || f->kernel || !f->sym.func || f->sym.func[0] != '[' ||
	    (f->sym.module && strcmp(f->sym.module, "[wait]")))
		return SAMPLE_WAIT_NONE;
	for (int k = SAMPLE_WAIT_NONE + 1; k < SAMPLE_WAIT_COUNT; k++)
		if (!strcmp(f->sym.func, waits_frame_name((enum sample_wait)k)))
			return (enum sample_wait)k;
	return SAMPLE_WAIT_NONE;
}

/* Store the stack with count samples; weights are pre-scaled to 32 bits.
 * A wall-mode wait leaf becomes the wait pseudo frame again, so the
 * on/off-CPU split works on a report too. frames is modified. */
static int report_add(struct report *r, int tid, int32_t second, uint32_t *frames, size_t n,
		      uint64_t count, uint64_t scale)
{
	uint64_t wgt = count / scale;
	enum sample_wait kind;
	int err;

	if (n && (kind = leaf_wait(r->fr, frames[n - 1])) != SAMPLE_WAIT_NONE) {
		int64_t id = frames_wait(r->fr, kind);
		if (id < 0)
			return (int)id;
		frames[n - 1] = (uint32_t)id;
		if (!r->mode)
			r->mode = "wall";
	}

	if (count && !wgt)
		wgt = 1; /* a sample too light to show after scaling still exists */
	if (!wgt || !n)
		return 0;
	if (wgt > UINT32_MAX)
		wgt = UINT32_MAX;
	if (n > r->max_ids - r->nids)
		return -EFBIG;
	if (array_grow((void **)&r->ids, &r->capids, r->nids + n, sizeof(*r->ids)) ||
	    array_grow((void **)&r->stacks, &r->capstacks, r->nstacks + 1, sizeof(*r->stacks)))
		return -ENOMEM;
	memcpy(r->ids + r->nids, frames, n * sizeof(*frames));
	r->stacks[r->nstacks++] = (struct rstack){
	    .off = r->nids, .n = (uint32_t)n, .weight = (uint32_t)wgt, .tid = tid, .second = second};
	r->untimed += second < 0;
	r->nids += n;
	if (tid != r->last_tid && (err = report_thread(r, tid, NULL)))
		return err;
	r->last_tid = tid;
	r->samples += wgt;
	return 0;
}

static uint64_t scale_for(uint64_t max)
{
	return max > UINT32_MAX ? max / UINT32_MAX + 1 : 1;
}

/* A growable frame-id array. */
struct ids {
	uint32_t *v;
	size_t n, cap;
};

static int ids_push(struct ids *a, uint32_t id)
{
	if (array_grow((void **)&a->v, &a->cap, a->n + 1, sizeof(*a->v)))
		return -ENOMEM;
	a->v[a->n++] = id;
	return 0;
}

/* ---- folded ---- */

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
static bool folded_thread_root(const char *s, size_t n, int *tid, size_t *namelen)
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
static void folded_comment(struct report *r, const char *line, size_t ll, int32_t *second)
{
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
	if (!export_summary_parse(line, ll, &r->summary))
		r->have_summary = true;
}

/* Walk the lines; call fn on each stack with its line number. */
struct fwalk {
	struct report *r;
	bool per_thread;
	bool load; /* false: the checking pass */
	uint64_t max, scale;
	size_t nlines;
	int32_t second; /* of the lines that follow, -1: none said */
	struct ids frames;
};

static int folded_frame(struct fwalk *fw, const char *s, size_t n)
{
	struct rframe f = {0};
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
	if (!(f.func = strpool_str(&fw->r->strings, s, n)))
		return -ENOMEM;
	if (f.kernel && !(f.module = strpool_str(&fw->r->strings, "[kernel]", 8)))
		return -ENOMEM;
	if ((id = report_frame(fw->r, &f)) < 0)
		return (int)id;
	return ids_push(&fw->frames, (uint32_t)id);
}

static int folded_line(struct fwalk *fw, const char *s, const char *end, uint64_t count)
{
	int tid = REPORT_TID_ANY, err;
	const char *p = s;
	size_t namelen;

	fw->frames.n = 0;
	if (fw->per_thread) {
		const char *semi = memchr(s, ';', (size_t)(end - s));
		const char *re = semi ? semi : end;
		if (folded_thread_root(s, (size_t)(re - s), &tid, &namelen)) {
			const char *name = strpool_str(&fw->r->strings, s, namelen);
			if (!name || (err = report_thread(fw->r, tid, name)))
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
	return report_add(fw->r, tid, fw->second, fw->frames.v, fw->frames.n, count, fw->scale);
}

static int load_folded(struct report *r, const char *data, size_t len, const char *name, char *err,
		       size_t errsz)
{
	struct fwalk fw = {.r = r, .per_thread = true, .scale = 1, .second = -1};
	int rc = 0;

	r->format = REPORT_FOLDED;
	for (int pass = 0; pass < 2 && !rc; pass++) {
		size_t lineno = 0, off = 0;
		fw.load = pass == 1;
		fw.scale = scale_for(fw.max);
		while (off < len && !rc) {
			const char *line = data + off, *nl = memchr(line, '\n', len - off);
			size_t ll = nl ? (size_t)(nl - line) : len - off;
			const char *end;
			uint64_t count;
			int tid;
			size_t nlen;

			off += ll + (nl ? 1 : 0);
			lineno++;
			if (ll > REPORT_MAX_LINE) {
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
				text_errf(err, errsz, TOO_MANY_FRAMES, name, r->max_ids);
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

/* ---- speedscope ---- */

static struct json_object *jget(struct json_object *o, const char *key, enum json_type t)
{
	struct json_object *v = NULL;
	if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, t))
		return NULL;
	return v;
}

static double jnum(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;
	if (!o || !json_object_object_get_ex(o, key, &v) ||
	    !(json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)))
		return 0;
	double d = json_object_get_double(v);
	return d == d && d > 0 && d < 1e12 ? d : 0; /* NaN, negatives, absurd: unknown */
}

/* Seconds per unit of a weight; 0 for "none" (counts); -1 unknown. */
static double unit_seconds(const char *u)
{
	static const struct {
		const char *name;
		double s;
	} units[] = {{"none", 0},
		     {"seconds", 1},
		     {"milliseconds", 1e-3},
		     {"microseconds", 1e-6},
		     {"nanoseconds", 1e-9}};
	for (size_t i = 0; u && i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(u, units[i].name))
			return units[i].s;
	return -1;
}

struct sctx {
	struct report *r;
	struct json_object *frames, *profiles;
	uint32_t *fid; /* shared.frames index → frame id */
	size_t nframes;
	const char *bad; /* what is wrong, for the message */
};

/* A profile's weight i in samples: counts as is, times by the period. */
static uint64_t ss_count(struct json_object *weights, size_t i, double unit_s, double period_s)
{
	struct json_object *w = json_object_array_get_idx(weights, i);
	double v = w ? json_object_get_double(w) : 0;
	if (!(v > 0) || v != v)
		return 0;
	if (unit_s > 0)
		v = v * unit_s / period_s;
	v += 0.5;
	return v >= 1.8e19 ? UINT64_MAX : (uint64_t)v;
}

/* Check every profile; the smallest positive weight in seconds (*min_s)
 * and the largest count (*max, with period_s when known). */
static int ss_check(struct sctx *c, double period_s, double *min_s, uint64_t *max)
{
	size_t np = json_object_array_length(c->profiles);
	*min_s = 0;
	*max = 0;
	for (size_t p = 0; p < np; p++) {
		struct json_object *pr = json_object_array_get_idx(c->profiles, p);
		struct json_object *type = jget(pr, "type", json_type_string);
		struct json_object *samples = jget(pr, "samples", json_type_array);
		struct json_object *weights = jget(pr, "weights", json_type_array);
		struct json_object *unit = jget(pr, "unit", json_type_string);
		double us = unit_seconds(unit ? json_object_get_string(unit) : NULL);
		if (!type || strcmp(json_object_get_string(type), "sampled")) {
			c->bad = "only sampled profiles can be read, not evented ones";
			return -EINVAL;
		}
		if (!samples || !weights ||
		    json_object_array_length(samples) != json_object_array_length(weights)) {
			c->bad = "a profile's samples and weights do not match";
			return -EINVAL;
		}
		if (us < 0) {
			c->bad = "a profile's unit is not none or a time";
			return -EINVAL;
		}
		for (size_t i = 0; i < json_object_array_length(samples); i++) {
			struct json_object *st = json_object_array_get_idx(samples, i);
			struct json_object *w = json_object_array_get_idx(weights, i);
			double v = w ? json_object_get_double(w) * (us > 0 ? us : 1) : 0;
			if (!json_object_is_type(st, json_type_array)) {
				c->bad = "a sample is not a list of frame indices";
				return -EINVAL;
			}
			for (size_t k = 0; k < json_object_array_length(st); k++) {
				struct json_object *ix = json_object_array_get_idx(st, k);
				int64_t x = json_object_is_type(ix, json_type_int)
						? json_object_get_int64(ix)
						: -1;
				if (x < 0 || (uint64_t)x >= c->nframes) {
					c->bad =
					    "a sample names a frame that is not in shared.frames";
					return -EINVAL;
				}
			}
			if (us > 0 && v > 0 && (*min_s == 0 || v < *min_s))
				*min_s = v;
		}
	}
	for (size_t p = 0; p < np; p++) {
		struct json_object *pr = json_object_array_get_idx(c->profiles, p);
		struct json_object *weights = jget(pr, "weights", json_type_array);
		struct json_object *unit = jget(pr, "unit", json_type_string);
		double us = unit_seconds(json_object_get_string(unit));
		double per = period_s > 0 ? period_s : *min_s;
		for (size_t i = 0; i < json_object_array_length(weights); i++) {
			uint64_t n = ss_count(weights, i, us, per > 0 ? per : 1);
			if (n > *max)
				*max = n;
		}
	}
	return 0;
}

/* The frame ids of shared.frames, in order. */
static int ss_frames(struct sctx *c)
{
	if (!(c->fid = calloc(c->nframes + 1, sizeof(*c->fid))))
		return -ENOMEM;
	for (size_t i = 0; i < c->nframes; i++) {
		struct json_object *f = json_object_array_get_idx(c->frames, i);
		struct json_object *nm = jget(f, "name", json_type_string);
		struct json_object *file = jget(f, "file", json_type_string);
		struct json_object *line = jget(f, "line", json_type_int);
		if (!nm) {
			c->bad = "a frame has no name";
			return -EINVAL;
		}
		int64_t ln = line ? json_object_get_int64(line) : 0;
		struct rframe rf = {
		    .func = strpool_cstr(&c->r->strings, json_object_get_string(nm)),
		    .file =
			file ? strpool_cstr(&c->r->strings, json_object_get_string(file)) : NULL,
		    .line = ln > 0 && ln < INT_MAX ? (int)ln : 0,
		};
		if (!rf.func || (file && !rf.file))
			return -ENOMEM;
		int64_t id = report_frame(c->r, &rf);
		if (id < 0)
			return (int)id;
		c->fid[i] = (uint32_t)id;
	}
	return 0;
}

/* Store every sample of every profile; a profile named "name-TID" (one
 * per thread, as --per-thread writes) is that thread. */
static int ss_load(struct sctx *c, double period_s, uint64_t scale)
{
	size_t np = json_object_array_length(c->profiles);
	struct ids fr = {0};
	int rc = 0;
	for (size_t p = 0; p < np && !rc; p++) {
		struct json_object *pr = json_object_array_get_idx(c->profiles, p);
		struct json_object *samples = jget(pr, "samples", json_type_array);
		struct json_object *weights = jget(pr, "weights", json_type_array);
		struct json_object *unit = jget(pr, "unit", json_type_string);
		struct json_object *pname = jget(pr, "name", json_type_string);
		double us = unit_seconds(json_object_get_string(unit));
		const char *nm = pname ? json_object_get_string(pname) : "";
		int tid = REPORT_TID_ANY;
		size_t nlen;
		if (np > 1 && folded_thread_root(nm, strlen(nm), &tid, &nlen)) {
			const char *tn = strpool_str(&c->r->strings, nm, nlen);
			if (!tn || (rc = report_thread(c->r, tid, tn)))
				rc = rc ? rc : -ENOMEM;
		} else {
			tid = REPORT_TID_ANY;
		}
		for (size_t i = 0; !rc && i < json_object_array_length(samples); i++) {
			struct json_object *st = json_object_array_get_idx(samples, i);
			fr.n = 0;
			for (size_t k = 0; !rc && k < json_object_array_length(st); k++) {
				int64_t x = json_object_get_int64(json_object_array_get_idx(st, k));
				rc = ids_push(&fr, c->fid[x]);
			}
			if (!rc)
				rc = report_add(c->r, tid, -1, fr.v, fr.n,
						ss_count(weights, i, us, period_s), scale);
		}
	}
	free(fr.v);
	return rc;
}

static int load_speedscope(struct report *r, const char *data, size_t len, const char *name,
			   char *err, size_t errsz)
{
	struct sctx c = {.r = r};
	struct json_object *root = NULL, *schema, *shared, *own;
	struct json_tokener *tok;
	double period_s, min_s;
	uint64_t max;
	int rc = 0;

	r->format = REPORT_SPEEDSCOPE;
	if (len > REPORT_MAX_JSON) {
		text_errf(err, errsz, "%s: a JSON profile over %u MiB is not read.", name,
			  REPORT_MAX_JSON >> 20);
		return -EFBIG;
	}
	if (!(tok = json_tokener_new()))
		return -ENOMEM;
	root = json_tokener_parse_ex(tok, data, (int)len);
	enum json_tokener_error je = json_tokener_get_error(tok);
	json_tokener_free(tok);
	if (!root || je != json_tokener_success) {
		text_errf(err, errsz, "%s: not valid JSON (%s).", name,
			  je == json_tokener_continue ? "it ends too early"
						      : json_tokener_error_desc(je));
		json_object_put(root);
		return -EINVAL;
	}
	schema = jget(root, "$schema", json_type_string);
	shared = jget(root, "shared", json_type_object);
	c.frames = jget(shared, "frames", json_type_array);
	c.profiles = jget(root, "profiles", json_type_array);
	if (!schema || !strstr(json_object_get_string(schema), "speedscope") || !c.frames ||
	    !c.profiles) {
		text_errf(err, errsz,
			  "%s: JSON, but not a speedscope profile (no $schema, shared.frames or "
			  "profiles).",
			  name);
		json_object_put(root);
		return -EINVAL;
	}
	c.nframes = json_object_array_length(c.frames);
	/* What stacktop writes beside the format: its mode, period, duration. */
	own = jget(root, "stacktop", json_type_object);
	period_s = jnum(own, "period_s");
	r->duration_s = jnum(own, "duration_s");
	struct json_object *mode = jget(own, "mode", json_type_string);
	if (mode && !strcmp(json_object_get_string(mode), "wall"))
		r->mode = "wall";
	else if (mode && !strcmp(json_object_get_string(mode), "cpu"))
		r->mode = "cpu";
	if (!(rc = ss_check(&c, period_s, &min_s, &max)) && !(rc = ss_frames(&c))) {
		if (!(period_s > 0))
			period_s = min_s; /* times without a period: the lightest is one */
		r->period_s = period_s;
		rc = ss_load(&c, period_s > 0 ? period_s : 1, scale_for(max));
	}
	if (rc == -EINVAL)
		text_errf(err, errsz, "%s: not a speedscope profile stacktop can read: %s.", name,
			  c.bad ? c.bad : "bad data");
	else if (rc == -EFBIG)
		text_errf(err, errsz, TOO_MANY_FRAMES, name, r->max_ids);
	else if (rc)
		text_errf(err, errsz, "%s: cannot load the profile: %s.", name, strerror(-rc));
	free(c.fid);
	json_object_put(root);
	return rc;
}

/* '{' first (after blanks): JSON, which of our formats is speedscope. */
static bool looks_json(const uint8_t *d, size_t n)
{
	size_t i = 0;
	while (i < n && (d[i] == ' ' || d[i] == '\t' || d[i] == '\n' || d[i] == '\r'))
		i++;
	return i < n && d[i] == '{';
}

/* ---- pprof ---- */

static int inflate_all(const uint8_t *in, size_t n, uint8_t **out, size_t *outlen, const char *name,
		       char *err, size_t errsz)
{
	z_stream z = {0};
	size_t limit = n > (REPORT_MAX_INFLATE - REPORT_INFLATE_BASE) / REPORT_INFLATE_RATIO
			   ? REPORT_MAX_INFLATE
			   : n * REPORT_INFLATE_RATIO + REPORT_INFLATE_BASE;
	size_t cap = n < (limit - 4096) / 4 ? n * 4 + 4096 : limit, len = 0;
	uint8_t *buf = malloc(cap);
	int rc = Z_OK;

	if (!buf || inflateInit2(&z, 15 + 32) != Z_OK) { /* +32: gzip or zlib header */
		free(buf);
		text_errf(err, errsz, "%s: out of memory.", name);
		return -ENOMEM;
	}
	z.next_in = (Bytef *)in;
	while (rc == Z_OK) {
		if (len == cap) {
			uint8_t *p;
			if (cap >= limit) {
				inflateEnd(&z);
				free(buf);
				text_errf(err, errsz,
					  "%s: inflates to more than %zu KiB (%d times its size plus "
					  "1 MiB, at most %llu MiB); not loading it.",
					  name, limit >> 10, REPORT_INFLATE_RATIO,
					  REPORT_MAX_INFLATE >> 20);
				return -EFBIG;
			}
			cap = cap > limit / 2 ? limit : cap * 2;
			if (!(p = realloc(buf, cap))) {
				inflateEnd(&z);
				free(buf);
				text_errf(err, errsz, "%s: out of memory.", name);
				return -ENOMEM;
			}
			buf = p;
		}
		/* zlib counts in uInt: hand it at most UINT_MAX at a time. */
		size_t in_left = n - (size_t)((const uint8_t *)z.next_in - in);
		size_t out_left = cap - len;
		z.avail_in = in_left > UINT_MAX ? UINT_MAX : (uInt)in_left;
		z.next_out = buf + len;
		z.avail_out = out_left > UINT_MAX ? UINT_MAX : (uInt)out_left;
		out_left = z.avail_out;
		rc = inflate(&z, Z_NO_FLUSH);
		len += out_left - z.avail_out;
		if (rc == Z_BUF_ERROR && z.avail_out)
			break; /* no progress possible: the input ended early */
		if (rc == Z_BUF_ERROR)
			rc = Z_OK;
	}
	inflateEnd(&z);
	if (rc != Z_STREAM_END) {
		free(buf);
		if (rc == Z_BUF_ERROR || rc == Z_OK)
			text_errf(err, errsz, "%s: truncated gzip data (the file ends early).",
				  name);
		else
			text_errf(err, errsz, "%s: corrupt gzip data.", name);
		return -EINVAL;
	}
	*out = buf;
	*outlen = len;
	return 0;
}

/* Lookup of message ids (location, function, mapping) → index. */
struct idmap {
	uint64_t *key;
	size_t *val;
	size_t mask;
};

static int idmap_build(struct idmap *m, size_t n, uint64_t (*id_of)(void *arr, size_t i), void *arr)
{
	size_t nslots = 16;

	while (nslots < n * 2)
		nslots *= 2;
	m->mask = nslots - 1;
	m->key = calloc(nslots, sizeof(*m->key));
	m->val = calloc(nslots, sizeof(*m->val));
	if (!m->key || !m->val)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		uint64_t id = id_of(arr, i);
		size_t j = (id * 0x9e3779b97f4a7c15ull) >> 20 & m->mask;
		if (!id)
			continue; /* ids are nonzero; 0 marks an empty slot */
		while (m->key[j] && m->key[j] != id)
			j = (j + 1) & m->mask;
		if (!m->key[j]) {
			m->key[j] = id;
			m->val[j] = i;
		}
	}
	return 0;
}

static bool idmap_get(const struct idmap *m, uint64_t id, size_t *out)
{
	size_t j = (id * 0x9e3779b97f4a7c15ull) >> 20 & m->mask;

	if (!id)
		return false;
	for (; m->key[j]; j = (j + 1) & m->mask)
		if (m->key[j] == id) {
			*out = m->val[j];
			return true;
		}
	return false;
}

static void idmap_free(struct idmap *m)
{
	free(m->key);
	free(m->val);
}

static uint64_t loc_id(void *a, size_t i)
{
	return ((Perftools__Profiles__Location **)a)[i]->id;
}
static uint64_t fn_id(void *a, size_t i)
{
	return ((Perftools__Profiles__Function **)a)[i]->id;
}
static uint64_t map_id(void *a, size_t i)
{
	return ((Perftools__Profiles__Mapping **)a)[i]->id;
}

struct pctx {
	struct report *r;
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
	return s && *s ? strpool_str(&c->r->strings, s, strlen(s)) : NULL;
}

static bool is_kernel_mapping(const char *f)
{
	return !strncmp(f, "[kernel", 7) || !strncmp(f, "vmlinux", 7);
}

/* Where a location's code is, as stacktop writes it (an absolute path and
 * a build-id; address - memory_start + file_offset is the ELF address), for
 * annotating offline. false when the mapping does not say. */
static bool pprof_origin(struct pctx *c, const Perftools__Profiles__Mapping *m,
			 const char *fname, uint64_t address, struct frame_origin *o)
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
static int pprof_location(struct pctx *c, struct ids *st, size_t li)
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
		has_origin = !kernel && pprof_origin(c, c->p->mapping[mi], fname, l->address, &origin);
	}
	if (l->n_line == 0) {
		char buf[64];
		struct rframe f = {.module = module, .kernel = kernel};
		int64_t id;
		snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)l->address);
		if (!(f.func = pooled(c, buf)) || (id = report_frame(c->r, &f)) < 0)
			return -ENOMEM;
		return ids_push(st, (uint32_t)id);
	}
	for (size_t k = l->n_line; k-- > 0;) {
		const Perftools__Profiles__Line *ln = l->line[k];
		const Perftools__Profiles__Function *fn;
		/* Lines are innermost first: all but the last are inlined. */
		struct rframe f = {.module = module,
				   .kernel = kernel,
				   .inlined = k + 1 < l->n_line,
				   .origin = has_origin && k + 1 == l->n_line ? &origin : NULL};
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
		if ((id = report_frame(c->r, &f)) < 0)
			return (int)id;
		if (ids_push(st, (uint32_t)id))
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

	*tid = REPORT_TID_ANY;
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
	if (*tid != REPORT_TID_ANY || name)
		return report_thread(c->r, *tid, name);
	return 0;
}

/* stacktop's summary comment "stacktop: {wall_s=...}", when there. */
static void pprof_comments(struct pctx *c)
{
	static const char tag[] = EXPORT_FOLDED_TAG "{";
	size_t tl = sizeof(tag) - 1;

	for (size_t i = 0; i < c->p->n_comment; i++) {
		const char *s = pstr(c, c->p->comment[i]);
		size_t n = s ? strlen(s) : 0;
		if (s && n > tl + 1 && !strncmp(s, tag, tl) && s[n - 1] == '}' &&
		    !export_summary_parse(s + tl, n - tl - 1, &c->r->summary))
			c->r->have_summary = true;
	}
	c->bad = NULL; /* a bad comment index is not worth refusing the file */
}

static int load_pprof_msg(struct pctx *c)
{
	const Perftools__Profiles__Profile *p = c->p;
	struct report *r = c->r;
	struct ids st = {0};
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
			r->mode = !strcmp(t, "cpu") ? "cpu" : "wall";
		if (p->period > 0 && !strcmp(u, "nanoseconds"))
			r->period_s = (double)p->period / 1e9;
	}
	if (p->duration_nanos > 0)
		r->duration_s = (double)p->duration_nanos / 1e9;
	pprof_comments(c);
	for (size_t i = 0; i < p->n_sample; i++) {
		if (p->sample[i]->n_value != p->n_sample_type) {
			c->bad = "a sample has the wrong number of values";
			return -EINVAL;
		}
		if (p->sample[i]->value[vi] > 0 && (uint64_t)(p->sample[i]->value[vi] / div) > max)
			max = (uint64_t)(p->sample[i]->value[vi] / div);
	}
	scale = scale_for(max);
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
			err = report_add(r, tid, second, st.v, st.n, wgt, scale);
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
	size_t cost = size + REPORT_UNPACK_OVERHEAD;

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

size_t report_unpack_limit(size_t len)
{
	if (len > (SIZE_MAX - REPORT_UNPACK_BASE) / REPORT_UNPACK_RATIO)
		return SIZE_MAX;
	return len * REPORT_UNPACK_RATIO + REPORT_UNPACK_BASE;
}

static int load_pprof(struct report *r, const uint8_t *data, size_t len, const char *name,
		      char *err, size_t errsz)
{
	struct pctx c = {.r = r};
	struct budget b = {.limit = report_unpack_limit(len)};
	ProtobufCAllocator pa = {.alloc = budget_alloc, .free = budget_free, .allocator_data = &b};
	Perftools__Profiles__Profile *p;
	int rc;

	r->format = REPORT_PPROF;
	p = perftools__profiles__profile__unpack(&pa, len, data);
	if (!p && b.over) {
		text_errf(err, errsz,
			  "%s: unpacking it would take more than %zu MiB (%d times its size plus "
			  "%llu MiB); not loading it.",
			  name, b.limit >> 20, REPORT_UNPACK_RATIO, REPORT_UNPACK_BASE >> 20);
		return -EFBIG;
	}
	if (!p) {
		text_errf(err, errsz, "%s: corrupt protobuf; not a pprof profile.", name);
		return -EINVAL;
	}
	c.p = p;
	rc = load_pprof_msg(&c);
	if (rc == -EINVAL)
		text_errf(err, errsz, "%s: corrupt pprof profile: %s.", name,
			  c.bad ? c.bad : "bad data");
	else if (rc == -EFBIG)
		text_errf(err, errsz, TOO_MANY_FRAMES, name, r->max_ids);
	else if (rc)
		text_errf(err, errsz, "%s: cannot load the profile: %s.", name, strerror(-rc));
	idmap_free(&c.locs);
	idmap_free(&c.fns);
	idmap_free(&c.maps);
	perftools__profiles__profile__free_unpacked(p, &pa);
	return rc;
}

size_t report_ids_limit(size_t len)
{
	if (len >= (REPORT_MAX_FRAMES - REPORT_IDS_BASE) / REPORT_IDS_PER_BYTE)
		return REPORT_MAX_FRAMES;
	return len * REPORT_IDS_PER_BYTE + REPORT_IDS_BASE;
}

/* Binary (protobuf) or text (folded)? Protobuf starts with field tags and
 * lengths, which are control bytes; folded text has none but tab/CR/LF. */
static bool looks_binary(const uint8_t *d, size_t n)
{
	for (size_t i = 0; i < n && i < 512; i++)
		if (d[i] < 0x20 && d[i] != '\n' && d[i] != '\r' && d[i] != '\t')
			return true;
	return false;
}

/* ---- entry points ---- */

int report_load_mem(const void *data, size_t len, const char *name, struct frames *fr,
		    struct report **out, char *err, size_t errsz)
{
	const uint8_t *d = data;
	uint8_t *raw = NULL;
	struct report *r;
	size_t rawlen;
	int rc;

	*out = NULL;
	if (!name)
		name = "profile";
	if (len == 0) {
		text_errf(err, errsz, "%s is empty.", name);
		return -EINVAL;
	}
	if (!(r = calloc(1, sizeof(*r)))) {
		text_errf(err, errsz, "%s: out of memory.", name);
		return -ENOMEM;
	}
	r->fr = fr;
	r->max_ids = report_ids_limit(len);
	if (len >= 2 && d[0] == 0x1f && d[1] == 0x8b) {
		if (!(rc = inflate_all(d, len, &raw, &rawlen, name, err, errsz))) {
			r->max_ids = report_ids_limit(rawlen);
			rc = load_pprof(r, raw, rawlen, name, err, errsz);
		}
		free(raw);
	} else if (looks_json(d, len)) {
		rc = load_speedscope(r, (const char *)d, len, name, err, errsz);
	} else if (looks_binary(d, len)) {
		rc = load_pprof(r, d, len, name, err, errsz);
	} else {
		rc = load_folded(r, (const char *)d, len, name, err, errsz);
	}
	if (!rc && r->samples == 0) {
		text_errf(err, errsz, "%s holds no samples.", name);
		rc = -EINVAL;
	}
	if (rc) {
		report_free(r);
		return rc;
	}
	*out = r;
	return 0;
}

static int read_file(const char *path, uint8_t **buf, size_t *len, char *err, size_t errsz)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	size_t cap = 65536, n = 0;
	uint8_t *b = NULL;
	struct stat st;
	int rc = 0;

	if (fd < 0) {
		rc = -errno;
		text_errf(err, errsz, "cannot open %s: %s.", path, strerror(-rc));
		return rc;
	}
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		close(fd);
		text_errf(err, errsz, "%s is a directory, not a profile.", path);
		return -EISDIR;
	}
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
		cap = (size_t)st.st_size + 1;
	for (;;) {
		ssize_t k;
		if (!b || n == cap) {
			uint8_t *p;
			if (b)
				cap *= 2;
			if (cap > REPORT_MAX_FILE + 1 || !(p = realloc(b, cap))) {
				rc = cap > REPORT_MAX_FILE + 1 ? -EFBIG : -ENOMEM;
				break;
			}
			b = p;
		}
		k = read(fd, b + n, cap - n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			rc = -errno;
			break;
		}
		if (k == 0)
			break;
		n += (size_t)k;
	}
	close(fd);
	if (rc) {
		free(b);
		text_errf(err, errsz, "cannot read %s: %s.", path, strerror(-rc));
		return rc;
	}
	*buf = b;
	*len = n;
	return 0;
}

int report_load(const char *path, struct frames *fr, struct report **out, char *err, size_t errsz)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	int rc;

	*out = NULL;
	if ((rc = read_file(path, &buf, &len, err, errsz)))
		return rc;
	rc = report_load_mem(buf, len, path, fr, out, err, errsz);
	free(buf);
	return rc;
}

void report_free(struct report *r)
{
	if (!r)
		return;
	strpool_free(&r->strings);
	free(r->ids);
	free(r->stacks);
	free(r->threads);
	free(r);
}

enum report_format report_format(const struct report *r)
{
	return r->format;
}

uint64_t report_now_ns(const struct report *r, const struct window *w)
{
	uint64_t span = (uint64_t)window_seconds(w) * 1000000000ull;
	uint64_t d = r->duration_s > 0 ? (uint64_t)(r->duration_s * 1e9) : 1000000000ull;

	/* Samples sit in bucket 0 (time 0): any now below the window's span
	 * keeps them live. */
	if (span && d >= span)
		d = span - 1;
	return REPORT_TIME_NS + (d ? d : 1);
}

double report_period_s(const struct report *r)
{
	return r->period_s;
}

double report_duration_s(const struct report *r)
{
	return r->duration_s;
}

const char *report_mode(const struct report *r)
{
	return r->mode;
}

uint64_t report_samples(const struct report *r)
{
	return r->samples;
}

size_t report_nstacks(const struct report *r)
{
	return r->nstacks;
}

void report_stack(const struct report *r, size_t i, struct report_stack *out)
{
	const struct rstack *st = &r->stacks[i];

	*out = (struct report_stack){.ids = r->ids + st->off,
				     .n = st->n,
				     .weight = st->weight,
				     .tid = st->tid,
				     .second = st->second};
}

bool report_timed(const struct report *r)
{
	return r->nstacks && !r->untimed;
}

const struct export_summary *report_summary(const struct report *r)
{
	return r->have_summary ? &r->summary : NULL;
}

size_t report_nthreads(const struct report *r)
{
	return r->nthreads;
}

const char *report_thread_name(void *ctx, int tid)
{
	const struct report *r = ctx;

	if (!r)
		return NULL;
	for (size_t i = 0; i < r->nthreads; i++)
		if (r->threads[i].tid == tid && r->threads[i].name)
			return r->threads[i].name;
	return tid == REPORT_TID_ANY ? "all" : NULL;
}

/* ---- the report as a sampler ---- */

struct report_sampler {
	struct sampler base; /* first: the sampler wrappers cast */
	struct report *r;
	bool delivered;
	uint64_t samples;
};

static bool rs_has_thread(const struct sampler *s, pid_t tid)
{
	const struct report *r = ((const struct report_sampler *)s)->r;

	for (size_t i = 0; i < r->nthreads; i++)
		if (r->threads[i].tid == tid)
			return true;
	return false;
}

static int rs_add_thread(struct sampler *s, pid_t pid, pid_t tid)
{
	return 0; /* the file says which threads there are */
}

static int rs_nthreads(const struct sampler *s)
{
	return (int)report_nthreads(((const struct report_sampler *)s)->r);
}

/* Everything at once, on the first call: the profile is all there is. */
static int rs_collect(struct sampler *s, uint64_t now_ns, const struct sampler_sink *sink)
{
	struct report_sampler *rs = (struct report_sampler *)s;
	const struct report *r = rs->r;
	int n = 0;

	if (rs->delivered)
		return 0;
	rs->delivered = true;
	for (size_t i = 0; i < r->nstacks; i++) {
		const struct rstack *st = &r->stacks[i];
		struct sample smp = {
		    .pid = 0,
		    .tid = st->tid,
		    .time_ns = REPORT_TIME_NS,
		    .weight = st->weight,
		    .state = SAMPLE_ONCPU,
		    .syscall_nr = -1,
		    .frame_ids = r->ids + st->off,
		    .nframe_ids = (int)st->n,
		};

		if (sink && sink->sample)
			sink->sample(sink->ctx, &smp);
		rs->samples += st->weight;
		if (n < INT32_MAX)
			n++;
	}
	return n;
}

static void rs_stats(const struct sampler *s, struct sampler_stats *out)
{
	out->samples = ((const struct report_sampler *)s)->samples;
}

static void rs_stop(struct sampler *s)
{
}

static void rs_free(struct sampler *s)
{
	free(s);
}

static const struct sampler_ops report_sampler_ops = {
    .mode = NULL,
    .add_thread = rs_add_thread,
    .has_thread = rs_has_thread,
    .nthreads = rs_nthreads,
    .collect = rs_collect,
    .stats = rs_stats,
    .stop = rs_stop,
    .free = rs_free,
};

int report_sampler_new(struct report *r, struct sampler **out)
{
	struct report_sampler *rs = calloc(1, sizeof(*rs));

	if (!rs)
		return -ENOMEM;
	rs->base.ops = &report_sampler_ops;
	rs->r = r;
	*out = &rs->base;
	return 0;
}
