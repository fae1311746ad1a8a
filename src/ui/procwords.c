/*
 * procwords — the whole machine's words besides the table's rows (see
 * procwords.h): a process's label, the box's alerts line, where a busy
 * floor is spent, and the small texts the table shares with them.
 */
#include "stacktop/ui/procwords.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stacktop/lib/text.h"
#include "stacktop/model/window.h"
#include "stacktop/symbols/frames.h"
#include "stacktop/ui/view.h"

static int cmp_desc(double a, double b)
{
	return a > b ? -1 : a < b;
}

static int cmp_pid(pid_t a, pid_t b)
{
	return a < b ? -1 : a > b;
}

/* ---- shared with the table ------------------------------------------------- */

const struct machine_proc *procwords_find(const struct machine_proc *p, size_t n, pid_t pid)
{
	for (size_t i = 0; i < n; i++)
		if (p[i].pid == pid)
			return &p[i];
	return NULL;
}

void procwords_func(const struct frame *f, bool full, char *out, size_t size)
{
	char shortn[256];

	if (!f->has_sym)
		snprintf(out, size, "0x%llx", (unsigned long long)f->pc);
	else if (f->sym.func)
		snprintf(out, size, "%s",
			 view_func_name(f->sym.func, full, shortn, sizeof(shortn)));
	else
		snprintf(out, size, "%s+0x%llx",
			 text_basename(f->sym.module) ? text_basename(f->sym.module) : "[unknown]",
			 (unsigned long long)f->sym.offset);
	if (f->kernel)
		strncat(out, " [k]", size - strlen(out) - 1);
}

/* ---- where a busy floor is spent ------------------------------------------ */

static int cmp_u64(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;

	return a < b ? -1 : a > b;
}

/* The buckets of mp's seconds at its floor (CPU point <= floor + max(5,
 * floor / 4)), sorted, unique, into secs (cap): how many. The point at t
 * is the CPU of the second before t, most of it in the bucket of t - 0.5. */
static size_t floor_seconds(const struct machine_proc *mp, uint64_t bucket_ns, double *t, double *v,
			    uint64_t *secs)
{
	double lim = mp->floor_pct + (mp->floor_pct / 4 > 5 ? mp->floor_pct / 4 : 5);
	size_t n = series_get(&mp->cpu, t, v, mp->cpu.cap), k = 0;

	for (size_t i = 0; i < n; i++)
		if (v[i] <= lim && t[i] >= 0.5)
			secs[k++] = (uint64_t)((t[i] - 0.5) * 1e9) / bucket_ns;
	qsort(secs, k, sizeof(*secs), cmp_u64);
	size_t u = 0;
	for (size_t i = 0; i < k; i++)
		if (!u || secs[u - 1] != secs[i])
			secs[u++] = secs[i];
	return u;
}

/* The hottest user function of q's samples (its pid, and its thread or
 * its seconds) into out ("" none). */
static int floor_func(struct view_procs_state *st, struct window *w, struct window_top_query *q,
		      char *out, size_t size)
{
	struct window_top_row *rows = NULL;
	const struct window_top_row *best = NULL;
	const struct frame *f;
	uint64_t total;
	size_t n = 0;
	int err;

	out[0] = '\0';
	q->key = WINDOW_KEY_FUNCTION;
	q->hide_kernel = true;
	if ((err = window_top(w, q, &rows, &n, &total)))
		return err;
	for (size_t i = 0; i < n; i++) {
		if (!rows[i].self || !(f = frames_get(window_frames(w), rows[i].frame)) ||
		    f->kernel)
			continue;
		if (!best || rows[i].self > best->self ||
		    (rows[i].self == best->self && rows[i].frame < best->frame))
			best = &rows[i];
	}
	if (best)
		procwords_func(frames_get(window_frames(w), best->frame), st->full_names, out,
			       size);
	free(rows);
	return 0;
}

static int cmp_floor(const void *pa, const void *pb)
{
	const struct machine_proc *a = *(const struct machine_proc *const *)pa;
	const struct machine_proc *b = *(const struct machine_proc *const *)pb;

	return a->floor_pct != b->floor_pct ? cmp_desc(a->floor_pct, b->floor_pct)
					    : cmp_pid(a->pid, b->pid);
}

int procwords_floors(struct view_procs_state *st, const struct machine_proc *p, size_t n,
		     struct window *w)
{
	const struct machine_proc *bf[VIEW_PROCS_FLOORS];
	size_t nb = 0, cap = 0;
	double *t = NULL, *v = NULL;
	uint64_t *secs = NULL;
	int err = 0;

	st->nfloors = 0;
	if (!w || !p)
		return 0;
	/* The highest floors, VIEW_PROCS_FLOORS at most, sorted. */
	for (size_t i = 0; i < n; i++) {
		const struct machine_proc *q = &p[i];

		if (!q->busy_floor)
			continue;
		if (nb < VIEW_PROCS_FLOORS)
			bf[nb++] = q;
		else if (cmp_floor(&q, &bf[nb - 1]) < 0)
			bf[nb - 1] = q; /* the lowest kept goes */
		else
			continue;
		qsort(bf, nb, sizeof(*bf), cmp_floor);
		if (q->cpu.cap > cap)
			cap = q->cpu.cap;
	}
	if (!nb)
		return 0;
	t = malloc(cap * sizeof(*t));
	v = malloc(cap * sizeof(*v));
	secs = malloc(cap * sizeof(*secs));
	if (!t || !v || !secs) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < nb && !err; i++) {
		struct view_procs_floor *fl = &st->floors[st->nfloors++];
		struct window_top_query q = {.pid = bf[i]->pid};

		fl->pid = bf[i]->pid;
		fl->func[0] = '\0';
		/* decided on fine steps: the threads that hold it, the most
		 * first; else (or none with samples) the seconds it sat at
		 * its floor */
		for (int k = 0; k < bf[i]->nfloor_tids && !err && !fl->func[0]; k++) {
			q.tid = bf[i]->floor_tids[k];
			err = floor_func(st, w, &q, fl->func, sizeof(fl->func));
		}
		if (fl->func[0] || err)
			continue;
		q.seconds = secs;
		q.nseconds = floor_seconds(bf[i], window_bucket_ns(w), t, v, secs);
		if (q.nseconds)
			err = floor_func(st, w, &q, fl->func, sizeof(fl->func));
	}
out:
	free(t);
	free(v);
	free(secs);
	return err;
}

const char *procwords_floor_of(const struct view_procs_state *st, pid_t pid)
{
	for (int i = 0; st && i < st->nfloors; i++)
		if (st->floors[i].pid == pid)
			return st->floors[i].func;
	return "";
}

/* ---- the box's verdicts -------------------------------------------------------- */

void procwords_label(const struct machine_proc *p, pid_t pid, char *buf, size_t size)
{
	char name[64];

	if (!p) {
		snprintf(buf, size, "pid %d", (int)pid);
		return;
	}
	text_fit(p->comm, 15, name, sizeof(name));
	snprintf(buf, size, p->kernel ? "[%s] %d" : "%s %d", name, (int)pid);
}

/* One alert: its rank (lower first), its weight within the rank, its
 * words, and the brief form a narrow line takes. */
struct alert {
	int rank;
	double weight;
	char text[256];
	char brief[256];
};

static int cmp_alert(const void *pa, const void *pb)
{
	const struct alert *a = pa, *b = pb;

	if (a->rank != b->rank)
		return a->rank - b->rank;
	return cmp_desc(a->weight, b->weight);
}

/* "floor (4242)", escaped. */
static void who(const struct machine_proc *p, char *out, size_t size)
{
	char name[64];

	text_fit(p->comm, 15, name, sizeof(name));
	snprintf(out, size, "%s (%d)", name, (int)p->pid);
}

/* "+2.1 MiB/min". */
static void per_min(double bytes_per_s, char *out, size_t size)
{
	text_bytes((uint64_t)fabs(bytes_per_s * 60), out + 1, size - 1);
	out[0] = bytes_per_s < 0 ? '-' : '+';
	strncat(out, "/min", size - strlen(out) - 1);
}

/* nz zombies (one: z, its pid; 0 when not listed) whose parent (w,
 * "zpar (4259)", or its pid when the parent is not listed) has not reaped
 * them. */
static void zombie_alert(struct alert *a, int nz, pid_t z, const char *w)
{
	*a = (struct alert){3, nz, "", ""};
	if (nz == 1 && z) {
		snprintf(a->text, sizeof(a->text),
			 "! zombie: %d defunct, parent %s has not reaped it", (int)z, w);
		snprintf(a->brief, sizeof(a->brief), "! zombie: %d, parent %s", (int)z, w);
	} else {
		snprintf(a->text, sizeof(a->text), "! zombie: %d defunct child%s of %s, not reaped",
			 nz, nz == 1 ? "" : "ren", w);
		snprintf(a->brief, sizeof(a->brief), "! zombie: %d child%s of %s", nz,
			 nz == 1 ? "" : "ren", w);
	}
}

static size_t collect_alerts(const struct machine_proc *p, size_t n,
			     const struct view_procs_state *st, struct alert *a, size_t max)
{
	size_t k = 0;
	char w[96], t[48], pw[32];

	pid_t self = getpid();

	for (size_t i = 0; i < n && k < max; i++) {
		const struct machine_proc *q = &p[i];

		/* stacktop's own memory grows while its window fills: its row
		 * says so, the box's alerts are about the others */
		if (q->pid == self)
			continue;
		who(q, w, sizeof(w));
		if (q->stuck && k < max) {
			text_span(q->stuck_for_s, t, sizeof(t));
			a[k] = (struct alert){0, q->stuck_for_s, "", ""};
			snprintf(a[k].text, sizeof(a->text), "! stuck: %s %d thread%s in D %s", w,
				 q->stuck_threads, q->stuck_threads == 1 ? "" : "s", t);
			snprintf(a[k++].brief, sizeof(a->brief), "! stuck: %s D %s", w, t);
		}
		if (q->busy_floor && k < max) {
			/* where it is spent: what to look at, in brief words too */
			const char *ff = procwords_floor_of(st, q->pid);
			char fn[64], fb[64];
			a[k] = (struct alert){1, q->floor_pct, "", ""};
			text_fit(ff, 24, fn, sizeof(fn));
			text_fit(ff, 16, fb, sizeof(fb));
			snprintf(a[k].text, sizeof(a->text), "! busy floor: %s %.0f%%%s%s", w,
				 q->floor_pct, ff[0] ? " in " : "", fn);
			snprintf(a[k].brief, sizeof(a->brief), "! busy floor: %s %.0f%%%s%s", w,
				 q->floor_pct, ff[0] ? " in " : "", fb);
			k++;
		}
		if (q->stairs && k < max) {
			per_min(q->rss_slope, t, sizeof(t));
			a[k] = (struct alert){2, q->rss_slope, "", ""};
			snprintf(a[k].text, sizeof(a->text), "! memory climbs: %s %s", w, t);
			snprintf(a[k++].brief, sizeof(a->brief), "! memory: %s %s", w, t);
		}
		if (q->zombie_children && k < max) {
			const struct machine_proc *z = NULL;
			for (size_t j = 0; j < n && !z; j++)
				if (p[j].ppid == q->pid && p[j].zombie)
					z = &p[j];
			zombie_alert(&a[k++], q->zombie_children, z ? z->pid : 0, w);
		}
		if (q->zombie && k < max && !procwords_find(p, n, q->ppid)) {
			/* its parent is not listed (another pid namespace) */
			snprintf(pw, sizeof(pw), "%d", (int)q->ppid);
			zombie_alert(&a[k++], 1, q->pid, pw);
		}
	}
	return k;
}

/* The alerts, whole, in width columns (0: any), the long or the brief
 * forms; what does not fit counted in "+N more". Returns how many shown. */
static size_t fit_alerts(const struct alert *a, size_t k, int width, bool brief, char *buf,
			 size_t size)
{
	size_t i, o = 0, shown = 0;
	char more[32];

	buf[0] = '\0';
	for (i = 0; i < k; i++) {
		const char *t = brief ? a[i].brief : a[i].text;
		int left = (int)(k - i - 1);

		snprintf(more, sizeof(more), "   +%d more", left);
		int after =
		    text_width(buf) + text_width(t) + (o ? 3 : 0) + (left ? text_width(more) : 0);
		if (width > 0 && after > width && shown) {
			if (o < size)
				snprintf(buf + o, size - o, "   +%d more", (int)(k - i));
			break;
		}
		if (o < size)
			o += (size_t)snprintf(buf + o, size - o, "%s%s", o ? "   " : "", t);
		shown++;
	}
	return shown;
}

void procwords_alerts(const struct machine_proc *p, size_t n, const struct view_procs_state *st,
		      int width, char *buf, size_t size)
{
	size_t max = n < 256 ? n * 4 : 1024, k;
	struct alert *a;

	buf[0] = '\0';
	if (!p || !n || !(a = calloc(max, sizeof(*a))))
		return;
	k = collect_alerts(p, n, st, a, max);
	qsort(a, k, sizeof(*a), cmp_alert);
	/* A narrow line says more alerts in their brief words. */
	if (fit_alerts(a, k, width, false, buf, size) < k)
		fit_alerts(a, k, width, true, buf, size);
	free(a);
}
