/*
 * main — wires the pipeline together and owns the event loop; the only
 * place that prints or exits.
 *
 *   target ─► perf sampler ─► unwind ─► sym ─► window ─► view_top ─► screen
 *                                                                 └► stdout (-b)
 *
 * One thread. poll() waits on a timerfd (the drain tick, every 50 ms), a
 * signalfd (SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGWINCH, SIGCHLD) and, in the
 * TUI, stdin. Each tick drains the perf rings; each refresh (every --delay,
 * plus two early ones so the first screen is not empty) rescans threads,
 * notices a target that exited, ages the window and draws.
 *
 * Exit paths: every return from main goes through app_fini, which restores
 * the terminal and stops a launched command; fatal signals restore the
 * terminal before dying. The perf sampler never stops the target, so no
 * exit path can leave it stopped.
 */
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "stacktop/dump.h"
#include "stacktop/export.h"
#include "stacktop/frames.h"
#include "stacktop/grid.h"
#include "stacktop/ingest.h"
#include "stacktop/metrics.h"
#include "stacktop/opts.h"
#include "stacktop/perf.h"
#include "stacktop/sampler.h"
#include "stacktop/screen.h"
#include "stacktop/sym.h"
#include "stacktop/target.h"
#include "stacktop/text.h"
#include "stacktop/view.h"
#include "stacktop/view_icicle.h"
#include "stacktop/view_threads.h"
#include "stacktop/view_top.h"
#include "stacktop/wall.h"
#include "stacktop/window.h"
#include "stacktop/report.h"

#define TICK_NS (50 * 1000 * 1000ull)
#define MAX_THREADS 8192

enum exit_code {
	EXIT_OK = 0,
	EXIT_RUNTIME = 1,
	EXIT_USAGE = 2,
};

enum app_view {
	APP_VIEW_TOP = 0,
	APP_VIEW_ICICLE,
	APP_VIEW_THREADS,
	APP_VIEW_COUNT
};

struct proc {
	pid_t pid;
	bool gone;
	char cmdline[1024];
};

struct app {
	struct opts o;
	struct proc procs[OPTS_MAX_PIDS];
	int nprocs;
	struct target_child child;
	bool launched;
	int child_status;

	struct sampler *smp; /* perf (cpu mode), wall, or a saved profile */
	struct sampler_sink sink; /* into ingest */
	struct ingest *in;
	struct report *report; /* report FILE: the profile replayed */
	struct sym *sy;
	struct frames *fr;
	struct window *w;
	uint64_t execs_seen; /* ingest's exec count when command lines were read */
	struct metrics metrics; /* of the first target process */
	bool metrics_ok;
	uint64_t next_metrics_ns;

	int nthreads;

	/* Counters for the header. */
	uint64_t samples_at_refresh, lost_at_refresh, last_refresh_ns;
	double achieved_hz;
	uint64_t lost_recent;
	uint64_t busy_ns; /* time spent processing since the last refresh */
	bool behind;
	int short_count; /* refreshes in a row with far fewer samples than expected */

	/* UI state. */
	enum app_view view;
	bool tui;
	bool paused;
	bool help;
	bool quit;
	bool exited;
	char exit_text[160];
	char status[1200];
	uint64_t status_until_ns;
	enum view_warning warning; /* what app_measure found; the view words it */
	double warn_expected_hz, warn_span_s;
	pid_t warn_tracer;
	struct view_top_state top;
	struct view_threads_state threads;
	struct view_icicle_state icicle;
	struct grid grid;
	long refreshes;
	uint64_t start_ns, next_refresh_ns;
	int early_refreshes;

	int sigfd, timerfd;
	int empty_reads; /* stdin readable but no key, in a row */
};

static struct app *the_app; /* for the fatal-signal handler only */

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void app_set_status(struct app *a, const char *msg)
{
	size_t n = strlen(msg);
	if (n >= sizeof(a->status))
		n = sizeof(a->status) - 1;
	memcpy(a->status, msg, n);
	a->status[n] = '\0';
	a->status_until_ns = now_ns() + 3000000000ull;
}

/* ---- threads ------------------------------------------------------------ */

/* Samples delivered so far (all sources). */
static uint64_t app_samples(const struct app *a)
{
	return ingest_get_stats(a->in)->samples;
}

/* Start sampling every thread of every live process that is not sampled
 * yet. Returns the first hard error (permission) for start-up reporting. */
static int app_scan_threads(struct app *a)
{
	static pid_t tids[MAX_THREADS];
	int first_err = 0, total = 0;
	for (int i = 0; i < a->nprocs; i++) {
		struct proc *p = &a->procs[i];
		int n = 0;
		if (p->gone || target_threads(p->pid, tids, MAX_THREADS, &n) < 0)
			continue;
		total += n;
		for (int k = 0; k < n; k++) {
			if (sampler_has_thread(a->smp, tids[k]))
				continue;
			int err = sampler_add_thread(a->smp, p->pid, tids[k]);
			if (err && err != -ESRCH && err != -EEXIST && !first_err)
				first_err = err;
		}
	}
	a->nthreads = total;
	return first_err;
}

static void describe_status(int status, char *buf, size_t size)
{
	if (WIFEXITED(status))
		snprintf(buf, size, "target exited with status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, size, "target killed by SIG%s",
			 sigabbrev_np(WTERMSIG(status)) ?: "(unknown)");
	else
		snprintf(buf, size, "target exited");
}

/* Notice processes that ended. */
static void app_check_exit(struct app *a)
{
	if (a->exited)
		return;
	int alive = 0;
	for (int i = 0; i < a->nprocs; i++) {
		struct proc *p = &a->procs[i];
		if (p->gone)
			continue;
		if (a->launched && p->pid == a->child.pid) {
			int st;
			if (target_child_reap(&a->child, &st) == 1) {
				p->gone = true;
				a->child_status = st;
				describe_status(st, a->exit_text, sizeof(a->exit_text));
			}
		} else if (target_exists(p->pid) != 0) {
			p->gone = true;
			snprintf(a->exit_text, sizeof(a->exit_text), "target %d exited", p->pid);
		}
		alive += !p->gone;
	}
	if (!alive) {
		a->exited = true;
		/* Samples still in the rings belong to the end: take them. */
		sampler_collect(a->smp, now_ns(), &a->sink);
	}
}

/* ---- rendering ------------------------------------------------------------ */

/* The clock of the data: now, or the end of a loaded profile. */
static uint64_t app_now(struct app *a)
{
	return a->report ? report_now_ns(a->report, a->w) : now_ns();
}

static void app_header(struct app *a, struct view_header *h, uint64_t now)
{
	memset(h, 0, sizeof(*h));
	static int pids[OPTS_MAX_PIDS];
	for (int i = 0; i < a->nprocs; i++)
		pids[i] = a->procs[i].pid;
	h->pid = a->procs[0].pid;
	h->npids = a->nprocs;
	h->pids = pids;
	h->cmdline = a->procs[0].cmdline;
	struct sampler_stats st;
	sampler_stats(a->smp, &st);
	h->mode = a->o.wall ? "wall" : "cpu";
	h->nthreads = a->nthreads;
	h->rate_hz = a->o.rate_hz;
	h->achieved_hz = a->achieved_hz;
	/* cpu-clock fires per CPU-second of each thread: rate x cores busy;
	 * the wall sampler takes every thread at the rate. */
	if (st.per_thread_rate && !a->exited)
		h->expected_hz = st.rate_hz * sampler_nthreads(a->smp);
	else if (a->metrics_ok && !a->exited && st.rate_hz > 0)
		h->expected_hz = st.rate_hz * a->metrics.cpu_now / 100.0;
	h->pause_us = st.pause_us;
	h->samples_window = window_total(a->w);
	h->samples_total = a->report ? report_samples(a->report) : app_samples(a);
	if (a->report)
		h->source = a->o.report_file;
	h->lost = st.lost;
	h->unwind_truncated = ingest_get_stats(a->in)->truncated;
	h->unwind_failed = ingest_get_stats(a->in)->failed;
	h->window_s = a->o.window_s;
	h->span_s = window_span_s(a->w, now);
	h->paused = a->paused;
	h->batch = !a->tui;
	h->exited = a->exited;
	h->exit_text = a->exited ? a->exit_text : NULL;
	h->filter_tid = a->top.tid;
	if (a->top.tid && a->metrics_ok) {
		struct metrics_thread *t = metrics_thread(&a->metrics, a->top.tid, false);
		h->filter_name = t ? t->comm : NULL;
	}
	h->status = now < a->status_until_ns ? a->status : NULL;
	h->warning = a->warning;
	h->warn_hz = a->achieved_hz;
	h->warn_expected_hz = a->warn_expected_hz;
	h->warn_lost = a->lost_recent;
	h->warn_span_s = a->warn_span_s;
	h->warn_tracer = a->warn_tracer;
	h->hide_kernel = a->top.hide_kernel;
	h->lines = a->top.lines;
}

static void app_render_tui(struct app *a)
{
	int w, h;
	struct view_header hdr;
	uint64_t now = app_now(a);
	screen_size(&w, &h);
	if (a->grid.w != w || a->grid.h != h)
		grid_resize(&a->grid, w, h);
	else
		grid_clear(&a->grid);
	if (a->help) {
		view_help_render(&a->grid);
		screen_draw(&a->grid);
		return;
	}
	app_header(a, &hdr, now);
	switch (a->view) {
	case APP_VIEW_ICICLE:
		/* The icicle follows the narrowing and kernel toggle of the top view. */
		a->icicle.tid = a->top.tid;
		a->icicle.hide_kernel = a->top.hide_kernel;
		a->icicle.utf8 = a->top.utf8;
		view_icicle_update(&a->icicle, &hdr, a->w, w, h);
		view_icicle_render(&a->grid, &hdr, &a->icicle);
		break;
	case APP_VIEW_THREADS:
		if (a->metrics_ok) {
			a->threads.utf8 = a->top.utf8;
			a->threads.tid = a->top.tid;
			a->threads.hide_kernel = a->top.hide_kernel;
			view_threads_update(&a->threads, &hdr, &a->metrics, a->w, w, h);
			view_threads_render(&a->grid, &hdr, &a->metrics, &a->threads);
			break;
		}
		/* No metrics, no threads view: show the top view. */
		__attribute__((fallthrough));
	default:
		view_top_update(&a->top, a->w, &hdr, w, h);
		view_top_render(&a->grid, &hdr, &a->top);
		break;
	}
	screen_draw(&a->grid);
}

static void app_print_batch(struct app *a)
{
	struct view_header hdr;
	char line[4096];
	/* The top table: --limit rows; the icicle and the threads table: a
	 * 200 x 40 screen (the terminal's size is not known in batch). */
	int rows = a->o.view == OPTS_VIEW_TOP ? a->o.limit + 6 : 40;
	if (a->grid.w != 200 || a->grid.h != rows)
		grid_resize(&a->grid, 200, rows);
	else
		grid_clear(&a->grid);
	app_header(a, &hdr, app_now(a));
	if (a->o.view == OPTS_VIEW_ICICLE) {
		view_icicle_update(&a->icicle, &hdr, a->w, a->grid.w, a->grid.h);
		view_icicle_render(&a->grid, &hdr, &a->icicle);
	} else if (a->o.view == OPTS_VIEW_THREADS && a->metrics_ok) {
		view_threads_update(&a->threads, &hdr, &a->metrics, a->w, a->grid.w, a->grid.h);
		view_threads_render(&a->grid, &hdr, &a->metrics, &a->threads);
	} else {
		view_top_update(&a->top, a->w, &hdr, a->grid.w, a->grid.h);
		view_top_render(&a->grid, &hdr, &a->top);
	}
	int last = a->grid.h - 1;
	while (last > 0 && grid_row_text(&a->grid, last, line, sizeof(line)) == 0)
		last--;
	for (int y = 0; y <= last; y++) {
		if (grid_row_text(&a->grid, y, line, sizeof(line)) < 0)
			line[0] = '\0';
		printf("%s\n", line);
	}
	printf("\n");
	fflush(stdout);
}

/* The tracer of the first target (gdb, strace), 0 when none. */
static pid_t app_traced_by(struct app *a)
{
	pid_t tracer = 0;
	if (a->exited || target_tracer(a->procs[0].pid, &tracer) < 0)
		return 0;
	return tracer == getpid() ? 0 : tracer; /* wall mode: that is us */
}

/* Rates and warnings measured over the interval since the last refresh. */
static void app_measure(struct app *a, uint64_t now)
{
	struct sampler_stats st;
	sampler_stats(a->smp, &st);
	double dt = (now - a->last_refresh_ns) / 1e9;
	if (dt > 0.05) {
		a->achieved_hz = (app_samples(a) - a->samples_at_refresh) / dt;
		a->lost_recent = st.lost - a->lost_at_refresh;
		a->behind = a->busy_ns > (uint64_t)((now - a->last_refresh_ns) / 2);
		a->samples_at_refresh = app_samples(a);
		a->lost_at_refresh = st.lost;
		a->last_refresh_ns = now;
		a->busy_ns = 0;
	}
	/* Fewer samples than the CPU the process burned: we are missing some. */
	double expected = a->metrics_ok ? a->o.rate_hz * a->metrics.cpu_now / 100.0 : 0;
	if (expected > 20 && a->achieved_hz < 0.6 * expected)
		a->short_count++;
	else
		a->short_count = 0;
	pid_t tracer;
	a->warning = VIEW_WARNING_NONE;
	a->warn_expected_hz = expected;
	a->warn_span_s = dt;
	if (a->short_count >= 3)
		a->warning = VIEW_WARNING_SAMPLING_BEHIND;
	else if (a->lost_recent)
		a->warning = VIEW_WARNING_LOST;
	else if (a->behind)
		a->warning = VIEW_WARNING_BUSY;
	else if ((tracer = app_traced_by(a)) > 0)
		a->warning = VIEW_WARNING_TRACED, a->warn_tracer = tracer;
	else if (st.kernel_denied && a->refreshes == 0)
		a->warning = VIEW_WARNING_KERNEL_HIDDEN;
}

/* record: one line on stderr, rewritten in place, when it is a terminal. */
static void app_record_progress(struct app *a, uint64_t now, bool last)
{
	if (!isatty(STDERR_FILENO))
		return;
	char n[32];
	struct sampler_stats st;
	sampler_stats(a->smp, &st);
	text_count(app_samples(a), n, sizeof(n));
	fprintf(stderr, "\rstacktop: recording pid %d: %.0fs, %s samples, lost %llu%s",
		a->procs[0].pid, (now - a->start_ns) / 1e9, n, (unsigned long long)st.lost,
		last ? "\n" : "  ");
	fflush(stderr);
}

static const char *app_thread_name(void *ctx, int tid)
{
	struct app *a = ctx;
	struct metrics_thread *t = a->metrics_ok ? metrics_thread(&a->metrics, tid, false) : NULL;
	return t ? t->comm : NULL;
}

/* Export options for what the user sees: the thread narrowing, the kernel
 * toggle and, from the icicle, its zoom path (names after the key's
 * module part). zoom must have room for the icicle's path. */
static void app_export_opts(struct app *a, struct export_opts *eo, const char **zoom, size_t nzoom)
{
	memset(eo, 0, sizeof(*eo));
	eo->tid = a->top.tid;
	eo->hide_kernel = a->top.hide_kernel;
	eo->per_thread = a->o.per_thread;
	eo->period_s = 1.0 / a->o.rate_hz;
	/* record keeps everything from the start: its span is the elapsed time
	 * (the window's buckets are 10 s wide there, too coarse to measure it). */
	eo->duration_s = a->o.cmd == OPTS_CMD_RECORD ? (now_ns() - a->start_ns) / 1e9
						     : window_span_s(a->w, now_ns());
	eo->mode = a->o.wall ? "wall" : "cpu";
	eo->force = a->o.force;
	eo->thread_name = app_thread_name;
	eo->ctx = a;
	eo->cmdline = a->procs[0].cmdline;
	if (a->view == APP_VIEW_ICICLE && a->icicle.zoom.n && a->icicle.zoom.n <= nzoom) {
		for (size_t i = 0; i < a->icicle.zoom.n; i++) {
			const char *sep = strchr(a->icicle.zoom.keys[i], '\x1f');
			zoom[i] = sep ? sep + 1 : a->icicle.zoom.keys[i];
		}
		eo->zoom = zoom;
		eo->nzoom = (int)a->icicle.zoom.n;
	}
}

/* The w key: the window as pprof, named with the pid and the time. */
static void app_write_profile(struct app *a)
{
	const char *zoom[64];
	struct export_opts eo;
	char path[1024], when[32], err[512], msg[1200];
	time_t t = time(NULL);
	struct tm tm;
	localtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y%m%d-%H%M%S", &tm);
	app_export_opts(a, &eo, zoom, sizeof(zoom) / sizeof(zoom[0]));
	eo.format = EXPORT_PPROF;
	snprintf(path, sizeof(path), "%s/stacktop-%d-%s%s", a->o.output_dir, a->procs[0].pid, when,
		 export_format_ext(eo.format));
	if (export_write(a->w, &eo, path, err, sizeof(err)) == 0)
		snprintf(msg, sizeof(msg), "wrote %s%s%s", path, eo.tid ? " (this thread only)" : "",
			 eo.nzoom ? " (the zoomed path only)" : "");
	else
		snprintf(msg, sizeof(msg), "! %s", err);
	app_set_status(a, msg);
}

/* record: write the file once sampling is over. */
static int app_record_write(struct app *a)
{
	const char *zoom[1];
	struct export_opts eo;
	char err[512];
	int rc;
	app_record_progress(a, now_ns(), true);
	app_export_opts(a, &eo, zoom, 0);
	if (a->o.format)
		rc = export_format_parse(a->o.format, &eo.format);
	else
		rc = export_format_from_path(a->o.output, &eo.format);
	if (rc < 0) {
		fprintf(stderr,
			"stacktop: cannot tell the format of '%s' from its name: use --format folded, "
			"pprof or speedscope.\n",
			a->o.output);
		return EXIT_USAGE;
	}
	if (export_write(a->w, &eo, a->o.output, err, sizeof(err)) < 0) {
		fprintf(stderr, "stacktop: %s\n", err);
		return EXIT_RUNTIME;
	}
	char n[32];
	text_count(window_total(a->w), n, sizeof(n));
	fprintf(stderr, "stacktop: wrote %s samples to %s\n", n, a->o.output);
	return EXIT_OK;
}

/* A process exec'd: what it runs now is another command line. */
static void app_reread_cmdlines(struct app *a)
{
	uint64_t execs = ingest_get_stats(a->in)->execs;
	if (execs == a->execs_seen)
		return;
	a->execs_seen = execs;
	for (int i = 0; i < a->nprocs; i++)
		if (!a->procs[i].gone)
			target_cmdline(a->procs[i].pid, a->procs[i].cmdline, sizeof(a->procs[i].cmdline));
}

static void app_refresh(struct app *a, bool scheduled)
{
	uint64_t now = now_ns();
	if (!a->exited) {
		app_scan_threads(a);
		app_check_exit(a);
		app_reread_cmdlines(a);
	}
	if (a->report) {
		/* A loaded profile does not age, and has nothing to measure. */
		if (a->tui)
			app_render_tui(a);
		else
			app_print_batch(a);
		return;
	}
	window_advance(a->w, now);
	app_measure(a, now);
	if (a->tui) {
		if (!a->paused || !scheduled)
			app_render_tui(a);
	} else if (a->o.cmd == OPTS_CMD_RECORD) {
		app_record_progress(a, now, false);
	} else {
		app_print_batch(a);
	}
}

/* ---- keys ------------------------------------------------------------------ */

/* Show only one thread (tid) in every view, or all (0). */
static void app_narrow(struct app *a, pid_t tid)
{
	char msg[96];
	a->top.tid = tid;
	a->top.selected = 0;
	view_top_state_free(&a->top);
	if (tid)
		snprintf(msg, sizeof(msg), "showing thread %d only; Esc shows all threads", tid);
	else
		snprintf(msg, sizeof(msg), "showing all threads");
	app_set_status(a, msg);
}

/* Carry out what a view's key asks for. Returns true if the key was used. */
static bool app_action(struct app *a, struct view_action act)
{
	switch (act.kind) {
	case VIEW_ACTION_NONE:
		return false;
	case VIEW_ACTION_NARROW:
		app_narrow(a, act.tid);
		a->view = APP_VIEW_TOP;
		return true;
	case VIEW_ACTION_NARROW_ALL:
		app_narrow(a, 0);
		return true;
	case VIEW_ACTION_OPEN_ICICLE:
		view_icicle_jump(&a->icicle, a->w, act.frame);
		a->view = APP_VIEW_ICICLE;
		return true;
	case VIEW_ACTION_USED:
	default:
		return true;
	}
}

/* Views that take text input (icicle search) see keys before the global
 * ones. Returns true if used. */
static bool app_key_view_first(struct app *a, int key)
{
	if (a->view == APP_VIEW_ICICLE && a->icicle.editing_search)
		return app_action(a, view_icicle_key(&a->icicle, key));
	return false;
}

/* The current view's own keys. Returns true if used. */
static bool app_key_view(struct app *a, int key)
{
	switch (a->view) {
	case APP_VIEW_ICICLE:
		return app_action(a, view_icicle_key(&a->icicle, key));
	case APP_VIEW_THREADS:
		a->threads.tid = a->top.tid;
		return app_action(a, view_threads_key(&a->threads, key));
	case APP_VIEW_TOP:
	default:
		return app_action(a, view_top_key(&a->top, key));
	}
}

/* Keys that mean the same in every view. Returns true if used. */
static bool app_key_global(struct app *a, int key)
{
	switch (key) {
	case 'q':
	case 'Q':
		a->quit = true;
		return true;
	case '1':
	case '2':
	case '3':
		a->view = (enum app_view)(key - '1');
		if (a->view == APP_VIEW_THREADS && !a->metrics_ok)
			app_set_status(a, "no threads view here: a saved profile has no thread data");
		return true;
	case SCREEN_KEY_TAB:
		a->view = (enum app_view)((a->view + 1) % APP_VIEW_COUNT);
		return true;
	case 'L':
	case 'l':
		a->top.lines = !a->top.lines;
		app_set_status(a, a->top.lines ? "aggregating by file:line" : "aggregating by function");
		return true;
	case 'K':
	case 'k':
		a->top.hide_kernel = !a->top.hide_kernel;
		app_set_status(a, a->top.hide_kernel ? "kernel frames hidden" : "kernel frames shown");
		return true;
	case 'g':
		a->top.charts = !a->top.charts;
		return true;
	case 'b':
		if (a->metrics_ok) {
			metrics_baseline_now(&a->metrics);
			app_set_status(a, "baseline = the last 10 s");
		}
		return true;
	case 'B':
		if (a->metrics_ok) {
			metrics_baseline_clear(&a->metrics);
			app_set_status(a, "baseline cleared");
		}
		return true;
	case ' ':
		a->paused = !a->paused;
		a->top.frozen = a->paused;
		return true;
	case 'R':
	case 'r':
		window_reset(a->w);
		view_top_state_free(&a->top);
		app_set_status(a, "window reset");
		return true;
	case '?':
	case 'h':
		a->help = true;
		return true;
	case 'w':
		app_write_profile(a);
		return true;
	case 'i':
		if (!a->o.wall)
			return false;
		a->top.hide_idle = !a->top.hide_idle;
		view_top_state_free(&a->top);
		app_set_status(a, a->top.hide_idle ? "idle threads hidden (only sleeping or polling)"
						   : "idle threads shown");
		return true;
	default:
		return false;
	}
}

static void app_key(struct app *a, int key)
{
	if (a->help) {
		a->help = false;
		if (key != 'q')
			return;
	}
	if (app_key_view_first(a, key))
		return;
	if (app_key_global(a, key))
		return;
	app_key_view(a, key);
}

/* ---- set-up and teardown ------------------------------------------------- */

static void fatal_signal(int sig)
{
	screen_fini();
	if (the_app && the_app->launched && the_app->child.pid > 0)
		kill(the_app->child.pid, SIGTERM);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void install_fatal_handlers(void)
{
	int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fatal_signal;
	sa.sa_flags = SA_RESETHAND;
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}

/* The sampler's sentence for an error attaching to pid, on stderr. */
static void app_explain(struct app *a, int err, pid_t pid)
{
	char msg[512];
	sampler_explain(a->smp, err, pid, msg, sizeof(msg));
	fprintf(stderr, "stacktop: %s\n", msg);
}

static int app_setup_fds(struct app *a)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGQUIT);
	sigaddset(&set, SIGWINCH);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGPIPE);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return -errno;
	a->sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (a->sigfd < 0)
		return -errno;
	a->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (a->timerfd < 0)
		return -errno;
	/* The wall sampler takes what is due at each tick: tick at least as
	 * often as its rate, or the rate could not be reached. */
	uint64_t tick = TICK_NS, want = sampler_tick_ns(a->smp);
	if (want && want < tick)
		tick = want;
	if (tick < 1000000)
		tick = 1000000;
	struct itimerspec its = {{0, (long)tick}, {0, (long)tick}};
	if (timerfd_settime(a->timerfd, 0, &its, NULL) < 0)
		return -errno;
	return 0;
}

/* Attach to -p PIDs: check they exist, read their command lines. */
static int app_attach(struct app *a)
{
	for (int i = 0; i < a->o.npids; i++) {
		pid_t pid = a->o.pids[i];
		if (target_exists(pid) != 0) {
			fprintf(stderr, "stacktop: no process with PID %d (is it still running?).\n", pid);
			return EXIT_RUNTIME;
		}
		struct proc *p = &a->procs[a->nprocs++];
		p->pid = pid;
		target_cmdline(pid, p->cmdline, sizeof(p->cmdline));
	}
	return EXIT_OK;
}

/* Launch the command, open its event before exec, then let it run. */
static int app_launch(struct app *a)
{
	enum target_stdio io = a->o.batch ? TARGET_STDIO_STDERR : TARGET_STDIO_QUIET;
	int err = target_spawn(a->o.command, io, &a->child);
	if (err) {
		fprintf(stderr, "stacktop: cannot start '%s': %s.\n", a->o.command[0], strerror(-err));
		return EXIT_RUNTIME;
	}
	a->launched = true;
	struct proc *p = &a->procs[a->nprocs++];
	p->pid = a->child.pid;
	err = sampler_launch_prepare(a->smp, p->pid);
	if (err) {
		app_explain(a, err, p->pid);
		target_child_stop(&a->child, 100);
		return EXIT_RUNTIME;
	}
	err = target_spawn_go(&a->child);
	sampler_launch_done(a->smp);
	if (err) {
		fprintf(stderr, "stacktop: cannot run '%s': %s.\n", a->o.command[0], strerror(-err));
		a->launched = false;
		return EXIT_RUNTIME;
	}
	target_cmdline(p->pid, p->cmdline, sizeof(p->cmdline));
	if (!p->cmdline[0] || p->cmdline[0] == '[') {
		/* Not exec'd yet: show what we ran. */
		size_t off = 0;
		for (char **arg = a->o.command; *arg && off < sizeof(p->cmdline) - 1; arg++)
			off += (size_t)snprintf(p->cmdline + off, sizeof(p->cmdline) - off, "%s%s",
						off ? " " : "", *arg);
	}
	return EXIT_OK;
}

/* record: refuse at once what would fail at the end (no waiting a whole
 * recording to learn that the file exists). */
static int app_record_check(struct app *a)
{
	struct stat st;
	enum export_format f;
	if (a->o.format ? export_format_parse(a->o.format, &f) : export_format_from_path(a->o.output, &f)) {
		fprintf(stderr,
			"stacktop: cannot tell the format of '%s' from its name: use --format folded, "
			"pprof or speedscope.\n",
			a->o.output);
		return EXIT_USAGE;
	}
	if (!a->o.force && lstat(a->o.output, &st) == 0) {
		fprintf(stderr, "stacktop: %s exists; use --force to overwrite it.\n", a->o.output);
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}

/* Set what every view reads from the options. */
static void app_init_views(struct app *a)
{
	grid_init(&a->grid, 80, 24);
	a->top.metrics = a->metrics_ok ? &a->metrics : NULL;
	a->top.charts = true;
	a->top.utf8 = !a->o.ascii && text_locale_utf8();
	a->top.sort = a->o.sort;
	a->top.lines = a->o.lines;
	a->top.hide_kernel = a->o.hide_kernel;
	a->top.period_s = 1.0 / a->o.rate_hz;
	a->top.limit = a->o.batch ? a->o.limit : 0;
	a->top.batch = a->o.batch;
	a->top.wall = a->o.wall;
	a->top.hide_idle = a->o.idle_hidden;
}

/* The pipeline's stages after the sampler: symbols, frames, the window
 * (record keeps everything: a day of 10 s buckets), ingest. */
static int app_init_stages(struct app *a)
{
	bool record = a->o.cmd == OPTS_CMD_RECORD;
	int err;
	if ((err = sym_new(&a->sy)) || (err = frames_new(a->sy, &a->fr)) ||
	    (err = window_new(record ? 86400 : a->o.window_s, record ? 10000000000ull : 1000000000ull,
			      a->fr, &a->w)) ||
	    (err = ingest_new(a->fr, a->w, &a->in))) {
		fprintf(stderr, "stacktop: out of memory at start-up (%s).\n", strerror(-err));
		return EXIT_RUNTIME;
	}
	ingest_sink(a->in, &a->sink);
	return EXIT_OK;
}

/* report FILE: the saved profile is the sampler; it delivers everything at
 * once, and time stands still at the file's end. */
static int app_init_report(struct app *a)
{
	char err[512];
	int e, rc = app_init_stages(a);
	if (rc)
		return rc;
	if (report_load(a->o.report_file, a->fr, &a->report, err, sizeof(err)) < 0) {
		fprintf(stderr, "stacktop: %s\n", err);
		return EXIT_RUNTIME;
	}
	if ((e = report_sampler_new(a->report, &a->smp))) {
		fprintf(stderr, "stacktop: out of memory at start-up (%s).\n", strerror(-e));
		return EXIT_RUNTIME;
	}
	sampler_collect(a->smp, REPORT_TIME_NS, &a->sink);
	const char *mode = report_mode(a->report);
	a->o.wall = mode && !strcmp(mode, "wall");
	double period = report_period_s(a->report);
	a->o.rate_hz = period > 0 ? (unsigned)(1.0 / period + 0.5) : 0;
	a->nprocs = 1;
	a->procs[0].pid = 0;
	snprintf(a->procs[0].cmdline, sizeof(a->procs[0].cmdline), "%s", a->o.report_file);
	a->nthreads = (int)report_nthreads(a->report);
	a->exited = true; /* nothing to sample: the data is all there is */
	char n[32];
	text_count(report_samples(a->report), n, sizeof(n));
	snprintf(a->exit_text, sizeof(a->exit_text), "saved %s profile, %s samples", mode ? mode : "cpu",
		 n);
	if ((e = app_setup_fds(a))) {
		fprintf(stderr, "stacktop: cannot set up the event loop: %s.\n", strerror(-e));
		return EXIT_RUNTIME;
	}
	app_init_views(a);
	a->top.period_s = period;
	if (a->o.batch && !a->o.iterations)
		a->o.iterations = 1;
	a->start_ns = a->last_refresh_ns = now_ns();
	a->early_refreshes = 0;
	a->next_refresh_ns = a->start_ns + (a->tui ? 250000000ull : 1);
	return EXIT_OK;
}

/* The live sampler of the mode: ptrace (wall clock) or perf (on-CPU). */
static int app_init_sampler(struct app *a)
{
	int err;
	if (a->o.wall) {
		struct wall_config wc = {
			.rate_hz = a->o.rate_given ? a->o.rate_hz : WALL_DEFAULT_RATE_HZ,
			.stack_size = a->o.stack_size,
		};
		a->o.rate_hz = wc.rate_hz;
		err = wall_sampler_new(&wc, &a->smp);
	} else {
		struct perf_config pc = {
			.rate_hz = a->o.rate_hz,
			.stack_size = a->o.stack_size,
			.drain_interval_s = TICK_NS / 1e9,
			.enable_on_exec = a->o.command != NULL,
		};
		err = perf_sampler_new(&pc, &a->smp);
	}
	if (err) {
		fprintf(stderr, "stacktop: cannot start the %s sampler: %s.\n",
			a->o.wall ? "wall-clock" : "perf", strerror(-err));
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}

static int app_init(struct app *a)
{
	if (a->o.cmd == OPTS_CMD_REPORT)
		return app_init_report(a);
	if (a->o.cmd == OPTS_CMD_RECORD) {
		int rc = app_record_check(a);
		if (rc)
			return rc;
	}
	int err, rc;
	if ((rc = app_init_sampler(a)) || (rc = app_init_stages(a)))
		return rc;
	if ((rc = a->o.command ? app_launch(a) : app_attach(a)))
		return rc;
	err = app_scan_threads(a);
	if (err && sampler_nthreads(a->smp) == 0) {
		app_explain(a, err, a->procs[0].pid);
		return EXIT_RUNTIME;
	}
	if (sampler_nthreads(a->smp) == 0) {
		fprintf(stderr, "stacktop: process %d exited before sampling could start.\n",
			a->procs[0].pid);
		return EXIT_RUNTIME;
	}
	for (int i = 0; i < a->nprocs; i++)
		ingest_add_process(a->in, a->procs[i].pid);
	if ((err = app_setup_fds(a))) {
		fprintf(stderr, "stacktop: cannot set up the event loop: %s.\n", strerror(-err));
		return EXIT_RUNTIME;
	}
	struct metrics_config mc;
	metrics_config_default(&mc);
	mc.window_s = a->o.window_s;
	mc.spike_for_s = a->o.spike_for_s;
	a->metrics_ok = metrics_init(&a->metrics, a->procs[0].pid, &mc) == 0;
	if (a->metrics_ok)
		metrics_tick(&a->metrics, now_ns() / 1e9);
	a->next_metrics_ns = now_ns() + 1000000000ull;
	app_init_views(a);
	a->start_ns = a->last_refresh_ns = now_ns();
	/* Two early refreshes in the TUI so the first screen fills quickly. */
	a->early_refreshes = a->tui ? 2 : 0;
	a->next_refresh_ns = a->start_ns + (a->tui ? 250000000ull : (uint64_t)(a->o.delay_s * 1e9));
	return EXIT_OK;
}

static void app_fini(struct app *a)
{
	screen_fini();
	/* First: detach every thread, so none is left stopped or traced, and
	 * a launched command can take its SIGTERM. */
	if (a->smp)
		sampler_stop(a->smp);
	if (a->launched)
		target_child_stop(&a->child, 500);
	sampler_free(a->smp);
	ingest_free(a->in);
	view_top_state_free(&a->top);
	view_threads_state_free(&a->threads);
	view_icicle_state_free(&a->icicle);
	if (a->metrics_ok)
		metrics_free(&a->metrics);
	window_free(a->w);
	report_free(a->report);
	frames_free(a->fr); /* after the window: it holds references */
	sym_free(a->sy);
	grid_free(&a->grid);
}

/* ---- the loop -------------------------------------------------------------- */

static void app_on_signal(struct app *a)
{
	struct signalfd_siginfo si;
	while (read(a->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		switch (si.ssi_signo) {
		case SIGWINCH:
			if (a->tui) {
				screen_resize();
				app_render_tui(a);
			}
			break;
		case SIGCHLD:
			/* A tracee stopped for a signal: hand it over at once. */
			sampler_on_child(a->smp);
			break; /* an exit is noticed at the next refresh */
		case SIGPIPE:
		default:
			a->quit = true;
		}
	}
}

/* Once a second: one point of every series (CPU, memory, threads). */
static void app_metrics_tick(struct app *a, uint64_t now)
{
	if (!a->metrics_ok || now < a->next_metrics_ns)
		return;
	if (!a->exited)
		metrics_tick(&a->metrics, now / 1e9);
	a->next_metrics_ns += 1000000000ull;
	if (a->next_metrics_ns < now)
		a->next_metrics_ns = now + 1000000000ull;
}

static void app_on_tick(struct app *a)
{
	uint64_t expirations;
	if (read(a->timerfd, &expirations, sizeof(expirations)) < 0)
		return;
	uint64_t t0 = now_ns();
	if (!a->exited)
		sampler_collect(a->smp, t0, &a->sink);
	uint64_t t1 = now_ns();
	a->busy_ns += t1 - t0;
	app_metrics_tick(a, t1);
	if (t1 < a->next_refresh_ns)
		return;
	bool early = a->early_refreshes > 0;
	app_refresh(a, true);
	if (early) {
		a->early_refreshes--;
		a->next_refresh_ns = t1 + 250000000ull;
		if (!a->early_refreshes)
			a->next_refresh_ns = a->start_ns + (uint64_t)(a->o.delay_s * 1e9);
		return;
	}
	a->refreshes++;
	a->next_refresh_ns += (uint64_t)(a->o.delay_s * 1e9);
	if (a->next_refresh_ns < t1)
		a->next_refresh_ns = t1 + (uint64_t)(a->o.delay_s * 1e9);
	if (a->o.iterations && a->refreshes >= a->o.iterations)
		a->quit = true;
	if (a->o.cmd == OPTS_CMD_RECORD && a->o.duration_s > 0 &&
	    t1 - a->start_ns >= (uint64_t)(a->o.duration_s * 1e9))
		a->quit = true;
	if (!a->tui && a->exited)
		a->quit = true; /* batch: the last block was printed */
}

static int app_loop(struct app *a)
{
	struct pollfd fds[3] = {
		{.fd = a->timerfd, .events = POLLIN},
		{.fd = a->sigfd, .events = POLLIN},
		{.fd = a->tui ? screen_fd() : -1, .events = POLLIN},
	};
	while (!a->quit) {
		int n = poll(fds, 3, 1000);
		if (n < 0 && errno != EINTR)
			return EXIT_RUNTIME;
		if (fds[1].revents)
			app_on_signal(a);
		if (fds[0].revents)
			app_on_tick(a);
		if (a->tui && fds[2].revents) {
			int key;
			bool any = false;
			while ((key = screen_getkey()) != SCREEN_KEY_NONE) {
				app_key(a, key);
				any = true;
			}
			if (any && !a->quit)
				app_render_tui(a);
			/* The terminal went away (SSH dropped without SIGHUP): a
			 * readable stdin that yields no key is EOF or an error. */
			a->empty_reads = any ? 0 : a->empty_reads + 1;
			if ((fds[2].revents & (POLLHUP | POLLERR | POLLNVAL)) || a->empty_reads > 20)
				a->quit = true;
		}
	}
	return EXIT_OK;
}

int main(int argc, char **argv)
{
	static struct app app;
	struct app *a = &app;
	char err[512];

	setlocale(LC_ALL, "");
	if (opts_parse(argc, argv, &a->o, err, sizeof(err)) < 0) {
		fprintf(stderr, "stacktop: %s\n", err);
		return EXIT_USAGE;
	}
	if (a->o.help) {
		fputs(opts_usage, stdout);
		return EXIT_OK;
	}
	if (a->o.version) {
		printf("stacktop %s\n", STACKTOP_VERSION);
		return EXIT_OK;
	}
	if (a->o.cmd == OPTS_CMD_DUMP) {
		struct dump_opts d = {.pid = a->o.pids[0], .json = a->o.json, .stack_size = a->o.stack_size};
		char err[512];
		if (dump_run(&d, stdout, err, sizeof(err)) < 0) {
			fprintf(stderr, "stacktop: %s\n", err);
			return EXIT_RUNTIME;
		}
		return EXIT_OK;
	}
	a->tui = !a->o.batch && (a->o.cmd == OPTS_CMD_TOP || a->o.cmd == OPTS_CMD_REPORT);
	if (a->tui && (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))) {
		fprintf(stderr, "stacktop: not a terminal: use -b for text output (e.g. stacktop -b -n 5 -p PID).\n");
		return EXIT_USAGE;
	}
	the_app = a;
	install_fatal_handlers();
	int rc = app_init(a);
	if (rc == EXIT_OK && a->tui && screen_init() < 0) {
		fprintf(stderr, "stacktop: cannot drive this terminal (TERM=%s): use -b for text output.\n",
			getenv("TERM") ? getenv("TERM") : "unset");
		rc = EXIT_RUNTIME;
	}
	if (rc == EXIT_OK) {
		if (a->tui)
			app_render_tui(a);
		rc = app_loop(a);
		if (rc == EXIT_OK && a->o.cmd == OPTS_CMD_RECORD)
			rc = app_record_write(a);
	}
	app_fini(a);
	return rc;
}
