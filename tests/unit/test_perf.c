/* Unit tests for the perf sampler: sampling this very process through the
 * real kernel (registers, stack copy, new-thread records, removal;
 * inherited events: short-lived threads sampled, a thread created after
 * attach not opened a second time, every CPU's ring drained). Decoding
 * records is test_perfrecord.c's, event set-up test_perfevent.c's. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "runner.h"

#include "stacktop/sample/perf.h"
#include "helpers.h"

struct seen {
	int samples, with_regs, with_stack, stack_without_regs, mine, new_threads;
	pid_t new_tid;
	uint64_t local_addr;
	int sp_near;
};

static void on_sample(void *ctx, const struct sample *s)
{
	struct seen *v = ctx;
	v->samples++;
	v->with_regs += s->regs_mask != 0;
	v->with_stack += s->stack_size > 0;
	/* The kernel copies a stack only where it has the user registers. */
	v->stack_without_regs += s->stack_size > 0 && !s->regs_mask;
	v->mine += s->tid == gettid();
	uint64_t sp = s->regs[SAMPLE_REG_RSP];
	/* Our stack pointer sits within a few KiB below a local of the caller. */
	if (sp < v->local_addr && v->local_addr - sp < 65536)
		v->sp_near++;
}

static void on_new(void *ctx, pid_t pid, pid_t tid)
{
	struct seen *v = ctx;
	if (pid == getpid() && tid != getpid()) {
		v->new_threads++;
		v->new_tid = tid;
	}
}

static void *quick_thread(void *arg)
{
	return arg;
}

static void test_live_sampling(void **state)
{
	struct perf_config cfg = {.rate_hz = 1000, .stack_size = 8192, .drain_interval_s = 0.05};
	struct perf_sampler *ps;
	struct perf_callbacks cb = {.sample = on_sample, .thread_new = on_new};
	struct seen v = {0};
	volatile int local = 0;
	v.local_addr = (uint64_t)(uintptr_t)&local;

	assert_int_equal(perf_new(&cfg, &ps), 0);
	int err = perf_add_thread(ps, getpid(), gettid());
	if (err == -EACCES || err == -EPERM) {
		perf_free(ps);
		skip(); /* not permitted here: the e2e tests cover the message */
	}
	assert_int_equal(err, 0);
	assert_int_equal(perf_add_thread(ps, getpid(), gettid()), -EEXIST);
	assert_true(perf_has_thread(ps, gettid()));
	for (int i = 0; i < 6; i++) {
		burn_cpu_s(0.05);
		perf_drain(ps, &cb, &v);
	}
	pthread_t th;
	pthread_create(&th, NULL, quick_thread, NULL);
	pthread_join(th, NULL);
	burn_cpu_s(0.01);
	perf_drain(ps, &cb, &v);

	/* 300 ms of CPU at 1 kHz: expect well over 100 samples. The count
	 * of a live sampler is never exact, so what follows compares the
	 * samples with each other, with a small allowance for odd ones. */
	assert_true(v.samples > 100);
	/* All ours but for the odd sample of quick_thread, should it meet a
	 * tick; such a sample, taken as the thread exits, may have no user
	 * context (no registers, no stack copy). */
	int odd = 2 + v.samples / 100;
	assert_true(v.mine >= v.samples - odd);
	assert_true(v.with_regs >= v.samples - odd);
	assert_true(v.with_stack >= v.samples - odd);
	assert_int_equal(v.stack_without_regs, 0);
	assert_true(v.sp_near > v.samples / 2);
	assert_int_equal(v.new_threads, 1);
	assert_true(perf_get_stats(ps)->samples >= (uint64_t)v.samples);

	perf_remove_thread(ps, gettid());
	assert_false(perf_has_thread(ps, gettid()));
	assert_int_equal(perf_nthreads(ps), 0);
	assert_int_equal(perf_add_thread(ps, getpid(), 999999999), -ESRCH);
	perf_free(ps);
}

/* Samples per thread of this process, by tid. */
#define MAXT 4096
struct per_tid {
	pid_t tid[MAXT];
	int n[MAXT];
	int ntids, total, foreign;
};

static void count_sample(void *ctx, const struct sample *s)
{
	struct per_tid *v = ctx;
	v->total++;
	if (s->pid != getpid())
		v->foreign++;
	for (int i = 0; i < v->ntids; i++)
		if (v->tid[i] == s->tid) {
			v->n[i]++;
			return;
		}
	if (v->ntids < MAXT) {
		v->tid[v->ntids] = s->tid;
		v->n[v->ntids++] = 1;
	}
}

static int samples_of(const struct per_tid *v, pid_t tid)
{
	for (int i = 0; i < v->ntids; i++)
		if (v->tid[i] == tid)
			return v->n[i];
	return 0;
}

/* A sampler of this process (the test's only one) with events of kind ev,
 * or NULL (skip) when not permitted. */
static struct perf_sampler *open_self(unsigned rate, enum perf_events ev)
{
	struct perf_config cfg = {
	    .rate_hz = rate, .stack_size = 4096, .drain_interval_s = 0.05, .events = ev};
	struct perf_sampler *ps;
	assert_int_equal(perf_new(&cfg, &ps), 0);
	int err = perf_add_thread(ps, getpid(), gettid());
	if (err == -EACCES || err == -EPERM) {
		perf_free(ps);
		return NULL;
	}
	assert_int_equal(err, 0);
	return ps;
}

/* Opened once the thread's tid is known, when a test must add the thread
 * before it ends. */
struct gate {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool go;
};

struct short_job {
	double burn_s;
	double cpu_s; /* what it burnt */
	pid_t tid;
	struct gate *gate; /* NULL: none */
};

/* Every test thread: notes its tid, opens its gate if it has one, burns
 * burn_s of CPU and notes the CPU time it took. */
static void *short_thread(void *arg)
{
	struct short_job *j = arg;
	struct timespec t;
	j->tid = gettid();
	if (j->gate) {
		pthread_mutex_lock(&j->gate->mu);
		j->gate->go = true;
		pthread_cond_broadcast(&j->gate->cv);
		pthread_mutex_unlock(&j->gate->mu);
	}
	burn_cpu_s(j->burn_s);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	j->cpu_s = t.tv_sec + t.tv_nsec / 1e9;
	return NULL;
}

/* Threads that live a few ms each, created and joined for 2 s of wall
 * time: with inherited events their samples arrive (cpu-clock restarts its
 * period in every new thread, so a thread is sampled once it has run one
 * period: 2.5 ms threads at 1 kHz give 2 of 2.5 samples, 80%); with
 * per-thread events a thread is gone before it is opened. */
static double short_threads_coverage(enum perf_events ev, double burn_s, int *nthreads_out)
{
	/* Per-CPU: 997 Hz, not a divisor of the scheduler tick, or the clock
	 * would fire in step with the tick that switches these threads in. */
	unsigned rate = ev == PERF_EVENTS_CPU ? 997 : 1000;
	struct perf_sampler *ps = open_self(rate, ev);
	if (!ps)
		return -1;
	struct per_tid *v = calloc(1, sizeof(*v));
	struct perf_callbacks cb = {.sample = count_sample};
	struct short_job *jobs = calloc(MAXT, sizeof(*jobs));
	struct timespec t0, t;
	int n = 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		pthread_t th;
		jobs[n].burn_s = burn_s;
		assert_int_equal(pthread_create(&th, NULL, short_thread, &jobs[n]), 0);
		pthread_join(th, NULL);
		n++;
		if (n % 10 == 0)
			perf_drain(ps, &cb, v);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (n < MAXT && (t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < 2);
	perf_drain(ps, &cb, v);
	double cpu = 0;
	int got = 0;
	for (int i = 0; i < n; i++) {
		cpu += jobs[i].cpu_s;
		got += samples_of(v, jobs[i].tid);
	}
	const struct perf_stats *st = perf_get_stats(ps);
	assert_int_equal(st->lost, 0);
	assert_int_equal(st->events, ev);
	if (ev == PERF_EVENTS_CPU)
		assert_int_equal(v->foreign, 0); /* the filter keeps this process only */
	if (ev == PERF_EVENTS_INHERIT) {
		/* Every short thread was known from its FORK record, none opened. */
		assert_true(st->threads_inherited >= (uint64_t)n);
		assert_int_equal(st->threads_opened, 1);
	}
	perf_free(ps);
	free(v);
	free(jobs);
	*nthreads_out = n;
	return got / (cpu * rate);
}

static void test_short_threads(void **state)
{
	int n_inh = 0, n_pt = 0;
	double inh = short_threads_coverage(PERF_EVENTS_INHERIT, 0.0025, &n_inh);
	if (inh < 0)
		skip();
	double pt = short_threads_coverage(PERF_EVENTS_THREAD, 0.0025, &n_pt);
	print_message("short threads: inherited %.0f%% of %d, per-thread %.0f%% of %d\n", inh * 100,
		      n_inh, pt * 100, n_pt);
	assert_true(n_inh > 50);
	/* 2 of 2.5 expected, and never double. */
	assert_true(inh >= 0.6);
	assert_true(inh <= 1.15);
	assert_true(pt < inh);
}

/* Per-CPU events: the clock runs per CPU, so threads of 0.5 ms (half a
 * period at 1 kHz) are sampled in proportion to their CPU time, and the
 * BPF filter lets no other process's sample through. */
static void test_short_threads_per_cpu(void **state)
{
	int n = 0;
	double cov = short_threads_coverage(PERF_EVENTS_CPU, 0.0005, &n);
	if (cov < 0)
		skip();
	print_message("0.5 ms threads, per-CPU events: %.0f%% of %d\n", cov * 100, n);
	assert_true(n > 50);
	assert_true(cov >= 0.7);
	assert_true(cov <= 1.3);
}

/* A thread created after attach is inherited: adding it (as the /proc
 * rescan does, before any drain read its FORK record) must not open it a
 * second time, or its samples would count twice. */
static void test_no_double_open(void **state)
{
	struct perf_sampler *ps = open_self(1000, PERF_EVENTS_INHERIT);
	if (!ps)
		skip();
	struct gate g = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false};
	struct short_job j = {.burn_s = 0.3, .gate = &g};
	struct per_tid *v = calloc(1, sizeof(*v));
	struct perf_callbacks cb = {.sample = count_sample};
	pthread_t th;

	assert_int_equal(pthread_create(&th, NULL, short_thread, &j), 0);
	pthread_mutex_lock(&g.mu);
	while (!g.go)
		pthread_cond_wait(&g.cv, &g.mu);
	pthread_mutex_unlock(&g.mu);
	/* Not drained yet: its FORK record is still in a ring. */
	int err = perf_add_thread(ps, getpid(), j.tid);
	assert_true(err == -EEXIST || err == 0);
	assert_true(perf_has_thread(ps, j.tid));
	assert_int_equal(perf_add_thread(ps, getpid(), j.tid), -EEXIST);
	assert_int_equal(perf_nthreads(ps), 2);
	while (pthread_tryjoin_np(th, NULL) == EBUSY) {
		perf_drain(ps, &cb, v);
		usleep(20000);
	}
	perf_drain(ps, &cb, v);
	const struct perf_stats *st = perf_get_stats(ps);
	assert_int_equal(st->threads_opened, 1); /* this thread only */
	int got = samples_of(v, j.tid);
	print_message("inherited thread: %d samples for 300 ms at 1 kHz\n", got);
	assert_true(got >= 150);
	assert_true(got <= 330); /* double sampling would give ~600 */
	/* Its EXIT record removed it. */
	assert_false(perf_has_thread(ps, j.tid));
	assert_int_equal(perf_nthreads(ps), 1);
	perf_free(ps);
	free(v);
}

/* perf_drain reads every CPU's ring: threads pinned to each online CPU
 * are all sampled, through one ring per CPU. */
static void test_drain_cpu_rings(void **state)
{
	struct perf_sampler *ps = open_self(1000, PERF_EVENTS_INHERIT);
	if (!ps)
		skip();
	int ncpu = 0, cpus[64];
	cpu_set_t set;
	assert_int_equal(sched_getaffinity(0, sizeof(set), &set), 0);
	for (int c = 0; c < CPU_SETSIZE && ncpu < 64; c++)
		if (CPU_ISSET(c, &set))
			cpus[ncpu++] = c;
	struct short_job jobs[64] = {{0}};
	pthread_t th[64];
	struct per_tid *v = calloc(1, sizeof(*v));
	struct perf_callbacks cb = {.sample = count_sample};
	for (int i = 0; i < ncpu; i++) {
		pthread_attr_t a;
		cpu_set_t one;
		CPU_ZERO(&one);
		CPU_SET(cpus[i], &one);
		pthread_attr_init(&a);
		pthread_attr_setaffinity_np(&a, sizeof(one), &one);
		jobs[i].burn_s = 0.1;
		assert_int_equal(pthread_create(&th[i], &a, short_thread, &jobs[i]), 0);
		pthread_attr_destroy(&a);
	}
	for (int i = 0; i < ncpu; i++) {
		pthread_join(th[i], NULL);
		perf_drain(ps, &cb, v);
	}
	perf_drain(ps, &cb, v);
	assert_true(perf_nrings(ps) >= ncpu);
	for (int i = 0; i < ncpu; i++) {
		int got = samples_of(v, jobs[i].tid);
		print_message("cpu %d: %d samples\n", cpus[i], got);
		assert_true(got >= 40); /* 100 ms at 1 kHz */
	}
	perf_free(ps);
	free(v);
}

/* Rings hold a second of samples at the rate (a power of two of pages),
 * within 64 MiB over all CPUs' rings; a ring per thread only a fifth of a
 * second, in 4 MiB. */
static void test_ring_pages(void **state)
{
	/* 999 Hz x (16 KiB + 512) = 16.5 MiB: the 4096-page cap. */
	assert_int_equal(perf_ring_pages(999, 16384, 2), 4096);
	/* 99 Hz: 1.6 MiB, rounded up to 512 pages. */
	assert_int_equal(perf_ring_pages(99, 16384, 2), 512);
	/* 64 CPUs share 64 MiB: 256 pages each. */
	assert_int_equal(perf_ring_pages(999, 16384, 64), 256);
	/* A small stack at a low rate: the 16-page floor. */
	assert_int_equal(perf_ring_pages(1, 512, 2), 16);
	/* Per thread: 0.2 s of 999 Hz = 3.3 MiB, 1024 pages at most. */
	assert_int_equal(perf_ring_pages(999, 16384, 0), 1024);
	assert_int_equal(perf_ring_pages(99, 16384, 0), 128);
	/* Always a power of two. */
	for (int n = 1; n <= 1024; n++) {
		unsigned p = perf_ring_pages(997, 65528, n);
		assert_true(p >= 16 && (p & (p - 1)) == 0);
	}
}

TEST_MAIN(NULL, NULL, TEST(test_ring_pages), TEST(test_live_sampling), TEST(test_short_threads),
	  TEST(test_short_threads_per_cpu), TEST(test_no_double_open), TEST(test_drain_cpu_rings))
