/*
 * spikes — the seconds that matter kept as small snapshots, and the spike
 * seconds compared with calm ones (see spikes.h for the budget and the
 * rules).
 */
#include "stacktop/model/spikes.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stacktop/model/diff.h"
#include "stacktop/model/window.h"
#include "stacktop/proc/funckind.h"
#include "stacktop/proc/metrics.h"

#define SEC_NS 1000000000ull

struct kept {
	struct diff_snap *sn;
	double t, cpu; /* the second's start; its CPU (% of a core) */
	size_t bytes;
};

struct spikes {
	struct kept k[SPIKES_MAX_SECONDS]; /* oldest first */
	size_t n, bytes;
	double last_b;		/* the last bucket kept or looked at */
	unsigned since_compare; /* ticks since the last comparison */
	bool new_spike;		/* a spike second kept since then */
	unsigned quick;		/* comparisons left at one a tick (a new rhythm) */
	bool rhythm_on;		/* the metrics had a rhythm at the last tick */
	struct rhythm_riser risers[RHYTHM_RISERS];
	unsigned nrisers;
};

int spikes_new(struct spikes **out)
{
	if (!(*out = calloc(1, sizeof(**out))))
		return -ENOMEM;
	(*out)->last_b = -1;
	(*out)->since_compare = SPIKES_EVERY_S;
	(*out)->new_spike = true;
	return 0;
}

void spikes_free(struct spikes *sp)
{
	if (!sp)
		return;
	for (size_t i = 0; i < sp->n; i++)
		diff_snap_free(sp->k[i].sn);
	free(sp);
}

size_t spikes_kept(const struct spikes *sp, size_t *bytes)
{
	if (bytes)
		*bytes = sp->bytes;
	return sp->n;
}

static void drop(struct spikes *sp, size_t i)
{
	sp->bytes -= sp->k[i].bytes;
	diff_snap_free(sp->k[i].sn);
	memmove(&sp->k[i], &sp->k[i + 1], (sp->n - i - 1) * sizeof(sp->k[0]));
	sp->n--;
}

/* The second to drop: the oldest calm one while calm seconds outnumber
 * spike seconds SPIKES_CALM_RATIO to 1, else the oldest. */
static size_t victim(const struct spikes *sp, double thr)
{
	size_t spiky = 0, calm_at = 0;
	bool found = false;

	for (size_t i = 0; i < sp->n; i++) {
		if (thr > 0 && sp->k[i].cpu > thr)
			spiky++;
		else if (!found) {
			calm_at = i;
			found = true;
		}
	}
	return found && sp->n - spiky > SPIKES_CALM_RATIO * spiky ? calm_at : 0;
}

int spikes_keep(struct spikes *sp, struct diff_snap *sn, double t, double cpu,
		const struct metrics *m)
{
	if (sp->n == SPIKES_MAX_SECONDS)
		drop(sp, victim(sp, m->rhythm.thr));
	sp->k[sp->n] = (struct kept){.sn = sn, .t = t, .cpu = cpu, .bytes = diff_snap_bytes(sn)};
	sp->bytes += sp->k[sp->n].bytes;
	sp->n++;
	while (sp->n > 1 && sp->bytes > SPIKES_BUDGET)
		drop(sp, victim(sp, m->rhythm.thr));
	/* No rhythm yet: the candidate spikes, the newest few. */
	while (!m->alert_rhythm && sp->n > SPIKES_CANDIDATES)
		drop(sp, 0);
	return 0;
}

/* The CPU of the metrics point covering most of bucket b (its t in
 * [b + 0.5, b + 1.5)); false when there is none. */
static bool bucket_cpu(const struct metrics *m, double b, double *cpu)
{
	double tv[8], vv[8];
	size_t n = series_since(&m->cpu_long, b + 0.5, tv, vv, 8);

	for (size_t i = 0; i < n; i++)
		if (tv[i] < b + 1.5) {
			*cpu = vv[i];
			return true;
		}
	return false;
}

/* Whether row r rises more than the riser at: the larger rise, then the
 * larger own rise. */
static bool rises_more(const struct diff_row *r, const struct rhythm_riser *at, double at_own)
{
	double d = diff_row_change(r)->delta;

	return d > at->pts + 0.5 || (d > at->pts - 0.5 && r->own.delta > at_own);
}

/* The risers of diff d into sp, most first. */
static void pick_risers(struct spikes *sp, const struct diff *d)
{
	double own[RHYTHM_RISERS] = {0};

	sp->nrisers = 0;
	for (size_t i = 0; i < d->nrows; i++) {
		const struct diff_row *r = &d->rows[i];
		const struct diff_share *c = diff_row_change(r);
		unsigned at = sp->nrisers;

		if (!r->func || !c->sig || c->delta < SPIKES_MIN_PTS)
			continue;
		while (at > 0 && rises_more(r, &sp->risers[at - 1], own[at - 1]))
			at--;
		if (at >= RHYTHM_RISERS)
			continue;
		unsigned last = sp->nrisers < RHYTHM_RISERS ? sp->nrisers : RHYTHM_RISERS - 1;
		memmove(&sp->risers[at + 1], &sp->risers[at], (last - at) * sizeof(sp->risers[0]));
		memmove(&own[at + 1], &own[at], (last - at) * sizeof(own[0]));
		snprintf(sp->risers[at].func, sizeof(sp->risers[at].func), "%s", r->func);
		sp->risers[at].pts = c->delta;
		sp->risers[at].gc = funckind_of(r->func, r->kernel) == FUNCKIND_GC;
		own[at] = r->own.delta;
		if (sp->nrisers < RHYTHM_RISERS)
			sp->nrisers++;
	}
}

static void publish(const struct spikes *sp, struct metrics *m)
{
	m->nrisers = m->alert_rhythm ? sp->nrisers : 0;
	memcpy(m->risers, sp->risers, sizeof(m->risers));
}

int spikes_compare(struct spikes *sp, struct metrics *m)
{
	struct diff_snap *side[2] = {NULL, NULL}; /* 0: calm, 1: spikes */
	struct diff_opts o = {.hide_kernel = true};
	struct diff *d = NULL;
	int32_t sec[2] = {0, 0};
	int rc;

	sp->nrisers = 0;
	sp->since_compare = 0;
	sp->new_spike = false;
	if ((rc = diff_snap_new(&side[0])) || (rc = diff_snap_new(&side[1])) ||
	    (rc = diff_snap_file(side[0], NULL)) || (rc = diff_snap_file(side[1], NULL)))
		goto out;
	for (size_t i = 0; i < sp->n && !rc; i++) {
		int s = sp->k[i].cpu > m->rhythm.thr;
		rc = diff_snap_merge(side[s], sp->k[i].sn, sec[s]++);
	}
	if (!rc && sec[0] && sec[1] && !(rc = diff_compare(side[0], side[1], &o, &d)))
		pick_risers(sp, d);
out:
	diff_free(d);
	diff_snap_free(side[0]);
	diff_snap_free(side[1]);
	publish(sp, m);
	return rc;
}

/* With a rhythm every second is kept (calm ones are the comparison's other
 * side); without one, only a second above the spike threshold: a target
 * that never spikes pays nothing here, and one whose stacks are all new
 * (hostile) keeps no copy of them. */
static bool worth_keeping(const struct metrics *m, double cpu)
{
	return m->alert_rhythm || (m->rhythm.thr > 0 && cpu > m->rhythm.thr);
}

/* Bucket b kept, when it has samples and the metrics its CPU. */
static int keep_bucket(struct spikes *sp, struct window *w, struct metrics *m, double b)
{
	struct diff_snap *sn;
	double cpu;
	int rc;

	if (!bucket_cpu(m, b, &cpu))
		return 0;
	if ((rc = diff_snap_window(w, (uint64_t)b * SEC_NS, 1, false, &sn)))
		return rc;
	sp->new_spike |= cpu > m->rhythm.thr;
	if (!diff_snap_samples(sn)) {
		diff_snap_free(sn);
		return 0;
	}
	return spikes_keep(sp, sn, b, cpu, m);
}

/* A rhythm just found: its calm seconds were not kept (a copy of every
 * second before a rhythm is what a hostile target's all-new stacks would
 * fill), but the window still holds them. Its last SPIKES_BACKFILL_S
 * seconds up to b are kept from it, in order (the candidates among them
 * taken again; older ones stay first), so the first comparison has both
 * sides. */
static int backfill(struct spikes *sp, struct window *w, struct metrics *m, double b)
{
	unsigned span = window_seconds(w);
	double from = b + 1 - (span < SPIKES_BACKFILL_S ? span : SPIKES_BACKFILL_S);
	int rc = 0;

	while (sp->n && sp->k[sp->n - 1].t >= from)
		drop(sp, sp->n - 1);
	for (double s = fmax(from, 0); s <= b && !rc; s++)
		rc = keep_bucket(sp, w, m, s);
	sp->last_b = b;
	return rc;
}

int spikes_tick(struct spikes *sp, struct window *w, struct metrics *m, double now_s)
{
	double b = floor(now_s) - 2, cpu;
	int rc = 0;

	if (m->alert_rhythm && !sp->rhythm_on)
		rc = backfill(sp, w, m, b);
	sp->rhythm_on = m->alert_rhythm;
	if (b > sp->last_b && bucket_cpu(m, b, &cpu) && worth_keeping(m, cpu)) {
		sp->last_b = b;
		rc = keep_bucket(sp, w, m, b);
	}
	if (!m->alert_rhythm) {
		sp->nrisers = 0;
		sp->since_compare = SPIKES_EVERY_S;
		sp->new_spike = true;
		sp->quick = SPIKES_QUICK;
	} else if ((++sp->since_compare >= SPIKES_EVERY_S && sp->new_spike) ||
		   (sp->nrisers == 0 && sp->quick > 0 && sp->quick--)) {
		/* A rhythm just found is compared at once (its calm seconds
		 * taken from the window), then a tick at a time until the
		 * first riser (diff may want a few more seconds a side),
		 * SPIKES_QUICK times at most, then the usual pace. */
		int e = spikes_compare(sp, m);
		rc = rc ? rc : e;
	}
	publish(sp, m);
	return rc;
}
