/*
 * main — the program: options, the session and the front end set up, the
 * event loop, teardown; the only place that prints diagnostics or exits.
 *
 *   sampler (perf | wall | report) ─► ingest ─► frames ─► window   (session)
 *       ─► ui (views) ─► screen | stdout (-b)
 *
 * A sample goes sampler → ingest → frames → window without coming back
 * here; main only says when: collect on every tick, refresh (new threads,
 * exits, aging, measuring, drawing) every --delay.
 *
 * One thread. poll() waits on a timerfd (the collect tick, every 50 ms or
 * the sampler's own period), a signalfd (SIGINT, SIGTERM, SIGHUP, SIGQUIT,
 * SIGWINCH, SIGCHLD, SIGPIPE) and, in the TUI, stdin. Two early refreshes
 * in the TUI fill the first screen quickly.
 *
 * Exit paths: every return goes through app_fini, which stops the session
 * first (wall mode detaches every thread; a launched command gets SIGTERM),
 * then restores the terminal. A crash: screen restores the terminal, the
 * kernel detaches every tracee, and a launched command gets SIGTERM from its
 * PR_SET_PDEATHSIG.
 */
#include <errno.h>
#include <locale.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "stacktop/model/diff.h"
#include "stacktop/formats/diffload.h"
#include "stacktop/app/dump.h"
#include "stacktop/ui/grid.h"
#include "stacktop/ui/keys.h"
#include "stacktop/memory/memexport.h"
#include "stacktop/memory/memtrace.h"
#include "stacktop/lib/mono.h"
#include "stacktop/app/opts.h"
#include "stacktop/app/procs.h"
#include "stacktop/app/record.h"
#include "stacktop/ui/screen.h"
#include "stacktop/app/session.h"
#include "stacktop/lib/text.h"
#include "stacktop/ui/ui.h"
#include "stacktop/ui/view_diff.h"
#include "stacktop/model/window.h"

#define TICK_NS (50 * 1000 * 1000ull)
#define SEC_NS 1000000000ull
#define EARLY_NS 250000000ull

enum exit_code { EXIT_OK = 0, EXIT_RUNTIME = 1, EXIT_USAGE = 2, EXIT_REGRESSION = 3 };

struct app {
	struct opts o;
	bool tui, quit;
	struct session s;
	struct ui ui;
	struct ui_model model;
	long refreshes; /* scheduled ones, after the early ones */
	uint64_t start_ns, next_refresh_ns;
	int early_refreshes;
	int sigfd, timerfd;
	uint64_t tick_ns; /* the timerfd's period */
	int empty_reads;  /* stdin readable but no key, in a row */
};

/* Every diagnostic goes through here, sanitized: messages carry names a
 * target or a user chose (file paths given to report or diff, binaries,
 * thread names), and a control byte in one must not reach the terminal. */
static void say(const char *msg)
{
	char shown[1024];

	text_sanitize(msg, shown, sizeof(shown));
	fprintf(stderr, "stacktop: %s\n", shown);
}

/* ---- each refresh ---------------------------------------------------------- */

/* The tick: as often as the session wants (the wall sampler takes what
 * is due at each tick; the rings are drained at it), TICK_NS without a
 * preference, at most every 1 ms. Armed again when that changes. */
static int app_arm_tick(struct app *a)
{
	uint64_t tick = session_tick_ns(&a->s);
	if (!tick)
		tick = TICK_NS;
	if (tick < 1000000)
		tick = 1000000;
	if (tick == a->tick_ns)
		return 0;
	struct itimerspec its = {{(time_t)(tick / 1000000000), (long)(tick % 1000000000)},
				 {(time_t)(tick / 1000000000), (long)(tick % 1000000000)}};
	if (timerfd_settime(a->timerfd, 0, &its, NULL) < 0)
		return -errno;
	a->tick_ns = tick;
	return 0;
}

/* Draw (TUI) or print (batch) what the ui shows. */
static void app_draw(struct app *a)
{
	struct view_header h;
	struct session *s = &a->s;
	/* The whole machine: the process the ui narrowed to (Enter in the
	 * process table) is the one the metrics read from now on. */
	session_narrow(s, ui_pid(&a->ui));
	a->model.metrics = s->metrics_ok ? &s->metrics : NULL;
	a->model.locks = s->metrics_ok ? &s->locks : NULL;
	session_want_wchan(s, ui_wants_wchan(&a->ui));
	if (ui_wants_memory(&a->ui) && a->model.metrics)
		session_memory_start(s);
	/* the memory view's tracing, a CPython's samples: a shorter tick */
	app_arm_tick(a);
	a->model.memory = (struct view_memory_input){
	    .mm = s->memory_on ? &s->memmap : NULL,
	    .hold = s->memtrace ? memtrace_hold(s->memtrace) : NULL,
	    .fr = s->fr,
	    .trace_err = s->memtrace_err,
	    .window_s = a->o.window_s,
	    .now_ns = mono_ns(),
	    .since_ns = s->memory_since_ns,
	    .metrics = s->metrics_ok ? &s->metrics : NULL,
	};
	if (s->memtrace)
		memtrace_stats(s->memtrace, &a->model.memory.trace);
	session_header(&a->s, &h);
	ui_header(&a->ui, &a->model, &h, session_now(&a->s));
	if (a->tui)
		ui_draw_screen(&a->ui, &a->model, &h);
	else
		ui_print(&a->ui, &a->model, &h, stdout);
}

/* record: one line on stderr, rewritten in place, when it is a terminal. */
static void app_record_progress(struct app *a, uint64_t now, bool last)
{
	char line[256];
	uint64_t samples, lost;
	if (!isatty(STDERR_FILENO))
		return;
	session_counts(&a->s, &samples, &lost);
	record_progress_text(a->s.procs.p[0].pid, (now - a->start_ns) / 1e9, samples, lost, line,
			     sizeof(line));
	fprintf(stderr, "\rstacktop: %s%s", line, last ? "\n" : "  ");
	fflush(stderr);
}

static void app_refresh(struct app *a, bool scheduled)
{
	uint64_t now = mono_ns();
	session_refresh(&a->s, now, a->refreshes == 0);
	if (a->o.cmd == OPTS_CMD_RECORD)
		app_record_progress(a, now, false);
	else if (!a->tui || !ui_paused(&a->ui) || !scheduled)
		app_draw(a);
}

/* ---- set-up and teardown ----------------------------------------------------- */

/* The signalfd and the tick. */
static int app_setup_fds(struct app *a)
{
	int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGWINCH, SIGCHLD, SIGPIPE};
	sigset_t set;
	sigemptyset(&set);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaddset(&set, sigs[i]);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0 ||
	    (a->sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK)) < 0 ||
	    (a->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK)) < 0)
		return -errno;
	return app_arm_tick(a);
}

/* What the front end takes from the command line. */
_Static_assert((int)OPTS_VIEW_TOP == (int)UI_VIEW_TOP &&
		   (int)OPTS_VIEW_ICICLE == (int)UI_VIEW_ICICLE &&
		   (int)OPTS_VIEW_THREADS == (int)UI_VIEW_THREADS &&
		   (int)OPTS_VIEW_MEMORY == (int)UI_VIEW_MEMORY &&
		   (int)OPTS_VIEW_PROCESSES == (int)UI_VIEW_PROCS,
	       "--view's words are in the order of the views");
static struct ui_config ui_config_of(const struct opts *o)
{
	return (struct ui_config){
	    /* the whole machine starts on its process table */
	    .view = o->all && !o->view_given ? UI_VIEW_PROCS : (enum ui_view)o->view,
	    .machine = o->all,
	    .view_set = o->view_given,
	    .batch = o->batch,
	    .wall = o->wall,
	    .ascii = o->ascii,
	    .sort = o->sort,
	    .lines = o->lines,
	    .hide_kernel = o->hide_kernel,
	    .hide_idle = o->idle_hidden,
	    .full_names = o->full_names,
	    .limit = o->limit,
	    .annotate = o->annotate,
	    .output_dir = o->output_dir,
	    .per_thread = o->per_thread,
	    .force = o->force,
	    .rate_hz = o->rate_hz,
	    .output_mode = o->output_mode,
	};
}

static int app_init(struct app *a)
{
	char err[1024];
	int e;
	if (a->o.cmd == OPTS_CMD_RECORD &&
	    (e = record_check(a->o.output, a->o.format, a->o.force, err, sizeof(err)))) {
		say(err);
		return e == -EINVAL ? EXIT_USAGE : EXIT_RUNTIME;
	}
	e = a->o.cmd == OPTS_CMD_REPORT ? session_open_report(&a->s, &a->o, err, sizeof(err))
					: session_open_live(&a->s, &a->o, err, sizeof(err));
	if (e) {
		say(err);
		return EXIT_RUNTIME;
	}
	if ((e = app_setup_fds(a))) {
		fprintf(stderr, "stacktop: cannot set up the event loop: %s.\n", strerror(-e));
		return EXIT_RUNTIME;
	}
	a->model = (struct ui_model){.w = a->s.w,
				     .metrics = a->s.metrics_ok ? &a->s.metrics : NULL,
				     .locks = a->s.metrics_ok ? &a->s.locks : NULL,
				     .sy = a->s.sy,
				     .sy_rw = a->s.sy,
				     .source_path = a->o.source_path,
				     .pid = a->s.procs.p[0].pid,
				     .cmdline = a->s.procs.p[0].cmdline,
				     .machine = a->s.machine};
	struct ui_config uc = ui_config_of(&a->o);
	ui_init(&a->ui, &uc, a->s.period_s, &a->model);
	session_want_wchan(&a->s, ui_wants_wchan(&a->ui));
	/* The memory tracer starts with the run when the memory view is
	 * asked for (-b --view memory), not at its first frame: the first
	 * frame after -d 20 then says what 20 s mapped. */
	if (a->o.memory || (ui_wants_memory(&a->ui) && a->model.metrics)) {
		session_memory_start(&a->s);
		app_arm_tick(a);
	}
	if (a->s.report && a->o.batch && !a->o.iterations)
		a->o.iterations = 1;
	a->start_ns = mono_ns();
	a->early_refreshes = a->tui && !a->s.report ? 2 : 0;
	a->next_refresh_ns = a->start_ns + (a->tui	  ? EARLY_NS
					    : a->s.report ? 1
							  : (uint64_t)(a->o.delay_s * 1e9));
	return EXIT_OK;
}

/* record --memory: the code paths holding memory, as pprof. */
static int app_record_memory(struct app *a)
{
	char err[512];
	struct session *s = &a->s;
	if (!s->memtrace) {
		say(s->memtrace_err[0] ? s->memtrace_err : "memory attribution did not start.");
		return EXIT_RUNTIME;
	}
	struct memexport_opts mo = {
	    .cmdline = a->model.cmdline,
	    .duration_s = (mono_ns() - a->start_ns) / 1e9,
	    .force = a->o.force,
	    .file_mode = a->o.output_mode,
	};
	if (memexport_write(memtrace_hold(s->memtrace), s->fr, mono_ns(), &mo, a->o.output, err,
			    sizeof(err))) {
		say(err);
		return EXIT_RUNTIME;
	}
	fprintf(stderr, "stacktop: wrote the memory attribution to %s\n", a->o.output);
	return EXIT_OK;
}

/* record: write the file once sampling is over. */
static int app_record_write(struct app *a)
{
	const char *zoom[1];
	struct export_opts eo;
	char err[512], n[32];
	app_record_progress(a, mono_ns(), true);
	if (a->o.memory)
		return app_record_memory(a);
	ui_export_opts(&a->ui, &a->model, &eo, zoom, 0);
	/* Everything since the start (the window's 10 s buckets are too coarse
	 * to measure it). */
	eo.duration_s = (mono_ns() - a->start_ns) / 1e9;
	struct summary sum;
	session_summary(&a->s, eo.duration_s, &sum);
	eo.summary = &sum;
	static double cpu[SUMMARY_CPU_MAX]; /* report's rhythm, offline */
	eo.ncpu = session_cpu(&a->s, cpu, SUMMARY_CPU_MAX, &eo.cpu_t);
	eo.cpu = cpu;
	eo.per_second = true; /* diff's per-second test reads it back */
	int e = record_write(a->s.w, &eo, a->o.output, a->o.format, err, sizeof(err));
	if (e) {
		say(err);
		return e == -EINVAL ? EXIT_USAGE : EXIT_RUNTIME;
	}
	text_count(window_total(a->s.w), n, sizeof(n));
	fprintf(stderr, "stacktop: wrote %s samples to %s\n", n, a->o.output);
	return EXIT_OK;
}

/* A launched command that ended: its run in one line, as diff shows runs
 * ("51.1 s, 34.7 CPU-s, avg 68%, ..."); printed once the terminal is back. */
static void app_run_summary(struct app *a, char *out, size_t size)
{
	struct summary sum;
	char line[200];

	if (!a->o.command || !a->s.procs.exited)
		return;
	session_summary(&a->s, (mono_ns() - a->start_ns) / 1e9, &sum);
	view_diff_summary(&sum, line, sizeof(line));
	snprintf(out, size, "the command ran %s", line);
}

static void app_fini(struct app *a)
{
	session_stop(&a->s); /* first: no target left stopped, whatever follows */
	screen_fini();
	ui_free(&a->ui);
	session_close(&a->s);
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
			sampler_on_child(a->s.smp);
		} else if (si.ssi_signo != SIGWINCH) {
			a->quit = true;
		}
	}
}

/* After a refresh: when the next one is due, and whether we are done. */
static void app_schedule(struct app *a, uint64_t t)
{
	uint64_t delay = (uint64_t)(a->o.delay_s * 1e9);
	if (a->early_refreshes > 0) {
		a->next_refresh_ns = --a->early_refreshes ? t + EARLY_NS : a->start_ns + delay;
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
	if (!a->tui && a->s.procs.exited)
		a->quit = true; /* batch: the last block was printed */
}

static void app_on_tick(struct app *a)
{
	uint64_t expirations;
	if (read(a->timerfd, &expirations, sizeof(expirations)) < 0)
		return;
	session_collect(&a->s, mono_ns());
	uint64_t t = mono_ns();
	if (t < a->next_refresh_ns)
		return;
	app_refresh(a, true);
	app_schedule(a, t);
}

static void app_on_keys(struct app *a, short revents)
{
	int key;
	bool any = false;
	while ((key = screen_getkey()) != KEYS_NONE) {
		if (ui_key(&a->ui, &a->model, key, mono_ns()) == UI_REQUEST_QUIT)
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
static int run_oneshot(const struct opts *o)
{
	char err[512];
	if (o->help) {
		fputs(opts_usage, stdout);
		return EXIT_OK;
	}
	if (o->version) {
		printf("stacktop %s\n", STACKTOP_VERSION);
		return EXIT_OK;
	}
	struct dump_opts d = {
	    .pid = o->pids[0], .json = o->json, .native = o->native, .stack_size = o->stack_size};
	if (dump_run(&d, stdout, err, sizeof(err)) < 0) {
		say(err);
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}

/* diff without -b: the TUI on the (first) new profile, as `report` opens
 * it, with its top view in diff mode showing the files' diff (D: the plain
 * views; the icicle keeps the widths of the new profile and takes the
 * diff's colours). */
static int run_diff_tui(struct app *a, const struct diff *d, const char *new_file)
{
	char title[200], b[80], n[80];
	int rc;

	a->o.cmd = OPTS_CMD_REPORT;
	a->o.report_file = new_file;
	a->tui = true;
	if ((rc = app_init(a)) == EXIT_OK && screen_init() < 0) {
		fprintf(stderr,
			"stacktop: cannot drive this terminal (TERM=%s): use -b for text.\n",
			getenv("TERM") ? getenv("TERM") : "unset");
		rc = EXIT_RUNTIME;
	}
	if (rc == EXIT_OK) {
		text_sanitize(a->o.diff_base, b, sizeof(b));
		text_sanitize(a->o.diff_new, n, sizeof(n));
		snprintf(title, sizeof(title), "%s vs %s", b, n);
		a->ui.fixed = d;
		a->ui.fixed_title = title;
		a->ui.diff_mode = true;
		app_draw(a);
		rc = app_loop(a);
	}
	app_fini(a);
	return rc;
}

/* diff: compare the saved profiles, print the table; 3 when --fail-above
 * finds a significant increase over its threshold. */
static int run_diff(struct app *a)
{
	const struct opts *o = &a->o;
	char err[1024], *lists[2] = {strdup(o->diff_base), strdup(o->diff_new)}, *text = NULL;
	const char *paths[2][DIFF_MAX_FILES];
	size_t n[2] = {0, 0}, len = 0;
	bool tui = !o->batch && isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
	/* The TUI's icicle takes its paths' colours, either way up (f). */
	struct diff_opts dopt = {
	    .lines = o->lines, .hide_kernel = o->hide_kernel, .paths_down = tui, .paths_up = tui};
	struct view_diff_opts vo = {.base_label = o->diff_base,
				    .new_label = o->diff_new,
				    .limit = o->limit,
				    .lines = o->lines,
				    .fail_above = o->fail_above};
	struct diff *d = NULL;
	int rc = EXIT_RUNTIME;

	for (int s = 0; s < 2; s++)
		if (!lists[s] || diff_split_list(lists[s], paths[s], DIFF_MAX_FILES, &n[s])) {
			say(lists[s] ? "diff: a list of files has an empty name or more than 64 "
				       "files (give FILE,FILE,...)."
				     : "out of memory.");
			rc = lists[s] ? EXIT_USAGE : EXIT_RUNTIME;
			goto out;
		}
	if (diffload_build(paths[0], n[0], paths[1], n[1], &dopt, &d, err, sizeof(err))) {
		say(err);
		goto out;
	}
	if (view_diff_text(d, &vo, &text, &len)) {
		say("out of memory.");
		goto out;
	}
	if (!tui)
		fwrite(text, 1, len, stdout);
	else if ((rc = run_diff_tui(a, d, paths[1][0])) != EXIT_OK)
		goto out;
	rc =
	    o->fail_above >= 0 && view_diff_offenders(d, o->fail_above) ? EXIT_REGRESSION : EXIT_OK;
out:
	free(text);
	diff_free(d);
	free(lists[0]);
	free(lists[1]);
	return fflush(stdout) == 0 || rc != EXIT_OK ? rc : EXIT_RUNTIME;
}

int main(int argc, char **argv)
{
	static struct app app;
	struct app *a = &app;
	char err[512];

	setlocale(LC_ALL, "");
	/* A fixed threshold: every block of 128 KiB or more in a mapping of
	 * its own, given back when freed. glibc's default moves the threshold
	 * up to the largest block freed so far (up to 32 MiB), and after the
	 * first symbol table freed (a process gone, a DWARF section read)
	 * the next ones land on the heap, whose freed middle is never given
	 * back. Side by side over 40 s of the whole machine: peak RSS 126 ->
	 * 80 MiB beside a build's short processes, 110 -> 107 MiB beside
	 * long-lived ones; no change on one target. */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	if (opts_parse(argc, argv, &a->o, err, sizeof(err)) < 0) {
		say(err);
		return EXIT_USAGE;
	}
	if (a->o.help || a->o.version || a->o.cmd == OPTS_CMD_DUMP)
		return run_oneshot(&a->o);
	if (a->o.cmd == OPTS_CMD_DIFF)
		return run_diff(a);
	a->tui = !a->o.batch && (a->o.cmd == OPTS_CMD_TOP || a->o.cmd == OPTS_CMD_REPORT);
	/* A PID that does not exist is the first thing to say, terminal or not. */
	if (procs_check_pids(a->o.pids, a->o.npids, err, sizeof(err))) {
		say(err);
		return EXIT_RUNTIME;
	}
	if (a->tui && (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))) {
		say("not a terminal: use -b for text output (e.g. stacktop -b -n 5 -p PID).");
		return EXIT_USAGE;
	}
	int rc = app_init(a);
	if (rc == EXIT_OK && a->tui && screen_init() < 0) {
		fprintf(stderr,
			"stacktop: cannot drive this terminal (TERM=%s): use -b for text output.\n",
			getenv("TERM") ? getenv("TERM") : "unset");
		rc = EXIT_RUNTIME;
	}
	char summary[256] = "";
	if (rc == EXIT_OK) {
		if (a->tui)
			app_draw(a);
		rc = app_loop(a);
		if (rc == EXIT_OK && a->o.cmd == OPTS_CMD_RECORD)
			rc = app_record_write(a);
		if (rc == EXIT_OK && a->o.cmd == OPTS_CMD_TOP)
			app_run_summary(a, summary, sizeof(summary));
		/* -b --annotate FUNC that never had samples: the run failed. */
		if (rc == EXIT_OK && a->o.batch && a->ui.ann_name) {
			char shown[160];
			text_sanitize(a->o.annotate, shown, sizeof(shown));
			snprintf(
			    summary, sizeof(summary),
			    "no function named '%s' (or containing it) had samples of its own: "
			    "check the name in the top view",
			    shown);
			rc = EXIT_RUNTIME;
		}
	}
	app_fini(a);
	if (summary[0])
		say(summary);
	return rc;
}
