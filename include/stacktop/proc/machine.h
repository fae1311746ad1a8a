/*
 * machine — every process on the box, for the whole-machine mode
 * (`stacktop -a`, or no target at all): who each one is, what it does now,
 * its history, and the verdicts a responder acts on (busy floor, memory
 * climbing like stairs, zombie, stuck in D), plus the box's own CPU and
 * memory. Numbers and raw target text only: the words are the view's.
 *
 *   machine_new → (machine_set_sampled; machine_tick)* → machine_free
 *   (tests: machine_new → (machine_push*; machine_eval)* → machine_free)
 *
 * Cost is bounded whatever the box runs (2,000 sleeping processes, 10,000
 * threads): each tick lists /proc once (getdents, no file opened per
 * entry), then opens files within a budget:
 *  - a new process: its stat, and once only its owner (the directory's
 *    uid), cgroup and command line (the command line again after an exec,
 *    seen as a new comm; not while the process is in D, whose mm lock a
 *    read of cmdline would wait for);
 *  - a known process: its stat when it may have used CPU since its last
 *    read (sampled since the last tick (machine_set_sampled), or CPU > 0
 *    at its last read, or in state D, R or Z, or its /proc entry has a new
 *    inode: a reused pid), otherwise in turn, at most
 *    cfg.reads_per_tick of those a tick (a process not read costs a point
 *    of 0 % CPU and its last RSS: one not sampled used ~no CPU);
 *  - threads, for the stuck verdict: at most cfg.task_reads_per_tick task
 *    stat files and task directories a tick, in turn over the task
 *    directories of processes of more than one thread (at most one pass a
 *    tick; a single thread's state is its process's), plus every thread
 *    seen in D at its last read (re-read each tick while it stays there).
 *    Kernel threads are listed, never their tasks;
 *  - demand, for the busy floor: the processes that may hold a floor
 *    (CPU now or floor >= cfg.busy_floor_pct; of those, the
 *    MACHINE_DEMAND_PROCS with the most CPU now) have their threads'
 *    schedstat read each tick (proc/demand: at most MACHINE_DEMAND_THREADS
 *    threads a process, the task directory listed when it has more than
 *    one), within a budget of their own: cfg.demand_reads_per_tick files
 *    a tick, the busiest first (one whose threads do not fit what is left
 *    is skipped at this tick and keeps its state). A process not picked
 *    keeps its demand for 10 s (when more may hold a floor than are read,
 *    they take turns, each point its rate since its last read), then
 *    loses it;
 *  - fine steps, for a floor within two seconds (machine_fine, every
 *    MACHINE_FINE_STEP_S, from the session's loop and from pump() while a
 *    slow load holds it): while a candidate's history cannot decide (fewer
 *    than MACHINE_MIN_S points of CPU or of demand), its threads'
 *    schedstat (proc/finefloor: task directory and up to DEMAND_THREADS
 *    files) each step, MACHINE_DEMAND_PROCS processes and
 *    MACHINE_FINE_FILES files a step at most. The candidates are those of
 *    the last tick's demand reads; in the first second, which knows no CPU
 *    yet, those a scout found: once, a step after the first tick, every
 *    row's stat read again, the rows whose CPU since is >= busy_floor_pct.
 *    A candidate's steps go once it is decided or no longer one (~11 s).
 * Measured (2 cores, 2,000 extra sleeping processes): ~5 ms of CPU a tick,
 * ~8 ms with a process of 10,000 sleeping threads besides; the first tick,
 * which reads every process's identity, ~45 ms. The demand reads add
 * ~0.5 ms a tick with 32 candidate processes of 4 threads (~160 files);
 * the fine steps as much a step, 5 a second, for a candidate's first
 * ~11 s only.
 * A pid reused by another process (its start time differs) starts afresh.
 * Processes past MACHINE_MAX are not tracked (counted in `untracked`).
 *
 * Verdicts (machine_eval; pure given the series, so tests feed
 * machine_push with readings and call machine_eval):
 *  - floor_pct: p10 of the process's per-second CPU over the history;
 *    busy floor when there are >= MACHINE_MIN_S seconds of CPU and of
 *    demand, the floor is >= cfg.busy_floor_pct and the demand bursts
 *    (demand p90 >= demand p10 + MACHINE_BURST_PTS). Demand, not CPU: on
 *    a saturated box a steady worker's CPU wanders (10 %..60 %, starved
 *    by the others) while its demand stays flat at 100 % a thread; a
 *    floor-holder's demand rises in its bursts and falls back to the
 *    floor (the work that never sleeps). A process without demand points
 *    (not read: see the budget) is never a busy floor;
 *  - until then (fewer than MACHINE_MIN_S points of CPU or of demand),
 *    once its fine steps span MACHINE_FINE_MIN_S, floor_pct and the
 *    busy floor are theirs (floor_fine; finefloor.h): the pauses are the
 *    steps at which every thread that both works (demand >= 50 %, having
 *    run) and sleeps (under 5 %, two steps) is asleep; with two of them, floor_pct
 *    is the process's CPU in them and a busy floor when >= busy_floor_pct
 *    (floor_tids: the threads whose CPU in the pauses holds it); without,
 *    floor_pct is the p10 of its CPU per step and no busy floor. A steady
 *    worker, however starved, never sleeps: no pauses. Before that span,
 *    floor_pct is the history's and no busy floor;
 *  - stairs: the RSS series' trend (series_trend, 1 MiB noise) is stairs
 *    after >= MACHINE_MIN_S seconds; an RSS that moved by no more than the
 *    noise over the history is flat with a slope of 0 (no trend computed).
 *    The trend costs up to ~0.3 ms a process (256 points): machine_tick
 *    recomputes it for at most MACHINE_TRENDS_PER_TICK processes a tick,
 *    in turn (the others keep their last verdict); machine_eval for all;
 *  - zombie: state Z; its parent's zombie_children counts it (the parent
 *    is the one to fix);
 *  - stuck: threads in D for >= cfg.stuck_s (stuck_threads, the longest
 *    stuck_for_s).
 *
 * CPU: a known process's point is its average since its last read (a
 * quiet one read after a pause shows no false spike); a new process's
 * first reading gives no CPU point, unless it was born since the last
 * tick (its start time says so): then all its CPU is this tick's.
 *
 * Gone: a pid not listed (or, pushed, not pushed) at the latest tick is
 * dropped by the next evaluation, with its D threads; machine_eval and
 * machine_tick (which evaluates) do it.
 *
 * Memory: MACHINE_MAX rows of two series of cfg.history_s points each,
 * allocated as processes appear and freed as they go; the processes whose
 * demand is read, a third series and their threads' last reads (~1.5
 * KiB), and while fine steps are read, ~13 KiB (struct finefloor), freed
 * when they stop being read. The box's CPU and memory: proc/boxstat.
 * Errors: 0 / -errno.
 */
#ifndef STACKTOP_MACHINE_H
#define STACKTOP_MACHINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "stacktop/proc/demand.h"
#include "stacktop/proc/finefloor.h"
#include "stacktop/proc/series.h"

/* Processes tracked at once; more are counted, not listed. */
#define MACHINE_MAX 16384
/* Seconds of history before a floor or stairs verdict. */
#define MACHINE_MIN_S 10
/* How far above its p10 a process's demand p90 must reach (points of a
 * core) for its floor to be a busy floor rather than steady work. */
#define MACHINE_BURST_PTS 10.0
/* RSS trends a tick recomputes (machine_tick; machine_eval: all). */
#define MACHINE_TRENDS_PER_TICK 8
/* Processes whose demand (run + run-queue wait) a tick reads, at most, and
 * threads of each. */
#define MACHINE_DEMAND_PROCS 32
#define MACHINE_DEMAND_THREADS DEMAND_THREADS
/* Fine steps (machine_fine): their length, the span of them a verdict
 * needs, the files a step opens at most; the threads named as holding a
 * floor decided on them. */
#define MACHINE_FINE_STEP_S 0.2
#define MACHINE_FINE_MIN_S 1.2
#define MACHINE_FINE_FILES 256
#define MACHINE_FLOOR_TIDS FINEFLOOR_HOLDERS

struct machine_config {
	unsigned history_s;		/* points kept per series (the window), >= MACHINE_MIN_S */
	double busy_floor_pct;		/* default 5 */
	double stuck_s;			/* default 5 */
	unsigned reads_per_tick;	/* quiet processes' stat files a tick, default 256 */
	unsigned task_reads_per_tick;	/* threads' stat files a tick, default 256 */
	unsigned demand_reads_per_tick; /* schedstat files and task dirs a tick, default 512 */
};

/* One process's stat file at a tick: what machine_tick reads, what tests
 * feed through machine_push. */
struct machine_reading {
	pid_t pid, ppid;
	char state;    /* R S D T t Z X I */
	char comm[32]; /* raw */
	double cpu_s;  /* utime + stime, all threads, seconds */
	uint64_t rss;  /* bytes */
	int nthreads;
	uint64_t start; /* start time (clock ticks since boot): tells a reused pid */
	bool kernel;	/* a kernel thread (PF_KTHREAD) */
};

struct machine_proc {
	pid_t pid, ppid;
	uid_t uid;
	char comm[32];	   /* raw; views sanitize */
	char cmdline[256]; /* raw, NULs as spaces, "" for kernel threads */
	char cgroup[256];  /* raw cgroup v2 path ("/system.slice/x.service"), "" unknown */
	char state;
	bool kernel;
	int nthreads;
	double cpu_pct;	  /* last second, % of one core */
	double floor_pct; /* p10 over the history */
	double p90_pct, peak_pct;
	/* Demand: the CPU its threads asked for (ran + waited on a run
	 * queue), % of one core, while it is read (see the budget). */
	double demand_pct;	       /* last point, < 0: none */
	double demand_p10, demand_p90; /* over the history */
	struct series demand;	       /* one point a tick it is read */
	uint64_t rss;		       /* bytes, at its last read */
	double rss_slope;	       /* bytes per second over the history (Theil-Sen) */
	enum series_kind rss_kind;
	int zombie_children;			/* its children in state Z */
	int stuck_threads;			/* threads in D for >= stuck_s */
	double stuck_for_s;			/* the longest of those */
	bool busy_floor, stairs, zombie, stuck; /* the verdicts */
	/* floor_pct and busy_floor decided on fine steps (the history too
	 * short); then the threads that hold the floor, the most first. */
	bool floor_fine;
	int nfloor_tids;
	pid_t floor_tids[MACHINE_FLOOR_TIDS];
	struct series cpu, rss_series; /* one point a tick */
	/* Internal (machine_tick's budget). */
	double prev_cpu_s, read_t, seen_t;
	double cpu_nz_t, rss_chg_t; /* the last non-zero CPU point, the last RSS change */
	uint64_t start;
	uint64_t ino;		    /* its /proc entry's inode: a new one for a reused pid */
	bool sampled;		    /* since the last tick (machine_set_sampled) */
	bool moved;		    /* CPU > 0 at its last read */
	unsigned char need_cmdline; /* reads of cmdline due: new, exec'd, or read empty */
	bool demand_due;	    /* among those read at this tick */
	double demand_t;	    /* when it was last among them */
	struct demand *dm;	    /* its threads at the last demand read, NULL none */
	struct finefloor *fine;	    /* its fine steps while read, NULL none */
	bool fine_scout;	    /* a candidate before its first CPU point */
};

/* Processes grouped by cgroup (their container or service). */
struct machine_group {
	const char *cgroup; /* a member's cgroup string, valid until the next tick */
	int nprocs;
	double cpu_pct; /* summed */
	uint64_t rss;	/* summed */
	pid_t hottest;	/* its member with the most CPU now */
};

/* The box as a whole, from /proc/stat and /proc/meminfo. */
struct machine_totals {
	int ncpu;	   /* online CPUs */
	double cpu_pct;	   /* busy, % of one core (200 = two cores busy) */
	uint64_t mem_used; /* MemTotal - MemAvailable, bytes */
	uint64_t mem_total;
	int nprocs, nthreads; /* processes listed, threads they hold */
	int untracked;	      /* processes past MACHINE_MAX */
};

struct machine;

/* The defaults: 60 s of history, the others as above. */
void machine_config_default(struct machine_config *c);
/* cfg NULL: the defaults. */
int machine_new(const struct machine_config *cfg, struct machine **out);
void machine_free(struct machine *m);

/* Processes that had samples since the last tick (the sampler's view of
 * who ran): they are read this tick whatever the budget. */
void machine_set_sampled(struct machine *m, const pid_t *pids, size_t n);
/* Once a second: list /proc, read within the budget, push one point a
 * process, then evaluate (as machine_eval, the RSS trends within their
 * budget). t in seconds, any origin, increasing. */
int machine_tick(struct machine *m, double t);
/* Every ~100 ms (it keeps MACHINE_FINE_STEP_S between steps): a fine
 * step of the floor candidates whose history is too short (see above).
 * t as machine_tick's. */
void machine_fine(struct machine *m, double t);
/* Tests: one process's reading at t, as machine_tick would push it (a pid
 * not pushed at a tick it saw others is gone after it); then machine_eval. */
int machine_push(struct machine *m, double t, const struct machine_reading *r, uid_t uid,
		 const char *cgroup, const char *cmdline);
/* Tests: pid's demand at t (% of one core: run + run-queue wait), as
 * machine_tick reads it for the processes that may hold a floor; push the
 * process's reading at t first. 0, -ESRCH (not tracked), -ENOMEM. */
int machine_push_demand(struct machine *m, double t, pid_t pid, double pct);
/* Tests: a fine step of pid ending at t (finefloor_step); push the
 * process first. 0, -ESRCH (not tracked), -ENOMEM. */
int machine_push_fine(struct machine *m, double t, pid_t pid, const struct demand_step *st);
/* Tests: a thread of pid seen in state D since since_t (stuck after
 * stuck_s). */
void machine_push_d_thread(struct machine *m, double t, pid_t pid, pid_t tid, double since_t);
/* Recompute every process's readings and verdicts from its series. */
void machine_eval(struct machine *m);

/* The processes tracked, in no order; valid until the next tick or push. */
const struct machine_proc *machine_procs(const struct machine *m, size_t *n);
/* One process, NULL when not tracked. */
const struct machine_proc *machine_find(const struct machine *m, pid_t pid);
/* Processes grouped by cgroup, the most CPU first: up to max into out,
 * returns how many groups there are. */
size_t machine_groups(const struct machine *m, struct machine_group *out, size_t max);
void machine_get_totals(const struct machine *m, struct machine_totals *out);

#endif
