/*
 * view — what all views share: the header lines, the help screen and the
 * footer of key hints.
 *
 * Pure drawing into a struct grid: no curses, no I/O. Every string that
 * comes from the target (command line, thread name) and every message from
 * main goes through text_sanitize/text_fit before it reaches a cell, so an
 * escape sequence in a process title cannot drive the terminal.
 *
 * Layout rule for header lines: the right-aligned part (rates, tags) is
 * what changes meaning when hidden, so it is placed first and the left part
 * (command line, counters) is cut with "…" to fit what remains.
 */
#include "stacktop/ui/view.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "stacktop/ui/keymap.h"
#include "stacktop/ui/keys.h"
#include "stacktop/symbols/sym.h"
#include "stacktop/lib/text.h"
#include "stacktop/proc/waits.h"

#define HDR_ATTR GRID_COLOR(GRID_C_HEADER)

const char view_footer_default[] =
    " 1 top  2 icicle  3 threads  s sort  L lines  space pause  ? help  q quit";
/* A saved profile: nothing is sampled, so nothing to pause, and no
 * thread data for the threads view. */
const char view_footer_report[] = " 1 top  2 icicle  s sort  L lines  w write  ? help  q quit";

/* The right part of a header line is shown only if it leaves 20 columns. */
static bool right_fits(const struct grid *g, const char *right)
{
	return right && text_width(right) <= g->w - 20;
}

/* Draw left and right parts of a line, the right part right-aligned; the
 * left part is cut to leave a gap of two columns. Both are sanitized. */
/* Left part at the left edge, right part at the right edge; in batch
 * output (packed) the right part follows two spaces after the left, so a
 * wide text grid does not push it a hundred columns away in a log. */
static void put_split(struct grid *g, int y, const char *left, uint16_t lattr, const char *right,
		      uint16_t rattr, bool packed)
{
	char buf[1024];
	int rw = right ? text_width(right) : 0, lw;

	if (packed && right) {
		text_sanitize(right, buf, sizeof(buf));
		int x = grid_put(g, 0, y, left, lattr, -1);
		grid_put(g, x + 2, y, buf, rattr, -1);
		return;
	}

	if (!right_fits(g, right))
		rw = 0, right = NULL; /* too narrow for both: keep the left part */
	lw = g->w - (rw ? rw + 2 : 0);
	text_fit(left, lw, buf, sizeof(buf));
	grid_put(g, 0, y, buf, lattr, lw);
	if (right) {
		text_sanitize(right, buf, sizeof(buf));
		grid_put(g, g->w - rw, y, buf, rattr, rw);
	}
}

static void fmt_rate(double hz, char *out, size_t size)
{
	if (hz >= 100 || hz == (double)(long)hz)
		snprintf(out, size, "%.0f Hz", hz);
	else
		snprintf(out, size, "%.1f Hz", hz);
}

/* "/opt/app/bin/server --port 80" -> "server --port 80": when the line is
 * too narrow for the whole command, the program's name is what must stay,
 * not the directories before it. */
static void short_cmd(char *cmd)
{
	char *end = strchr(cmd, ' '), *slash;

	if (!end)
		end = cmd + strlen(cmd);
	slash = memrchr(cmd, '/', (size_t)(end - cmd));
	if (slash && slash + 1 < end)
		memmove(cmd, slash + 1, strlen(slash + 1) + 1);
}

static void header_line1(struct grid *g, int y, const struct view_header *h)
{
	char left[1024], right[256], who[256], rate[32], cmd[512];
	int i, o;

	if (h->machine.on && h->machine.pid) {
		char name[64];
		text_fit(h->machine.comm, 15, name, sizeof(name));
		snprintf(who, sizeof(who), "pid %d %s (Esc: all)", h->machine.pid, name);
	} else if (h->machine.on) {
		snprintf(who, sizeof(who), "whole machine \xc2\xb7 %d CPU%s \xc2\xb7 %d process%s",
			 h->machine.ncpu, h->machine.ncpu == 1 ? "" : "s", h->machine.nprocs,
			 h->machine.nprocs == 1 ? "" : "es");
	} else if (h->npids > 1 && h->pids) {
		o = snprintf(who, sizeof(who), "pids ");
		for (i = 0; i < h->npids && i < 3; i++)
			o += snprintf(who + o, sizeof(who) - (size_t)o, "%s%d", i ? "," : "",
				      h->pids[i]);
		if (h->npids > 3)
			snprintf(who + o, sizeof(who) - (size_t)o, " (+%d)", h->npids - 3);
	} else if (h->npids > 1) {
		snprintf(who, sizeof(who), "pids %d (+%d)", h->pid, h->npids - 1);
	} else {
		snprintf(who, sizeof(who), "pid %d", h->pid);
	}
	if (h->following && !h->source) {
		size_t l = strlen(who);
		snprintf(who + l, sizeof(who) - l, " +%d %s", h->nchildren,
			 h->nchildren == 1 ? "child" : "children");
	}
	text_sanitize(h->source ? h->source : h->cmdline ? h->cmdline : "", cmd, sizeof(cmd));
	if (h->source)
		snprintf(left, sizeof(left), "stacktop  report  %s", cmd);
	else
		snprintf(left, sizeof(left), "stacktop  %s  %s", who, cmd);
	/* A saved profile without a period (folded) has no rate: say none. */
	rate[0] = 0;
	if (!h->source || h->rate_hz > 0) {
		rate[0] = ' ';
		fmt_rate(h->rate_hz, rate + 1, sizeof(rate) - 1);
	}
	/* A saved profile has no rolling window: its span is on line 2. */
	snprintf(right, sizeof(right), "%s%s  %d thread%s", h->mode ? h->mode : "cpu", rate,
		 h->nthreads, h->nthreads == 1 ? "" : "s");
	if (h->machine.on && !h->machine.pid) /* the processes are what counts */
		snprintf(right, sizeof(right), "%s%s", h->mode ? h->mode : "cpu", rate);
	if (!h->source)
		snprintf(right + strlen(right), sizeof(right) - strlen(right), "  window %us",
			 h->window_s);
	if (!h->batch && !h->source &&
	    text_width(left) > g->w - (right_fits(g, right) ? text_width(right) + 2 : 0)) {
		short_cmd(cmd);
		snprintf(left, sizeof(left), "stacktop  %s  %s", who, cmd);
	}
	put_split(g, y, left, 0, right, 0, h->batch);
	grid_attr(g, 0, y, 8, GRID_BOLD); /* "stacktop" */
}

/* "unwind ok 99.7%": never shows 100.0% while something failed. */
static void fmt_unwind_ok(const struct view_header *h, char *out, size_t size)
{
	uint64_t bad = h->unwind_truncated + h->unwind_failed;
	double ok;

	if (h->samples_total == 0) {
		snprintf(out, size, "unwind ok -");
		return;
	}
	if (bad > h->samples_total)
		bad = h->samples_total;
	ok = 100.0 * (double)(h->samples_total - bad) / (double)h->samples_total;
	if (bad && ok > 99.9)
		ok = 99.9;
	snprintf(out, size, "unwind ok %.1f%%", ok);
}

/* "3 threads not sampled: too many open files": a profile that misses
 * threads says so, with the reason in words. */
static void fmt_unsampled(const struct view_header *h, char *out, size_t size)
{
	static const struct {
		int err;
		const char *why;
	} reasons[] = {
	    {EMFILE, "too many open files"},
	    {ENFILE, "too many open files in the system"},
	    {EPERM, "no permission"},
	    {EACCES, "no permission"},
	    {EBUSY, "traced by another process"},
	    {ENOMEM, "out of memory"},
	};
	char why[96];
	int e = -h->unsampled_err;

	snprintf(why, sizeof(why), "%s", e > 0 ? strerror(e) : "unknown error");
	if (why[0] >= 'A' && why[0] <= 'Z')
		why[0] = (char)(why[0] - 'A' + 'a');
	for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++)
		if (reasons[i].err == e)
			snprintf(why, sizeof(why), "%s", reasons[i].why);
	snprintf(out, size, "%d thread%s not sampled: %s", h->threads_unsampled,
		 h->threads_unsampled == 1 ? "" : "s", why);
}

/* Append field to line (two spaces apart) if the result fits in avail
 * columns; the first field always goes in (put_split cuts it). */
static void add_field(char *line, size_t size, const char *field, int avail)
{
	size_t o = strlen(line);

	if (o && text_width(line) + 2 + text_width(field) > avail)
		return;
	snprintf(line + o, size - o, "%s%s", o ? "  " : "", field);
}

/* --debuginfod: what is still on its way, else what came of it. */
static void fmt_debuginfod(const struct view_header *h, char *out, size_t size)
{
	if (h->dbg_pending)
		snprintf(out, size, "debuginfod: %u pending", h->dbg_pending);
	else if (!h->dbg_found && !h->dbg_missing)
		snprintf(out, size, "debuginfod: nothing missing");
	else if (!h->dbg_missing)
		snprintf(out, size, "debuginfod: %u fetched", h->dbg_found);
	else
		snprintf(out, size, "debuginfod: %u fetched, %u not found", h->dbg_found,
			 h->dbg_missing);
}

static void header_line2(struct grid *g, int y, const struct view_header *h)
{
	char left[512], right[512], n[32], lost[32], tr[32], fa[32], lu[32], f[160], name[128];
	int o = 0, paused_w = 0, avail;
	size_t l;

	right[0] = 0;
	if (h->filter_tid) {
		text_sanitize(h->filter_name ? h->filter_name : "", name, sizeof(name));
		o += snprintf(right + o, sizeof(right) - (size_t)o, "thread %d%s%s  ",
			      h->filter_tid, name[0] ? " " : "", name);
	}
	if (h->lines)
		o += snprintf(right + o, sizeof(right) - (size_t)o, "[by line]  ");
	if (h->hide_kernel)
		o += snprintf(right + o, sizeof(right) - (size_t)o, "[kernel hidden]  ");
	if (h->paused) {
		o += snprintf(right + o, sizeof(right) - (size_t)o, "[PAUSED]");
		paused_w = 8;
	}
	while (o > 0 && right[o - 1] == ' ')
		right[--o] = 0;
	avail = g->w - (o && right_fits(g, right) ? text_width(right) + 2 : 0);

	/* Whole fields only, most important first, so nothing reads "u…". */
	left[0] = 0;
	text_count(h->samples_window, n, sizeof(n));
	if (h->expected_hz >= 1 && h->achieved_hz < 0.9 * h->expected_hz && h->span_s >= 0.5)
		/* short of what the CPU burned calls for: both figures are of
		 * the last second, the count is of the window */
		snprintf(f, sizeof(f), "samples %s in %.0fs (now %.1f/s of %.0f/s expected)", n,
			 h->span_s, h->achieved_hz, h->expected_hz);
	else if (h->source && h->span_s > 0) /* the duration, when the file has it */
		snprintf(f, sizeof(f), "samples %s over %.0fs", n, h->span_s);
	else if (h->source)
		snprintf(f, sizeof(f), "samples %s", n);
	else if (h->span_s >= 0.5) /* the rate of the count shown, so they agree */
		snprintf(f, sizeof(f), "samples %s in %.0fs (%.1f/s)", n, h->span_s,
			 (double)h->samples_window / h->span_s);
	else /* no data yet: "in 0s" would read as a clock that stopped */
		snprintf(f, sizeof(f), "samples %s (%.1f/s)", n, h->achieved_hz);
	add_field(left, sizeof(left), f, avail);
	if (h->gc_pct >= VIEW_GC_SHOWN_PCT) {
		/* the first question on high CPU: is it the collector? */
		snprintf(f, sizeof(f), "GC %.0f%% of CPU", h->gc_pct);
		add_field(left, sizeof(left), f, avail);
	}
	if (h->threads_unsampled > 0) {
		fmt_unsampled(h, f, sizeof(f));
		add_field(left, sizeof(left), f, avail);
	}
	if (h->children_unfollowed > 0) {
		snprintf(f, sizeof(f), "%d process%s not followed (over %d)",
			 h->children_unfollowed, h->children_unfollowed == 1 ? "" : "es",
			 h->children_max);
		add_field(left, sizeof(left), f, avail);
	}
	if (h->files_refused > 0) {
		text_count(h->files_refused, n, sizeof(n));
		snprintf(f, sizeof(f), "%s file%s refused (not regular or too big)", n,
			 h->files_refused == 1 ? "" : "s");
		add_field(left, sizeof(left), f, avail);
	}
	if (h->coverage_note)
		add_field(left, sizeof(left), h->coverage_note, avail);
	if (h->source) {
		/* A saved profile: nothing was lost or unwound here. */
		put_split(g, y, left, 0, o ? right : NULL, 0, h->batch);
		if (paused_w && right_fits(g, right))
			grid_attr(g, g->w - paused_w, y, paused_w, GRID_BOLD | GRID_REVERSE);
		return;
	}
	if (h->pause_us > 0) {
		/* Wall mode: what each sample costs the target, in the open. */
		snprintf(f, sizeof(f), "pause %.0f \xc2\xb5s/sample", h->pause_us);
		add_field(left, sizeof(left), f, avail);
	} else {
		text_count(h->lost, lost, sizeof(lost));
		snprintf(f, sizeof(f), "lost %s", lost);
		add_field(left, sizeof(left), f, avail);
	}
	fmt_unwind_ok(h, f, sizeof(f));
	text_count(h->unwind_truncated, tr, sizeof(tr));
	text_count(h->unwind_failed, fa, sizeof(fa));
	l = strlen(f);
	snprintf(f + l, sizeof(f) - l, " (truncated %s, failed %s", tr, fa);
	if (h->unwind_cache_stopped) {
		/* of the stacks the rule cache stopped, those libunwind finished:
		 * without it, truncated would be higher by that much */
		char cs[32];

		text_count(h->unwind_finished, lu, sizeof(lu));
		text_count(h->unwind_cache_stopped, cs, sizeof(cs));
		snprintf(f + strlen(f), sizeof(f) - strlen(f), ", libunwind finished %s of %s", lu,
			 cs);
	}
	if (h->python) {
		/* CPython: stacks whose Python frames could not be put in
		 * place of the evaluation loop's, or were cut short */
		char un[32], py[32], torn[32];

		text_count(h->python_unmatched, un, sizeof(un));
		text_count(h->python_torn, torn, sizeof(torn));
		text_count(h->python, py, sizeof(py));
		snprintf(f + strlen(f), sizeof(f) - strlen(f), ", python unmatched %s cut %s of %s",
			 un, torn, py);
	}
	snprintf(f + strlen(f), sizeof(f) - strlen(f), ")");
	if (text_width(left) + 2 + text_width(f) > avail)
		f[l] = 0; /* the detail goes first */
	add_field(left, sizeof(left), f, avail);
	if (h->dbg_on) {
		fmt_debuginfod(h, f, sizeof(f));
		add_field(left, sizeof(left), f, avail);
	}

	put_split(g, y, left, 0, o ? right : NULL, 0, h->batch);
	if (paused_w && right_fits(g, right))
		grid_attr(g, g->w - paused_w, y, paused_w, GRID_BOLD | GRID_REVERSE);
}

/* The remedy for JIT code without a perf map that fits its runtime. */
static void jit_remedy(const struct view_jit *j, int pid, char *buf, size_t size)
{
	switch (j->runtime) {
	case VIEW_JIT_JVM:
		snprintf(buf, size,
			 "JVM: jcmd %d Compiler.perfmap, or start it with "
			 "-XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit",
			 j->pid);
		break;
	case VIEW_JIT_NODE:
		snprintf(buf, size, "node: run with --perf-basic-prof");
		break;
	case VIEW_JIT_PYTHON:
		if (j->py_minor && j->py_minor < 12)
			snprintf(buf, size,
				 "Python 3.%d has no perf map: 3.12+ writes one with -X perf",
				 j->py_minor);
		else
			snprintf(buf, size, "Python 3.12+: run with -X perf");
		break;
	default:
		snprintf(buf, size,
			 "the JIT writes it: node --perf-basic-prof, Python 3.12+ -X perf, "
			 "JVM jcmd PID Compiler.perfmap");
		break;
	}
	(void)pid;
}

/* A JVM asked for its map: how it went. "" for none. */
static const char *jvm_attach_text(enum view_jvm_attach a)
{
	switch (a) {
	case VIEW_JVM_NO_SOCKET:
		return "the JVM opened no attach socket (-XX:+DisableAttachMechanism?)";
	case VIEW_JVM_NO_REPLY:
		return "the JVM did not answer";
	case VIEW_JVM_REFUSED:
		return "the JVM refused (before JDK 17?)";
	case VIEW_JVM_UNSAFE:
		return "the JVM does not catch SIGQUIT (-Xrs): not asked";
	case VIEW_JVM_FAILED:
		return "could not ask it (as its user, in its /tmp)";
	default:
		return "";
	}
}

/* Line 3's word on JIT names: a JVM asked for its perf map (when, and how
 * much is unnamed since), or the hint for JIT code without a map, with
 * the remedy that fits its runtime. false: nothing to say. */
static bool jit_text(const struct view_header *h, char *msg, size_t size)
{
	const struct view_jit *j = &h->jit;
	char remedy[160];

	if (j->attach == VIEW_JVM_ASKING) {
		snprintf(msg, size, "JVM perf map: asking pid %d (as jcmd %d Compiler.perfmap)",
			 j->pid, j->pid);
		return true;
	}
	if (j->attach == VIEW_JVM_DONE) {
		int n = snprintf(msg, size, "JVM perf map: requested %.0f s ago", j->ago_s);
		if (j->unnamed_pct > 0 && n > 0 && (size_t)n < size)
			snprintf(msg + n, size - (size_t)n, " \xc2\xb7 stale: %d%% unnamed",
				 j->unnamed_pct);
		return true;
	}
	if (j->attach != VIEW_JVM_NONE) {
		jit_remedy(j, h->jit_nomap_pid, remedy, sizeof(remedy));
		if (j->attach == VIEW_JVM_NO_SOCKET) /* jcmd cannot attach either */
			snprintf(
			    remedy, sizeof(remedy),
			    "start it with -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit");
		snprintf(msg, size, "? JVM perf map: %s; %s", jvm_attach_text(j->attach), remedy);
		return true;
	}
	if (h->jit_nomap_pid <= 0)
		return false;
	/* "[unknown]+0x43" alone does not say a perf map would name it */
	jit_remedy(j, h->jit_nomap_pid, remedy, sizeof(remedy));
	snprintf(msg, size, "? JIT code unnamed: no /tmp/perf-%d.map (%s)", h->jit_nomap_pid,
		 remedy);
	return true;
}

/* Line 3, or 0 rows when there is nothing to say. Exit beats warnings,
 * warnings beat status messages: the most consequential news wins. */
static int header_line3(struct grid *g, int y, const struct view_header *h)
{
	char msg[700], buf[512];

	if (h->exited) {
		/* A saved profile "exits" at once: that is news, not an alarm. */
		uint16_t attr =
		    h->source ? GRID_COLOR(GRID_C_CYAN) : GRID_COLOR(GRID_C_ALERT) | GRID_BOLD;

		text_sanitize(h->exit_text ? h->exit_text : "exited", buf, sizeof(buf));
		if (h->batch) /* text output has no keys */
			snprintf(msg, sizeof(msg), "%s%s", buf, h->source ? "" : ": the last data");
		else
			snprintf(msg, sizeof(msg), "%s \xe2\x80\x94 %sq quits", buf,
				 h->source ? "" : "showing the last data; ");
		if (!h->source)
			grid_fill(g, 0, y, g->w, L' ', attr);
		text_fit(msg, g->w, buf, sizeof(buf));
		grid_put(g, 0, y, buf, attr, -1);
		return 1;
	}
	if (h->warning != VIEW_WARNING_NONE) {
		view_warning_text(h, msg, sizeof(msg));
		text_fit(msg, g->w, buf, sizeof(buf));
		grid_put(g, 0, y, buf, GRID_COLOR(GRID_C_YELLOW) | GRID_BOLD, -1);
		return 1;
	}
	if (h->status && h->status[0]) {
		text_fit(h->status, g->w, buf, sizeof(buf));
		grid_put(g, 0, y, buf, GRID_COLOR(GRID_C_CYAN), -1);
		return 1;
	}
	if (jit_text(h, msg, sizeof(msg))) {
		text_fit(msg, g->w, buf, sizeof(buf));
		grid_put(g, 0, y, buf, GRID_COLOR(GRID_C_CYAN), -1);
		return 1;
	}
	return 0;
}

/* Fewer samples than the CPU burned calls for, and why: lowering the rate
 * helps only when stacktop itself is too slow. */
static void behind_text(const struct view_header *h, char *buf, size_t size)
{
	static const char *const why[] = {
	    [VIEW_BEHIND_UNKNOWN] = "",
	    [VIEW_BEHIND_KERNEL] = ": kernel time is unseen without CAP_PERFMON or root",
	    [VIEW_BEHIND_SHORT_THREADS] = ": CPU is in threads that exit before they are attached",
	    [VIEW_BEHIND_SLOW] = ": stacktop cannot keep up; lower --rate or --stack-size",
	};
	unsigned c = (unsigned)h->warn_cause;

	snprintf(buf, size, "! %.0f of %.0f samples/s%s", h->warn_hz, h->warn_expected_hz,
		 c < sizeof(why) / sizeof(why[0]) ? why[c] : "");
}

void view_warning_text(const struct view_header *h, char *buf, size_t size)
{
	double span = h->warn_span_s < 1 ? 1 : h->warn_span_s;

	if (!size)
		return;
	switch (h->warning) {
	case VIEW_WARNING_SAMPLING_BEHIND:
		behind_text(h, buf, size);
		break;
	case VIEW_WARNING_LOST:
		snprintf(buf, size,
			 "! %llu sample%s lost in the last %.0fs: the kernel ring overflowed; "
			 "lower --rate or --stack-size",
			 (unsigned long long)h->warn_lost, h->warn_lost == 1 ? "" : "s", span);
		break;
	case VIEW_WARNING_BUSY:
		snprintf(buf, size,
			 "! stacktop is behind: processing samples takes over half a core; "
			 "lower --rate");
		break;
	case VIEW_WARNING_TRACED: {
		char comm[64];

		text_sanitize(h->warn_tracer_comm[0] ? h->warn_tracer_comm : "a debugger?", comm,
			      sizeof(comm));
		snprintf(buf, size,
			 "! traced by pid %d (%s): while it holds the target stopped, no samples "
			 "come; detach it",
			 h->warn_tracer, comm);
		break;
	}
	case VIEW_WARNING_KERNEL_HIDDEN:
		snprintf(buf, size,
			 "! kernel frames hidden: not permitted (perf_event_paranoid); "
			 "run as root to see them");
		break;
	case VIEW_WARNING_NONE:
	default:
		buf[0] = '\0';
		break;
	}
}

void view_wait_split(const uint64_t *counts, bool ascii, char *buf, size_t size)
{
	uint64_t sum = 0;
	size_t off = 0;
	int k;

	if (!size)
		return;
	buf[0] = '\0';
	for (k = 0; k < SAMPLE_WAIT_COUNT; k++)
		sum += counts[k];
	if (!sum)
		return;
	for (k = 0; k < SAMPLE_WAIT_COUNT && off < size; k++) {
		if (!counts[k])
			continue;
		int pct = (int)((200 * counts[k] + sum) / (2 * sum)); /* rounded */
		int len = snprintf(buf + off, size - off, "%s%s %d%%",
				   off ? (ascii ? ", " : " \xc2\xb7 ") : "",
				   waits_name((enum sample_wait)k), pct);
		if (len < 0)
			break;
		off += (size_t)len;
	}
	if (off >= size)
		buf[size - 1] = '\0';
}

int view_header_height(const struct view_header *h)
{
	if (!h)
		return 0;
	return h->exited || h->warning != VIEW_WARNING_NONE || (h->status && h->status[0]) ||
		       h->jit_nomap_pid > 0 || h->jit.attach != VIEW_JVM_NONE
		   ? 3
		   : 2;
}

int view_header_render(struct grid *g, int y, const struct view_header *h)
{
	header_line1(g, y, h);
	header_line2(g, y + 1, h);
	return 2 + header_line3(g, y + 2, h);
}

/* One help line: keys and what they do, or a section title (text NULL). */
struct help_entry {
	const char *key, *text;
};

/* The words on the screen, after the keys (these are not keys: no table). */
static const struct help_entry help_words[] = {
    {"Columns", NULL},
    {"%Own", "share of samples: leaf"},
    {"%Total", "share: anywhere on stack"},
    {"OwnTime", "CPU time: samples \xc3\xb7 rate"},
    {"CPU %", "1 core = 100%, not samples"},
    {"Words", NULL},
    {"floor", "CPU p10 over the window"},
    {"base", "median CPU: 1st min, or b"},
    {"STAIRS", "RSS up, no drops: a leak?"},
    {"ROLLERCOASTER", "RSS rises, drops: ok"},
    {"BUSY FLOOR", "busy in pauses of bursts"},
    {"if free", "speed-up if it took 0 time"},
    {"N/s of M/s", "samples got / CPU burned"},
};

#define HELP_MAX 128	  /* lines of the help screen, at most */
#define HELP_LABEL_MAX 48 /* bytes of one line's keys */

/* The help's lines: the key tables' (a section each), then the words.
 * Labels are written into labels[i]. Returns the number of lines. */
static size_t help_lines(const struct keymap *const *maps, size_t nmaps, struct help_entry *out,
			 char (*labels)[HELP_LABEL_MAX])
{
	size_t n = 0;
	char l[HELP_LABEL_MAX];

	for (size_t t = 0; t < nmaps; t++) {
		if (!maps[t]->on_help || n >= HELP_MAX)
			continue;
		out[n++] = (struct help_entry){maps[t]->title, NULL};
		for (size_t i = 0; i < maps[t]->n && n < HELP_MAX; i++) {
			const struct keymap_entry *e = &maps[t]->entries[i];

			if (e->flags & KEYMAP_QUIET)
				continue;
			keymap_label(e, l, sizeof(l));
			if (!e->help && out[n - 1].text) { /* joins the line above */
				char *to = labels[n - 1], *last = strrchr(to, ' ');
				size_t o = strlen(to);
				/* "b  B", but "Enter Esc": one space parts
				 * only longer names */
				bool wide =
				    strlen(last ? last + 1 : to) == 1 || strcspn(l, " ") == 1;
				snprintf(to + o, HELP_LABEL_MAX - o, "%s%s", wide ? "  " : " ", l);
				continue;
			}
			snprintf(labels[n], HELP_LABEL_MAX, "%s", l);
			out[n] = (struct help_entry){labels[n], e->help ? e->help : ""};
			n++;
		}
	}
	for (size_t i = 0; i < sizeof(help_words) / sizeof(help_words[0]) && n < HELP_MAX; i++)
		out[n++] = help_words[i];
	return n;
}

/* Rows entries [from, to) take, with or without a blank line before each
 * section title after the first. */
static int help_rows(const struct help_entry *lines, size_t from, size_t to, bool gap)
{
	int r = 0;

	for (size_t i = from; i < to; i++)
		r += 1 + (gap && i != from && !lines[i].text);
	return r;
}

/* Draw entries [from, to) in a column at x; returns the next row (gap:
 * a blank line between sections). */
static int help_column(struct grid *g, const struct help_entry *lines, int x, int y, int colw,
		       size_t from, size_t to, bool gap)
{
	for (size_t i = from; i < to && y < g->h - 1; i++) {
		const struct help_entry *e = &lines[i];
		if (!e->text) {
			if (i != from && gap)
				y++;
			if (y >= g->h - 1)
				break;
			grid_put(g, x, y++, e->key, GRID_BOLD | GRID_UNDERLINE, colw);
			continue;
		}
		int kw = text_width(e->key);
		int tx = kw > 10 ? kw + 2 : 12; /* a long word pushes its text */

		grid_put(g, x + 1, y, e->key, GRID_BOLD, kw > 10 ? kw : 10);
		grid_put(g, x + tx, y++, e->text, 0, colw - tx);
	}
	return y;
}

const char *view_symbol_sources(unsigned sources, char *buf, size_t size)
{
	static const struct {
		unsigned bit;
		const char *text;
	} words[] = {
	    {SYM_SRC_SYMTAB, "symtab"},
	    {SYM_SRC_DEBUG, "debug file"},
	    {SYM_SRC_DYNSYM, "dynsym"},
	    {SYM_SRC_FDE, "eh_frame ranges"},
	    {SYM_SRC_PERFMAP, "perf map"},
	    {SYM_SRC_JITDUMP, "jitdump"},
	    {SYM_SRC_INLINE, "DWARF inline"},
	    {SYM_SRC_GOPCLNTAB, "Go pclntab"},
	    {SYM_SRC_REMOTE, "none: file on a FUSE or network mount, not read"},
	};
	size_t o = 0;

	if (!size)
		return buf;
	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		if (!(sources & words[i].bit) || o >= size)
			continue;
		o += (size_t)snprintf(buf + o, size - o, "%s%s", o ? " + " : "", words[i].text);
	}
	if (!o)
		snprintf(buf, size, "none: no symbols at all");
	else if ((sources & SYM_SRC_NONE) && o < size)
		snprintf(buf + o, size - o, "; some pcs unnamed");
	return buf;
}

/* The Symbols section of the help: per module, where its names came
 * from; modules with no symbols at all first (they are why a row shows an
 * address), then the others, as many as fit above the last line. */
static void help_symbols(struct grid *g, int x, int y, int colw, const struct sym_module_note *mods,
			 size_t n)
{
	char name[128], src[160], line[320];
	size_t shown = 0;

	if (!n || y + 2 >= g->h - 1)
		return;
	grid_put(g, x, y++, "Symbols per module", GRID_BOLD | GRID_UNDERLINE, colw);
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < n; i++) {
			bool none = (mods[i].sources & ~SYM_SRC_REMOTE) == SYM_SRC_NONE;

			if (none != (pass == 0))
				continue;
			if (y >= g->h - 2 && shown + 1 < n) {
				snprintf(line, sizeof(line), "  +%zu more", n - shown);
				grid_put(g, x, y, line, GRID_DIM, colw);
				return;
			}
			text_sanitize(mods[i].name ? mods[i].name : "?", name, sizeof(name));
			view_symbol_sources(mods[i].sources, src, sizeof(src));
			snprintf(line, sizeof(line), "%-14s %s", name, src);
			grid_put(g, x + 1, y++, line, none ? GRID_BOLD : 0, colw - 1);
			shown++;
		}
	}
}

void view_help_render(struct grid *g, const struct keymap *const *maps, size_t nmaps,
		      const struct sym_module_note *mods, size_t nmods)
{
	struct help_entry lines[HELP_MAX];
	char labels[HELP_MAX][HELP_LABEL_MAX];
	const size_t n = help_lines(maps, nmaps, lines, labels);
	int y = 0;

	grid_clear(g);
	grid_fill(g, 0, y, g->w, L' ', HDR_ATTR);
	grid_put(g, 1, y++, "stacktop help  (man stacktop for more)", HDR_ATTR | GRID_BOLD, -1);
	y++;
	/* Two columns when the screen is wide enough or too short for one,
	 * split at the section that balances them; on a short screen (80x24)
	 * the blank lines between sections go before any entry does. */
	size_t half = 0;
	int best = INT_MAX, avail = g->h - 3;
	for (size_t i = 1; i < n; i++) {
		if (lines[i].text)
			continue;
		int l = help_rows(lines, 0, i, true), r = help_rows(lines, i, n, true);
		int worse = l > r ? l : r;
		if (worse < best)
			best = worse, half = i;
	}
	int need = help_rows(lines, 0, n, true) + 3 + (nmods ? (int)nmods + 2 : 0);

	if (g->w >= 110 || need > g->h) {
		int colw = g->w / 2 - 1;
		bool gap = help_rows(lines, 0, half, true) <= avail &&
			   help_rows(lines, half, n, true) <= avail;
		help_column(g, lines, 0, y, colw, 0, half, gap);
		y = help_column(g, lines, colw + 2, y, colw, half, n, gap);
		help_symbols(g, colw + 2, y + 1, colw, mods, nmods);
	} else {
		y = help_column(g, lines, 0, y, g->w, 0, n, true);
		help_symbols(g, 0, y + 1, g->w, mods, nmods);
	}
	grid_put(g, 1, g->h - 1, "Press any key to return", GRID_DIM, -1);
}

void view_footer_render(struct grid *g, const char *hints)
{
	char buf[512];
	int y = g->h - 1;

	if (y < 0)
		return;
	grid_fill(g, 0, y, g->w, L' ', HDR_ATTR);
	text_fit(hints ? hints : view_footer_default, g->w, buf, sizeof(buf));
	grid_put(g, 0, y, buf, HDR_ATTR, -1);
}

void view_put_centered(struct grid *g, int y, const char *text, uint16_t attr)
{
	int x = (g->w - text_width(text)) / 2;

	grid_put(g, x < 0 ? 0 : x, y, text, attr, g->w);
}

int view_alerts_wrap(struct grid *g, int y, int width, const char *alerts, uint16_t attr)
{
	char line[1024], fit[1024];
	const char *a = alerts, *next;
	size_t o = 0, len;
	int rows = 0;

	line[0] = '\0';
	while (a && *a) {
		next = strstr(a + 1, "   !");
		len = next ? (size_t)(next - a) : strlen(a);
		snprintf(fit, sizeof(fit), "%s%.*s", o ? "   " : "", (int)len, a);
		if (o && text_width(line) + text_width(fit) > width) { /* a row of its own */
			if (g)
				grid_put(g, 0, y + rows, line, attr, width);
			rows++;
			o = 0;
			snprintf(fit, sizeof(fit), "%.*s", (int)len, a);
		}
		if (o < sizeof(line))
			o += (size_t)snprintf(line + o, sizeof(line) - o, "%s", fit);
		a = next ? next + 3 : NULL;
	}
	if (o) {
		text_fit(line, width, fit, sizeof(fit));
		if (g)
			grid_put(g, 0, y + rows, fit, attr, width);
		rows++;
	}
	return rows;
}

bool view_too_small(struct grid *g)
{
	char msg[96];

	if (g->w >= VIEW_MIN_W && g->h >= VIEW_MIN_H)
		return false;
	snprintf(msg, sizeof(msg), "terminal too small: %dx%d (need %dx%d)", g->w, g->h, VIEW_MIN_W,
		 VIEW_MIN_H);
	view_put_centered(g, g->h / 2, msg, GRID_BOLD);
	return true;
}

void view_clamp_selection(int *selected, int *scroll, int n, int vis)
{
	if (*selected >= n)
		*selected = n - 1;
	if (*selected < 0)
		*selected = 0;
	if (*selected < *scroll)
		*scroll = *selected;
	if (vis > 0 && *selected >= *scroll + vis)
		*scroll = *selected - vis + 1;
	if (*scroll > n - vis)
		*scroll = n - vis;
	if (*scroll < 0)
		*scroll = 0;
}

bool view_move_selection(int *selected, int key, int page)
{
	switch (key) {
	case KEYS_UP:
		*selected -= 1;
		break;
	case KEYS_DOWN:
		*selected += 1;
		break;
	case KEYS_PGUP:
		*selected -= page;
		break;
	case KEYS_PGDN:
		*selected += page;
		break;
	case KEYS_HOME:
		*selected = 0;
		break;
	case KEYS_END:
		*selected = INT_MAX / 2; /* past any table; the clamp brings it back */
		break;
	default:
		return false;
	}
	if (*selected < 0)
		*selected = 0;
	return true;
}

struct view_action view_all_threads(int tid)
{
	return (struct view_action){.kind = tid ? VIEW_ACTION_NARROW_ALL : VIEW_ACTION_NONE};
}

const char *view_func_name(const char *func, bool full, char *buf, size_t size)
{
	return full ? func : symname_short(func, buf, size);
}
