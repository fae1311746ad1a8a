/*
 * selection — the stacks and names every writer shares (see selection.h).
 *
 * The window's count array is walked once (or bucket by bucket with
 * per_second); each stack is rebuilt by following node parents from the
 * leaf and stored root first in one flat array of frame ids.
 */
#include "stacktop/formats/selection.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stacktop/formats/export.h"
#include "stacktop/lib/array.h"
#include "stacktop/lib/text.h"
#include "stacktop/model/summary.h"
#include "stacktop/model/window.h"
#include "stacktop/symbols/frames.h"

char *selection_clean(const char *in, bool folded)
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

void selection_free(struct selection *s)
{
	for (size_t i = 0; i < s->nlabel; i++)
		free(s->label[i]);
	free(s->label);
	free(s->st);
	free(s->frames);
	memset(s, 0, sizeof(*s));
}

const char *selection_label(struct selection *s, struct window *w, uint32_t id)
{
	char buf[4096];

	if (id >= s->nlabel)
		return "?";
	if (!s->label[id]) {
		frame_label(frames_get(window_frames(w), id), buf, sizeof(buf));
		s->label[id] = selection_clean(buf, true);
	}
	return s->label[id] ? s->label[id] : "?";
}

static bool zoom_match(struct selection *s, struct window *w, const struct export_opts *o,
		       const uint32_t *fr, size_t n)
{
	if ((size_t)o->nzoom > n)
		return false;
	for (int i = 0; i < o->nzoom; i++) {
		char *z = selection_clean(o->zoom[i] ? o->zoom[i] : "", true);
		bool eq = z && !strcmp(z, selection_label(s, w, fr[i]));
		free(z);
		if (!eq)
			return false;
	}
	return true;
}

/* Walk leaf → root, keep what the options select, store root first; the
 * counts wc[0..ncounts) of one bucket (second >= 0) or of the sum (-1). */
static int selection_add(struct selection *s, struct window *w, const struct export_opts *o,
			 const struct window_count *wc, size_t ncounts, int64_t second)
{
	uint32_t tmp[4096];

	if (array_grow((void **)&s->st, &s->capst, s->nst + ncounts + 1, sizeof(*s->st)))
		return -ENOMEM;
	for (size_t i = 0; i < ncounts; i++) {
		size_t n = 0;
		uint32_t node = wc[i].node;
		int pid = 0;

		if (!wc[i].count || (o->tid && wc[i].tid != o->tid))
			continue;
		while (node != WINDOW_ROOT && n < sizeof(tmp) / sizeof(tmp[0])) {
			const struct window_node *nd = window_node(w, node);
			const struct frame *f;
			if (!nd)
				break;
			f = frames_get(window_frames(w), nd->frame);
			if (f && frame_is_process(f))
				pid = f->pid;
			if (f && !(o->hide_kernel && f->kernel) && !(o->pid && frame_is_process(f)))
				tmp[n++] = nd->frame;
			node = nd->parent;
		}
		if (o->pid && pid != o->pid)
			continue;
		for (size_t a = 0, b = n ? n - 1 : 0; a < b; a++, b--) {
			uint32_t t = tmp[a];
			tmp[a] = tmp[b];
			tmp[b] = t;
		}
		if (!n || (o->nzoom > 0 && !zoom_match(s, w, o, tmp, n)))
			continue;
		if (array_grow((void **)&s->frames, &s->capframes, s->nframes + n,
			       sizeof(*s->frames)))
			return -ENOMEM;
		memcpy(s->frames + s->nframes, tmp, n * sizeof(*tmp));
		s->st[s->nst++] = (struct selection_stack){.tid = wc[i].tid,
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
static uint64_t first_bucket(const struct window *w)
{
	uint64_t first = UINT64_MAX, num;
	size_t n;

	for (size_t k = 0; k < window_nbuckets(w); k++)
		if (window_bucket_counts(w, k, &num, &n) && num < first)
			first = num;
	return first;
}

int selection_build(struct selection *s, struct window *w, const struct export_opts *o)
{
	size_t ncounts;
	const struct window_count *wc;
	uint64_t first, num, bns = window_bucket_ns(w);
	int err = 0;

	memset(s, 0, sizeof(*s));
	s->first_s = -1;
	if (!(s->label = calloc(frames_span(window_frames(w)) + 1, sizeof(*s->label))))
		return -ENOMEM;
	s->nlabel = frames_span(window_frames(w)); /* after: selection_free walks them */
	if (!o->per_second) {
		wc = window_counts(w, &ncounts);
		return selection_add(s, w, o, wc, ncounts, -1);
	}
	/* Bucket by bucket, oldest first (the ring slot order is not time). */
	first = first_bucket(w);
	if (first != UINT64_MAX)
		s->first_s = (int64_t)(first * bns / 1000000000ull);
	for (size_t k = 0; k < window_nbuckets(w) && !err && first != UINT64_MAX; k++)
		if ((wc = window_bucket_counts(w, k, &num, &ncounts)))
			err = selection_add(s, w, o, wc, ncounts,
					    (int64_t)((num - first) * bns / 1000000000ull));
	return err;
}

/* The point at o->cpu_t covers (cpu_t - 1, cpu_t], most of the second
 * from floor(cpu_t - 0.5) (model/spikes' rule); the values before it are
 * a second each (the metrics tick on a one-second schedule). */
bool selection_cpu_at(const struct selection *s, const struct export_opts *o, int64_t *at)
{
	size_t n = o->ncpu < SUMMARY_CPU_MAX ? o->ncpu : SUMMARY_CPU_MAX;
	double last = floor(o->cpu_t - 0.5);

	if (!n || s->first_s < 0 || !(o->cpu_t > 0) || last > 1e15)
		return false;
	*at = (int64_t)last - s->first_s - (int64_t)(n - 1);
	return *at >= -SUMMARY_CPU_AT_MAX && *at <= SUMMARY_CPU_AT_MAX;
}

char *selection_thread_root(const struct export_opts *o, int tid, bool folded)
{
	const char *name = o->thread_name ? o->thread_name(o->ctx, tid) : NULL;
	char buf[512];

	snprintf(buf, sizeof(buf), "%s-%d", name && *name ? name : "thread", tid);
	return selection_clean(buf, folded);
}
