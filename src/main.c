/*
 * main — wires the pipeline and owns the event loop; the only place that
 * prints to stderr or exits.
 *
 *   sampler (perf | wall | report) ─► ingest ─► frames ─► window
 *       ─► ui (views) ─► screen | stdout (-b)
 *
 * main picks the sampler once (sampler.h) and hands it ingest's sink; from
 * then on a sample goes sampler → ingest → frames → window without coming
 * back here. Around that: procs (the processes and their threads), metrics
 * (procfs once a second), health (is stacktop keeping up), ui (views, keys).
 *
 * One thread. poll() waits on a timerfd (the collect tick, every 50 ms or
 * the sampler's own period), a signalfd (SIGINT, SIGTERM, SIGHUP, SIGQUIT,
 * SIGWINCH, SIGCHLD, SIGPIPE) and, in the TUI, stdin. Each refresh (every
 * --delay, plus two early ones so the first screen fills) rescans threads,
 * notices exits, ages the window and draws.
 *
 * Exit paths: every return goes through app_fini, which stops the sampler
 * first (wall mode detaches every thread), then the launched command, then
 * restores the terminal. A crash: screen restores the terminal, the kernel
 * detaches every tracee, and a launched command gets SIGTERM from its
 * PR_SET_PDEATHSIG.
 */
#include <errno.h>
#include <locale.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "stacktop/dump.h"
#include "stacktop/frames.h"
#include "stacktop/health.h"
#include "stacktop/ingest.h"
#include "stacktop/keys.h"
#include "stacktop/metrics.h"
#include "stacktop/opts.h"
#include "stacktop/perf.h"
#include "stacktop/procs.h"
#include "stacktop/record.h"
#include "stacktop/report.h"
#include "stacktop/sampler.h"
#include "stacktop/screen.h"
#include "stacktop/status.h"
#include "stacktop/sym.h"
#include "stacktop/text.h"
#include "stacktop/ui.h"
#include "stacktop/wall.h"
#include "stacktop/window.h"

#define TICK_NS (50 * 1000 * 1000ull)
#define SEC_NS 1000000000ull

enum exit_code { EXIT_OK = 0, EXIT_RUNTIME = 1, EXIT_USAGE = 2 };

struct app {
	struct opts o;
	bool tui, quit;
	struct procs procs;

	/* The pipeline, in the order a sample flows. */
	struct sampler *smp; /* perf (cpu mode), wall, or a saved profile */
	struct sampler_sink sink; /* into ingest */
	struct ingest *in;
	struct sym *sy;
	struct frames *fr;
	struct window *w;
	struct report *report; /* report FILE: the profile replayed */

	struct metrics metrics; /* of the first target process */
	bool metrics_ok;
	uint64_t next_metrics_ns;
	struct health health;
	uint64_t execs_seen; /* ingest's exec count when command lines were read */

	struct ui ui;
	struct ui_model model;
	long refreshes;
	uint64_t start_ns, next_refresh_ns;
	int early_refreshes;
	int sigfd, timerfd;
	int empty_reads; /* stdin readable but no key, in a row */
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * SEC_NS + (uint64_t)ts.tv_nsec;
}

static void say(const char *msg)
{
	fprintf(stderr, "stacktop: %s\n", msg);
}

/* ---- the header: counters from every stage ------------------------------ */

/* The clock of the data: now, or the end of a loaded profile. */
static uint64_t app_now(struct app *a)
{
	return a->report ? report_now_ns(a->report, a->w) : now_ns();
}

static void app_header(struct app *a, struct view_header *h, uint64_t now)
{
	static int pids[PROCS_MAX];
	struct status_in in = {
	    .procs = &a->procs,
	    .sampled_threads = sampler_nthreads(a->smp),
	    .ingest = ingest_get_stats(a->in),
	    .mode = a->o.wall ? "wall" : "cpu",
	    .rate_hz = a->o.rate_hz,
	    .window_s = a->o.window_s,
	    .cpu_now = a->metrics_ok ? a->metrics.cpu_now : -1,
	    .window_samples = window_total(a->w),
	    .span_s = window_span_s(a->w, now),
	    .source = a->report ? a->o.report_file : NULL,
	    .source_samples = a->report ? report_samples(a->report) : 0,
	};
	sampler_stats(a->smp, &in.sampler);
	status_header(&in, pids, h);
	health_header(&a->health, h);
	ui_header(&a->ui, &a->model, h, now);
}

/* Draw (TUI) or print (batch) what the ui shows. */
static void app_draw(struct app *a)
{
	struct view_header h;
	app_header(a, &h, app_now(a));
	if (a->tui)
		ui_draw_screen(&a->ui, &a->model, &h);
	else
		ui_print(&a->ui, &a->model, &h, stdout);
}

/* ---- each refresh ---------------------------------------------------------- */

/* Rates and the warning over the interval since the last refresh. */
static void app_measure(struct app *a, uint64_t now)
{
	struct sampler_stats st;
	sampler_stats(a->smp, &st);
	struct health_input in = {
	    .samples = ingest_get_stats(a->in)->samples,
	    .lost = st.lost,
	    .expected_hz = a->metrics_ok ? a->o.rate_hz * a->metrics.cpu_now / 100.0 : 0,
	    .tracer = procs_tracer(&a->procs),
	    .kernel_denied = st.kernel_denied,
	    .first = a->refreshes == 0,
	};
	health_measure(&a->health, &in, now);
}

/* record: one line on stderr, rewritten in place, when it is a terminal. */
static void app_record_progress(struct app *a, uint64_t now, bool last)
{
	char line[256];
	struct sampler_stats st;
	if (!isatty(STDERR_FILENO))
		return;
	sampler_stats(a->smp, &st);
	record_progress_text(a->procs.p[0].pid, (now - a->start_ns) / 1e9,
			     ingest_get_stats(a->in)->samples, st.lost, line, sizeof(line));
	fprintf(stderr, "\rstacktop: %s%s", line, last ? "\n" : "  ");
	fflush(stderr);
}

/* Threads that appeared, processes that ended or exec'd. */
static void app_follow_targets(struct app *a)
{
	uint64_t execs = ingest_get_stats(a->in)->execs;
	procs_scan(&a->procs, a->smp);
	/* Samples still in the rings belong to the end: take them. */
	if (procs_check_exit(&a->procs))
		sampler_collect(a->smp, now_ns(), &a->sink);
	if (execs != a->execs_seen) {
		a->execs_seen = execs;
		procs_reread_cmdlines(&a->procs);
	}
}

static void app_refresh(struct app *a, bool scheduled)
{
	uint64_t now = now_ns();
	if (!a->procs.exited)
		app_follow_targets(a);
	if (!a->report) { /* a loaded profile does not age, and has nothing to measure */
		window_advance(a->w, now);
		app_measure(a, now);
	}
	if (a->o.cmd == OPTS_CMD_RECORD)
		app_record_progress(a, now, false);
	else if (!a->tui || !ui_paused(&a->ui) || !scheduled)
		app_draw(a);
}

/* ---- set-up -------------------------------------------------------------- */

/* The signalfd and the tick: at least as often as the sampler wants (the
 * wall sampler takes what is due at each tick), at most every 1 ms. */
static int app_setup_fds(struct app *a)
{
	int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGWINCH, SIGCHLD, SIGPIPE};
	uint64_t tick = TICK_NS, want = sampler_tick_ns(a->smp);
	sigset_t set;
	sigemptyset(&set);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaddset(&set, sigs[i]);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0 ||
	    (a->sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK)) < 0 ||
	    (a->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK)) < 0)
		return -errno;
	if (want && want < tick)
		tick = want;
	if (tick < 1000000)
		tick = 1000000;
	struct itimerspec its = {{0, (long)tick}, {0, (long)tick}};
	return timerfd_settime(a->timerfd, 0, &its, NULL) < 0 ? -errno : 0;
}

/* The sampler's sentence for an error attaching to pid. */
static void app_explain(struct app *a, int err, pid_t pid)
{
	char msg[512];
	sampler_explain(a->smp, err, pid, msg, sizeof(msg));
	say(msg);
}

/* Launch the command: the sampler sets up before it execs. */
static int app_launch(struct app *a)
{
	char err[512];
	enum target_stdio io = a->o.batch ? TARGET_STDIO_STDERR : TARGET_STDIO_QUIET;
	int e = procs_spawn(&a->procs, a->o.command, io, err, sizeof(err));
	if (e) {
		say(err);
		return EXIT_RUNTIME;
	}
	if ((e = sampler_launch_prepare(a->smp, a->procs.child.pid))) {
		app_explain(a, e, a->procs.child.pid);
		procs_stop_child(&a->procs, 100);
		return EXIT_RUNTIME;
	}
	e = procs_go(&a->procs, a->o.command, err, sizeof(err));
	sampler_launch_done(a->smp);
	if (e)
		say(err);
	return e ? EXIT_RUNTIME : EXIT_OK;
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
	if (err)
		fprintf(stderr, "stacktop: cannot start the %s sampler: %s.\n",
			a->o.wall ? "wall-clock" : "perf", strerror(-err));
	return err ? EXIT_RUNTIME : EXIT_OK;
}

/* The stages after the sampler: symbols, frames, the window (record keeps
 * everything: a day of 10 s buckets), ingest. */
static int app_init_stages(struct app *a)
{
	bool record = a->o.cmd == OPTS_CMD_RECORD;
	int err;
	if ((err = sym_new(&a->sy)) || (err = frames_new(a->sy, &a->fr)) ||
	    (err = window_new(record ? 86400 : a->o.window_s, record ? 10 * SEC_NS : SEC_NS, a->fr,
			      &a->w)) ||
	    (err = ingest_new(a->fr, a->w, &a->in))) {
		fprintf(stderr, "stacktop: out of memory at start-up (%s).\n", strerror(-err));
		return EXIT_RUNTIME;
	}
	ingest_sink(a->in, &a->sink);
	return EXIT_OK;
}

/* report FILE: the saved profile is the sampler; it delivers everything at
 * the first collect, and time stands still at the file's end. */
static int app_init_report(struct app *a)
{
	char err[512], n[32];
	int e;
	if ((e = app_init_stages(a)))
		return e;
	if (report_load(a->o.report_file, a->fr, &a->report, err, sizeof(err)) < 0) {
		say(err);
		return EXIT_RUNTIME;
	}
	if ((e = report_sampler_new(a->report, &a->smp))) {
		fprintf(stderr, "stacktop: out of memory at start-up (%s).\n", strerror(-e));
		return EXIT_RUNTIME;
	}
	sampler_collect(a->smp, REPORT_TIME_NS, &a->sink);
	const char *mode = report_mode(a->report);
	double period = report_period_s(a->report);
	a->o.wall = mode && !strcmp(mode, "wall");
	a->o.rate_hz = period > 0 ? (unsigned)(1.0 / period + 0.5) : 0;
	a->procs.n = 1;
	snprintf(a->procs.p[0].cmdline, sizeof(a->procs.p[0].cmdline), "%s", a->o.report_file);
	a->procs.nthreads = (int)report_nthreads(a->report);
	a->procs.exited = true; /* nothing to sample: the data is all there is */
	text_count(report_samples(a->report), n, sizeof(n));
	snprintf(a->procs.exit_text, sizeof(a->procs.exit_text), "saved %s profile, %s samples",
		 mode ? mode : "cpu", n);
	if (a->o.batch && !a->o.iterations)
		a->o.iterations = 1;
	return EXIT_OK;
}

/* A live target: sampler, stages, processes, their threads. */
static int app_init_live(struct app *a)
{
	char err[512];
	int e, rc;
	if (a->o.cmd == OPTS_CMD_RECORD &&
	    (e = record_check(a->o.output, a->o.format, a->o.force, err, sizeof(err)))) {
		say(err);
		return e == -EINVAL ? EXIT_USAGE : EXIT_RUNTIME;
	}
	if ((rc = app_init_sampler(a)) || (rc = app_init_stages(a)))
		return rc;
	if (a->o.command)
		rc = app_launch(a);
	else if (procs_attach(&a->procs, a->o.pids, a->o.npids, err, sizeof(err)) < 0)
		say(err), rc = EXIT_RUNTIME;
	if (rc)
		return rc;
	e = procs_scan(&a->procs, a->smp);
	if (sampler_nthreads(a->smp) == 0) {
		app_explain(a, e ? e : -ESRCH, a->procs.p[0].pid);
		return EXIT_RUNTIME;
	}
	for (int i = 0; i < a->procs.n; i++)
		ingest_add_process(a->in, a->procs.p[i].pid);
	struct metrics_config mc;
	metrics_config_default(&mc);
	mc.window_s = a->o.window_s;
	mc.spike_for_s = a->o.spike_for_s;
	a->metrics_ok = metrics_init(&a->metrics, a->procs.p[0].pid, &mc) == 0;
	if (a->metrics_ok)
		metrics_tick(&a->metrics, now_ns() / 1e9);
	a->next_metrics_ns = now_ns() + SEC_NS;
	return EXIT_OK;
}

static int app_init(struct app *a)
{
	int rc = a->o.cmd == OPTS_CMD_REPORT ? app_init_report(a) : app_init_live(a);
	if (rc)
		return rc;
	if ((rc = app_setup_fds(a))) {
		fprintf(stderr, "stacktop: cannot set up the event loop: %s.\n", strerror(-rc));
		return EXIT_RUNTIME;
	}
	a->model = (struct ui_model){.w = a->w,
				     .metrics = a->metrics_ok ? &a->metrics : NULL,
				     .pid = a->procs.p[0].pid,
				     .cmdline = a->procs.p[0].cmdline};
	ui_init(&a->ui, &a->o, a->report ? report_period_s(a->report) : 1.0 / a->o.rate_hz,
		&a->model);
	a->start_ns = now_ns();
	health_init(&a->health, a->start_ns);
	/* Two early refreshes in the TUI so the first screen fills quickly. */
	a->early_refreshes = a->tui && !a->report ? 2 : 0;
	a->next_refresh_ns = a->start_ns + (a->tui   ? 250000000ull
					    : a->report ? 1
							: (uint64_t)(a->o.delay_s * 1e9));
	return EXIT_OK;
}

/* record: write the file once sampling is over. */
static int app_record_write(struct app *a)
{
	const char *zoom[1];
	struct export_opts eo;
	char err[512], n[32];
	app_record_progress(a, now_ns(), true);
	ui_export_opts(&a->ui, &a->model, &eo, zoom, 0);
	/* Everything since the start (the window's 10 s buckets are too coarse
	 * to measure it). */
	eo.duration_s = (now_ns() - a->start_ns) / 1e9;
	int e = record_write(a->w, &eo, a->o.output, a->o.format, err, sizeof(err));
	if (e) {
		say(err);
		return e == -EINVAL ? EXIT_USAGE : EXIT_RUNTIME;
	}
	text_count(window_total(a->w), n, sizeof(n));
	fprintf(stderr, "stacktop: wrote %s samples to %s\n", n, a->o.output);
	return EXIT_OK;
}

static void app_fini(struct app *a)
{
	screen_fini();
	/* First: detach every thread, so none is left stopped or traced, and
	 * a launched command can take its SIGTERM. */
	if (a->smp)
		sampler_stop(a->smp);
	procs_stop_child(&a->procs, 500);
	sampler_free(a->smp);
	ingest_free(a->in);
	ui_free(&a->ui);
	if (a->metrics_ok)
		metrics_free(&a->metrics);
	window_free(a->w);
	report_free(a->report);
	frames_free(a->fr); /* after the window: it holds references */
	sym_free(a->sy);
}

/* ---- the loop -------------------------------------------------------------- */

static void app_on_signal(struct app *a)
{
	struct signalfd_siginfo si;
	while (read(a->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGWINCH && a->tui) {
			screen_resize();
			app_draw(a);
		} else if (si.ssi_signo == SIGCHLD) {
			/* A tracee stopped for a signal: hand it over at once; an
			 * exit is noticed at the next refresh. */
			sampler_on_child(a->smp);
		} else if (si.ssi_signo != SIGWINCH) {
			a->quit = true;
		}
	}
}

/* Once a second: one point of every series (CPU, memory, threads). */
static void app_metrics_tick(struct app *a, uint64_t now)
{
	if (!a->metrics_ok || now < a->next_metrics_ns)
		return;
	if (!a->procs.exited)
		metrics_tick(&a->metrics, now / 1e9);
	a->next_metrics_ns += SEC_NS;
	if (a->next_metrics_ns < now)
		a->next_metrics_ns = now + SEC_NS;
}

/* After a refresh: when the next one is due, and whether we are done. */
static void app_schedule(struct app *a, uint64_t t)
{
	uint64_t delay = (uint64_t)(a->o.delay_s * 1e9);
	if (a->early_refreshes > 0) {
		a->next_refresh_ns = --a->early_refreshes ? t + 250000000ull : a->start_ns + delay;
		return;
	}
	a->refreshes++;
	a->next_refresh_ns += delay;
	if (a->next_refresh_ns < t)
		a->next_refresh_ns = t + delay;
	if (a->o.iterations && a->refreshes >= a->o.iterations)
		a->quit = true;
	if (a->o.cmd == OPTS_CMD_RECORD && a->o.duration_s > 0 &&
	    t - a->start_ns >= (uint64_t)(a->o.duration_s * 1e9))
		a->quit = true;
	if (!a->tui && a->procs.exited)
		a->quit = true; /* batch: the last block was printed */
}

static void app_on_tick(struct app *a)
{
	uint64_t expirations;
	if (read(a->timerfd, &expirations, sizeof(expirations)) < 0)
		return;
	uint64_t t0 = now_ns();
	if (!a->procs.exited)
		sampler_collect(a->smp, t0, &a->sink);
	uint64_t t1 = now_ns();
	health_busy(&a->health, t1 - t0);
	app_metrics_tick(a, t1);
	if (t1 < a->next_refresh_ns)
		return;
	app_refresh(a, true);
	app_schedule(a, t1);
}

static void app_on_keys(struct app *a, short revents)
{
	int key;
	bool any = false;
	while ((key = screen_getkey()) != KEYS_NONE) {
		if (ui_key(&a->ui, &a->model, key, now_ns()) == UI_REQUEST_QUIT)
			a->quit = true;
		any = true;
	}
	if (any && !a->quit)
		app_draw(a);
	/* The terminal went away (SSH dropped without SIGHUP): a readable
	 * stdin that yields no key is EOF or an error. */
	a->empty_reads = any ? 0 : a->empty_reads + 1;
	if ((revents & (POLLHUP | POLLERR | POLLNVAL)) || a->empty_reads > 20)
		a->quit = true;
}

static int app_loop(struct app *a)
{
	struct pollfd fds[3] = {
	    {.fd = a->timerfd, .events = POLLIN},
	    {.fd = a->sigfd, .events = POLLIN},
	    {.fd = a->tui ? screen_fd() : -1, .events = POLLIN},
	};
	while (!a->quit) {
		if (poll(fds, 3, 1000) < 0 && errno != EINTR)
			return EXIT_RUNTIME;
		if (fds[1].revents)
			app_on_signal(a);
		if (fds[0].revents)
			app_on_tick(a);
		if (a->tui && fds[2].revents)
			app_on_keys(a, fds[2].revents);
	}
	return EXIT_OK;
}

/* The commands that run once and print: --help, --version, dump. */
static int run_oneshot(struct app *a)
{
	char err[512];
	if (a->o.help) {
		fputs(opts_usage, stdout);
		return EXIT_OK;
	}
	if (a->o.version) {
		printf("stacktop %s\n", STACKTOP_VERSION);
		return EXIT_OK;
	}
	struct dump_opts d = {.pid = a->o.pids[0], .json = a->o.json, .stack_size = a->o.stack_size};
	if (dump_run(&d, stdout, err, sizeof(err)) < 0) {
		say(err);
		return EXIT_RUNTIME;
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
		say(err);
		return EXIT_USAGE;
	}
	if (a->o.help || a->o.version || a->o.cmd == OPTS_CMD_DUMP)
		return run_oneshot(a);
	a->tui = !a->o.batch && (a->o.cmd == OPTS_CMD_TOP || a->o.cmd == OPTS_CMD_REPORT);
	if (a->tui && (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))) {
		say("not a terminal: use -b for text output (e.g. stacktop -b -n 5 -p PID).");
		return EXIT_USAGE;
	}
	int rc = app_init(a);
	if (rc == EXIT_OK && a->tui && screen_init() < 0) {
		fprintf(stderr, "stacktop: cannot drive this terminal (TERM=%s): use -b for text output.\n",
			getenv("TERM") ? getenv("TERM") : "unset");
		rc = EXIT_RUNTIME;
	}
	if (rc == EXIT_OK) {
		if (a->tui)
			app_draw(a);
		rc = app_loop(a);
		if (rc == EXIT_OK && a->o.cmd == OPTS_CMD_RECORD)
			rc = app_record_write(a);
	}
	app_fini(a);
	return rc;
}
