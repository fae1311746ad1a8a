/*
 * speedscope — the speedscope app's JSON file format, written and read
 * (see speedscope.h).
 *
 * Writing: the JSON text is built by hand (json_str escapes '"', '\\' and
 * control characters; names are already valid UTF-8): shared frames first,
 * one per (name, file), found through a hashidx over their keys, then one
 * "sampled" profile (or one per thread), samples root first.
 *
 * Reading: parsed whole with json-c (depth capped by its tokener), at most
 * SPEEDSCOPE_MAX_JSON bytes, since the parsed tree costs tens of bytes per
 * byte of input. Every profile is checked before anything is stored: only
 * "sampled" ones, samples and weights of one length, frame indices inside
 * shared.frames. Weights with unit "none" are counts; in time units they
 * become counts by the period stacktop writes in its own "stacktop" object
 * (mode, period_s, duration_s), else by the smallest weight (the file
 * knows times and shares, not counts).
 */
#include "stacktop/formats/speedscope.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json.h>

#include "stacktop/formats/export.h"
#include "stacktop/formats/folded.h"
#include "stacktop/formats/selection.h"
#include "stacktop/formats/stackset.h"
#include "stacktop/lib/array.h"
#include "stacktop/lib/hashidx.h"
#include "stacktop/lib/sbuf.h"
#include "stacktop/lib/strpool.h"
#include "stacktop/lib/text.h"
#include "stacktop/model/window.h"
#include "stacktop/symbols/frames.h"

#ifndef STACKTOP_VERSION
#define STACKTOP_VERSION "dev"
#endif

#define SPEEDSCOPE_SCHEMA "https://www.speedscope.app/file-format-schema.json"
#define SPEEDSCOPE_MAX_JSON (64u << 20) /* json-c's tree: tens of bytes per byte */

/* ---- writing ---- */

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

/* The shared frames made so far: the (name, file) string indices of each,
 * indexed by that key. */
struct frame_keys {
	uint64_t *key; /* name index << 32 | file index, per shared frame */
	size_t n, cap;
	struct hashidx ix;
};

static bool key_hash(const void *ctx, uint32_t id, uint64_t *hash)
{
	*hash = hashidx_mix64(((const struct frame_keys *)ctx)->key[id]);
	return true;
}

static bool key_eq(const void *ctx, uint32_t id, const void *key)
{
	return ((const struct frame_keys *)ctx)->key[id] == *(const uint64_t *)key;
}

/* The shared frame of key: its index + 1, or 0 after adding it (then its
 * index is the new k->n - 1); -ENOMEM. */
static int64_t frame_key(struct frame_keys *k, uint64_t key)
{
	uint64_t h = hashidx_mix64(key);
	int64_t got = hashidx_find(&k->ix, h, key_eq, k, &key, NULL);

	if (got >= 0)
		return got + 1;
	if (hashidx_reserve(&k->ix, k->n, k->n, 256, key_hash, k) ||
	    array_grow((void **)&k->key, &k->cap, k->n + 1, sizeof(*k->key)))
		return -ENOMEM;
	k->key[k->n] = key;
	hashidx_put(&k->ix, h, (uint32_t)k->n++);
	return 0;
}

/* Shared frames, one per (name, file); *idx maps window frame id → index + 1. */
static int write_frames(struct window *w, struct selection *s, struct sbuf *out, uint32_t **idx)
{
	struct strpool names = {0}, files = {0};
	struct frame_keys keys = {0};
	uint32_t nf = 0;
	int err = 0;

	if (!(*idx = calloc(frames_span(window_frames(w)) + 1, sizeof(**idx))))
		return -ENOMEM;
	sbuf_str(out, "\"shared\":{\"frames\":[");
	for (size_t i = 0; i < s->nframes && !err; i++) {
		uint32_t id = s->frames[i];
		const struct frame *f = frames_line(window_frames_mut(w), id);
		const char *file = f->has_line && f->sym.file ? f->sym.file : "";
		char *cf = selection_clean(file, false);
		const char *label = selection_label(s, w, id);
		int64_t ni = strpool_index(&names, label, strlen(label));
		int64_t fi = cf ? strpool_index(&files, cf, strlen(cf)) : -ENOMEM;
		int64_t got;

		if ((*idx)[id] || ni < 0 || fi < 0) {
			err = ni < 0 || fi < 0 ? -ENOMEM : 0;
			free(cf);
			continue;
		}
		got = frame_key(&keys, (uint64_t)ni << 32 | (uint64_t)fi);
		if (got < 0) {
			err = -ENOMEM;
		} else if (got) {
			(*idx)[id] = (uint32_t)got;
		} else {
			(*idx)[id] = ++nf;
			sbuf_str(out, nf > 1 ? ",{\"name\":" : "{\"name\":");
			json_str(out, selection_label(s, w, id));
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
	hashidx_free(&keys.ix);
	free(keys.key);
	return err;
}

static int cmp_tid(const void *a, const void *b)
{
	const struct selection_stack *x = a, *y = b;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

/* One sampled profile over stacks [from, to) of s. */
static void write_profile(struct sbuf *out, struct selection *s, size_t from, size_t to,
			  const char *name, const uint32_t *idx, double period_s)
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

static int speedscope_render(struct window *w, const struct export_opts *o, struct selection *s,
			     struct sbuf *out)
{
	uint32_t *idx = NULL;
	char *name = selection_clean(o->cmdline && *o->cmdline ? o->cmdline : "stacktop", false);
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
	if ((err = write_frames(w, s, out, &idx)))
		goto out;
	sbuf_str(out, ",\"profiles\":[");
	if (o->per_thread) {
		qsort(s->st, s->nst, sizeof(*s->st), cmp_tid);
		for (size_t i = 0, j; i < s->nst; i = j) {
			char *root = selection_thread_root(o, s->st[i].tid, false);
			for (j = i; j < s->nst && s->st[j].tid == s->st[i].tid; j++)
				;
			if (i)
				sbuf_str(out, ",");
			write_profile(out, s, i, j, root ? root : "thread", idx, o->period_s);
			free(root);
		}
	} else {
		write_profile(out, s, 0, s->nst, name, idx, o->period_s);
	}
	sbuf_str(out, "]}\n");
out:
	free(idx);
	free(name);
	return err ? err : out->oom ? -ENOMEM : 0;
}

/* ---- reading ---- */

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
	struct stackset *r;
	struct json_object *frames, *profiles;
	uint32_t *fid; /* shared.frames index → frame id */
	size_t nframes;
	const char *bad; /* what is wrong, for the message */
};

/* A profile's weight i in samples: counts as is, times by the period. */
static uint64_t weight_count(struct json_object *weights, size_t i, double unit_s, double period_s)
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
static int read_check(struct sctx *c, double period_s, double *min_s, uint64_t *max)
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
			uint64_t n = weight_count(weights, i, us, per > 0 ? per : 1);
			if (n > *max)
				*max = n;
		}
	}
	return 0;
}

/* The frame ids of shared.frames, in order. */
static int read_frames(struct sctx *c)
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
		struct stackset_frame rf = {
		    .func = strpool_cstr(stackset_strings(c->r), json_object_get_string(nm)),
		    .file = file
				? strpool_cstr(stackset_strings(c->r), json_object_get_string(file))
				: NULL,
		    .line = ln > 0 && ln < INT_MAX ? (int)ln : 0,
		};
		if (!rf.func || (file && !rf.file))
			return -ENOMEM;
		int64_t id = stackset_frame(c->r, &rf);
		if (id < 0)
			return (int)id;
		c->fid[i] = (uint32_t)id;
	}
	return 0;
}

/* Store every sample of every profile; a profile named "name-TID" (one
 * per thread, as --per-thread writes) is that thread. */
static int read_stacks(struct sctx *c, double period_s, uint64_t scale)
{
	size_t np = json_object_array_length(c->profiles);
	struct stackset_ids fr = {0};
	int rc = 0;
	for (size_t p = 0; p < np && !rc; p++) {
		struct json_object *pr = json_object_array_get_idx(c->profiles, p);
		struct json_object *samples = jget(pr, "samples", json_type_array);
		struct json_object *weights = jget(pr, "weights", json_type_array);
		struct json_object *unit = jget(pr, "unit", json_type_string);
		struct json_object *pname = jget(pr, "name", json_type_string);
		double us = unit_seconds(json_object_get_string(unit));
		const char *nm = pname ? json_object_get_string(pname) : "";
		int tid = STACKSET_TID_ANY;
		size_t nlen;
		if (np > 1 && folded_thread_root(nm, strlen(nm), &tid, &nlen)) {
			const char *tn = strpool_str(stackset_strings(c->r), nm, nlen);
			if (!tn || (rc = stackset_thread(c->r, tid, tn)))
				rc = rc ? rc : -ENOMEM;
		} else {
			tid = STACKSET_TID_ANY;
		}
		for (size_t i = 0; !rc && i < json_object_array_length(samples); i++) {
			struct json_object *st = json_object_array_get_idx(samples, i);
			fr.n = 0;
			for (size_t k = 0; !rc && k < json_object_array_length(st); k++) {
				int64_t x = json_object_get_int64(json_object_array_get_idx(st, k));
				rc = stackset_ids_push(&fr, c->fid[x]);
			}
			if (!rc)
				rc = stackset_add(c->r, tid, -1, fr.v, fr.n,
						  weight_count(weights, i, us, period_s), scale);
		}
	}
	free(fr.v);
	return rc;
}

static int speedscope_load(struct stackset *r, const void *bytes, size_t len, const char *name,
			   char *err, size_t errsz)
{
	const char *data = bytes;
	struct sctx c = {.r = r};
	struct json_object *root = NULL, *schema, *shared, *own;
	struct json_tokener *tok;
	double period_s, min_s;
	uint64_t max;
	int rc = 0;

	stackset_set_format(r, STACKSET_SPEEDSCOPE);
	if (len > SPEEDSCOPE_MAX_JSON) {
		text_errf(err, errsz, "%s: a JSON profile over %u MiB is not read.", name,
			  SPEEDSCOPE_MAX_JSON >> 20);
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
	stackset_set_duration_s(r, jnum(own, "duration_s"));
	struct json_object *mode = jget(own, "mode", json_type_string);
	if (mode && !strcmp(json_object_get_string(mode), "wall"))
		stackset_set_mode(r, "wall");
	else if (mode && !strcmp(json_object_get_string(mode), "cpu"))
		stackset_set_mode(r, "cpu");
	if (!(rc = read_check(&c, period_s, &min_s, &max)) && !(rc = read_frames(&c))) {
		if (!(period_s > 0))
			period_s = min_s; /* times without a period: the lightest is one */
		stackset_set_period_s(r, period_s);
		rc = read_stacks(&c, period_s > 0 ? period_s : 1, stackset_scale(max));
	}
	stackset_load_errf(r, rc, name, "not a speedscope profile stacktop can read", c.bad, err,
			   errsz);
	free(c.fid);
	json_object_put(root);
	return rc;
}

/* '{' first (after blanks): JSON, which of our formats is speedscope. */
static bool speedscope_sniff(const uint8_t *d, size_t n)
{
	size_t i = 0;
	while (i < n && (d[i] == ' ' || d[i] == '\t' || d[i] == '\n' || d[i] == '\r'))
		i++;
	return i < n && d[i] == '{';
}

static const char *const speedscope_suffixes[] = {".json", NULL};

/* name, ext, suffixes, render, load, sniff (format.h) */
const struct format_ops speedscope_format = {"speedscope",	  ".speedscope.json",
					     speedscope_suffixes, speedscope_render,
					     speedscope_load,	  speedscope_sniff};
