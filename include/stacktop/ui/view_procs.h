/*
 * view_procs — the process table of the whole-machine mode (key 0,
 * --view processes): every process on the box, the busiest first.
 *
 *   PID USER     CPU% FLOOR  CPU last 30s  RSS TREND    THR Z/D  HOTTEST NOW  VERDICT
 *  4242 alice   63.0%   31%  █▃▃█▃▃█▃▃     12M            5      busy_poll    busy floor 31%
 *  ... COMMAND (last): ./floors --threads 4
 *
 * CPU% is the last second (% of one core), FLOOR the process's p10 over
 * the history, the sparkline its per-second CPU over the last 30 s (one
 * cell a second, scaled to one core), RSS with its trend when memory moves
 * ("↑2.1M/min"; "+2.1M/min" in ASCII), THR its threads, Z/D its unreaped
 * (zombie) children and its threads stuck in D, HOTTEST NOW the function
 * with the most own samples of that process in the window (the K toggle
 * respected), VERDICT the words a responder acts on ("busy floor 31% in
 * busy_poll": where the floor is spent, procwords_floors; the function
 * left out under 120 columns, where HOTTEST and the alerts line say it),
 * "stairs", "zombie (parent 4259 zpar)", "stuck D 12s", "3 zombie children"),
 * COMMAND the command line when it fits, else the name; kernel threads in
 * [brackets]. Everything from the target is escaped (text_fit).
 *
 * Columns by priority: PID USER CPU% FLOOR RSS THR VERDICT and COMMAND (10
 * at least) always; then HOTTEST, the sparkline, TREND, Z/D; what is left
 * widens COMMAND. At 80 columns that keeps HOTTEST, with VERDICT 15 wide in
 * brief words ("zombie of 4259", "3 zombies": the alerts line names the
 * parent); at 200 everything.
 *
 * Rows that read the same (most of a box reads 0.0%) go: those with a
 * verdict, then programs, then kernel threads, then by PID; so a stuck or
 * leaking process does not sink under a hundred idle kworkers.
 *
 * Filtered (key /): only the processes whose comm, command line or pid
 * hold the text, case-insensitive (grouped: the groups of those, summed
 * over them); the column header's line ends with "filter: cpub  3 of 212".
 *
 * Grouped (key c): a row per cgroup (container or service: its path, the
 * last part when the whole does not fit), CPU, floor, RSS and THR summed
 * over its processes, their count in the PROCS column, HOTTEST of its
 * busiest member, the verdicts of its members without numbers. Enter on a group row opens it (its
 * processes listed under it, indented), Enter again closes it; Enter on a process row (grouped or
 * not) asks for that process (VIEW_ACTION_NARROW_PROCESS).
 *
 * Update and render like the other views: view_procs_update takes the
 * processes (machine_procs: the view never calls machine itself), groups
 * and sorts them, keeps the selection on the same process (or group)
 * across re-sorts, and fills the texts (user name, command, hottest
 * function, sparkline) of the rows on screen only; view_procs_render draws
 * from the const state. The state owns its rows (view_procs_state_free).
 */
#ifndef STACKTOP_VIEW_PROCS_H
#define STACKTOP_VIEW_PROCS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "stacktop/proc/machine.h"
#include "stacktop/ui/grid.h"
#include "stacktop/ui/view.h"

struct window;

enum view_procs_sort {
	VIEW_PROCS_SORT_CPU = 0, /* CPU now, highest first (default) */
	VIEW_PROCS_SORT_FLOOR,	 /* floor, highest first */
	VIEW_PROCS_SORT_RSS,	 /* RSS, largest first */
	VIEW_PROCS_SORT_PID,	 /* PID ascending */
	VIEW_PROCS_SORT_NAME,	 /* name, then PID */
	VIEW_PROCS_SORT_COUNT
};

#define VIEW_PROCS_SPARK 30  /* seconds in the sparkline */
#define VIEW_PROCS_FLOORS 16 /* busy floors whose function is looked up */

/* A row as update kept it: a process, or a cgroup (grouped). */
struct view_procs_row {
	bool group;  /* a cgroup's row */
	bool member; /* a process listed under its open group (indented) */
	pid_t pid;   /* the process; a group: its busiest member */
	pid_t ppid;
	uid_t uid;
	char state;
	bool kernel;
	int nprocs; /* a group: its processes */
	int nthreads, zombie_children, stuck_threads;
	double cpu_pct, floor_pct, stuck_for_s, rss_slope;
	uint64_t rss;
	enum series_kind rss_kind;
	bool busy_floor, stairs, zombie, stuck;
	char comm[32];	      /* raw */
	char cgroup[256];     /* raw: a group's key, a process's cgroup */
	char floor_func[128]; /* a busy floor's function (procwords_floors), "" none; raw */
	/* Texts of the rows on screen (update fills them; raw, render escapes) */
	bool filled;
	char user[32];
	char cmd[256];			/* the command line, "" for a kernel thread */
	char hottest[128];		/* "" no samples */
	char parent[32];		/* a zombie's parent's name */
	double spark[VIEW_PROCS_SPARK]; /* oldest first; < 0: no point */
};

struct view_procs_state {
	enum view_procs_sort sort;
	bool grouped;	    /* key c */
	char filter[64];    /* '/': rows whose comm, command line or pid hold it
			       (case-insensitive); "" all */
	bool editing;	    /* after '/', until Enter or Esc: every key is text */
	char edit[64];	    /* the filter being typed (applied as typed) */
	int nmatched;	    /* out: processes the filter keeps */
	int nprocs;	    /* out: processes in all */
	char open[256];	    /* the open group's cgroup ("" none) */
	int selected;	    /* row index in sorted order */
	int scroll;	    /* first row shown */
	bool utf8;	    /* set by ui: blocks and arrows */
	bool hide_kernel;   /* set by ui (K): hottest skips kernel frames */
	bool full_names;    /* set by ui (v): C++ names whole */
	bool batch;	    /* no selection, no footer, limit rows */
	int limit;	    /* batch: rows at most (0: the grid's), and as many again
			       of those with a verdict past them */
	int extra;	    /* out: batch: rows with a verdict shown past limit */
	pid_t selected_pid; /* out: the selected process (0: a group or none) */
	int page;	    /* out: table rows on screen */
	int nrows;	    /* out: rows kept */
	struct view_procs_row *rows;
	/* Internal: what the selection follows across re-sorts, once a key
	 * moved it (until then it stays on the first row: the busiest). */
	bool moved;
	pid_t follow_pid;
	char follow_group[256];
	/* uid -> user name, looked up once each (getpwuid_r) */
	struct view_procs_user {
		uid_t uid;
		char name[32];
	} users[64];
	int nusers;
	char alerts[1024]; /* the box-wide verdicts (procwords_alerts), from update */
	/* Where each busy floor is spent (procwords_floors), by pid. */
	struct view_procs_floor {
		pid_t pid;
		char func[128]; /* raw */
	} floors[VIEW_PROCS_FLOORS];
	int nfloors;
};

/* On each refresh and after a key: the processes (p[0..n), any order) into
 * sorted rows (grouped when st->grouped), the selection kept, the texts
 * of the rows on screen filled (w: the hottest functions, NULL: none), the
 * busy floors' functions looked up (procwords_floors) and the alerts line
 * built for a cols x rows screen under header h (may be NULL). 0 or
 * -errno. */
int view_procs_update(struct view_procs_state *st, const struct view_header *h,
		      const struct machine_proc *p, size_t n, struct window *w, int cols, int rows);
/* Draw header, alerts, table and footer into g (cleared first) from the
 * kept rows; changes nothing. Under 60x12 (not batch): the "too small"
 * notice only. */
int view_procs_render(struct grid *g, const struct view_header *h,
		      const struct view_procs_state *st);

/* The process table's keys (keymap.h): s cycles the sort, c groups by
 * cgroup or not, Enter on a process: VIEW_ACTION_NARROW_PROCESS with its
 * pid, on a group: opens or closes it; Esc clears the filter, else closes
 * the open group; arrows, PgUp/PgDn, Home/End move the selection. '/'
 * starts a filter (htop's F4): while it is typed every key is text (ui
 * gives them here first: st->editing), the rows follow each key, Enter
 * keeps it and selects the first row, Esc drops what was typed. The
 * column header's line says the filter and how many processes it keeps. */
struct keymap;
extern const struct keymap view_procs_keymap;
struct view_action view_procs_key(struct view_procs_state *st, int key);

void view_procs_state_free(struct view_procs_state *st);

/* "cpu", "floor", "rss", "pid", "name". */
const char *view_procs_sort_name(enum view_procs_sort s);

#endif
