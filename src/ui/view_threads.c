/*
 * view_threads — the threads view: which threads burn CPU, which never go
 * idle, which are stuck, which are dead but not reaped.
 *
 * view_threads_update collects and sorts the rows (from metrics and the
 * window) and keeps them in the state; view_threads_render is a pure
 * function of (header, metrics, const state, grid size). It draws
 *
 *   header (view_header_render)
 *     TID  NAME            STATE          CPU now  floor  last 60s (CPU)   SAMPLES  HOTTEST NOW
 *   one row per thread, then one per zombie child process
 *   footer of key hints
 *
 * With threads of more than one process (several -p PIDs, --subprocesses:
 * metrics->multi), two columns come first: PID and PROCESS (the process's
 * name, cut to 8 columns); at 80 columns that costs the sparkline, not
 * SAMPLES. Sorting by TID then sorts by PID first, so a process's threads
 * stay together.
 *
 * Rows come from metrics (threads seen at the last tick, and threads that
 * are gone but still have samples in the window, dimmed as "exited") and
 * metrics->zombies (unreaped children, always listed last as "[child]
 * Z defunct"). SAMPLES and HOTTEST come from the window (window_thread_total,
 * window_top narrowed to the TID, asked by update); hottest is asked only
 * for the rows on screen, since each query walks the window's counts.
 *
 * Column plan: TID, NAME, STATE, CPU now and floor have fixed widths; the
 * flags go last and get the width of the longest flag text on screen (they
 * are what a user acts on, so they are never dropped); what is left goes
 * first to SAMPLES, then to the sparkline (one column per second of the
 * window, up to 60, at least 8) and then to HOTTEST (12 to 40); what is
 * still left widens STATE (13 to 24) so a wait channel is not cut. At 80
 * columns that keeps SAMPLES and a 15-column sparkline (4 s a column) and
 * drops HOTTEST; with a flag on screen the sparkline goes too; at 200
 * columns everything is shown.
 *
 * Locks (st->locks, the session's wait-for graph): a waiting thread's flags
 * end with its lock's holder, "lock 0x7f…a0 held by alpha (1234)", or the
 * short "held by alpha (1234)" when the long one does not fit (then STATE
 * narrows to 8 before the holder is cut); threads in a cycle are flagged
 * DEADLOCK, and a red alert line above the table names each cycle (or, with
 * no cycle, a dim note says why owners could not be read). A wait on a
 * futex with no owner (a condition variable) adds nothing: no owner is
 * ever claimed for it. 'o' moves the selection to the holder.
 *
 * A sleeping thread's STATE names what it waits in with the words of every
 * other view ("S idle: futex_wait", "S lock: futex_wait", "S I/O:
 * pipe_read"): the window's stacks in wall mode, else the futex as the
 * session read it, else the wchan's funckind (sleeper_wait).
 *
 * The sparkline is scaled to one core (100%), not to each thread's own peak,
 * so rows can be compared by eye and an idle thread stays blank. Each point
 * of a CPU series is the CPU of the second that ends at its time, so a
 * column is the mean of the points inside its time slice, or the point that
 * covers the slice when the columns are finer than the ticks.
 *
 * The state owns its rows (view_threads_state_free); a row keeps its
 * thread's index in metrics->threads and its TID, so render finds the
 * thread again even if metrics ticked in between. The selection follows
 * the same thread (st->follow) when update re-sorts the rows; movement
 * keys move the index instead. Render clamps a copy of the selection and
 * writes nothing.
 */
#include "stacktop/ui/view_threads.h"
#include "stacktop/proc/funckind.h"
#include "stacktop/proc/waits.h"

#include <math.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stacktop/ui/keymap.h"
#include "stacktop/ui/keys.h"
#include "stacktop/ui/spark.h"
#include "stacktop/lib/text.h"

#define NAME_W 15 /* comm is at most 15 bytes */
#define STATE_W 13
#define STATE_MIN 8  /* "S lock: …": narrower only when a lock's holder needs the room */
#define STATE_MAX 24 /* "D wait_for_vfork_done": room left over goes here first */
#define CPU_W 7	     /* "CPU now", " 100.0%" */
#define FLOOR_W 5
#define SAMPLES_W 7
#define SPARK_MIN 8
#define SPARK_MAX 60
#define HOT_MIN 12
#define HOT_MAX 40 /* wider only pushes the flags away from the row */
#define GAP 2
#define PROC_W 8 /* the process name, with several processes */

static const char *const sort_names[VIEW_THREADS_SORT_COUNT] = {"cpu", "floor", "samples", "tid",
								"name"};

const char *view_threads_sort_name(enum view_threads_sort s)
{
	return s >= 0 && s < VIEW_THREADS_SORT_COUNT ? sort_names[s] : "cpu";
}

/* One table row while sorting: a thread of the target, or a zombie child
 * process (t NULL). */
struct row {
	pid_t id;
	pid_t pid;			/* its process (a zombie child: itself) */
	const struct metrics_thread *t; /* NULL: zombie child */
	int ti;
	uint64_t samples;
};

static int cmp_pid(pid_t a, pid_t b)
{
	return a < b ? -1 : a > b;
}

static int cmp_desc(double a, double b)
{
	return a > b ? -1 : a < b;
}

/* Figures compared as shown ("%6.1f%%" and "%4.0f%%"): 0.04% and 0.01%
 * both read 0.0%, and ordering them by what no one sees swapped rows each
 * second. */
static int cmp_shown(double a, double b, double scale)
{
	return cmp_desc((double)lround(a * scale), (double)lround(b * scale));
}

struct sort_key {
	enum view_threads_sort sort;
	bool wall; /* every thread is sampled alike: samples are no tie-break */
};

/* Zombie children last whatever the sort; ties always end on the id, so rows
 * do not swap between refreshes when their values are equal. In wall mode
 * sample counts differ by the one sample a thread got this second: as a
 * tie-break they reordered tied rows back and forth. */
static int row_cmp(const void *pa, const void *pb, void *arg)
{
	const struct row *a = pa, *b = pb;
	const struct sort_key *key = arg;
	enum view_threads_sort s = key->sort;
	int r = 0;

	if (!a->t || !b->t)
		return a->t ? -1 : b->t ? 1 : cmp_pid(a->id, b->id);
	switch (s) {
	case VIEW_THREADS_SORT_FLOOR:
		if (!(r = cmp_shown(a->t->floor_pct, b->t->floor_pct, 1)))
			r = cmp_shown(a->t->cpu_pct, b->t->cpu_pct, 10);
		break;
	case VIEW_THREADS_SORT_SAMPLES:
		r = a->samples > b->samples ? -1 : a->samples < b->samples;
		break;
	case VIEW_THREADS_SORT_TID:
		r = cmp_pid(a->pid, b->pid);
		break;
	case VIEW_THREADS_SORT_NAME:
		r = strcmp(a->t->comm, b->t->comm);
		break;
	case VIEW_THREADS_SORT_CPU:
	default:
		if (!(r = cmp_shown(a->t->cpu_pct, b->t->cpu_pct, 10)))
			r = cmp_shown(a->t->floor_pct, b->t->floor_pct, 1);
		break;
	}
	if (!r && !key->wall && s != VIEW_THREADS_SORT_SAMPLES && s != VIEW_THREADS_SORT_TID)
		r = a->samples > b->samples ? -1 : a->samples < b->samples;
	return r ? r : cmp_pid(a->id, b->id);
}

/* Threads seen at the last tick, threads gone but still in the window, then
 * the zombie children. *rows is malloc'd, caller frees. */
static int collect_rows(const struct metrics *m, struct window *w, int pid, struct row **rows,
			int *n)
{
	int i, k = 0, max = m ? m->nthreads + m->nzombies : 0;
	struct row *r = calloc((size_t)max + 1, sizeof(*r));

	if (!r)
		return -ENOMEM;
	for (i = 0; m && i < m->nthreads; i++) {
		const struct metrics_thread *t = &m->threads[i];
		uint64_t s = window_thread_total(w, t->tid);

		if ((!t->alive && s == 0) || (pid && t->pid != pid))
			continue;
		r[k++] = (struct row){.id = t->tid, .pid = t->pid, .t = t, .ti = i, .samples = s};
	}
	/* Zombie children are the targets' (their parents are not kept):
	 * narrowed to one process, the process table says its zombies. */
	for (i = 0;
	     m && !pid && i < m->nzombies && i < (int)(sizeof(m->zombies) / sizeof(m->zombies[0]));
	     i++)
		r[k++] = (struct row){.id = m->zombies[i], .pid = m->zombies[i], .ti = -1};
	*rows = r;
	*n = k;
	return 0;
}

/* The metrics thread of a kept row: by its index at update time, or by TID
 * if the metrics ticked since; NULL for a zombie child or a thread that
 * metrics no longer has. */
static const struct metrics_thread *row_thread(const struct metrics *m,
					       const struct view_threads_row *r)
{
	int i;

	if (!m || r->ti < 0)
		return NULL;
	if (r->ti < m->nthreads && m->threads[r->ti].tid == r->id)
		return &m->threads[r->ti];
	for (i = 0; i < m->nthreads; i++)
		if (m->threads[i].tid == r->id)
			return &m->threads[i];
	return NULL;
}

/* ---- cell texts ---------------------------------------------------------- */

/* The wchan as a word: kernel prefixes that say nothing to a user dropped
 * ("__do_sys_pause" -> "pause", "hrtimer_nanosleep" -> "nanosleep"), and
 * every futex wait ("futex_wait_queue", "futex_do_wait") is "futex_wait". */
static const char *wchan_word(const char *wchan)
{
	static const char *const prefixes[] = {"do_sys_", "sys_", "do_", "hrtimer_"};
	size_t i, l;

	while (*wchan == '_')
		wchan++;
	if (strncmp(wchan, "futex_", 6) == 0)
		return "futex_wait";
	/* "hrtimer_nanosleep_restart" (a sleep resumed after a stop): the
	 * same sleep, the same word */
	if (strstr(wchan, "nanosleep"))
		return "nanosleep";
	if (waits_wchan_generic(wchan))
		return ""; /* the way into the kernel, not what it waits in */
	for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		l = strlen(prefixes[i]);
		if (strncmp(wchan, prefixes[i], l) == 0 && wchan[l])
			return wchan + l;
	}
	return wchan;
}

const char *view_threads_state_word(char state)
{
	switch (state) {
	case 'R':
		return "running";
	case 'S':
		return "sleeping";
	case 'D':
		return "disk";
	case 'T':
		return "stopped";
	case 't':
		return "traced";
	case 'Z':
		return "zombie";
	case 'X':
		return "dead";
	case 'I':
		return "idle";
	default:
		return "unknown";
	}
}

/* What a sleeping thread waits in, in the words every view uses (funckind's
 * kinds). In wall mode r carries what the window saw (a futex is lock or
 * idle by the functions on its stack). Without a stack (cpu mode) a futex
 * is told by what the session read of it: a lock word (a mutex, an rwlock)
 * is lock, a futex with no owner (a condition variable, a semaphore, a
 * join) is idle; unread, a futex says nothing. Any other wchan is its own
 * kind: "ep_poll" idle, "pipe_read" I/O, "do_nanosleep" sleep. */
static enum sample_wait sleeper_wait(const struct metrics_thread *t,
				     const struct view_threads_row *r, const struct locks *lk)
{
	const struct locks_wait *w;

	if (r->wait)
		return (enum sample_wait)r->wait;
	if ((w = locks_find(lk, t->tid)) && w->kind != LOCKS_KIND_NONE)
		return w->kind == LOCKS_KIND_NOOWNER ? SAMPLE_WAIT_IDLE : SAMPLE_WAIT_LOCK;
	return waits_of_funckind(funckind_of(t->wchan, true));
}

/* width: the column's; the wait kind is added only where it fits whole. In
 * wall mode r carries its share of waiting for a CPU. */
static void fmt_state(const struct metrics_thread *t, const struct view_threads_row *r,
		      const struct locks *lk, char *out, size_t size, int width)
{
	char wc[64];
	const char *word;

	text_sanitize(wchan_word(t->wchan), wc, sizeof(wc));
	if (!t->alive) {
		snprintf(out, size, "X exited");
		return;
	}
	switch (t->state) {
	case 'S': {
		/* What it waits in, as wall mode names it, then the kernel's word. */
		enum sample_wait kind = sleeper_wait(t, r, lk);
		if (wc[0] && (kind == SAMPLE_WAIT_LOCK || kind == SAMPLE_WAIT_IO ||
			      kind == SAMPLE_WAIT_SLEEP || kind == SAMPLE_WAIT_IDLE)) {
			/* The kind first, whole; the function is what a narrow
			 * column cuts ("S idle: fut…", never "S futex…"). */
			snprintf(out, size, "S %s: %s", waits_name(kind), wc);
			if (text_width(out) <= width || (int)strlen(waits_name(kind)) + 2 <= width)
				return;
		}
		word = wc[0] ? wc : "sleeping";
		break;
	}
	case 'D':
		word = wc[0] ? wc : "disk";
		break;
	case 'R':
		if (r->cpuwait_pct > 0) {
			/* Only a runnable thread waits for a CPU: at 80 columns
			 * the letter goes before the number does. */
			snprintf(out, size, "R %s %d%%", waits_name(SAMPLE_WAIT_CPU),
				 r->cpuwait_pct);
			if (text_width(out) <= width)
				return;
			snprintf(out, size, "%s %d%%", waits_name(SAMPLE_WAIT_CPU), r->cpuwait_pct);
			if (text_width(out) <= width)
				return;
		}
		word = view_threads_state_word(t->state);
		break;
	case 'T':
	case 't':
	case 'Z':
	case 'X':
	case 'I':
		word = view_threads_state_word(t->state);
		break;
	default:
		snprintf(out, size, "? unknown");
		return;
	}
	snprintf(out, size, "%c %s", t->state, word);
}

/* The lock texts, from the longest to the shortest; a narrow screen takes
 * the shortest that fits. */
enum { LOCK_TEXT_FULL = 0, LOCK_TEXT_SHORT, LOCK_TEXT_LEVELS };

static const struct metrics_thread *thread_of(const struct metrics *m, pid_t tid)
{
	for (int i = 0; m && i < m->nthreads; i++)
		if (m->threads[i].tid == tid)
			return &m->threads[i];
	return NULL;
}

/* "0x7f…a0": enough of a lock's address to tell locks apart on screen. */
static void short_addr(uint64_t a, bool utf8, char *out, size_t size)
{
	char hex[24];
	size_t l = (size_t)snprintf(hex, sizeof(hex), "%llx", (unsigned long long)a);

	if (l <= 6)
		snprintf(out, size, "0x%s", hex);
	else
		snprintf(out, size, "0x%.2s%s%s", hex, utf8 ? "\xe2\x80\xa6" : "..", hex + l - 2);
}

/* What a waiting thread's row says about its lock: "lock 0x7f…a0 held by
 * alpha (1234)" (level FULL) or "held by alpha (1234)" (SHORT); "" when it
 * waits on no lock, or on one that has no owner (a condition variable). */
static void lock_text(const struct metrics *m, const struct locks *lk, pid_t tid, int level,
		      bool utf8, char *out, size_t size)
{
	const struct locks_wait *w = locks_find(lk, tid);
	const struct metrics_thread *o;
	char addr[32], name[64];
	size_t k = 0;

	out[0] = '\0';
	if (!w || w->kind == LOCKS_KIND_NOOWNER)
		return;
	if (level == LOCK_TEXT_FULL) {
		short_addr(w->addr, utf8, addr, sizeof(addr));
		k = (size_t)snprintf(out, size, "%s %s ",
				     w->kind == LOCKS_KIND_RWLOCK ? "rwlock" : "lock", addr);
	}
	if (k >= size)
		return;
	if (!w->owner) {
		snprintf(out + k, size - k, "owner unknown");
		return;
	}
	o = thread_of(m, w->owner);
	text_fit(o ? o->comm : "?", NAME_W, name, sizeof(name));
	snprintf(out + k, size - k, "held by %s (%d)", name, (int)w->owner);
}

/* Flags of a row, two spaces apart, then its lock; *attr is the colour of
 * the most urgent. */
static void fmt_flags(const struct view_header *h, const struct metrics_thread *t,
		      const struct locks *lk, const char *lock, char *out, size_t size,
		      uint16_t *attr)
{
	const struct locks_wait *w = t ? locks_find(lk, t->tid) : NULL;
	char d[32];
	size_t o = 0;

	out[0] = 0;
	*attr = GRID_BOLD;
	if (!t) {
		snprintf(out, size, "ZOMBIE");
		*attr = GRID_COLOR(GRID_C_MAGENTA) | GRID_BOLD;
		return;
	}
	if (t->zombie) {
		o += (size_t)snprintf(out + o, size - o, "ZOMBIE");
		*attr = GRID_COLOR(GRID_C_MAGENTA) | GRID_BOLD;
	}
	if (t->stuck && o < size) {
		text_span(t->d_for_s, d, sizeof(d));
		o += (size_t)snprintf(out + o, size - o, "%sSTUCK (D for %s)", o ? "  " : "", d);
		*attr = GRID_COLOR(GRID_C_RED) | GRID_BOLD;
	}
	if (t->busy_floor && o < size) {
		o += (size_t)snprintf(out + o, size - o, "%sBUSY FLOOR", o ? "  " : "");
		*attr = GRID_COLOR(GRID_C_ALERT) | GRID_BOLD;
	}
	if (w && w->cycle && t->alive && o < size) {
		o += (size_t)snprintf(out + o, size - o, "%sDEADLOCK", o ? "  " : "");
		*attr = GRID_COLOR(GRID_C_RED) | GRID_BOLD;
	}
	/* CPython (runtime/python): the thread that holds the GIL; the
	 * collector runs in the thread that holds it. */
	for (int i = 0; h && i < h->ngil && t->alive && o < size; i++)
		if (h->gil_tids[i] == t->tid)
			o += (size_t)snprintf(out + o, size - o, "%sGIL%s", o ? "  " : "",
					      h->py_gc ? " (GC running)" : "");
	if (lock && lock[0] && t->alive && o < size)
		snprintf(out + o, size - o, "%s%s", o ? "  " : "", lock);
}

/* The alert line: "! DEADLOCK alpha (1234) ⇄ beta (1235)", a longer cycle
 * as "a (1) → b (2) → c (3) → a", several cycles one after the other. */
void view_threads_deadlock_text(const struct metrics *m, const struct locks *lk, bool utf8,
				char *out, size_t size)
{
	const char *two = utf8 ? " \xe2\x87\x84 " : " <-> ",
		   *arrow = utf8 ? " \xe2\x86\x92 " : " -> ";
	char name[64];
	size_t o = 0;

	out[0] = '\0';
	for (int c = 0; lk && c < lk->ncycles && o < size; c++) {
		const struct locks_cycle *cy = &lk->cycles[c];
		o +=
		    (size_t)snprintf(out + o, size - o, "%s", c ? "   ! DEADLOCK " : "! DEADLOCK ");
		for (int k = 0; k < cy->n && o < size; k++) {
			pid_t tid = lk->tids[cy->first + k];
			const struct metrics_thread *t = thread_of(m, tid);
			text_fit(t ? t->comm : "?", NAME_W, name, sizeof(name));
			o += (size_t)snprintf(out + o, size - o, "%s%s (%d)",
					      k ? (cy->n == 2 ? two : arrow) : "", name, (int)tid);
		}
		if (cy->n > 2 && o < size) {
			const struct metrics_thread *t = thread_of(m, lk->tids[cy->first]);
			text_fit(t ? t->comm : "?", NAME_W, name, sizeof(name));
			o += (size_t)snprintf(out + o, size - o, "%s%s", arrow, name);
		}
	}
}

/* Without a deadlock: why lock owners are not known, when reading the
 * target was refused. */
static void locks_note(const struct locks *lk, char *out, size_t size)
{
	out[0] = '\0';
	if (!lk || lk->ncycles || !lk->read_err)
		return;
	if (lk->read_err == -EPERM || lk->read_err == -EACCES)
		snprintf(out, size,
			 "lock owners unknown: not permitted to read process %d (run as root or "
			 "with CAP_SYS_PTRACE)",
			 (int)lk->read_err_pid);
	else
		snprintf(out, size, "lock owners unknown: cannot read process %d: %s",
			 (int)lk->read_err_pid, strerror(-lk->read_err));
}

/* The thread's function with the most own samples in the window (raw: the
 * renderer sanitizes and cuts it); "" when it has no samples. */
static int find_hottest(struct window *w, pid_t tid, bool hide_kernel, bool full, char *out,
			size_t size)
{
	char shortn[256];
	struct window_top_query q = {
	    .key = WINDOW_KEY_FUNCTION, .tid = tid, .hide_kernel = hide_kernel};
	struct window_top_row *rows = NULL;
	const struct frame *f;
	char name[512];
	uint64_t total = 0;
	size_t n = 0, i, best = 0;
	int err;

	out[0] = 0;
	if ((err = window_top(w, &q, &rows, &n, &total)))
		return err;
	for (i = 1; i < n; i++)
		if (rows[i].self > rows[best].self ||
		    (rows[i].self == rows[best].self && rows[i].frame < rows[best].frame))
			best = i;
	if (n == 0 || rows[best].self == 0) {
		free(rows);
		return 0;
	}
	f = frames_get(window_frames(w), rows[best].frame);
	if (!f->has_sym)
		snprintf(name, sizeof(name), "0x%llx", (unsigned long long)f->pc);
	else if (f->sym.func)
		snprintf(name, sizeof(name), "%s",
			 view_func_name(f->sym.func, full, shortn, sizeof(shortn)));
	else
		snprintf(name, sizeof(name), "%s+0x%llx",
			 text_basename(f->sym.module) ? text_basename(f->sym.module) : "[unknown]",
			 (unsigned long long)f->sym.offset);
	if (f->kernel)
		strncat(name, " [k]", sizeof(name) - strlen(name) - 1);
	snprintf(out, size, "%s", name);
	free(rows);
	return 0;
}

/* ---- sparkline ------------------------------------------------------------- */

/* The value a column shows: the mean of the points in (lo, hi], or the first
 * point after hi when it covers the slice (ticks coarser than columns);
 * false when there is no data for the slice. */
static bool slice_value(const double *t, const double *v, size_t n, double lo, double hi,
			double *out)
{
	double sum = 0;
	size_t i, k = 0;

	for (i = 0; i < n; i++) {
		if (t[i] > lo && t[i] <= hi) {
			sum += v[i];
			k++;
		} else if (t[i] > hi) {
			break;
		}
	}
	if (k) {
		*out = sum / (double)k;
		return true;
	}
	if (i < n && i > 0 && t[i] - t[i - 1] <= 1.5 * (hi - lo) + 1.5) {
		*out = v[i];
		return true;
	}
	return false;
}

/* Draw series s (values against max) over the span_s seconds up to now in
 * w columns at (x, y), each column the mean of its slice (spark_draw's
 * cells). Idle columns stay blank. */
static void draw_sparkline(struct grid *g, int x, int y, int w, const struct series *s, double now,
			   double span_s, double max, bool utf8)
{
	double *t, *v, *cv;
	size_t n;
	int i;

	if (w <= 0 || !s || s->len == 0 || !(span_s > 0) || !(max > 0))
		return;
	t = malloc(s->len * sizeof(*t));
	v = malloc(s->len * sizeof(*v));
	cv = malloc((size_t)w * sizeof(*cv));
	if (!t || !v || !cv)
		goto out;
	n = series_get(s, t, v, s->len);
	for (i = 0; i < w; i++) {
		double lo = now - span_s + span_s * i / w, hi = now - span_s + span_s * (i + 1) / w;

		if (!slice_value(t, v, n, lo, hi, &cv[i]))
			cv[i] = -1; /* no data: blank */
	}
	spark_draw(g, x, y, cv, w, max, utf8);
out:
	free(t);
	free(v);
	free(cv);
}

/* ---- layout ------------------------------------------------------------------ */

struct cols {
	int pid_w, proc_x; /* pid_w 0: one process, no PID and PROCESS columns */
	int tid_x, tid_w;
	int name_x, state_x, state_w, cpu_x, floor_x;
	int spark_x, spark_w; /* spark_w 0: dropped */
	int samples_x, samples_w;
	int hot_x, hot_w;
	int flags_x;
};

static int digits(long v)
{
	int d = 1;

	while (v >= 10) {
		v /= 10;
		d++;
	}
	return d;
}

/* Fit the optional columns into width w; flags_w is the longest flag text;
 * pid_w 0 leaves out the PID and PROCESS columns. */
static struct cols layout_state(int w, int pid_w, int tid_w, int state_w, int flags_w,
				int samples_w, unsigned window_s)
{
	struct cols c = {.pid_w = pid_w, .tid_w = tid_w, .state_w = state_w};
	int budget, pref, x;

	if (pid_w) {
		c.proc_x = pid_w + GAP;
		c.tid_x = c.proc_x + PROC_W + 1;
	}
	c.name_x = c.tid_x + tid_w + GAP;
	c.state_x = c.name_x + NAME_W + 1;
	c.cpu_x = c.state_x + state_w + GAP;
	c.floor_x = c.cpu_x + CPU_W + GAP;
	x = c.floor_x + FLOOR_W + GAP;
	budget = w - x - flags_w;
	pref = window_s < SPARK_MIN ? SPARK_MIN : window_s > SPARK_MAX ? SPARK_MAX : (int)window_s;
	/* Priority: SAMPLES, then the sparkline, then HOTTEST. */
	if (budget >= samples_w + GAP) {
		c.samples_w = samples_w;
		budget -= samples_w + GAP;
	}
	if (budget >= SPARK_MIN + GAP + HOT_MIN + GAP) {
		c.spark_w =
		    pref < budget - GAP - HOT_MIN - GAP ? pref : budget - GAP - HOT_MIN - GAP;
		c.hot_w = budget - (c.spark_w + GAP) - GAP;
		if (c.hot_w > HOT_MAX)
			c.hot_w = HOT_MAX;
	} else if (budget >= SPARK_MIN + GAP) {
		c.spark_w = budget - GAP < pref ? budget - GAP : pref;
	}
	c.spark_x = x;
	x += c.spark_w ? c.spark_w + GAP : 0;
	c.samples_x = x;
	x += c.samples_w ? c.samples_w + GAP : 0;
	c.hot_x = x;
	x += c.hot_w ? c.hot_w + GAP : 0;
	c.flags_x = x;
	return c;
}

/* Columns left over once everything has its full width widen STATE, so a
 * wait channel such as "anon_pipe_read" is not cut on a wide screen. */
static struct cols layout(int w, int pid_w, int tid_w, int state_w, int flags_w, int samples_w,
			  unsigned window_s)
{
	struct cols c = layout_state(w, pid_w, tid_w, state_w, flags_w, samples_w, window_s);
	int spare = w - c.flags_x - flags_w;

	if (c.hot_w == HOT_MAX && spare > 0)
		c = layout_state(w, pid_w, tid_w,
				 state_w +
				     (spare < STATE_MAX - state_w ? spare : STATE_MAX - state_w),
				 flags_w, samples_w, window_s);
	return c;
}

/* Columns before the optional ones (TID .. floor) with STATE state_w wide. */
static int fixed_width(int pid_w, int tid_w, int state_w)
{
	return (pid_w ? pid_w + GAP + PROC_W + 1 : 0) + tid_w + GAP + NAME_W + 1 + state_w + GAP +
	       CPU_W + GAP + FLOOR_W + GAP;
}

static void draw_column_header(struct grid *g, int y, const struct cols *c,
			       enum view_threads_sort sort, unsigned window_s)
{
	uint16_t hdr = GRID_COLOR(GRID_C_HEADER), on = hdr | GRID_BOLD | GRID_UNDERLINE;
	char label[32];

	grid_fill(g, 0, y, g->w, L' ', hdr);
	if (c->pid_w) {
		grid_put(g, c->pid_w - 3, y, "PID", hdr, 3);
		grid_put(g, c->proc_x, y, "PROCESS", hdr, PROC_W);
	}
	grid_put(g, c->tid_x + c->tid_w - 3, y, "TID", sort == VIEW_THREADS_SORT_TID ? on : hdr, 3);
	grid_put(g, c->name_x, y, "NAME", sort == VIEW_THREADS_SORT_NAME ? on : hdr, NAME_W);
	grid_put(g, c->state_x, y, "STATE", hdr, c->state_w);
	grid_put(g, c->cpu_x, y, "CPU now", sort == VIEW_THREADS_SORT_CPU ? on : hdr, CPU_W);
	grid_put(g, c->floor_x, y, "floor", sort == VIEW_THREADS_SORT_FLOOR ? on : hdr, FLOOR_W);
	if (c->spark_w) {
		snprintf(label, sizeof(label), "last %us (CPU)", window_s);
		if ((int)strlen(label) > c->spark_w)
			snprintf(label, sizeof(label), "last %us", window_s);
		if ((int)strlen(label) > c->spark_w)
			snprintf(label, sizeof(label), "CPU");
		grid_put(g, c->spark_x, y, label, hdr, c->spark_w);
	}
	if (c->samples_w)
		grid_put(g, c->samples_x + c->samples_w - 7, y, "SAMPLES",
			 sort == VIEW_THREADS_SORT_SAMPLES ? on : hdr, 7);
	if (c->hot_w)
		grid_put(g, c->hot_x, y, "HOTTEST NOW", hdr, c->hot_w);
}

struct draw_ctx {
	const struct view_header *h;
	const struct metrics *m;
	const struct locks *locks;
	int lock_level; /* LOCK_TEXT_*: the longest lock text that fits */
	const struct cols *c;
	unsigned window_s;
	bool utf8;
};

static void draw_row(struct grid *g, int y, const struct draw_ctx *dc,
		     const struct view_threads_row *r, bool selected)
{
	const struct cols *c = dc->c;
	const struct metrics_thread *t = row_thread(dc->m, r);
	char buf[256], flags[256];
	uint16_t base = (t && !t->alive) || (!t && r->ti >= 0) ? GRID_DIM : 0, fattr;

	if (c->pid_w) {
		grid_printf(g, 0, y, base, c->pid_w, "%*d", c->pid_w, (int)(t ? t->pid : r->pid));
		text_fit(t ? t->pcomm : "[child]", PROC_W, buf, sizeof(buf));
		grid_put(g, c->proc_x, y, buf, base, PROC_W);
	}
	grid_printf(g, c->tid_x, y, base, c->tid_w, "%*d", c->tid_w, (int)r->id);
	if (r->ti < 0) {
		grid_put(g, c->name_x, y, "[child]", base, NAME_W);
		grid_put(g, c->state_x, y, "Z defunct", base, c->state_w);
	} else if (t) {
		text_fit(t->comm, NAME_W, buf, sizeof(buf));
		grid_put(g, c->name_x, y, buf, base, NAME_W);
		fmt_state(t, r, dc->locks, flags, sizeof(flags), c->state_w);
		text_fit(flags, c->state_w, buf, sizeof(buf));
		grid_put(g, c->state_x, y, buf,
			 base | (t->state == 'D' && t->alive ? GRID_BOLD : 0), c->state_w);
		if (t->alive)
			grid_printf(g, c->cpu_x, y, base, CPU_W, "%6.1f%%", t->cpu_pct);
		grid_printf(g, c->floor_x, y, base, FLOOR_W, "%4.0f%%", t->floor_pct);
		if (c->spark_w)
			draw_sparkline(g, c->spark_x, y, c->spark_w, &t->cpu, dc->m->last_t,
				       (double)dc->window_s, 100.0, dc->utf8);
		if (c->samples_w) {
			text_count(r->samples, buf, sizeof(buf));
			grid_printf(g, c->samples_x, y, base, c->samples_w, "%*s", c->samples_w,
				    buf);
		}
		if (c->hot_w) {
			text_fit(r->hottest, c->hot_w, buf, sizeof(buf));
			grid_put(g, c->hot_x, y, buf, base, c->hot_w);
		}
	}
	if (t || r->ti < 0) {
		char lock[160];
		lock_text(dc->m, dc->locks, r->id, dc->lock_level, dc->utf8, lock, sizeof(lock));
		fmt_flags(dc->h, t, dc->locks, lock, flags, sizeof(flags), &fattr);
		if (flags[0])
			grid_put(g, c->flags_x, y, flags, fattr, -1);
	}
	if (selected) {
		struct cell *cl;

		/* Reverse the whole row, keeping the cells' colours. */
		for (int x = 0; x < g->w; x++)
			if ((cl = grid_at(g, x, y)))
				cl->attr = (uint16_t)((cl->attr & ~GRID_DIM) | GRID_REVERSE);
	}
}

/* Keep the selection inside the table and on screen; follow st->follow
 * when it is still a row. */
static void clamp_selection(struct view_threads_state *st, int vis)
{
	int i, n = st->nrows;

	for (i = 0; st->follow && i < n; i++)
		if (st->rows[i].id == st->follow) {
			st->selected = i;
			break;
		}
	view_clamp_selection(&st->selected, &st->scroll, n, vis);
	st->follow = n ? st->rows[st->selected].id : 0;
	st->selected_tid = n && st->rows[st->selected].ti >= 0 ? st->rows[st->selected].id : 0;
}

static void draw_footer(struct grid *g, enum view_threads_sort sort)
{
	char buf[256];

	snprintf(buf, sizeof(buf),
		 " Enter: only this thread  Esc: all threads  s: sort (%s)  1 top  2 icicle  "
		 "3 threads  ? help  q quit",
		 view_threads_sort_name(sort));
	if (text_width(buf) > g->w)
		snprintf(buf, sizeof(buf),
			 " Enter: only this thread  Esc: all  s: sort (%s)  ? help  q quit",
			 view_threads_sort_name(sort));
	view_footer_render(g, buf);
}

void view_threads_state_free(struct view_threads_state *st)
{
	free(st->rows);
	st->rows = NULL;
	st->nrows = 0;
}

/* The alert or note line above the table: 1 when there is one. */
static int alert_rows(const struct view_threads_state *st)
{
	return st->locks && (st->locks->ncycles || st->locks->read_err) ? 1 : 0;
}

/* Table rows under the header of h (and the alert line) on a screen of
 * height rows. */
static int table_rows(const struct view_threads_state *st, const struct view_header *h, int rows)
{
	int vis = rows - 1 - (view_header_height(h) + alert_rows(st) + 1);

	return vis < 0 ? 0 : vis;
}

/* Wall mode: the wait kind the thread was seen in most (off CPU) and the
 * share of its runnable samples spent waiting for a CPU. */
static void row_waits(const struct window *w, struct view_threads_row *r)
{
	uint64_t c[SAMPLE_WAIT_COUNT], runnable;
	int k, best = 0;

	window_wait_counts(w, r->id, c);
	for (k = SAMPLE_WAIT_NONE + 1; k < SAMPLE_WAIT_COUNT; k++)
		if (k != SAMPLE_WAIT_CPU && c[k] && (!best || c[k] > c[best]))
			best = k;
	r->wait = (uint8_t)best;
	runnable = c[SAMPLE_WAIT_NONE] + c[SAMPLE_WAIT_CPU];
	r->cpuwait_pct =
	    runnable ? (uint8_t)((100 * c[SAMPLE_WAIT_CPU] + runnable / 2) / runnable) : 0;
}

int view_threads_update(struct view_threads_state *st, const struct view_header *h,
			const struct metrics *m, struct window *w, int cols, int rows)
{
	struct view_threads_row *kept;
	struct row *r = NULL;
	int n = 0, i, err;

	/* Too small: keep the last rows and selection, so Enter still means
	 * that thread. */
	if (cols < VIEW_MIN_W || rows < VIEW_MIN_H) {
		st->page = 0;
		return 0;
	}
	if ((err = collect_rows(m, w, st->pid, &r, &n)))
		return err;
	struct sort_key key = {st->sort, h && h->mode && !strcmp(h->mode, "wall")};
	qsort_r(r, (size_t)n, sizeof(*r), row_cmp, &key);
	kept = calloc((size_t)n + 1, sizeof(*kept));
	if (!kept) {
		free(r);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		kept[i] = (struct view_threads_row){
		    .id = r[i].id, .pid = r[i].pid, .ti = r[i].ti, .samples = r[i].samples};
	free(r);
	free(st->rows);
	st->rows = kept;
	st->nrows = n;
	st->multi = m && m->multi;
	st->window_s = m && m->cfg.window_s ? m->cfg.window_s : window_seconds(w);
	st->page = table_rows(st, h, rows);
	clamp_selection(st, st->page);
	/* Hottest functions and waits for the rows on screen only: each is a
	 * walk of the window's counts. */
	for (i = st->scroll; i < n && i < st->scroll + st->page; i++) {
		if (kept[i].ti < 0)
			continue;
		row_waits(w, &kept[i]);
		if ((err = find_hottest(w, kept[i].id, st->hide_kernel || (h && h->hide_kernel),
					st->full_names, kept[i].hottest, sizeof(kept[i].hottest))))
			return err;
	}
	return 0;
}

int view_threads_render(struct grid *g, const struct view_header *h, const struct metrics *m,
			const struct view_threads_state *st)
{
	struct draw_ctx dc = {.h = h, .m = m, .locks = st->locks, .utf8 = st->utf8};
	struct cols c;
	char buf[512];
	long max_id = 0, max_pid = 0;
	int n = st->nrows, y, vis, i, flags_w = 0, samples_w = SAMPLES_W, pid_w, tid_w, state_w;
	int selected = st->selected, scroll = st->scroll;
	uint16_t fattr;

	grid_clear(g);
	if (view_too_small(g))
		return 0;
	dc.window_s = st->window_s ? st->window_s : 60;
	y = h ? view_header_render(g, 0, h) : 0;
	vis = table_rows(st, h, g->h);
	view_clamp_selection(&selected, &scroll, n, vis);

	/* Widths from the rows on screen: TID digits, flags, sample counts. */
	for (i = scroll; i < n && i < scroll + vis; i++) {
		const struct view_threads_row *r = &st->rows[i];

		if (r->id > max_id)
			max_id = r->id;
		if (r->pid > max_pid)
			max_pid = r->pid;
		text_count(r->samples, buf, sizeof(buf));
		if ((int)strlen(buf) > samples_w)
			samples_w = (int)strlen(buf);
	}
	pid_w = digits(max_pid) > 5 ? digits(max_pid) : 5;
	pid_w = st->multi ? pid_w : 0;
	tid_w = digits(max_id) > 5 ? digits(max_id) : 5;
	/* The flags are never dropped: the longest lock text that fits, then a
	 * narrower STATE if even the short one does not. */
	for (dc.lock_level = 0; dc.lock_level < LOCK_TEXT_LEVELS; dc.lock_level++) {
		flags_w = 0;
		for (i = scroll; i < n && i < scroll + vis; i++) {
			const struct view_threads_row *r = &st->rows[i];
			const struct metrics_thread *t = row_thread(m, r);
			char lock[160];

			if (!t && r->ti >= 0)
				continue;
			lock_text(m, st->locks, r->id, dc.lock_level, st->utf8, lock, sizeof(lock));
			fmt_flags(h, t, st->locks, lock, buf, sizeof(buf), &fattr);
			if (text_width(buf) > flags_w)
				flags_w = text_width(buf);
		}
		if (fixed_width(pid_w, tid_w, STATE_W) + flags_w <= g->w)
			break;
	}
	if (dc.lock_level == LOCK_TEXT_LEVELS)
		dc.lock_level = LOCK_TEXT_SHORT;
	state_w = g->w - fixed_width(pid_w, tid_w, 0) - flags_w;
	state_w = state_w > STATE_W ? STATE_W : state_w < STATE_MIN ? STATE_MIN : state_w;
	c = layout(g->w, pid_w, tid_w, state_w, flags_w, samples_w, dc.window_s);
	dc.c = &c;
	if (alert_rows(st)) {
		view_threads_deadlock_text(m, st->locks, st->utf8, buf, sizeof(buf));
		if (buf[0]) {
			grid_put(g, 0, y++, buf, GRID_COLOR(GRID_C_RED) | GRID_BOLD, g->w);
		} else {
			locks_note(st->locks, buf, sizeof(buf));
			grid_put(g, 0, y++, buf, GRID_DIM, g->w);
		}
	}
	draw_column_header(g, y++, &c, st->sort, dc.window_s);
	if (n == 0)
		view_put_centered(g, y, "waiting for thread data\xe2\x80\xa6", GRID_DIM);
	for (i = 0; i < vis && scroll + i < n; i++)
		draw_row(g, y + i, &dc, &st->rows[scroll + i],
			 !(h && h->batch) && scroll + i == selected);
	if (!(h && h->batch)) /* text output has no keys */
		draw_footer(g, st->sort);
	return 0;
}

/* ---- keys ---- */

static struct view_action threads_move(void *ctx, int key)
{
	struct view_threads_state *st = ctx;

	view_move_selection(&st->selected, key, st->page > 1 ? st->page - 1 : 1);
	st->follow = 0;
	if (st->rows)
		clamp_selection(st, st->page);
	return keymap_used(true);
}

static struct view_action threads_sort(void *ctx, int key)
{
	struct view_threads_state *st = ctx;

	(void)key;
	st->sort = (enum view_threads_sort)((st->sort + 1) % VIEW_THREADS_SORT_COUNT);
	st->scroll = 0; /* the selection is followed; scrolling re-clamps to it */
	return keymap_used(true);
}

static struct view_action threads_narrow(void *ctx, int key)
{
	struct view_threads_state *st = ctx;

	(void)key;
	if (st->selected_tid <= 0)
		return keymap_used(false);
	return (struct view_action){.kind = VIEW_ACTION_NARROW, .tid = st->selected_tid};
}

static struct view_action threads_all(void *ctx, int key)
{
	(void)key;
	return view_all_threads(((struct view_threads_state *)ctx)->tid);
}

static struct view_action threads_owner(void *ctx, int key)
{
	struct view_threads_state *st = ctx;
	const struct locks_wait *w = locks_find(st->locks, st->selected_tid);

	(void)key;
	if (!w || !w->owner)
		return keymap_used(false);
	st->follow = w->owner;
	if (st->rows)
		clamp_selection(st, st->page);
	return keymap_used(true);
}

static const struct keymap_entry threads_keys[] = {
    {{'s'}, 0, threads_sort, NULL, "cycle the sort column", 0},
    {{KEYS_ENTER}, 0, threads_narrow, NULL, "one thread only; all", 0},
    {{KEYS_ESC}, 0, threads_all, NULL, NULL, 0},
    {{'o'}, 0, threads_owner, NULL, "select its lock's holder", 0},
    KEYMAP_MOVE_ENTRY(threads_move),
};

const struct keymap view_threads_keymap = {"Threads view", threads_keys,
					   sizeof(threads_keys) / sizeof(threads_keys[0]), true};

struct view_action view_threads_key(struct view_threads_state *st, int key)
{
	return keymap_act(&view_threads_keymap, st, key);
}

void view_threads_label(const void *ctx, int tid, char *buf, size_t size)
{
	const struct metrics *m = ctx;
	const struct metrics_thread *t = NULL;
	char name[64];

	buf[0] = '\0';
	for (int i = 0; m && i < m->nthreads && !t; i++)
		if (m->threads[i].tid == tid)
			t = &m->threads[i];
	if (!t)
		return;
	text_sanitize(t->comm, name, sizeof(name));
	if (m->multi)
		snprintf(buf, size, "%d:%d %s", (int)t->pid, tid, name);
	else
		snprintf(buf, size, "tid %d %s", tid, name);
}
