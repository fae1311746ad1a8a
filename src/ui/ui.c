/*
 * ui — the front end's state and its keys (see ui.h for the contract).
 *
 * Keys go, in order: to a view that is taking text (the icicle's search
 * line, the process table's filter), to the annotate view while it is open, then to the global
 * table below (ui_keys, keymap.h), then to the shown view's table, whose answer (struct
 * view_action) is carried out here: narrowing every view to a thread, opening the icicle or the
 * annotate view on a function. The help screen is drawn from the same tables (ui_keymaps). The top
 * view's narrowing, kernel toggle and UTF-8 choice are the ones every view follows.
 *
 * Whole machine (model.machine set): the process table is a view (key 0);
 * Enter on a process narrows every view to it (ui->pid) and shows the top
 * view; Esc, when the shown view has nothing of its own to undo, comes
 * back to the process table and the whole machine. The top view then has
 * a PROCESS column, and the box's verdicts on its alerts line.
 */
#include "stacktop/ui/ui.h"
#include "stacktop/lib/mono.h"

#include <ctype.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stacktop/model/diff.h"
#include "stacktop/ui/keymap.h"
#include "stacktop/ui/procwords.h"
#include "stacktop/ui/keys.h"
#include "stacktop/proc/machine.h"
#include "stacktop/proc/metrics.h"
#include "stacktop/ui/screen.h"
#include "stacktop/symbols/sym.h"
#include "stacktop/lib/text.h"
#include "stacktop/ui/view_diff.h"
#include "stacktop/model/window.h"

#define STATUS_NS 3000000000ull
#define BATCH_COLS 200
#define BATCH_ROWS 40
#define BATCH_PROCS 20 /* whole machine: the process table's rows in batch output */
#define BATCH_SLACK                                                                                \
	24		   /* batch: rows for wrapped alerts lines and the process table's         \
			      rows with a verdict past its 20 (tables are capped, blank rows       \
			      dropped) */
#define UI_DIFF_SECONDS 10 /* the b key's baseline, and "now" in diff mode */

void ui_init(struct ui *ui, const struct ui_config *c, double period_s, struct ui_model *m)
{
	memset(ui, 0, sizeof(*ui));
	grid_init(&ui->grid, 80, 24);
	ui->view = c->view < UI_VIEW_COUNT ? c->view : UI_VIEW_TOP;
	if (c->machine && !c->view_set)
		ui->view = UI_VIEW_PROCS;
	ui->procs.batch = c->batch;
	ui->procs.limit = BATCH_PROCS;
	ui->batch = c->batch;
	ui->wall = c->wall;
	ui->top.metrics = m->metrics;
	ui->ann_name = c->annotate;
	ui->ann.batch = c->batch;
	ui->top.charts = true;
	ui->top.utf8 = !c->ascii && text_locale_utf8();
	ui->top.sort = c->sort;
	ui->top.lines = c->lines;
	ui->top.hide_kernel = c->hide_kernel;
	ui->top.period_s = period_s;
	ui->top.limit = c->batch ? c->limit : 0;
	ui->top.batch = c->batch;
	ui->top.wall = c->wall;
	ui->top.hide_idle = c->hide_idle;
	ui->top.full_names = c->full_names;
	m->output_dir = c->output_dir;
	m->export_base = (struct export_opts){
	    .per_thread = c->per_thread,
	    .period_s = c->rate_hz ? 1.0 / c->rate_hz : 0,
	    .mode = c->wall ? "wall" : "cpu",
	    .force = c->force,
	    .file_mode = c->output_mode,
	    .thread_name = m->metrics ? metrics_thread_name : NULL,
	    .ctx = m->metrics,
	    .cmdline = m->cmdline,
	};
}

void ui_free(struct ui *ui)
{
	view_top_state_free(&ui->top);
	view_threads_state_free(&ui->threads);
	view_icicle_state_free(&ui->icicle);
	view_annotate_close(&ui->ann);
	diff_snap_free(ui->baseline);
	diff_free(ui->live);
	view_memory_state_free(&ui->memory);
	view_procs_state_free(&ui->procs);
	grid_free(&ui->grid);
}

void ui_status(struct ui *ui, const char *msg, uint64_t now_ns)
{
	snprintf(ui->status, sizeof(ui->status), "%s", msg);
	ui->status_until_ns = now_ns + STATUS_NS;
}

int ui_tid(const struct ui *ui)
{
	return ui->top.tid;
}

int ui_pid(const struct ui *ui)
{
	return ui->pid;
}

bool ui_wants_memory(const struct ui *ui)
{
	return ui->view == UI_VIEW_MEMORY;
}

bool ui_wants_wchan(const struct ui *ui)
{
	return ui->view == UI_VIEW_THREADS;
}

bool ui_paused(const struct ui *ui)
{
	return ui->paused;
}

void ui_header(const struct ui *ui, const struct ui_model *m, struct view_header *h,
	       uint64_t now_ns)
{
	h->paused = ui->paused;
	h->batch = ui->batch;
	h->filter_tid = ui->top.tid;
	h->filter_name = NULL;
	if (ui->top.tid && m->metrics) {
		struct metrics_thread *t = metrics_thread(m->metrics, ui->top.tid, false);
		h->filter_name = t ? t->comm : NULL;
	}
	h->status = now_ns < ui->status_until_ns ? ui->status : NULL;
	h->hide_kernel = ui->top.hide_kernel;
	h->lines = ui->top.lines;
	h->now_ns = now_ns;
	h->machine = (struct view_machine){.on = m->machine != NULL};
	if (m->machine) {
		struct machine_totals t;
		const struct machine_proc *p = ui->pid ? machine_find(m->machine, ui->pid) : NULL;

		machine_get_totals(m->machine, &t);
		h->machine.ncpu = t.ncpu;
		h->machine.nprocs = t.nprocs;
		h->machine.pid = ui->pid;
		h->cmdline = p ? p->cmdline : NULL; /* the whole machine has none */
		if (p) {
			snprintf(h->machine.comm, sizeof(h->machine.comm), "%s", p->comm);
			h->nthreads = p->nthreads;
		}
	}
}

/* The top view's PROCESS column: "comm 4242" (ctx: the machine). */
static void process_label(const void *ctx, int pid, char *buf, size_t size)
{
	procwords_label(ctx ? machine_find(ctx, pid) : NULL, pid, buf, size);
}

/* ---- drawing ---- */

/* The view to draw: the threads view needs the per-thread series. */
static enum ui_view shown_view(const struct ui *ui, const struct ui_model *m)
{
	if (ui->view == UI_VIEW_PROCS)
		return m->machine ? UI_VIEW_PROCS : UI_VIEW_TOP;
	return (ui->view == UI_VIEW_THREADS || ui->view == UI_VIEW_MEMORY) && !m->metrics
		   ? UI_VIEW_TOP
		   : ui->view;
}

/* The icicle and the threads table follow the top view's narrowing, kernel
 * toggle and character set; every view the process narrowing (whole
 * machine). */
static void follow_top(struct ui *ui, const struct ui_model *m)
{
	ui->icicle.pid = ui->threads.pid = ui->top.pid = ui->ann.pid = m->machine ? ui->pid : 0;
	ui->top.by_process = m->machine != NULL;
	ui->top.process_label = process_label;
	ui->top.process_ctx = m->machine;
	ui->top.alerts = m->machine ? ui->machine_alerts : NULL;
	ui->procs.hide_kernel = ui->top.hide_kernel;
	ui->procs.full_names = ui->top.full_names;
	ui->procs.utf8 = ui->top.utf8;
	ui->icicle.tid = ui->threads.tid = ui->top.tid;
	ui->icicle.thread_label = view_threads_label;
	ui->icicle.hide_kernel = ui->threads.hide_kernel = ui->top.hide_kernel;
	ui->icicle.full_names = ui->threads.full_names = ui->memory.full_names = ui->top.full_names;
	ui->icicle.utf8 = ui->threads.utf8 = ui->memory.utf8 = ui->top.utf8;
}

/* When memory climbs like stairs and the code paths are traced, the MEM
 * alert names the top holder (metrics.mem_holder points here). */
static void memory_alert(struct ui *ui, const struct ui_model *m, bool shown, int cols, int rows)
{
	if (!m->metrics)
		return;
	m->metrics->mem_holder = NULL;
	if (!m->memory.mm || !m->metrics->alert_stairs)
		return;
	if (!shown)
		view_memory_update(&ui->memory, &m->memory, cols, rows);
	view_memory_top_holder(&ui->memory, ui->mem_holder, sizeof(ui->mem_holder));
	if (ui->mem_holder[0])
		m->metrics->mem_holder = ui->mem_holder;
}

/* Diff mode: the baseline against the last 10 s, now, into ui->live
 * (NULL without a baseline), or the files' diff; the icicle colours by it. */
static const struct diff *update_diff(struct ui *ui, const struct ui_model *m,
				      const struct view_header *h, bool lines, bool icicle,
				      uint64_t *t)
{
	/* The icicle's colours are its paths', in its direction; K hides
	 * kernel frames in both views. */
	struct diff_opts o = {.lines = lines,
			      .hide_kernel = ui->top.hide_kernel,
			      .paths_down = icicle && !ui->icicle.inverted,
			      .paths_up = icicle && ui->icicle.inverted};
	struct diff_snap *now = NULL;

	*t = h && h->now_ns ? h->now_ns : mono_ns();
	if (ui->fixed)
		return ui->fixed;
	diff_free(ui->live);
	ui->live = NULL;
	if (ui->baseline && !diff_snap_window(m->w, *t, UI_DIFF_SECONDS, lines, &now))
		diff_compare(ui->baseline, now, &o, &ui->live);
	diff_snap_free(now);
	return ui->live;
}

/* The top view in diff mode. */
static void draw_diff(struct ui *ui, const struct ui_model *m, const struct view_header *h)
{
	uint64_t t;
	const struct diff *d = update_diff(ui, m, h, ui->top.lines, false, &t);
	char title[160];

	if (ui->fixed_title)
		snprintf(title, sizeof(title), "%s", ui->fixed_title);
	else
		snprintf(title, sizeof(title), "baseline (10 s, %u s ago) vs last 10 s",
			 (unsigned)((t - ui->baseline_ns) / 1000000000ull));
	view_diff_render(&ui->grid, h, d, ui->top.lines, ui->top.full_names, title, !ui->fixed);
}

/* --annotate FUNC opens once the function has samples; until then (batch)
 * the sentence saying so is what is shown. */
static bool draw_annotate(struct ui *ui, const struct ui_model *m, const struct view_header *h,
			  int rows)
{
	char msg[300];

	if (ui->ann_name && !ui->ann.open &&
	    view_annotate_open_name(&ui->ann, m->w, m->sy_rw, m->source_path, ui->ann_name, msg,
				    sizeof(msg)) == 0)
		ui->ann_name = NULL;
	if (!ui->ann.open && !(ui->ann_name && ui->batch))
		return false;
	if (!ui->ann.open) {
		grid_printf(&ui->grid, 0, 0, 0, ui->grid.w, "%s", msg);
		return true;
	}
	view_annotate_update(&ui->ann, m->w);
	ui->ann.status = h ? h->status : NULL;
	ui->ann.page = rows > 6 ? rows - 5 : 1;
	view_annotate_render(&ui->ann, &ui->grid);
	return true;
}

const struct grid *ui_draw(struct ui *ui, const struct ui_model *m, const struct view_header *h,
			   int cols, int rows)
{
	if (ui->grid.w != cols || ui->grid.h != rows)
		grid_resize(&ui->grid, cols, rows);
	else
		grid_clear(&ui->grid);
	if (ui->help) {
		const struct sym_module_note *mods = NULL;
		size_t nmods = m->sy ? sym_modules(m->sy, &mods) : 0;

		const struct keymap *const *all;
		const struct keymap *maps[16];
		size_t nall = ui_keymaps(&all), nmaps = 0;

		/* The process table's keys only where there is one (80x24
		 * has no row to spare). */
		for (size_t i = 0; i < nall && nmaps < 16; i++)
			if (all[i] != &view_procs_keymap || m->machine)
				maps[nmaps++] = all[i];
		view_help_render(&ui->grid, maps, nmaps, mods, nmods);
		return &ui->grid;
	}
	if (draw_annotate(ui, m, h, rows))
		return &ui->grid;
	follow_top(ui, m);
	ui->machine_alerts[0] = '\0';
	if (m->machine) {
		size_t n;
		const struct machine_proc *p = machine_procs(m->machine, &n);
		/* the process table looks its floors up in its update */
		if (shown_view(ui, m) != UI_VIEW_PROCS)
			procwords_floors(&ui->procs, p, n, m->w);
		procwords_alerts(p, n, &ui->procs, ui->batch ? 0 : cols, ui->machine_alerts,
				 sizeof(ui->machine_alerts));
	}
	bool mem_shown = shown_view(ui, m) == UI_VIEW_MEMORY;
	if (mem_shown)
		view_memory_update(&ui->memory, &m->memory, cols, rows);
	memory_alert(ui, m, mem_shown, cols, rows);
	switch (shown_view(ui, m)) {
	case UI_VIEW_PROCS: {
		size_t n;
		const struct machine_proc *p = machine_procs(m->machine, &n);
		view_procs_update(&ui->procs, h, p, n, m->w, cols, rows);
		view_procs_render(&ui->grid, h, &ui->procs);
		break;
	}
	case UI_VIEW_MEMORY:
		view_memory_render(&ui->grid, h, &ui->memory);
		break;
	case UI_VIEW_ICICLE:
		ui->icicle.label_ctx = m->metrics;
		/* In diff mode each box takes the colour of its call path's
		 * change (its total share); the widths stay those of now. */
		ui->icicle.diff_attr = NULL;
		if (ui->diff_mode) {
			uint64_t t;
			ui->icicle.diff_attr = view_diff_attr;
			ui->icicle.diff_ctx = update_diff(ui, m, h, false, true, &t);
		}
		view_icicle_update(&ui->icicle, h, m->w, cols, rows);
		view_icicle_render(&ui->grid, h, &ui->icicle);
		break;
	case UI_VIEW_THREADS:
		ui->threads.locks = m->locks;
		view_threads_update(&ui->threads, h, m->metrics, m->w, cols, rows);
		view_threads_render(&ui->grid, h, m->metrics, &ui->threads);
		break;
	default:
		ui->top.locks = m->locks;
		if (ui->diff_mode) {
			draw_diff(ui, m, h);
			break;
		}
		view_top_update(&ui->top, m->w, h, cols, rows);
		view_top_render(&ui->grid, h, &ui->top);
		break;
	}
	return &ui->grid;
}

void ui_draw_screen(struct ui *ui, const struct ui_model *m, const struct view_header *h)
{
	int cols, rows;
	screen_size(&cols, &rows);
	screen_draw(ui_draw(ui, m, h, cols, rows));
}

/* Batch: the grid's lines, trailing blank rows dropped, then a blank line. */
static void print_grid(const struct grid *g, FILE *out)
{
	char line[4096];
	int last = g->h - 1;

	while (last > 0 && grid_row_text(g, last, line, sizeof(line)) == 0)
		last--;
	for (int y = 0; y <= last; y++) {
		if (grid_row_text(g, y, line, sizeof(line)) < 0)
			line[0] = '\0';
		fprintf(out, "%s\n", line);
	}
	fprintf(out, "\n");
}

void ui_print(struct ui *ui, const struct ui_model *m, const struct view_header *h, FILE *out)
{
	enum ui_view v = shown_view(ui, m);
	int rows = v == UI_VIEW_TOP ? ui->top.limit + 6 + BATCH_SLACK : BATCH_ROWS;

	/* Whole machine: the process table first, then the top view under
	 * the same header (printed once). */
	if (m->machine && !ui->ann_name && !ui->ann.open &&
	    ((v == UI_VIEW_TOP && !ui->pid) || v == UI_VIEW_PROCS)) {
		ui->view = UI_VIEW_PROCS;
		print_grid(ui_draw(ui, m, h, BATCH_COLS,
				   view_header_height(h) + 2 + 2 * BATCH_PROCS + BATCH_SLACK),
			   out);
		ui->view = UI_VIEW_TOP;
		fprintf(out, "Top functions (whole machine):\n");
		print_grid(ui_draw(ui, m, NULL, BATCH_COLS, ui->top.limit + 4 + BATCH_SLACK), out);
		ui->view = v;
		fflush(out);
		return;
	}
	if (shown_view(ui, m) == UI_VIEW_MEMORY)
		rows = ui->top.limit + 16 + BATCH_SLACK; /* mappings and code paths, -l each */
	if (ui->ann_name || ui->ann.open) {
		draw_annotate(ui, m, h, BATCH_ROWS); /* opens it: then its length is known */
		rows = ui->ann.open ? view_annotate_count(&ui->ann) + 6 : 2;
	}
	print_grid(ui_draw(ui, m, h, BATCH_COLS, rows), out);
	fflush(out);
}

/* ---- export (the w key, and record through main) ---- */

void ui_export_opts(const struct ui *ui, const struct ui_model *m, struct export_opts *eo,
		    const char **zoom, size_t nzoom)
{
	const struct view_icicle_state *ic = &ui->icicle;
	*eo = m->export_base;
	eo->tid = ui->top.tid;
	eo->pid = m->machine ? ui->pid : 0;
	eo->hide_kernel = ui->top.hide_kernel;
	eo->duration_s = window_span_s(m->w, mono_ns());
	if (ui->view != UI_VIEW_ICICLE || !ic->zoom.n || ic->zoom.n > nzoom)
		return;
	/* Zoom keys are "module\x1fname": the export matches names. */
	for (size_t i = 0; i < ic->zoom.n; i++) {
		const char *sep = strchr(ic->zoom.keys[i], '\x1f');
		zoom[i] = sep ? sep + 1 : ic->zoom.keys[i];
	}
	eo->zoom = zoom;
	eo->nzoom = (int)ic->zoom.n;
}

/* The w key: what is shown as pprof, named with the pid and the time. */
static void write_profile(struct ui *ui, const struct ui_model *m, uint64_t now_ns)
{
	const char *zoom[64];
	struct export_opts eo;
	char path[1024], when[32], err[512], msg[1200];
	time_t t = time(NULL);
	struct tm tm;
	localtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y%m%d-%H%M%S", &tm);
	ui_export_opts(ui, m, &eo, zoom, sizeof(zoom) / sizeof(zoom[0]));
	eo.format = EXPORT_PPROF;
	/* Named for the process shown: the one narrowed to, or "all" for
	 * the whole machine. */
	if (m->machine && !eo.pid)
		snprintf(path, sizeof(path), "%s/stacktop-all-%s%s", m->output_dir, when,
			 export_format_ext(eo.format));
	else
		snprintf(path, sizeof(path), "%s/stacktop-%d-%s%s", m->output_dir,
			 eo.pid ? eo.pid : m->pid, when, export_format_ext(eo.format));
	if (export_write(m->w, &eo, path, err, sizeof(err)) == 0)
		snprintf(msg, sizeof(msg), "wrote %s%s%s%s", path,
			 eo.pid ? " (this process only)" : "", eo.tid ? " (this thread only)" : "",
			 eo.nzoom ? " (the zoomed path only)" : "");
	else
		snprintf(msg, sizeof(msg), "! %s", err);
	ui_status(ui, msg, now_ns);
}

/* ---- keys ---- */

/* Show only one thread (tid) in every view, or all (0). */
static void narrow(struct ui *ui, int tid, uint64_t now_ns)
{
	char msg[96];
	ui->top.tid = tid;
	ui->top.selected = 0;
	view_top_state_free(&ui->top);
	if (tid)
		snprintf(msg, sizeof(msg), "showing thread %d only; Esc shows all threads", tid);
	else
		snprintf(msg, sizeof(msg), "showing all threads");
	ui_status(ui, msg, now_ns);
}

/* Whole machine: show only process pid in every view (0: the whole
 * machine again). Thread narrowing and the icicle's paths (they start at
 * a process's root frame, which a narrowed icicle leaves out) start over. */
static void narrow_process(struct ui *ui, const struct ui_model *m, int pid, uint64_t now_ns)
{
	const struct machine_proc *p = pid && m->machine ? machine_find(m->machine, pid) : NULL;
	char msg[160], who[64];

	narrow(ui, 0, now_ns);
	ui->pid = pid;
	icicle_path_free(&ui->icicle.sel);
	icicle_path_free(&ui->icicle.zoom);
	ui->threads.selected = ui->threads.scroll = 0;
	if (pid) {
		procwords_label(p, pid, who, sizeof(who));
		snprintf(msg, sizeof(msg), "showing process %s only; Esc: the whole machine", who);
	} else {
		snprintf(msg, sizeof(msg), "showing the whole machine");
	}
	ui_status(ui, msg, now_ns);
}

/* Key a in the top view or the icicle: annotate the function of frame
 * (f, else the window's frame id; neither: say so). Not in diff mode. */
static bool annotate_frame(struct ui *ui, const struct ui_model *m, const struct frame *f,
			   uint32_t frame, uint64_t now_ns)
{
	char msg[300] = "";

	if (ui->diff_mode)
		return false;
	if (!f && frame != UINT32_MAX)
		f = frames_get(window_frames(m->w), frame);
	if (view_annotate_open_frame(&ui->ann, m->w, m->sy_rw, m->source_path, f, msg,
				     sizeof(msg)) &&
	    msg[0])
		ui_status(ui, msg, now_ns);
	return true;
}

/* Carry out what a view's key asks for. Returns true if the key was used. */
static bool act(struct ui *ui, const struct ui_model *m, struct view_action a, uint64_t now_ns)
{
	switch (a.kind) {
	case VIEW_ACTION_NONE:
		return false;
	case VIEW_ACTION_NARROW:
		narrow(ui, a.tid, now_ns);
		ui->view = UI_VIEW_TOP;
		return true;
	case VIEW_ACTION_NARROW_ALL:
		narrow(ui, 0, now_ns);
		return true;
	case VIEW_ACTION_NARROW_PROCESS:
		narrow_process(ui, m, a.pid, now_ns);
		ui->view = UI_VIEW_TOP;
		return true;
	case VIEW_ACTION_OPEN_ICICLE:
		if (a.frame_copy)
			view_icicle_jump_to(&ui->icicle, m->w, a.frame_copy);
		else
			view_icicle_jump(&ui->icicle, m->w, a.frame);
		ui->view = UI_VIEW_ICICLE;
		return true;
	case VIEW_ACTION_ANNOTATE:
		return annotate_frame(ui, m, a.frame_copy, a.frame, now_ns);
	case VIEW_ACTION_USED:
	default:
		return true;
	}
}

static bool view_key(struct ui *ui, const struct ui_model *m, int key, uint64_t now_ns)
{
	follow_top(ui, m);
	switch (shown_view(ui, m)) {
	case UI_VIEW_PROCS:
		return act(ui, m, view_procs_key(&ui->procs, key), now_ns);
	case UI_VIEW_ICICLE:
		return act(ui, m, view_icicle_key(&ui->icicle, key), now_ns);
	case UI_VIEW_THREADS:
		return act(ui, m, view_threads_key(&ui->threads, key), now_ns);
	case UI_VIEW_MEMORY:
		return act(ui, m, view_memory_key(&ui->memory, key), now_ns);
	default:
		return act(ui, m, view_top_key(&ui->top, key), now_ns);
	}
}

/* ---- the keys of every view: their table ---- */

/* What the global keys' functions get (keymap.h: ctx). */
struct ui_key_ctx {
	struct ui *ui;
	const struct ui_model *m;
	uint64_t now_ns;
	enum ui_request req;
};

/* A key that still works over the annotate view (the others stop there). */
#define UI_KEY_OVER_ANNOTATE KEYMAP_OWNER

/* A toggle of the top view's state, said in the status line. */
static void toggle(struct ui *ui, bool *flag, const char *on, const char *off, uint64_t now_ns)
{
	*flag = !*flag;
	ui_status(ui, *flag ? on : off, now_ns);
}

static struct view_action key_quit(void *ctx, int key)
{
	(void)key;
	((struct ui_key_ctx *)ctx)->req = UI_REQUEST_QUIT;
	return keymap_used(true);
}

static struct view_action key_view(void *ctx, int key)
{
	struct ui_key_ctx *c = ctx;
	struct ui *ui = c->ui;

	if (key == KEYS_TAB) {
		do /* the process table only in whole-machine mode */
			ui->view = (enum ui_view)((ui->view + 1) % UI_VIEW_COUNT);
		while (ui->view == UI_VIEW_PROCS && !c->m->machine);
		return keymap_used(true);
	}
	if (key == '0') {
		if (!c->m->machine) {
			ui_status(ui, "the process table is for the whole machine: stacktop -a",
				  c->now_ns);
			return keymap_used(true);
		}
		if (ui->pid)
			narrow_process(ui, c->m, 0, c->now_ns);
		ui->view = UI_VIEW_PROCS;
		return keymap_used(true);
	}
	ui->view = (enum ui_view)(key - '1');
	if (ui->view == UI_VIEW_THREADS && !c->m->metrics)
		ui_status(ui, "no threads view here: a saved profile has no thread data",
			  c->now_ns);
	if (ui->view == UI_VIEW_MEMORY && !c->m->metrics)
		ui_status(ui, "no memory view here: a saved profile has no process", c->now_ns);
	return keymap_used(true);
}

/* The top view's on/off keys (upper or lower case): the flag each flips
 * and what the status line then says. */
static const struct top_toggle {
	int key;
	size_t flag; /* offsetof(struct view_top_state, ...) */
	const char *on, *off;
} top_toggles[] = {
    {'l', offsetof(struct view_top_state, lines), "aggregating by file:line",
     "aggregating by function"},
    {'k', offsetof(struct view_top_state, hide_kernel), "kernel frames hidden",
     "kernel frames shown"},
    {'v', offsetof(struct view_top_state, full_names), "C++ names whole (return type, parameters)",
     "C++ names short (ns::Class::method)"},
};

static struct view_action key_top_toggle(void *ctx, int key)
{
	struct ui_key_ctx *c = ctx;

	for (size_t i = 0; i < sizeof(top_toggles) / sizeof(top_toggles[0]); i++) {
		const struct top_toggle *t = &top_toggles[i];
		if (t->key == tolower(key)) {
			toggle(c->ui, (bool *)((char *)&c->ui->top + t->flag), t->on, t->off,
			       c->now_ns);
			return keymap_used(true);
		}
	}
	return keymap_used(false);
}

static struct view_action key_charts(void *ctx, int key)
{
	struct ui *ui = ((struct ui_key_ctx *)ctx)->ui;

	(void)key;
	ui->top.charts = !ui->top.charts;
	return keymap_used(true);
}

static struct view_action key_diff(void *ctx, int key)
{
	struct ui_key_ctx *c = ctx;
	struct ui *ui = c->ui;

	(void)key;
	if (!ui->baseline && !ui->fixed && !ui->diff_mode) {
		ui_status(ui, "no baseline: press b first (it marks the last 10 s)", c->now_ns);
		return keymap_used(true);
	}
	ui->diff_mode = !ui->diff_mode;
	if (ui->view != UI_VIEW_ICICLE)
		ui->view = UI_VIEW_TOP;
	return keymap_used(true);
}

/* b: the last 10 s become the baseline (CPU and profile); B clears it. */
static struct view_action key_baseline(void *ctx, int key)
{
	struct ui_key_ctx *c = ctx;
	struct ui *ui = c->ui;
	struct metrics *mt = c->m->metrics;

	if (key == 'b') {
		struct diff_snap *sn = NULL;
		/* With lines looked up, so L works in diff mode later. */
		if (diff_snap_window(c->m->w, c->now_ns, UI_DIFF_SECONDS, true, &sn) == 0) {
			diff_snap_free(ui->baseline);
			ui->baseline = sn;
			ui->baseline_ns = c->now_ns;
		}
	} else {
		diff_snap_free(ui->baseline);
		ui->baseline = NULL;
		ui->diff_mode = false;
	}
	if (mt && key == 'b')
		metrics_baseline_now(mt);
	else if (mt)
		metrics_baseline_clear(mt);
	if (mt)
		ui_status(ui, key == 'b' ? "baseline = the last 10 s" : "baseline cleared",
			  c->now_ns);
	return keymap_used(true);
}

static struct view_action key_pause(void *ctx, int key)
{
	struct ui *ui = ((struct ui_key_ctx *)ctx)->ui;

	(void)key;
	ui->paused = !ui->paused;
	ui->top.frozen = ui->paused;
	return keymap_used(true);
}

static struct view_action key_reset(void *ctx, int key)
{
	struct ui_key_ctx *c = ctx;

	(void)key;
	window_reset(c->m->w);
	view_top_state_free(&c->ui->top);
	ui_status(c->ui, "window reset", c->now_ns);
	return keymap_used(true);
}

static struct view_action key_help(void *ctx, int key)
{
	(void)key;
	((struct ui_key_ctx *)ctx)->ui->help = true;
	return keymap_used(true);
}

static struct view_action key_write(void *ctx, int key)
{
	struct ui_key_ctx *c = ctx;

	(void)key;
	write_profile(c->ui, c->m, c->now_ns);
	return keymap_used(true);
}

/* Wall mode only: hide the threads that wait for work (window_thread_idle). */
static struct view_action key_idle(void *ctx, int key)
{
	struct ui_key_ctx *c = ctx;
	struct ui *ui = c->ui;

	(void)key;
	if (!ui->wall)
		return keymap_used(false);
	toggle(ui, &ui->top.hide_idle, "idle threads hidden (only waiting for work)",
	       "idle threads shown", c->now_ns);
	view_top_state_free(&ui->top);
	return keymap_used(true);
}

/* In the order of the help screen. */
static const struct keymap_entry ui_keys[] = {
    {{'1', '2', '3', '4'}, 0, key_view, "1-4 0 Tab", "top icicle threads memory", 0},
    /* on the line above; the process table's title says what 0 is */
    {{'0'}, 0, key_view, NULL, NULL, KEYMAP_QUIET},
    {{KEYS_TAB}, 0, key_view, NULL, NULL, KEYMAP_QUIET},
    {{'L'}, 'l', key_top_toggle, NULL, "file:line; whole C++ names", 0},
    {{'v'}, 0, key_top_toggle, NULL, NULL, 0},
    {{'K'}, 'k', key_top_toggle, NULL, "show or hide kernel frames", 0},
    {{'g'}, 0, key_charts, NULL, "show or hide the charts", 0},
    {{'b'}, 0, key_baseline, NULL, "baseline 10 s; clear; diff", 0},
    {{'B'}, 0, key_baseline, NULL, NULL, 0},
    {{'D'}, 0, key_diff, NULL, NULL, 0},
    {{' '}, 0, key_pause, NULL, "freeze (sampling goes on)", UI_KEY_OVER_ANNOTATE},
    {{'R'}, 'r', key_reset, NULL, "reset: drop all samples", UI_KEY_OVER_ANNOTATE},
    {{'w'}, 0, key_write, NULL, "write the window to a file", UI_KEY_OVER_ANNOTATE},
    {{'i'}, 0, key_idle, NULL, "wall: idle threads on/off", 0},
    {{'?'}, 'h', key_help, NULL, "this help; quit (or Ctrl-C)", UI_KEY_OVER_ANNOTATE},
    {{'q'}, 'Q', key_quit, NULL, NULL, UI_KEY_OVER_ANNOTATE},
};

static const struct keymap ui_keymap = {"Every view", ui_keys, sizeof(ui_keys) / sizeof(ui_keys[0]),
					true};

size_t ui_keymaps(const struct keymap *const **maps)
{
	static const struct keymap *const all[] = {
	    &ui_keymap,		 &view_procs_keymap,  &view_top_keymap,	     &view_threads_keymap,
	    &view_icicle_keymap, &view_memory_keymap, &view_annotate_keymap,
	};

	*maps = all;
	return sizeof(all) / sizeof(all[0]);
}

/* Keys that mean the same in every view. Returns true if used. */
static bool global_key(struct ui *ui, const struct ui_model *m, int key, uint64_t now_ns,
		       enum ui_request *req)
{
	struct ui_key_ctx c = {ui, m, now_ns, UI_REQUEST_NONE};
	bool used = keymap_act(&ui_keymap, &c, key).kind != VIEW_ACTION_NONE;

	*req = c.req;
	return used;
}

/* The annotate view's keys; the global ones it leaves (q, ?, space, w, R)
 * go on; the rest stop here. */
static bool annotate_key(struct ui *ui, const struct ui_model *m, int key, uint64_t now_ns)
{
	const struct keymap_entry *g = keymap_find(&ui_keymap, key);
	uint64_t target = 0;
	char msg[300];

	switch (view_annotate_key(&ui->ann, key, &target)) {
	case VIEW_ANNOTATE_CLOSE:
		view_annotate_close(&ui->ann);
		return true;
	case VIEW_ANNOTATE_FOLLOW:
		if (view_annotate_follow(&ui->ann, m->w, m->sy_rw, m->source_path, target, msg,
					 sizeof(msg)))
			ui_status(ui, msg, now_ns);
		return true;
	case VIEW_ANNOTATE_USED:
		return true;
	default:
		return !(g && (g->flags & UI_KEY_OVER_ANNOTATE));
	}
}

enum ui_request ui_key(struct ui *ui, const struct ui_model *m, int key, uint64_t now_ns)
{
	enum ui_request req = UI_REQUEST_NONE;
	if (ui->help) {
		ui->help = false; /* any key leaves the help screen; q also quits */
		if (key != 'q')
			return req;
	}
	if (shown_view(ui, m) == UI_VIEW_ICICLE && ui->icicle.editing_search &&
	    act(ui, m, view_icicle_key(&ui->icicle, key), now_ns))
		return req;
	if (shown_view(ui, m) == UI_VIEW_PROCS && ui->procs.editing &&
	    act(ui, m, view_procs_key(&ui->procs, key), now_ns))
		return req;
	if (ui->ann.open && annotate_key(ui, m, key, now_ns))
		return req;
	if (global_key(ui, m, key, now_ns, &req))
		return req;
	if (!view_key(ui, m, key, now_ns) && key == KEYS_ESC && ui->pid && m->machine) {
		/* nothing of the view's own to undo: back to the whole machine */
		narrow_process(ui, m, 0, now_ns);
		ui->view = UI_VIEW_PROCS;
	}
	return req;
}
