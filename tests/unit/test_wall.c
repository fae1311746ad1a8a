/*
 * test_wall — the ptrace wall-clock sampler against real children.
 *
 * The waiter target (build/targets/waiter) has one thread per wait kind;
 * other cases use forked children of this test (new and exiting threads,
 * signals, a process already traced). Every test ends by checking the
 * safety rules: no thread of the child is left stopped by us ('t') or
 * traced (TracerPid 0), and a child the user stopped stays stopped.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "runner.h"

#include "stacktop/unwind/space.h"
#include "stacktop/symbols/sym.h"
#include "stacktop/proc/target.h"
#include "stacktop/unwind/unwind.h"
#include "stacktop/sample/wall.h"

#include "helpers.h"

#define MAXT 64

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int add_all(struct wall_sampler *ws, pid_t pid)
{
	pid_t tids[MAXT];
	int n = 0, added = 0;
	if (target_threads(pid, tids, MAXT, &n) < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		if (wall_has_thread(ws, tids[i]))
			continue;
		int err = wall_add_thread(ws, pid, tids[i]);
		if (err && err != -ESRCH)
			return err;
		added += err == 0;
	}
	return added;
}

static struct wall_sampler *wall_at_50hz(void)
{
	struct wall_config cfg = {.rate_hz = 50};
	struct wall_sampler *ws;
	assert_int_equal(wall_new(&cfg, &ws), 0);
	return ws;
}

/* A 50 Hz sampler with the five threads of the waiter pid added. */
static struct wall_sampler *wall_waiter(pid_t pid)
{
	struct wall_sampler *ws = wall_at_50hz();
	assert_int_equal(add_all(ws, pid), 5);
	return ws;
}

/* Every thread of pid: none in ptrace-stop, none traced; `stopped` says
 * whether they must be in group-stop (T) or must not be (not T/t). */
static void assert_free(pid_t pid, bool stopped)
{
	pid_t tids[MAXT];
	int n = 0;
	assert_int_equal(target_threads(pid, tids, MAXT, &n), 0);
	assert_true(n > 0);
	for (int i = 0; i < n; i++) {
		char st = 0;
		pid_t tracer = -1;
		/* The kernel needs a moment to move a detached thread back: a
		 * group-stopped one is woken and stops again (passing R). */
		for (int k = 0; k < 100; k++) {
			if (target_state(pid, tids[i], &st) < 0)
				break;
			if (stopped ? st == 'T' : st != 't')
				break;
			sleep_ms(2);
		}
		if (target_state(pid, tids[i], &st) < 0)
			continue; /* exited meanwhile */
		assert_int_equal(target_tracer(tids[i], &tracer), 0);
		if (tracer != 0)
			fail_msg("thread %d still traced by %d", tids[i], tracer);
		if (stopped && st != 'T') {
			char cm[32] = "";
			target_comm(pid, tids[i], cm, sizeof(cm));
			fail_msg("thread %d (%s) state %c, want T (the user stopped it)", tids[i],
				 cm, st);
		}
		if (!stopped && (st == 'T' || st == 't'))
			fail_msg("thread %d left stopped (%c)", tids[i], st);
	}
}

/* ---- waiter: wait kinds per thread ------------------------------------ */

struct counts {
	pid_t pid;
	pid_t tid[MAXT];
	char name[MAXT][16];
	unsigned kind[MAXT][SAMPLE_WAIT_COUNT];
	unsigned with_stack[MAXT];
	int n;
	unsigned total;
};

static void count_cb(void *ctx, const struct sample *s)
{
	struct counts *c = ctx;
	int i;
	for (i = 0; i < c->n; i++)
		if (c->tid[i] == s->tid)
			break;
	if (i == c->n) {
		if (c->n == MAXT)
			return;
		c->tid[c->n] = s->tid;
		target_comm(s->pid, s->tid, c->name[c->n], sizeof(c->name[0]));
		c->n++;
	}
	c->kind[i][s->wait]++;
	if (s->regs_mask && s->stack_size > 0)
		c->with_stack[i]++;
	c->total++;
}

static int by_name(const struct counts *c, const char *name)
{
	for (int i = 0; i < c->n; i++)
		if (strcmp(c->name[i], name) == 0)
			return i;
	fail_msg("no samples from thread %s", name);
	return -1;
}

static void run_ticks(struct wall_sampler *ws, uint64_t ms, struct counts *c)
{
	uint64_t end = mono_ns() + ms * 1000000ull;
	while (mono_ns() < end) {
		wall_tick(ws, mono_ns(), count_cb, c);
		sleep_ms(10);
	}
}

static void test_waiter_kinds(void **state)
{
	pid_t pid = spawn_waiter(100);
	struct wall_sampler *ws = wall_waiter(pid);
	struct counts c = {.pid = pid};
	assert_int_equal(wall_nthreads(ws), 5);
	assert_int_equal(add_all(ws, pid), 0); /* all known: -EEXIST skipped */
	assert_int_equal(wall_add_thread(ws, pid, pid), -EEXIST);
	run_ticks(ws, 1500, &c);

	int l1 = by_name(&c, "locker1"), l2 = by_name(&c, "locker2");
	int rd = by_name(&c, "reader"), np = by_name(&c, "napper"), wr = by_name(&c, "writer");
	/* 50 Hz for 1.5 s: about 75 each, never more than asked (a busy
	 * machine gives fewer: how many is a rate, measured by make bench). */
	assert_in_range(c.total, 5, 5 * 80);
	/* Lockers: half lock (take_lock), half sleeping with it (hold_lock).
	 * On a loaded machine a locker is late to its turns and a 1.5 s run
	 * may hold too few of one kind: sample on, up to 6 s more, before
	 * counting (the shares are checked, not the time it takes). */
	for (int more = 0; more < 12 && (c.kind[l1][SAMPLE_WAIT_LOCK] <= 10 ||
					 c.kind[l1][SAMPLE_WAIT_SLEEP] <= 10 ||
					 c.kind[l2][SAMPLE_WAIT_LOCK] <= 10);
	     more++)
		run_ticks(ws, 500, &c);
	assert_true(c.kind[l1][SAMPLE_WAIT_LOCK] > 10);
	assert_true(c.kind[l1][SAMPLE_WAIT_SLEEP] > 10);
	assert_true(c.kind[l2][SAMPLE_WAIT_LOCK] > 10);
	/* Reader: I/O only; napper and writer: sleep only (a sample may catch
	 * them on their way, running). */
	for (int i = 0; i < c.n; i++)
		print_message("%-8s run %u lock %u io %u sleep %u D %u other %u\n", c.name[i],
			      c.kind[i][0], c.kind[i][1], c.kind[i][2], c.kind[i][3], c.kind[i][4],
			      c.kind[i][5]);
	unsigned rn = 0, nn = 0;
	for (int k = 0; k < SAMPLE_WAIT_COUNT; k++)
		rn += c.kind[rd][k], nn += c.kind[np][k];
	assert_true(c.kind[rd][SAMPLE_WAIT_IO] >= rn - 2);
	assert_true(c.kind[np][SAMPLE_WAIT_SLEEP] >= nn - 2);
	assert_true(c.kind[wr][SAMPLE_WAIT_SLEEP] > 10);
	for (int i = 0; i < c.n; i++)
		assert_true(c.with_stack[i] > 0);

	const struct wall_stats *st = wall_get_stats(ws);
	/* The napper sleeps 0.5 s, the reader 1 s: most of their samples
	 * need no stop. */
	assert_true(st->reused > 50);
	assert_true(st->stops > 0);
	assert_true(st->stops + st->reused + st->nostop == st->samples);
	assert_true(st->pause_ns_max > 0);
	assert_true(st->pause_ns_total / st->stops < 5 * 1000 * 1000);
	assert_int_equal(wall_detach_all(ws), 0);
	assert_int_equal(wall_nthreads(ws), 0);
	assert_int_equal(wall_detach_all(ws), 0); /* twice is fine */
	wall_free(ws);
	assert_free(pid, false);
	kill_reap(pid);
}

/* The samples unwind to the functions the waiter names. */
struct unwound {
	struct space sp;
	struct unwind *uw;
	struct sym *sy;
	int found_read_pipe, found_nap, found_take_lock, n;
};

static void unwind_cb(void *ctx, const struct sample *s)
{
	struct unwound *u = ctx;
	uint64_t pcs[UNWIND_MAX_FRAMES];
	int n = 0;
	unsigned flags = 0;
	if (unwind_sample(u->uw, s, pcs, UNWIND_MAX_FRAMES, &n, &flags) < 0)
		return;
	u->n++;
	for (int i = 0; i < n; i++) {
		struct sym_info si;
		if (sym_resolve_user(u->sy, &u->sp, pcs[i], false, &si) < 0 || !si.func)
			continue;
		u->found_read_pipe +=
		    strcmp(si.func, "read_pipe") == 0 && s->wait == SAMPLE_WAIT_IO;
		u->found_nap += strcmp(si.func, "nap") == 0 && s->wait == SAMPLE_WAIT_SLEEP;
		u->found_take_lock +=
		    strcmp(si.func, "take_lock") == 0 && s->wait == SAMPLE_WAIT_LOCK;
	}
}

static void test_waiter_unwinds(void **state)
{
	pid_t pid = spawn_waiter(100);
	struct unwound u;
	memset(&u, 0, sizeof(u));
	struct wall_sampler *ws;
	assert_int_equal(space_load(&u.sp, pid), 0);
	assert_int_equal(unwind_new(&u.sp, &u.uw), 0);
	assert_int_equal(sym_new(&u.sy), 0);
	assert_int_equal(wall_new(NULL, &ws), 0);
	assert_int_equal(add_all(ws, pid), 5);
	/* Until every waiter has been seen in its function (a loaded box
	 * gives the sampler fewer ticks a second), 10 s at most. */
	uint64_t end = mono_ns() + 10000000000ull;
	while (mono_ns() < end && !(u.found_read_pipe && u.found_nap && u.found_take_lock)) {
		wall_tick(ws, mono_ns(), unwind_cb, &u);
		sleep_ms(10);
	}
	wall_free(ws);
	assert_free(pid, false);
	kill_reap(pid);
	assert_true(u.n > 0);
	assert_true(u.found_read_pipe > 0);
	assert_true(u.found_nap > 0);
	assert_true(u.found_take_lock > 0);
	unwind_free(u.uw);
	sym_free(u.sy);
	space_release(&u.sp);
}

/* Someone else's stop came first: the napper's nanosleep now continues as
 * restart_syscall, and a fresh sampler still calls it sleep. */
static void test_restart_first_sight(void **state)
{
	pid_t pid = spawn_waiter(100);
	pid_t tids[MAXT];
	int n = 0, st, napper = -1;
	char comm[32];
	assert_int_equal(target_threads(pid, tids, MAXT, &n), 0);
	for (int i = 0; i < n; i++)
		if (target_comm(pid, tids[i], comm, sizeof(comm)) == 0 && !strcmp(comm, "napper"))
			napper = tids[i];
	assert_true(napper > 0);
	assert_int_equal(ptrace(PTRACE_SEIZE, napper, 0, 0), 0);
	assert_int_equal(ptrace(PTRACE_INTERRUPT, napper, 0, 0), 0);
	assert_int_equal(waitpid(napper, &st, __WALL), napper);
	assert_int_equal(ptrace(PTRACE_DETACH, napper, 0, 0), 0);
	sleep_ms(20);
	char path[96], text[256] = "";
	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", pid, napper);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(text, sizeof(text), f));
	fclose(f);
	assert_int_equal(atoi(text), 219); /* SYS_restart_syscall */

	struct wall_sampler *ws;
	struct counts c = {.pid = pid};
	assert_int_equal(wall_new(NULL, &ws), 0);
	assert_int_equal(wall_add_thread(ws, pid, napper), 0);
	assert_int_equal(wall_sample_all(ws, mono_ns(), count_cb, &c), 1);
	assert_int_equal(c.kind[0][SAMPLE_WAIT_SLEEP], 1);
	wall_free(ws);
	assert_free(pid, false);
	kill_reap(pid);
}

/* ---- group-stop: the user's SIGSTOP is kept ----------------------------- */

/* Every thread of pid is in one of the states in want ("S", "Tt", ...). */
static bool all_state_in(pid_t pid, const char *want)
{
	pid_t tids[MAXT];
	int n = 0;
	if (target_threads(pid, tids, MAXT, &n) < 0)
		return false;
	for (int i = 0; i < n; i++) {
		char st = 0;
		if (target_state(pid, tids[i], &st) < 0 || !st || !strchr(want, st)) {
			if (getenv("WALL_DEBUG"))
				print_message("thread %d state %c want %s\n", tids[i], st, want);
			return false;
		}
	}
	return true;
}

static bool all_state(pid_t pid, char want)
{
	const char w[2] = {want, '\0'};
	return all_state_in(pid, w);
}

/* Stopped: T, or t while we trace it (a LISTENing tracee is TASK_TRACED). */
static bool all_stopped(pid_t pid)
{
	return all_state_in(pid, "Tt");
}

static bool wait_all_state(pid_t pid, char want, struct wall_sampler *ws)
{
	for (int i = 0; i < 200; i++) {
		if (ws)
			wall_reap(ws);
		if (all_state(pid, want))
			return true;
		sleep_ms(5);
	}
	return false;
}

static bool none_stopped(pid_t pid, struct wall_sampler *ws)
{
	for (int i = 0; i < 200; i++) {
		if (ws)
			wall_reap(ws);
		pid_t tids[MAXT];
		int n = 0, bad = 0;
		target_threads(pid, tids, MAXT, &n);
		for (int k = 0; k < n; k++) {
			char st = 0;
			if (target_state(pid, tids[k], &st) == 0 && (st == 'T' || st == 't'))
				bad++;
		}
		if (!bad)
			return true;
		sleep_ms(5);
	}
	return false;
}

static void test_stopped_before_attach(void **state)
{
	pid_t pid = spawn_waiter(100);
	kill(pid, SIGSTOP);
	assert_true(wait_all_state(pid, 'T', NULL));
	struct wall_sampler *ws = wall_waiter(pid);
	struct counts c = {.pid = pid};
	/* Stopped, but still sampled (the stack it is stopped in). */
	run_ticks(ws, 300, &c);
	assert_true(c.total > 10);
	/* Still stopped while we sample, never resumed ('t' while listening). */
	assert_true(all_stopped(pid));
	wall_free(ws);
	assert_free(pid, true);
	/* And the user's SIGCONT resumes it. */
	kill(pid, SIGCONT);
	assert_true(none_stopped(pid, NULL));
	kill_reap(pid);
}

/* Lock-wait samples of every thread so far. */
static unsigned lock_samples(const struct counts *c)
{
	unsigned n = 0;
	for (int i = 0; i < 5; i++)
		n += c->kind[i][SAMPLE_WAIT_LOCK];
	return n;
}

static void test_stop_cont_while_attached(void **state)
{
	pid_t pid = spawn_waiter(100);
	struct wall_sampler *ws = wall_waiter(pid);
	struct counts c = {.pid = pid};
	run_ticks(ws, 200, &c);
	kill(pid, SIGSTOP);
	/* Ticks re-inject the SIGSTOP and LISTEN on the group-stop. */
	for (int i = 0; i < 40 && !all_stopped(pid); i++)
		run_ticks(ws, 10, &c);
	assert_true(all_stopped(pid));
	run_ticks(ws, 200, &c);
	assert_true(all_stopped(pid));
	kill(pid, SIGCONT);
	assert_true(none_stopped(pid, ws));
	unsigned before = lock_samples(&c), after = before;
	/* The lockers run again: new lock waits within 300 ms, or a few
	 * seconds on a loaded machine (a locker wakes late for its turn). */
	for (int i = 0; i < 10 && after <= before; i++) {
		run_ticks(ws, 300, &c);
		after = lock_samples(&c);
	}
	assert_true(after > before);
	wall_free(ws);
	assert_free(pid, false);
	kill_reap(pid);
}

/* ---- threads that come and go; signals; exit --------------------------- */

static void *short_thread(void *arg)
{
	sleep_ms(400);
	return NULL;
}

static volatile sig_atomic_t got_usr1;
static int sig_pipe[2];

static void on_usr1(int sig)
{
	got_usr1++;
	if (write(sig_pipe[1], "s", 1) < 0)
		got_usr1 = -1;
}

/* Child: after 300 ms start a thread that lives 400 ms; exit after total_ms. */
static pid_t spawn_churner(int total_ms)
{
	if (pipe(sig_pipe) < 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		signal(SIGUSR1, on_usr1);
		pthread_t t;
		sleep_ms(300);
		pthread_create(&t, NULL, short_thread, NULL);
		pthread_join(t, NULL);
		sleep_ms(total_ms > 700 ? total_ms - 700 : 0);
		_exit(7);
	}
	close(sig_pipe[1]);
	return pid;
}

static void test_threads_come_and_go(void **state)
{
	pid_t pid = spawn_churner(1200);
	assert_true(pid > 0);
	struct wall_sampler *ws = wall_at_50hz();
	struct counts c = {.pid = pid};
	assert_true(add_all(ws, pid) >= 1);
	int max_threads = 0;
	uint64_t end = mono_ns() + 900000000ull;
	bool sent = false;
	while (mono_ns() < end) {
		add_all(ws, pid); /* the caller's rescan */
		wall_tick(ws, mono_ns(), count_cb, &c);
		if (wall_nthreads(ws) > max_threads)
			max_threads = wall_nthreads(ws);
		if (!sent && mono_ns() > end - 500000000ull) {
			kill(pid, SIGUSR1); /* arrives while we trace it */
			sent = true;
		}
		sleep_ms(10);
	}
	assert_int_equal(max_threads, 2);
	assert_int_equal(c.n, 2);		/* samples from both */
	assert_int_equal(wall_nthreads(ws), 1); /* the short one is gone */
	const struct wall_stats *st = wall_get_stats(ws);
	assert_true(st->exited >= 1);
	/* The signal was delivered to its handler, not swallowed. */
	char ch;
	assert_int_equal(read(sig_pipe[0], &ch, 1), 1);
	assert_true(st->signals >= 1);
	/* The process exits while we sample: its exit status is still ours
	 * (the parent's) to reap. */
	end = mono_ns() + 1500000000ull;
	while (mono_ns() < end && wall_nthreads(ws) > 0) {
		wall_tick(ws, mono_ns(), count_cb, &c);
		sleep_ms(10);
	}
	assert_int_equal(wall_nthreads(ws), 0);
	int status = 0;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 7);
	wall_free(ws);
	close(sig_pipe[0]);
}

/* ---- a thread in D state ------------------------------------------------ */

/* stuck's "loader" sits in D (vfork) for a second: it is sampled without a
 * stop, cannot be detached while in D (no stop can be taken), and is
 * detached by a later wall_detach_all once it is out. */
static void test_dstate(void **state)
{
	if (access("build/targets/stuck", X_OK) != 0)
		skip();
	pid_t pid = fork();
	if (pid == 0) {
		execl("build/targets/stuck", "stuck", "1", (char *)NULL);
		_exit(127);
	}
	pid_t tids[MAXT], loader = -1;
	int n = 0;
	uint64_t t0 = mono_ns();
	for (int i = 0; i < 100 && loader < 0; i++) {
		sleep_ms(5);
		if (target_threads(pid, tids, MAXT, &n) < 0)
			continue;
		for (int k = 0; k < n; k++) {
			char st = 0;
			if (tids[k] != pid && target_state(pid, tids[k], &st) == 0 && st == 'D')
				loader = tids[k];
		}
	}
	assert_true(loader > 0);
	struct wall_sampler *ws;
	struct counts c = {.pid = pid};
	assert_int_equal(wall_new(NULL, &ws), 0);
	assert_int_equal(add_all(ws, pid), 2);
	assert_int_equal(wall_sample_all(ws, mono_ns(), count_cb, &c), 2);
	int li = -1;
	for (int i = 0; i < c.n; i++)
		if (c.tid[i] == loader)
			li = i;
	assert_true(li >= 0);
	assert_int_equal(c.kind[li][SAMPLE_WAIT_DSTATE], 1);
	assert_int_equal(c.with_stack[li], 1); /* sp/pc from its syscall file */
	assert_int_equal(wall_get_stats(ws)->nostop, 1);
	assert_int_equal(wall_get_stats(ws)->stops, 1); /* the main thread only */
	/* Still in D: the main thread is let go, the loader cannot be yet. */
	assert_int_equal(wall_detach_all(ws), -EAGAIN);
	assert_int_equal(wall_nthreads(ws), 1);
	assert_true(wall_has_thread(ws, loader));
	/* Out of D after its second: now it goes. */
	while (mono_ns() - t0 < 1300000000ull)
		sleep_ms(20);
	assert_int_equal(wall_detach_all(ws), 0);
	assert_int_equal(wall_nthreads(ws), 0);
	wall_free(ws);
	assert_free(pid, false);
	kill_reap(pid);
}

/* ---- our own stop wakes a sleeper --------------------------------------- */

/* idlepool's condvar workers wait for a job that never comes. Each stop of
 * ours makes one run for a few µs, and with every CPU busy it reads 'R'
 * while it waits for one to go back to sleep: a fresh look then called it
 * running. At 200 Hz for 3 s (up to 600 samples each), no sample may say running or waiting for a
 * CPU (what they wait in is a futex; the stack makes it idle later). */
static void test_own_stop_is_not_running(void **state)
{
	if (access("build/targets/idlepool", X_OK) != 0)
		skip();
	pid_t pid = fork();
	if (pid == 0) {
		execl("build/targets/idlepool", "idlepool", (char *)NULL);
		_exit(127);
	}
	pid_t tids[MAXT];
	int n = 0;
	for (int i = 0; i < 200 && n < 7; i++) {
		sleep_ms(10);
		if (target_threads(pid, tids, MAXT, &n) < 0)
			n = 0;
	}
	assert_int_equal(n, 7);
	/* Named and asleep: on a loaded machine a new worker may still be on
	 * its way to its wait (runnable, and rightly sampled so). */
	for (int i = 0, asleep = 0; i < 500 && asleep < n; i++) {
		sleep_ms(10);
		asleep = 0;
		for (int k = 0; k < n; k++) {
			char st = 0;
			asleep += target_state(pid, tids[k], &st) == 0 && st == 'S';
		}
	}
	/* Busy CPUs, as under an incident: a resumed worker then waits in a
	 * run queue to go back to sleep, and reads 'R' meanwhile. */
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	pid_t hog[16];
	int nhog = ncpu < 1 ? 2 : ncpu > 8 ? 16 : (int)(2 * ncpu);
	for (int i = 0; i < nhog; i++)
		if ((hog[i] = fork()) == 0)
			for (;;)
				;
	struct wall_config cfg = {.rate_hz = 200};
	struct wall_sampler *ws;
	struct counts c = {.pid = pid};
	assert_int_equal(wall_new(&cfg, &ws), 0);
	assert_int_equal(add_all(ws, pid), 7);
	uint64_t end = mono_ns() + 3000000000ull;
	while (mono_ns() < end) {
		wall_tick(ws, mono_ns(), count_cb, &c);
		sleep_ms(2);
	}
	for (int i = 0; i < nhog; i++)
		kill_reap(hog[i]);
	assert_int_equal(wall_detach_all(ws), 0);
	wall_free(ws);
	assert_free(pid, false);
	kill_reap(pid);
	for (int k = 1; k <= 3; k++) {
		char name[16];
		snprintf(name, sizeof(name), "worker%d", k);
		int w = by_name(&c, name);
		unsigned all = 0;
		for (int j = 0; j < SAMPLE_WAIT_COUNT; j++)
			all += c.kind[w][j];
		print_message("%s: %u samples, %u running, %u CPU-wait\n", name, all,
			      c.kind[w][SAMPLE_WAIT_NONE], c.kind[w][SAMPLE_WAIT_CPU]);
		assert_true(all > 20);
		assert_int_equal(c.kind[w][SAMPLE_WAIT_NONE], 0);
		assert_int_equal(c.kind[w][SAMPLE_WAIT_CPU], 0);
	}
}

/* ---- a process traced by someone else ---------------------------------- */

static void test_already_traced(void **state)
{
	pid_t victim, tracer;
	spawn_traced(&victim, &tracer);
	struct wall_sampler *ws;
	assert_int_equal(wall_new(NULL, &ws), 0);
	assert_int_equal(wall_add_thread(ws, victim, victim), -EBUSY);
	assert_int_equal(wall_tracer_of(victim), tracer);
	assert_int_equal(wall_add_thread(ws, 999999999, 999999999), -ESRCH);
	assert_int_equal(wall_nthreads(ws), 0);
	wall_free(ws);
	kill_reap(tracer);
	kill_reap(victim);
}

TEST_MAIN(NULL, NULL, TEST(test_waiter_kinds), TEST(test_waiter_unwinds),
	  TEST(test_restart_first_sight), TEST(test_stopped_before_attach),
	  TEST(test_stop_cont_while_attached), TEST(test_threads_come_and_go), TEST(test_dstate),
	  TEST(test_own_stop_is_not_running), TEST(test_already_traced))
