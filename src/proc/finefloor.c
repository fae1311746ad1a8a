/*
 * finefloor — a busy floor on sub-second steps (see finefloor.h). The
 * threads of the newest step are kept sorted by tid, as demand gives its
 * deltas, so a step is matched to them in one merge; each thread's steps
 * sit in the slots of the process's ring.
 */
#include "stacktop/proc/finefloor.h"

#include <string.h>

#include "stacktop/proc/series.h"

/* ns over len_ns as a step value: % of one core, 0..100. */
static uint8_t step_pct(uint64_t ns, uint64_t len_ns)
{
	double pct = len_ns ? (double)ns / (double)len_ns * 100.0 : 0;

	return (uint8_t)(pct >= 100 ? 100 : pct + 0.5);
}

static size_t slot_of(const struct finefloor *f, size_t k)
{
	return (f->head + k) % FINEFLOOR_STEPS;
}

/* The excess of each thread of st over st's length (a wait begun before
 * it) into the pending step, up to that step's length. */
static void give_back(struct finefloor *f, const struct demand_step *st)
{
	size_t j = 0, last = slot_of(f, f->len - 1);

	for (size_t i = 0; i < st->n; i++) {
		const struct demand_ns *d = &st->delta[i];

		while (j < f->n && f->th[j].tid < d->tid)
			j++;
		if (j >= f->n || f->th[j].tid != d->tid || d->dem <= st->dt_ns)
			continue;
		struct finefloor_thread *th = &f->th[j];
		uint64_t excess = d->dem - st->dt_ns;
		uint64_t room = f->pend_ns > th->pend_dem ? f->pend_ns - th->pend_dem : 0;

		th->pend_dem += excess < room ? excess : room;
		th->dem[last] = step_pct(th->pend_dem, f->pend_ns);
	}
}

/* A new slot at the ring's end (the oldest step goes when it is full). */
static size_t push_slot(struct finefloor *f, double t, const struct demand_step *st)
{
	size_t s;

	if (f->len < FINEFLOOR_STEPS) {
		s = slot_of(f, f->len++);
	} else {
		s = f->head;
		f->head = (f->head + 1) % FINEFLOOR_STEPS;
	}
	f->end[s] = t;
	f->dur[s] = (double)st->dt_ns / 1e9;
	f->cpu[s] = st->run_pct;
	return s;
}

void finefloor_step(struct finefloor *f, double t, const struct demand_step *st)
{
	struct finefloor_thread old[DEMAND_THREADS];
	size_t nold = f->n, j = 0;

	if (!st->dt_ns)
		return;
	if (f->pend_ns && f->len)
		give_back(f, st);
	memcpy(old, f->th, nold * sizeof(*old));
	size_t s = push_slot(f, t, st);
	/* The threads of st, with their past steps (none for a new one). */
	f->n = 0;
	for (size_t i = 0; i < st->n && i < DEMAND_THREADS; i++) {
		const struct demand_ns *d = &st->delta[i];
		struct finefloor_thread *th = &f->th[f->n++];

		while (j < nold && old[j].tid < d->tid)
			j++;
		if (j < nold && old[j].tid == d->tid) {
			*th = old[j];
		} else {
			memset(th->run, FINEFLOOR_NONE, sizeof(th->run));
			memset(th->dem, FINEFLOOR_NONE, sizeof(th->dem));
			th->tid = d->tid;
		}
		th->pend_run = d->run;
		th->pend_dem = d->dem < st->dt_ns ? d->dem : st->dt_ns;
		th->run[s] = step_pct(d->run, st->dt_ns);
		th->dem[s] = step_pct(th->pend_dem, st->dt_ns);
	}
	f->pend_ns = st->dt_ns;
}

int finefloor_read(int procfd, pid_t pid, struct finefloor *f, char *buf, size_t size, double t,
		   unsigned *files)
{
	struct demand_step st;
	/* its task directory listed at each step: a process just started
	 * (or one that starts threads) has more than its last count said */
	int e = demand_read(procfd, pid, DEMAND_THREADS, &f->d, buf, size, &st, files);

	if (e == 1)
		finefloor_step(f, t, &st);
	return e;
}

/* ---- the verdict ---- */

/* Whether thread th bursts over the steps: busy at one (the pending one
 * too; it ran there, not only waited), asleep at FINEFLOOR_PAUSE_MIN
 * published ones. */
static bool bursts(const struct finefloor *f, const struct finefloor_thread *th, size_t published)
{
	size_t busy = 0, asleep = 0;

	for (size_t k = 0; k < f->len; k++) {
		uint8_t d = th->dem[slot_of(f, k)], r = th->run[slot_of(f, k)];

		if (d == FINEFLOOR_NONE)
			continue;
		busy += d >= FINEFLOOR_BUSY_PCT && r >= FINEFLOOR_BUSY_RUN_PCT;
		asleep += k < published && d < FINEFLOOR_ASLEEP_PCT;
	}
	return busy >= 1 && asleep >= FINEFLOOR_PAUSE_MIN;
}

/* The pauses: steps at which every bursting thread read there is asleep,
 * and one is (the pending step too: a thread that bursts sleeps, no
 * starved worker is one). How many. */
static size_t pauses(const struct finefloor *f, const bool *burst, bool *pause)
{
	size_t np = 0;

	for (size_t k = 0; k < f->len; k++) {
		size_t s = slot_of(f, k), asleep = 0, awake = 0;

		for (size_t j = 0; j < f->n; j++) {
			uint8_t d = f->th[j].dem[s];

			if (!burst[j] || d == FINEFLOOR_NONE)
				continue;
			asleep += d < FINEFLOOR_ASLEEP_PCT;
			awake += d >= FINEFLOOR_ASLEEP_PCT;
		}
		pause[k] = asleep && !awake;
		np += pause[k];
	}
	return np;
}

/* The median of v's values at the pauses (those >= 0: read), -1 none. */
static double median_at(const double *v, const bool *pause, size_t n)
{
	double tmp[FINEFLOOR_STEPS];
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (pause[i] && v[i] >= 0)
			tmp[k++] = v[i];
	if (!k)
		return -1;
	series_sort(tmp, k);
	return series_percentile_sorted(tmp, k, 0.5);
}

/* tid among the holders kept, the most CPU first (then the lower tid:
 * they come in tid order); the least goes when they are full. */
static void add_holder(struct finefloor_verdict *v, pid_t tid, double pct)
{
	size_t i = v->nholders;

	if (i == FINEFLOOR_HOLDERS) {
		if (v->holder_pct[i - 1] >= pct)
			return;
		i--;
	} else {
		v->nholders++;
	}
	for (; i > 0 && v->holder_pct[i - 1] < pct; i--) {
		v->holder[i] = v->holder[i - 1];
		v->holder_pct[i] = v->holder_pct[i - 1];
	}
	v->holder[i] = tid;
	v->holder_pct[i] = pct;
}

static void holders(const struct finefloor *f, const bool *pause, struct finefloor_verdict *v)
{
	double run[FINEFLOOR_STEPS];

	for (size_t j = 0; j < f->n; j++) {
		for (size_t k = 0; k < f->len; k++) {
			uint8_t r = f->th[j].run[slot_of(f, k)];
			run[k] = r == FINEFLOOR_NONE ? -1 : r;
		}
		double pct = median_at(run, pause, f->len);
		if (pct > 0 && pct >= v->floor_pct / 4)
			add_holder(v, f->th[j].tid, pct);
	}
}

void finefloor_eval(const struct finefloor *f, struct finefloor_verdict *v)
{
	size_t published = f->len - (f->pend_ns && f->len);
	bool burst[DEMAND_THREADS], pause[FINEFLOOR_STEPS] = {false};
	double cpu[FINEFLOOR_STEPS];

	*v = (struct finefloor_verdict){.steps = f->len};
	if (!f->len)
		return;
	size_t first = slot_of(f, 0), last = slot_of(f, f->len - 1);
	v->span_s = f->end[last] - (f->end[first] - f->dur[first]);
	for (size_t j = 0; j < f->n; j++)
		burst[j] = bursts(f, &f->th[j], published);
	for (size_t k = 0; k < f->len; k++)
		cpu[k] = f->cpu[slot_of(f, k)];
	v->pauses = pauses(f, burst, pause);
	if (v->pauses >= FINEFLOOR_PAUSE_MIN) {
		v->floor_pct = median_at(cpu, pause, f->len);
		holders(f, pause, v);
		return;
	}
	v->pauses = 0;
	series_sort(cpu, f->len);
	v->floor_pct = series_percentile_sorted(cpu, f->len, 0.1);
}
