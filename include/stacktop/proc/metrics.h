/*
 * metrics — what the target processes and each of their threads did,
 * second by second: CPU (% of one core, so 250% is two and a half cores),
 * memory split by kind, thread states; and the readings on top: floor,
 * baseline, peak, memory trend and time to the limit, and the alerts.
 *
 * Several processes (several -p PIDs, --subprocesses): the process series
 * are sums over every process tracked (metrics_set_pids, called by the
 * session before each tick with the targets and their descendants). A
 * process that ended counts no more from the tick it is gone at; one that
 * joins after the first tick was forked within the last second, so all
 * its CPU time counts in that second (as for a new thread). The thread
 * table holds the threads of every process, each with its pid.
 *
 * metrics_tick is called once a second: it reads procfs (procstat) and
 * pushes one point into each series. metrics_eval recomputes the readings
 * and alerts from the series; it is pure given the series, so tests feed
 * metrics_push_* with synthetic data and call metrics_eval. Series hold one
 * point per second for the window, so memory is bounded by --window (and
 * cpu_long by METRICS_LONG_S).
 *
 * Numbers and enums only: the words a person reads about them (verdicts,
 * alerts, spans, rates) are built in the view layer (view_chart).
 *
 * Definitions (what the user sees):
 *  - floor: p10 of process CPU over the window — the level it never drops
 *    below;
 *  - baseline: median CPU over a reference period: the first minute (or
 *    the first window, if shorter) by default; metrics_baseline_now makes
 *    it the median of the last 10 seconds; metrics_baseline_clear removes it;
 *  - busy-floor alert: a floor is what stays busy in the pauses between
 *    bursts. On the ~100 ms steps of metrics_fine (one-second buckets alias
 *    a 1 s / 1 s rhythm into a flat line), a thread bursts when it is busy
 *    in some steps and asleep in a quarter of them; the pauses are the
 *    steps at which every bursting thread sleeps (series_pauses). The floor
 *    (alert_floor) is the process's median CPU in the pauses; the alert
 *    holds when it is >= busy_floor_pct. A steady worker has no pauses (a
 *    worker starved by other load is runnable, not asleep): high CPU, no
 *    floor;
 *  - spike alert: CPU above spike_factor x baseline for spike_for_s;
 *  - stairs alert: the memory trend is stairs (series_trend);
 *  - rhythm: the process CPU of the last METRICS_LONG_S seconds (kept
 *    apart from the window, in bounded memory: one point a second) spikes
 *    on a steady period (rhythm_find: at least three spikes, intervals
 *    too regular to be random onsets); without one, a thread's CPU over
 *    the window (one of the few busiest, METRICS_RHYTHM_THREADS: one
 *    thread of many spiking is hidden in the sum); and the RSS of the
 *    last METRICS_LONG_S seconds falling on a steady period (a sawtooth:
 *    rhythm_series_falls);
 *  - per thread: BUSY FLOOR while the process has a busy floor and the
 *    thread's median CPU in the pauses (pause_pct) is a real part of it
 *    (busy_floor_pct, a quarter of the floor): every thread that holds it
 *    is flagged; STUCK when in D state for
 * >= stuck_s; ZOMBIE when in state Z. Zombie (unreaped) child processes are listed.
 */
#ifndef STACKTOP_METRICS_H
#define STACKTOP_METRICS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "stacktop/proc/procstat.h"
#include "stacktop/proc/rhythm.h"
#include "stacktop/proc/series.h"

/* Fine steps (metrics_fine) a second, and how many processes and threads
 * they read (each step opens their stat files): the threads that may hold
 * a busy floor or burst, in the order of the thread table. */
#define METRICS_FINE_PER_S 10
#define METRICS_FINE_PROCS 16
#define METRICS_FINE_THREADS 8

/* Threads whose fine steps the busy floor reads, at most. */
#define METRICS_FLOOR_ROWS 32

/* Seconds of process CPU kept for the rhythm, whatever the window (one
 * point a second: 1800 x 16 bytes). */
#define METRICS_LONG_S 1800
/* Threads whose CPU is looked at for a rhythm when the process's has none
 * (those with the highest peak: a spiking thread peaks). */
#define METRICS_RHYTHM_THREADS 4
/* A fall of the RSS counts toward a rhythm over the larger of these: a
 * sawtooth's falls are a real part of the whole, noise frees a page. */
#define METRICS_SWING_MIN (1024.0 * 1024)
#define METRICS_SWING_FRAC 0.05

/* Seconds of memory data before any trend verdict. */
#define METRICS_TREND_MIN_S 10

struct metrics_config {
	unsigned window_s;	  /* series length in seconds (one point a second) */
	double busy_floor_pct;	  /* default 5 */
	double spike_factor;	  /* default 2 */
	double spike_for_s;	  /* default 30 */
	double stuck_s;		  /* default 5 */
	double baseline_period_s; /* default 60 */
};

struct metrics_thread {
	pid_t tid;
	pid_t pid;	   /* its process */
	char comm[32];	   /* raw */
	char pcomm[32];	   /* its process's name, raw */
	char state;	   /* R S D T t Z X I, '?' unknown */
	char wchan[48];	   /* raw, "" when running or unknown (metrics_want_wchan) */
	double cpu_pct;	   /* last second */
	double floor_pct;  /* p10 over the window */
	double peak_pct;   /* the highest second over the window */
	double prev_cpu_s; /* internal: CPU seconds at the last tick */
	double d_since;	   /* t when it entered D, < 0 when not in D */
	double d_for_s;	   /* seconds in D so far */
	bool alive;	   /* seen at the last tick */
	bool busy_floor, stuck, zombie;
	struct series cpu; /* CPU % per second */
	/* Threads that may hold a floor or burst (metrics_fine): CPU % in
	 * ~100 ms steps, so a thread that works a second and sleeps a second
	 * is not read as a steady half, and each step's enum series_step;
	 * pause_pct is its median CPU in the process's pauses, < 0 when there
	 * are none. */
	struct series fine, fine_step;
	double fine_t, fine_cpu_s, pause_pct;
	double seen_t; /* t of the last tick that saw it; gone threads are dropped a window later */
	/* Internal: its stat, wchan and children files, kept open between
	 * ticks (only for the first METRICS_KEEP_OPEN threads). */
	struct procstat_file stat_f, wchan_f, children_f;
	/* Internal (metrics_tick's budget): t of its last stat read, its
	 * sample count at the last tick (metrics_set_samples), and whether
	 * its children file listed a zombie then. */
	double read_t;
	double wchan_t; /* read_t of its last wchan read (older: not read since) */
	/* The session's lock scan: read_t when its syscall was last found
	 * not to be a futex wait (< 0: never), so a thread not read since is
	 * not looked at again. */
	double nofutex_t;
	uint64_t samples;
	bool zparent;
	bool parent; /* its children file listed a process at its last read */
};

/* Threads read per tick past those that must be (new, not asleep, busy,
 * sampled since the last tick, a zombie's parent): the rest in turn, so a
 * tick's reads follow what moves, not the thread count. */
#define METRICS_ROTATE 256

/* Threads whose procfs files stay open between ticks (3 descriptors each);
 * the others open and close them each tick. */
#define METRICS_KEEP_OPEN 1024
/* Processes whose stat, status and task directory stay open (3 each). */
#define METRICS_KEEP_OPEN_PROCS 256

/* One process tracked (internal to metrics_tick, read by tests). */
struct metrics_proc {
	pid_t pid;
	char comm[32];		    /* raw */
	double prev_cpu_s;	    /* CPU seconds at the last tick, < 0 before the first */
	uint64_t anon, file, shmem; /* the last memory reading (kept for a zombie) */
	bool alive;		    /* read at the last tick */
	struct series rss;	    /* its RSS, to name the one that grows */
	struct procstat_file stat_f, status_f;
	void *task_dir; /* DIR * of /proc/PID/task, rewound each tick */
};

struct metrics {
	pid_t pid; /* the first target: the memory limit is read from its cgroup */
	struct metrics_config cfg;
	/* Threads whose files stay open: METRICS_KEEP_OPEN, fewer when the
	 * open-file limit is low (the samplers and unwinding come first);
	 * processes: the first keep_open_procs (a quarter of keep_open, at
	 * most METRICS_KEEP_OPEN_PROCS). */
	int keep_open, keep_open_procs;
	double t0; /* time of the first tick */
	double last_t;

	/* The processes summed, in the order they joined. */
	struct metrics_proc *procs;
	int nprocs;
	size_t procs_cap;
	/* More than one process among the tracked ones and the threads
	 * listed: the views then say which process a thread is in. */
	bool multi;
	/* The whole machine's own figures (pushed by the session): CPU of
	 * every CPU, memory used of RAM; the views say so. */
	bool box;

	struct series cpu;		      /* process CPU % of one core */
	struct series cpu_long;		      /* the same, the last METRICS_LONG_S seconds */
	struct series rss, anon, file, shmem; /* bytes */

	/* Readings (metrics_eval). */
	double cpu_now, cpu_floor, cpu_peak, cpu_p90;
	/* The process CPU in ~100 ms steps (metrics_fine): one-second buckets
	 * alias a 1 s / 1 s rhythm into a flat line, so the busy-floor alert
	 * is decided on these; alert_floor is the floor it names (the median
	 * in the pauses, < 0 when there are none). */
	struct series cpu_fine;
	double fine_t, fine_cpu_s;
	int fine_n;
	/* Internal: the threads metrics_fine reads (indices into threads,
	 * chosen at each tick), so a fine step does not walk every thread. */
	int fine_idx[METRICS_FINE_THREADS], nfine;
	double alert_floor;
	/* Every process profiled is gone (the session sets it): cpu_now is
	 * the last second it ran, not a live figure; views say "exited". */
	bool exited;
	bool baseline_set;
	bool baseline_manual; /* set with metrics_baseline_now */
	double cpu_baseline;
	uint64_t mem_now, anon_now, file_now, shmem_now;
	uint64_t mem_limit;
	const char *mem_limit_src; /* "cgroup", "cgroup v1", "RAM" */
	struct series_trend mem_trend;
	const char *mem_growing; /* "anonymous", "file-backed", "shared" or NULL */
	/* Several processes: the one that grew by most of the total growth
	 * over the window (0 when none dominates), and its name (raw). */
	pid_t mem_grower_pid;
	char mem_grower_comm[32];
	double mem_to_limit_s; /* < 0: not rising or no limit */
	bool mem_rising;       /* climbing like stairs, but for too short a time to call it */

	struct series_spike spike;
	double spike_held_s;
	bool alert_busy_floor, alert_spike, alert_stairs;
	/* The CPU spikes on a cadence (cpu_long, rhythm_find): alert_rhythm
	 * and what it found. */
	bool alert_rhythm;
	struct rhythm rhythm;
	/* Without it, one thread's CPU on a cadence (eval: the
	 * METRICS_RHYTHM_THREADS alive threads with the highest peak, the
	 * most regular of them): which, and its rhythm. */
	bool alert_thread_rhythm;
	struct rhythm thread_rhythm;
	pid_t rhythm_tid;
	char rhythm_comm[32]; /* raw */
	/* RSS that rises and falls on a cadence (rss_long's falls,
	 * rhythm_series_falls: a fall counts over METRICS_SWING_MIN and
	 * METRICS_SWING_FRAC of the median RSS); level: the median fall. */
	bool alert_mem_rhythm;
	struct rhythm mem_rhythm;
	struct series rss_long; /* RSS, the last METRICS_LONG_S seconds */
	/* What rises in the spikes, most first (model/spikes writes them
	 * after each tick; none while there is no rhythm or no test). */
	struct rhythm_riser risers[RHYTHM_RISERS];
	unsigned nrisers;
	/* Set by the front end, not by metrics: the function that holds the
	 * growth ("cache_put", raw target text), named in the MEM alert;
	 * NULL when not known. */
	const char *mem_holder;
	/* Set by the front end too (runtime/hsperf for a JVM, runtime/goheap
	 * for Go): the runtime's
	 * own heap, committed and used, in bytes (rt_heap false: not a
	 * runtime whose heap can be read), its collections and their time;
	 * and the committed heap and RSS at the first reading, so a verdict
	 * can tell growth on the heap from growth outside it. */
	bool rt_heap;
	/* a runtime whose heap is not read ("node", "Python", "Java" without
	 * its hsperfdata), for a "not available"; NULL: native code */
	const char *rt_unread;
	/* why not, when known ("stripped: no symbols"); NULL: the JVM's
	 * sentence. rt_name: whose heap rt_heap is ("Java", "Go"). */
	const char *rt_unread_why, *rt_name;
	uint64_t rt_heap_used, rt_heap_committed, rt_gc_count;
	double rt_gc_time_s;
	uint64_t rt_heap_committed0, rt_rss0;
	pid_t busiest_floor_tid; /* the floor thread with the highest floor_pct, 0 if none */

	struct metrics_thread *threads;
	int nthreads;
	size_t cap;
	pid_t zombies[16]; /* unreaped child processes */
	/* Internal: where the rotation of quiet threads resumes, and the
	 * samples each thread got (metrics_set_samples; NULL: none known). */
	int rot;
	uint64_t (*samples_of)(void *ctx, pid_t tid);
	void *samples_ctx;
	uint64_t reads; /* procfs reads of thread files since init (bench, tests) */
	/* Internal (metrics_set_forks): the forks seen so far, whether they are
	 * known at all, and until when quiet threads' children are read. */
	uint64_t forks;
	bool forks_known;
	double kids_until;
	int nzombies;
	/* Internal (metrics_want_wchan): read wchan files; how many of the
	 * threads not read this tick may still have theirs read. */
	bool want_wchan;
	int wchan_due;

	/* Internal (metrics_tick / metrics_eval). */
	double tick_t;		 /* time of the previous metrics_tick, < 0 before the first */
	double limit_t;		 /* when mem_limit was last read */
	bool baseline_auto_done; /* the first-period baseline was taken (or cleared) */
	double mem_noise;	 /* noise floor used for mem_trend, bytes */
};

void metrics_config_default(struct metrics_config *c);
/* pid: the first process tracked (0: none, for synthetic tests). */
int metrics_init(struct metrics *m, pid_t pid, const struct metrics_config *c);
void metrics_free(struct metrics *m);
/* Between ticks, every ~100 ms: the summed process CPU, and the CPU and
 * state of the few threads that may hold a busy floor or burst, into the
 * fine series the busy-floor alert is decided on. 0 or -errno. */
int metrics_fine(struct metrics *m, double t);
/* Track exactly these processes from the next tick: new ones join, the
 * ones not listed leave (their threads are shown as exited). 0 or -ENOMEM
 * (then the set is unchanged but for the processes that left). */
int metrics_set_pids(struct metrics *m, const pid_t *pids, int n);
/* The tracked process pid, or NULL. */
const struct metrics_proc *metrics_proc(const struct metrics *m, pid_t pid);
/* The name of thread tid, or NULL; ctx is the struct metrics (the shape of
 * export_opts.thread_name). */
const char *metrics_thread_name(void *ctx, int tid);

/* Read procfs at time t (seconds, monotonic) and push one point, the sum
 * over the processes still there. 0, or -ESRCH when every process is gone
 * (series are kept). Calls metrics_eval. */
int metrics_tick(struct metrics *m, double t);
/* What the samples say of each thread: fn(ctx, tid) is a count that moves
 * when tid was sampled (the window's samples of it). A tick reads the
 * stat of a quiet thread (asleep, idle over the window) only when its count
 * moved or its turn in the rotation came (METRICS_ROTATE a tick). */
void metrics_set_samples(struct metrics *m, uint64_t (*fn)(void *ctx, pid_t tid), void *ctx);
/* Read the threads' wait channels (wchan) or not (true after
 * metrics_init): a view that shows them asks for them. Off, a thread's
 * wchan is "" once read again; on again, the threads not read at a tick
 * have theirs read METRICS_ROTATE a tick. */
void metrics_want_wchan(struct metrics *m, bool on);
/* The processes the threads forked so far, as the sampler counts them
 * (sampler_stats.forks), when it sees them all. Then a thread's children
 * file is read only when the thread is new, had children at its last
 * read, has a zombie, or a fork came within a rotation's time; unknown
 * (the default), with every stat read. */
void metrics_set_forks(struct metrics *m, bool known, uint64_t forks);

/* For tests: push synthetic points, then metrics_eval. */
void metrics_push_process(struct metrics *m, double t, double cpu_pct, uint64_t anon, uint64_t file,
			  uint64_t shmem);
/* The CPU alone (a recorded file's per-second CPU, for report): the memory
 * series stay empty. */
void metrics_push_cpu(struct metrics *m, double t, double cpu_pct);
struct metrics_thread *metrics_thread(struct metrics *m, pid_t tid, bool create);
void metrics_push_thread(struct metrics *m, double t, pid_t tid, const char *comm, char state,
			 double cpu_pct);
/* One process's RSS at t (the process joins if new): what names the one
 * that grows. */
/* For tests: one fine step of the process, and of thread tid (already
 * pushed with metrics_push_thread), CPU % and its state at the step's end. */
void metrics_push_fine(struct metrics *m, double t, double cpu_pct);
void metrics_push_thread_fine(struct metrics *m, double t, pid_t tid, double cpu_pct, char state);
void metrics_push_proc_rss(struct metrics *m, double t, pid_t pid, const char *comm, uint64_t rss);
void metrics_eval(struct metrics *m, double t);

/* 'b': the baseline becomes the median of the last 10 s; 'B': no baseline. */
void metrics_baseline_now(struct metrics *m);
void metrics_baseline_clear(struct metrics *m);

#endif
