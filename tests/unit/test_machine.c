/* Unit tests for machine: the verdicts from pushed readings (busy floor,
 * steady work, a starved steady worker by its demand, a floor on fine
 * steps before the history decides, stairs, a single jump, zombies and their
 * parent, threads stuck in D, a reused pid, a gone pid, groups by cgroup), and machine_tick on the
 * real /proc (ourselves, a zombie child, an exec, a spinning child, the demand of a spinner and of
 * a 30 ms / 70 ms child, a thread in D, the budget of quiet processes). The stat-line parser's
 * tests are test_procstat's.
 *
 * This file defines openat: the library is linked in statically, so its
 * calls come here first and the budget test counts the stat files opened. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "runner.h"

#include "stacktop/proc/machine.h"
#include "helpers.h"
#include "schedsim.h"

#define MIB (1024ull * 1024ull)

/* ---- the stat files machine opens, of the pids watched ---- */

#define NKIDS 100
static pid_t watched[NKIDS];
static int nwatched, opens_of[NKIDS];

static void note_open(const char *path)
{
	int pid, end = 0;

	if (!nwatched || sscanf(path, "%d/stat%n", &pid, &end) != 1 || path[end])
		return;
	for (int i = 0; i < nwatched; i++)
		if (watched[i] == pid)
			opens_of[i]++;
}

int openat(int dirfd, const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	mode_t mode = (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(ap, int) : 0;
	va_end(ap);
	note_open(path);
	return (int)syscall(SYS_openat, dirfd, path, flags, mode);
}

static struct machine *new_machine(void)
{
	struct machine_config c;
	struct machine *m;

	machine_config_default(&c);
	c.history_s = 60;
	assert_int_equal(machine_new(&c, &m), 0);
	return m;
}

static struct machine_reading reading(pid_t pid, double cpu_s, uint64_t rss)
{
	return (struct machine_reading){.pid = pid,
					.ppid = 1,
					.state = 'S',
					.comm = "worker",
					.cpu_s = cpu_s,
					.rss = rss,
					.nthreads = 1,
					.start = 1000};
}

static void push(struct machine *m, double t, const struct machine_reading *r, const char *cgroup)
{
	assert_int_equal(machine_push(m, t, r, 1000, cgroup, "worker --serve"), 0);
}

/* pid's CPU at pct of a core for each second of secs[0..n): one reading a
 * second from t = 0 (cumulative CPU seconds), then machine_eval. */
static const struct machine_proc *run_cpu(struct machine *m, pid_t pid, const double *pct, size_t n)
{
	struct machine_reading r = reading(pid, 0, 10 * MIB);

	push(m, 0, &r, "/a");
	for (size_t i = 0; i < n; i++) {
		r.cpu_s += pct[i] / 100.0;
		push(m, (double)(i + 1), &r, "/a");
	}
	machine_eval(m);
	return machine_find(m, pid);
}

/* run_cpu with a demand point a second too (dem[i] with pct[i]; the
 * first demand point from skip on). */
static const struct machine_proc *run_demand(struct machine *m, pid_t pid, const double *pct,
					     const double *dem, size_t n, size_t skip)
{
	struct machine_reading r = reading(pid, 0, 10 * MIB);

	push(m, 0, &r, "/a");
	for (size_t i = 0; i < n; i++) {
		r.cpu_s += pct[i] / 100.0;
		push(m, (double)(i + 1), &r, "/a");
		if (i >= skip)
			assert_int_equal(machine_push_demand(m, (double)(i + 1), pid, dem[i]), 0);
	}
	machine_eval(m);
	return machine_find(m, pid);
}

/* 30 % with a one-second burst to 130 % every fifth second, its demand
 * the same: a busy floor at ~30; a steady 100 % worker (with jitter) is
 * busy, not a floor. */
static void test_busy_floor(void **state)
{
	struct machine *m = new_machine();
	double pct[40], dem[40];

	for (size_t i = 0; i < 40; i++)
		pct[i] = dem[i] = i % 5 == 4 ? 130 : 30;
	const struct machine_proc *p = run_demand(m, 10, pct, dem, 40, 0);
	assert_non_null(p);
	assert_true(p->busy_floor);
	assert_float_equal(p->floor_pct, 30, 1.0);
	assert_true(p->peak_pct >= 129);
	assert_float_equal(p->demand_p10, 30, 1.0);
	assert_float_equal(p->demand_pct, 130, 1e-9); /* the last point */
	machine_free(m);

	m = new_machine();
	for (size_t i = 0; i < 40; i++)
		pct[i] = dem[i] = 100 + (i % 3) - 1;
	p = run_demand(m, 11, pct, dem, 40, 0);
	assert_non_null(p);
	assert_false(p->busy_floor);
	assert_true(p->floor_pct >= 98);
	machine_free(m);

	/* A floor-holder seen for less than MACHINE_MIN_S seconds: not yet. */
	m = new_machine();
	for (size_t i = 0; i < MACHINE_MIN_S - 2; i++)
		pct[i] = dem[i] = i % 2 ? 130 : 30;
	p = run_demand(m, 12, pct, dem, MACHINE_MIN_S - 2, 0);
	assert_false(p->busy_floor);
	machine_free(m);
}

/* On a saturated box a steady worker (threads that never sleep) gets what
 * the others leave: its CPU wanders 10..60 %, its demand (run + wait)
 * stays at 100 %: busy, not a floor. The same CPU with a demand that
 * bursts is one; without demand points (not read), or with fewer than
 * MACHINE_MIN_S of them, it is none. */
static void test_busy_floor_starved(void **state)
{
	static const double wander[] = {10, 60, 25, 45, 12, 55, 30, 18, 50, 40, 22, 58, 35};
	const size_t nw = sizeof(wander) / sizeof(wander[0]);
	double pct[40], flat[40], bursts[40];
	struct machine *m = new_machine();

	for (size_t i = 0; i < 40; i++) {
		pct[i] = wander[i % nw];
		flat[i] = 100 + (double)(i % 3) - 1;
		bursts[i] = i % 5 == 4 ? 130 : 30;
	}
	const struct machine_proc *p = run_demand(m, 13, pct, flat, 40, 0);
	assert_true(p->floor_pct >= 10); /* a floor by CPU alone... */
	assert_true(p->p90_pct >= p->floor_pct + MACHINE_BURST_PTS);
	assert_false(p->busy_floor); /* ...but it never sleeps */
	assert_float_equal(p->demand_p10, 99, 1.0);
	machine_free(m);

	m = new_machine();
	p = run_cpu(m, 14, pct, 40); /* no demand read */
	assert_false(p->busy_floor);
	assert_true(p->demand_pct < 0);
	machine_free(m);

	m = new_machine();
	p = run_demand(m, 15, pct, bursts, 40, 0);
	assert_true(p->busy_floor);
	machine_free(m);

	m = new_machine();
	p = run_demand(m, 16, pct, bursts, 40, 40 - (MACHINE_MIN_S - 1));
	assert_int_equal(p->demand.len, MACHINE_MIN_S - 1);
	assert_false(p->busy_floor);
	assert_int_equal(machine_push_demand(m, 41, 999, 50), -ESRCH);
	machine_free(m);
}

struct fine_ctx {
	struct machine *m;
	pid_t pid;
};

static void to_machine(void *ctx, double t, const struct demand_step *st)
{
	const struct fine_ctx *c = ctx;

	assert_int_equal(machine_push_fine(c->m, t, c->pid, st), 0);
}

/* The floor target's threads in fine steps (schedsim.h: main 1 s of work
 * then 1.5 s asleep, a 30 ms / 70 ms poller, an idler): with 1 s of
 * steps, no verdict yet; with 2 s, a busy floor of ~30 % before the
 * history has MACHINE_MIN_S seconds, held by the poller; from
 * MACHINE_MIN_S seconds of CPU and demand on, the history decides (a
 * flat demand here: none). */
static void test_fine_floor(void **state)
{
	static struct sim_thread th[3];
	struct machine *m = new_machine();
	struct fine_ctx c = {m, 20};
	struct machine_reading r = reading(20, 0, 10 * MIB);
	struct demand_step st = {0};
	const struct machine_proc *p;

	sim_cycle(&th[0], 20, 1000, 'R', 1500, 'S', 0);
	sim_cycle(&th[1], 21, 30, 'R', 70, 'S', 0);
	sim_cycle(&th[2], 22, 1, 'S', 1, 'S', 0);
	r.nthreads = 3;
	push(m, 0, &r, "/a");
	r.cpu_s = 1.3;
	push(m, 1, &r, "/a");
	sim_steps(th, 3, 0, 1000, 200, to_machine, &c);
	machine_eval(m);
	p = machine_find(m, 20);
	assert_false(p->floor_fine);
	assert_false(p->busy_floor);

	r.cpu_s = 1.6;
	push(m, 2, &r, "/a");
	sim_steps(th, 3, 1000, 2000, 200, to_machine, &c);
	machine_eval(m);
	p = machine_find(m, 20);
	assert_true(p->floor_fine);
	assert_true(p->busy_floor);
	assert_float_equal(p->floor_pct, 30, 5);
	assert_int_equal(p->nfloor_tids, 1);
	assert_int_equal(p->floor_tids[0], 21);

	for (int i = 3; i < 3 + MACHINE_MIN_S; i++) {
		r.cpu_s += 0.3;
		push(m, i, &r, "/a");
		assert_int_equal(machine_push_demand(m, i, 20, 100), 0);
	}
	machine_eval(m);
	p = machine_find(m, 20);
	assert_false(p->floor_fine);
	assert_false(p->busy_floor);
	assert_int_equal(p->nfloor_tids, 0);
	assert_float_equal(p->floor_pct, 30, 1);
	assert_int_equal(machine_push_fine(m, 20, 999, &st), -ESRCH);
	machine_free(m);
}

/* pid's RSS at rss[i] MiB each second, then machine_eval. */
static const struct machine_proc *run_rss(struct machine *m, pid_t pid, const double *mib, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct machine_reading r = reading(pid, 0, (uint64_t)(mib[i] * MIB));
		push(m, (double)i, &r, "/a");
	}
	machine_eval(m);
	return machine_find(m, pid);
}

static void test_stairs(void **state)
{
	struct machine *m = new_machine();
	double mib[40];

	/* +4 MiB every 5 s. */
	for (size_t i = 0; i < 40; i++)
		mib[i] = 100 + 4.0 * (double)(i / 5);
	const struct machine_proc *p = run_rss(m, 20, mib, 40);
	assert_true(p->stairs);
	assert_int_equal(p->rss_kind, SERIES_STAIRS);
	assert_true(p->rss_slope > 0.5 * MIB);
	machine_free(m);

	/* One jump of 100 MiB, then flat: not a leak. */
	m = new_machine();
	for (size_t i = 0; i < 40; i++)
		mib[i] = i < 20 ? 100 : 200;
	p = run_rss(m, 21, mib, 40);
	assert_false(p->stairs);
	machine_free(m);

	/* Creeping and wobbling within the noise: flat, no slope. */
	m = new_machine();
	for (size_t i = 0; i < 40; i++)
		mib[i] = 100 + 0.02 * (double)i + 0.1 * (double)(i % 3);
	p = run_rss(m, 22, mib, 40);
	assert_false(p->stairs);
	assert_int_equal(p->rss_kind, SERIES_FLAT);
	assert_true(p->rss_slope == 0);
	machine_free(m);
}

static void test_zombie_parent(void **state)
{
	struct machine *m = new_machine();
	struct machine_reading parent = reading(100, 1, 10 * MIB);
	struct machine_reading kid = reading(101, 0, 0);
	struct machine_reading other = reading(102, 0, 0);

	kid.ppid = 100;
	kid.state = 'Z';
	other.ppid = 100;
	for (int t = 0; t < 3; t++) {
		push(m, t, &parent, "/a");
		push(m, t, &kid, "/a");
		push(m, t, &other, "/a");
	}
	machine_eval(m);
	assert_true(machine_find(m, 101)->zombie);
	assert_false(machine_find(m, 100)->zombie);
	assert_int_equal(machine_find(m, 100)->zombie_children, 1);
	assert_int_equal(machine_find(m, 102)->zombie_children, 0);
	/* Reaped: gone, and its parent has none. */
	push(m, 3, &parent, "/a");
	push(m, 3, &other, "/a");
	machine_eval(m);
	assert_null(machine_find(m, 101));
	assert_int_equal(machine_find(m, 100)->zombie_children, 0);
	machine_free(m);
}

static void test_stuck_threads(void **state)
{
	struct machine *m = new_machine();
	struct machine_reading a = reading(200, 0, MIB), b = reading(300, 0, MIB);

	push(m, 10, &a, "/a");
	push(m, 10, &b, "/a");
	machine_push_d_thread(m, 10, 200, 201, 4); /* 6 s in D */
	machine_push_d_thread(m, 10, 200, 202, 2); /* 8 s */
	machine_push_d_thread(m, 10, 300, 301, 8); /* 2 s */
	machine_eval(m);
	const struct machine_proc *pa = machine_find(m, 200), *pb = machine_find(m, 300);
	assert_true(pa->stuck);
	assert_int_equal(pa->stuck_threads, 2);
	assert_float_equal(pa->stuck_for_s, 8, 1e-9);
	assert_false(pb->stuck);
	assert_int_equal(pb->stuck_threads, 0);
	/* Out of D at the next tick (not pushed again): no longer stuck. */
	push(m, 11, &a, "/a");
	push(m, 11, &b, "/a");
	machine_push_d_thread(m, 11, 300, 301, 8); /* 3 s */
	machine_eval(m);
	assert_false(machine_find(m, 200)->stuck);
	assert_false(machine_find(m, 300)->stuck);
	push(m, 14, &a, "/a");
	push(m, 14, &b, "/a");
	machine_push_d_thread(m, 14, 300, 301, 8); /* 6 s */
	machine_eval(m);
	assert_true(machine_find(m, 300)->stuck);
	machine_free(m);
}

/* The same pid with another start time is another process: its history
 * starts afresh, with the new identity. */
static void test_reused_pid(void **state)
{
	struct machine *m = new_machine();
	struct machine_reading r = reading(400, 0, 10 * MIB);

	for (int t = 0; t < 20; t++) {
		r.cpu_s += 0.5;
		push(m, t, &r, "/old");
	}
	machine_eval(m);
	const struct machine_proc *p = machine_find(m, 400);
	assert_int_equal(p->cpu.len, 19);
	assert_float_equal(p->cpu_pct, 50, 1e-6);

	struct machine_reading n = reading(400, 3.0, 20 * MIB);
	n.start = 5000;
	snprintf(n.comm, sizeof(n.comm), "newcomer");
	assert_int_equal(machine_push(m, 20, &n, 0, "/new", "newcomer -x"), 0);
	machine_eval(m);
	p = machine_find(m, 400);
	assert_int_equal(p->cpu.len, 0); /* not 3 s of CPU in one second */
	assert_int_equal(p->rss_series.len, 1);
	assert_true(p->cpu_pct == 0);
	assert_string_equal(p->comm, "newcomer");
	assert_string_equal(p->cgroup, "/new");
	assert_string_equal(p->cmdline, "newcomer -x");
	assert_int_equal(p->uid, 0);
	assert_int_equal(p->start, 5000);
	machine_free(m);
}

static void test_gone(void **state)
{
	struct machine *m = new_machine();

	/* Enough pids that rows move when one goes. */
	for (pid_t pid = 1; pid <= 50; pid++) {
		struct machine_reading r = reading(pid, 0, MIB);
		push(m, 1, &r, "/a");
	}
	machine_eval(m);
	for (pid_t pid = 1; pid <= 50; pid++) {
		struct machine_reading r = reading(pid, 0, MIB);
		if (pid % 3)
			push(m, 2, &r, "/a");
	}
	machine_eval(m);
	size_t n;
	machine_procs(m, &n);
	assert_int_equal(n, 50 - 50 / 3);
	for (pid_t pid = 1; pid <= 50; pid++) {
		const struct machine_proc *p = machine_find(m, pid);
		if (pid % 3) {
			assert_non_null(p);
			assert_int_equal(p->pid, pid);
		} else {
			assert_null(p);
		}
	}
	struct machine_totals tot;
	machine_get_totals(m, &tot);
	assert_int_equal(tot.nprocs, (int)n);
	assert_int_equal(tot.nthreads, (int)n);
	machine_free(m);
}

static void test_groups(void **state)
{
	struct machine *m = new_machine();
	struct {
		pid_t pid;
		double pct;
		const char *cg;
	} rows[] = {{1, 10, "/a"}, {2, 50, "/b"}, {3, 20, "/a"}, {4, 0, "/c"}, {5, 5, "/a"}};
	size_t nrows = sizeof(rows) / sizeof(rows[0]);

	for (int t = 0; t < 2; t++)
		for (size_t i = 0; i < nrows; i++) {
			struct machine_reading r = reading(rows[i].pid, t * rows[i].pct / 100, MIB);
			push(m, t, &r, rows[i].cg);
		}
	machine_eval(m);
	struct machine_group g[8];
	assert_int_equal(machine_groups(m, g, 8), 3);
	assert_string_equal(g[0].cgroup, "/b");
	assert_float_equal(g[0].cpu_pct, 50, 1e-6);
	assert_string_equal(g[1].cgroup, "/a");
	assert_float_equal(g[1].cpu_pct, 35, 1e-6);
	assert_int_equal(g[1].nprocs, 3);
	assert_int_equal(g[1].rss, 3 * MIB);
	assert_int_equal(g[1].hottest, 3);
	assert_string_equal(g[2].cgroup, "/c");
	/* Fewer slots than groups: the hottest, and the count of all. */
	assert_int_equal(machine_groups(m, g, 1), 3);
	assert_string_equal(g[0].cgroup, "/b");
	machine_free(m);
}

/* ---- live, on the real /proc ---- */

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void test_live_self(void **state)
{
	struct machine *m = new_machine();

	assert_int_equal(machine_tick(m, now_s()), 0);
	const struct machine_proc *p = machine_find(m, getpid());
	assert_non_null(p);
	assert_string_equal(p->comm, "test_machine");
	assert_true(p->nthreads > 0);
	assert_int_equal(p->uid, geteuid());
	assert_int_equal(p->ppid, getppid());
	assert_false(p->kernel);
	assert_non_null(strstr(p->cmdline, "test_machine"));
	assert_true(p->rss > 0);
	/* pid 2 is kthreadd, a kernel thread, where /proc shows it. */
	const struct machine_proc *k = machine_find(m, 2);
	if (k && !strcmp(k->comm, "kthreadd")) {
		assert_true(k->kernel);
		assert_string_equal(k->cmdline, "");
	}
	struct machine_totals tot;
	machine_get_totals(m, &tot);
	assert_true(tot.ncpu >= 1);
	assert_true(tot.nprocs >= 1);
	assert_true(tot.nthreads >= tot.nprocs - tot.untracked);
	assert_true(tot.mem_total > 0);
	assert_true(tot.mem_used > 0 && tot.mem_used <= tot.mem_total);
	machine_free(m);
}

/* Poll machine_tick until ok(m, pid) or 20 s. */
static bool tick_until(struct machine *m, pid_t pid, bool (*ok)(const struct machine *m, pid_t pid))
{
	double deadline = now_s() + 20;

	do {
		assert_int_equal(machine_tick(m, now_s()), 0);
		if (ok(m, pid))
			return true;
		usleep(200 * 1000);
	} while (now_s() < deadline);
	return false;
}

static bool is_zombie_of_ours(const struct machine *m, pid_t kid)
{
	const struct machine_proc *k = machine_find(m, kid), *self = machine_find(m, getpid());

	return k && k->state == 'Z' && self && self->zombie_children == 1;
}

static void test_live_zombie(void **state)
{
	struct machine *m = new_machine();
	pid_t kid = fork();

	assert_true(kid >= 0);
	if (kid == 0)
		_exit(0);
	assert_true(tick_until(m, kid, is_zombie_of_ours));
	assert_true(machine_find(m, kid)->zombie);
	assert_int_equal(machine_find(m, kid)->ppid, getpid());
	assert_int_equal(waitpid(kid, NULL, 0), kid);
	machine_free(m);
}

static bool exec_seen(const struct machine *m, pid_t kid)
{
	const struct machine_proc *k = machine_find(m, kid);

	return k && !strcmp(k->comm, "sleep") && !strcmp(k->cmdline, "sleep 30 1");
}

static bool found_asleep(const struct machine *m, pid_t kid)
{
	const struct machine_proc *k = machine_find(m, kid);

	return k && !strcmp(k->comm, "test_machine") && k->state == 'S';
}

/* A child seen asleep, then exec'ing: a quiet process is read in its turn,
 * and its new comm brings its new command line (NULs as spaces). */
static void test_live_exec(void **state)
{
	struct machine *m = new_machine();
	int go[2];

	pid_t kid = fork_held(go);
	if (kid == 0) {
		char c;
		if (read(go[0], &c, 1) == 0)
			execl("/bin/sleep", "sleep", "30", "1", (char *)NULL);
		_exit(127);
	}
	bool asleep = tick_until(m, kid, found_asleep);
	close(go[1]);
	bool ok = asleep && tick_until(m, kid, exec_seen);
	if (!ok) {
		const struct machine_proc *k = machine_find(m, kid);
		print_message("kid %d: %s comm \"%s\" cmdline \"%s\" state %c\n", (int)kid,
			      k ? "found" : "not found", k ? k->comm : "", k ? k->cmdline : "",
			      k ? k->state : '?');
	}
	kill(kid, SIGKILL);
	assert_int_equal(waitpid(kid, NULL, 0), kid);
	assert_true(asleep);
	assert_true(ok);
	machine_free(m);
}

static bool spins(const struct machine *m, pid_t kid)
{
	const struct machine_proc *k = machine_find(m, kid);

	return k && k->cpu_pct > 0;
}

static void test_live_spinner(void **state)
{
	struct machine *m = new_machine();
	pid_t kid = fork();

	assert_true(kid >= 0);
	if (kid == 0) {
		alarm(60); /* never outlive the test */
		for (volatile unsigned long i = 0;; i++)
			;
	}
	bool ok = tick_until(m, kid, spins);
	kill(kid, SIGKILL);
	assert_int_equal(waitpid(kid, NULL, 0), kid);
	assert_true(ok);
	machine_free(m);
}

/* A child that spins 30 ms of its CPU, then sleeps 70 ms. */
static void duty_child(void)
{
	alarm(90); /* never outlive the test */
	for (;;) {
		struct timespec a, b, nap = {0, 70 * 1000 * 1000};
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
		do {
			for (volatile int i = 0; i < 10000; i++)
				;
			clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
		} while ((double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9 <
			 0.030);
		nanosleep(&nap, NULL);
	}
}

static pid_t demand_kids[2];

static bool demand_seen(const struct machine *m, pid_t unused)
{
	for (int i = 0; i < 2; i++) {
		const struct machine_proc *k = machine_find(m, demand_kids[i]);
		if (!k || k->demand.len < 6)
			return false;
	}
	return true;
}

/* On the real /proc: a steady spinner's and a 30 ms / 70 ms child's
 * demand is read (both > 0); the spinner's is flat near 100 % of a core
 * whatever the box's load (generous bounds: a point is off by a wait on a
 * run queue). */
static void test_live_demand(void **state)
{
	struct machine_config c;
	struct machine *m;

	machine_config_default(&c);
	c.busy_floor_pct = 1; /* candidates even when starved */
	assert_int_equal(machine_new(&c, &m), 0);
	for (int i = 0; i < 2; i++) {
		pid_t k = fork();
		assert_true(k >= 0);
		if (k == 0 && i == 0) {
			alarm(90);
			for (volatile unsigned long j = 0;; j++)
				;
		}
		if (k == 0)
			duty_child();
		demand_kids[i] = k;
	}
	double deadline = now_s() + 60;
	bool ok = false;
	while (!ok && now_s() < deadline) {
		assert_int_equal(machine_tick(m, now_s()), 0);
		ok = demand_seen(m, 0);
		if (!ok)
			usleep(1000 * 1000);
	}
	const struct machine_proc *spin = machine_find(m, demand_kids[0]);
	const struct machine_proc *duty = machine_find(m, demand_kids[1]);
	for (int i = 0; i < 2; i++) {
		const struct machine_proc *k = machine_find(m, demand_kids[i]);
		double v[64];
		size_t n = k ? series_get(&k->demand, NULL, v, 64) : 0;
		print_message("%s: %s", i ? "duty" : "spinner", k ? "demand" : "not tracked");
		for (size_t j = 0; j < n; j++)
			print_message(" %.1f", v[j]);
		print_message("\n");
	}
	for (int i = 0; i < 2; i++) {
		kill(demand_kids[i], SIGKILL);
		waitpid(demand_kids[i], NULL, 0);
	}
	assert_true(ok);
	assert_true(spin->demand_p10 > 50 && spin->demand_p90 < 150);
	/* flat: a starved spinner wants its whole core (a wait under way at a
	 * read counts later: a point may dip on a loaded box) */
	assert_true(spin->demand_p90 - spin->demand_p10 < 45);
	assert_true(duty->demand_p90 > 0);
	assert_true(duty->demand_pct >= 0);
	machine_free(m);
}

/* A thread in vfork waits in D until its child execs or exits: a real
 * thread in D (not our main thread: found by the task rotation). */
static volatile pid_t vfork_kid;

static void *vforker(void *arg)
{
	pid_t k = vfork();

	if (k == 0) {
		struct timespec ts = {30, 0};
		vfork_kid = (pid_t)syscall(SYS_getpid);
		syscall(SYS_nanosleep, &ts, NULL);
		_exit(0);
	}
	if (k > 0)
		waitpid(k, NULL, 0);
	return NULL;
}

static bool self_stuck(const struct machine *m, pid_t pid)
{
	const struct machine_proc *p = machine_find(m, pid);

	return p && p->stuck && p->stuck_threads == 1 && p->stuck_for_s >= 2;
}

static bool self_unstuck(const struct machine *m, pid_t pid)
{
	const struct machine_proc *p = machine_find(m, pid);

	return p && !p->stuck && p->stuck_threads == 0;
}

static void test_live_stuck_thread(void **state)
{
	struct machine_config c;
	struct machine *m;
	pthread_t th;

	machine_config_default(&c);
	c.stuck_s = 2;
	c.task_reads_per_tick = 1u << 20; /* the mechanism, not the budget */
	assert_int_equal(machine_new(&c, &m), 0);
	vfork_kid = 0;
	assert_int_equal(pthread_create(&th, NULL, vforker, NULL), 0);
	bool stuck = tick_until(m, getpid(), self_stuck);
	for (int i = 0; i < 1000 && !vfork_kid; i++)
		usleep(10 * 1000);
	if (vfork_kid > 0)
		kill(vfork_kid, SIGKILL);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_true(vfork_kid > 0);
	assert_true(stuck);
	assert_true(tick_until(m, getpid(), self_unstuck));
	machine_free(m);
}

/* NKIDS children asleep for good: once settled, a tick opens at most
 * reads_per_tick of their stat files (plus, the tick after, those whose
 * turn found CPU since their last read), and every one is read within a
 * rotation (over every process of the box). */
static void test_live_quiet_budget(void **state)
{
	struct machine_config c;
	struct machine *m;
	int total[NKIDS] = {0};

	machine_config_default(&c);
	c.reads_per_tick = 4;
	assert_int_equal(machine_new(&c, &m), 0);
	for (int i = 0; i < NKIDS; i++) {
		pid_t k = fork();
		assert_true(k >= 0);
		if (k == 0) {
			alarm(120);
			for (;;)
				pause();
		}
		watched[i] = k;
	}
	/* Settled: every child seen asleep, then two rotations. */
	double t = 0;
	for (bool asleep = false; !asleep; t++) {
		assert_true(t < 2000);
		usleep(t ? 10 * 1000 : 0);
		assert_int_equal(machine_tick(m, t), 0);
		asleep = true;
		for (int i = 0; i < NKIDS; i++) {
			const struct machine_proc *p = machine_find(m, watched[i]);
			asleep = asleep && p && p->state == 'S';
		}
	}
	size_t rows;
	machine_procs(m, &rows);
	int rotation = (int)(rows + 50) / 4 + 1; /* room for processes that come */
	for (int i = 0; i < 2 * rotation; i++, t++)
		assert_int_equal(machine_tick(m, t), 0);
	nwatched = NKIDS;
	int worst = 0;
	for (int tick = 0; tick < rotation; tick++, t++) {
		memset(opens_of, 0, sizeof(opens_of));
		assert_int_equal(machine_tick(m, t), 0);
		int n = 0;
		for (int i = 0; i < NKIDS; i++) {
			n += opens_of[i];
			total[i] += opens_of[i];
		}
		worst = n > worst ? n : worst;
	}
	nwatched = 0;
	for (int i = 0; i < NKIDS; i++) {
		kill(watched[i], SIGKILL);
		waitpid(watched[i], NULL, 0);
	}
	assert_true(worst <= 2 * 4);
	for (int i = 0; i < NKIDS; i++)
		if (!total[i])
			fail_msg("child %d of %d never read in a rotation", i, NKIDS);
	machine_free(m);
}

TEST_MAIN(NULL, NULL, TEST(test_busy_floor), TEST(test_busy_floor_starved), TEST(test_fine_floor),
	  TEST(test_stairs), TEST(test_zombie_parent), TEST(test_stuck_threads),
	  TEST(test_reused_pid), TEST(test_gone), TEST(test_groups), TEST(test_live_self),
	  TEST(test_live_zombie), TEST(test_live_exec), TEST(test_live_spinner),
	  TEST(test_live_demand), TEST(test_live_stuck_thread), TEST(test_live_quiet_budget))
