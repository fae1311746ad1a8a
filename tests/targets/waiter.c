/*
 * waiter — a program that is slow without using CPU, for wall-clock mode
 * (issue 5). Every thread's wall time is known:
 *
 *   waiter [SECONDS]        default: runs until killed (SECONDS > 0: exits then)
 *   waiter --bench N SECONDS   N worker threads for bench/wall.sh (see below)
 *
 *   thread   name       where its time goes                       share of wall
 *   main     "writer"   sleep in write_pipe (writes the pipe 1/s)  100% sleep
 *   2nd      "locker1"  50% lock in take_lock, 50% sleep in hold_lock
 *   3rd      "locker2"  the same, strictly alternating with locker1
 *   4th      "reader"   I/O in read_pipe (blocked in read)         100% I/O
 *   5th      "napper"   sleep in nap (nanosleep 0.5 s)             100% sleep
 *
 * So over the process (5 threads): lock 20% (take_lock), I/O 20%
 * (read_pipe), sleep 60% (nap 20%, hold_lock 20%, write_pipe 20%), running
 * about 0%. The lockers contend for one mutex: each holds it for 10 ms
 * asleep, so CPU mode sees almost nothing, and the other waits in
 * pthread_mutex_lock (contention: "lock", not "idle" as a condition variable
 * wait would be). A plain mutex is unfair (the releasing thread could take
 * it again at once), so the releaser naps 1 ms in hold_lock after handing
 * it over: take_lock is about 18%, hold_lock about 22%, whatever the order
 * in which they get it.
 *
 * --bench: N threads ("worker-I") each repeat a fixed unit of arithmetic
 * (calibrated to ~100 µs) and a sleep of N x 0.4 ms, so the process wants
 * about a quarter of one CPU whatever N is, and most threads are asleep at
 * any moment, as in a server. After SECONDS it prints
 *   waiter: rounds_per_s=1234.5 rounds=12345 seconds=10.000 threads=8
 * A profiler that stops threads makes each round longer: the drop in
 * rounds_per_s is the slowdown it causes.
 */
#include "target.h"

/* Not target.h's sleep_s: the sleeps must be attributed to lines of this
 * file (the tests look for "nap (waiter.c:N)"), and code inlined from a
 * header would carry the header's lines. */
static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0)
		;
}

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int pipefd[2];

/* Wait (futex, in pthread_mutex_lock) until the other locker lets go. */
KEEP void take_lock(int me)
{
	pthread_mutex_lock(&mu);
	NO_TAIL();
}

/* Hold the lock for 10 ms, asleep, let go, and give the other its turn. */
KEEP void hold_lock(int me)
{
	sleep_ms(10);
	pthread_mutex_unlock(&mu);
	sleep_ms(1);
	NO_TAIL();
}

static void *locker(void *arg)
{
	int me = (int)(long)arg;
	pthread_setname_np(pthread_self(), me ? "locker2" : "locker1");
	for (;;) {
		take_lock(me);
		hold_lock(me);
	}
	return NULL;
}

KEEP void read_pipe(void)
{
	char buf[64];
	if (read(pipefd[0], buf, sizeof(buf)) < 0)
		sleep_ms(100);
	NO_TAIL();
}

/* A thread entry called name (the profile's caller of fn) that names its
 * thread "name" and calls fn for good. */
#define LOOP_THREAD(name, fn)                                                                      \
	static void *name(void *arg)                                                               \
	{                                                                                          \
		pthread_setname_np(pthread_self(), #name);                                         \
		for (;;)                                                                           \
			fn();                                                                      \
		return NULL;                                                                       \
	}

LOOP_THREAD(reader, read_pipe)

KEEP void nap(void)
{
	sleep_ms(500);
	NO_TAIL();
}

LOOP_THREAD(napper, nap)

KEEP void write_pipe(void)
{
	sleep_ms(1000);
	if (write(pipefd[1], "x", 1) < 0)
		sleep_ms(1);
	NO_TAIL();
}

/* ---- --bench ---- */

static uint64_t unit_iters;
static long bench_sleep_us;
static volatile int bench_stop;
static unsigned long bench_rounds[1024];

KEEP uint64_t work_unit(uint64_t iters)
{
	uint64_t x = sink + 1;
	SPIN(x, iters);
	sink = x;
	return x;
}

static void *bench_worker(void *arg)
{
	long i = (long)arg;
	char name[16];
	snprintf(name, sizeof(name), "worker-%ld", i);
	pthread_setname_np(pthread_self(), name);
	while (!bench_stop) {
		work_unit(unit_iters);
		struct timespec ts = {bench_sleep_us / 1000000, (bench_sleep_us % 1000000) * 1000};
		nanosleep(&ts, NULL);
		bench_rounds[i]++;
	}
	return NULL;
}

static int bench(int n, double seconds)
{
	pthread_t t[1024];
	if (n < 1 || n > 1024)
		return 2;
	unit_iters = spin_calibrate(0.0001); /* iterations in ~100 µs */
	bench_sleep_us = n * 400L;
	double t0 = mono_s();
	for (long i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, bench_worker, (void *)i))
			return 1;
	sleep_ms((long)(seconds * 1000));
	bench_stop = 1;
	double dt = mono_s() - t0;
	unsigned long total = 0;
	for (long i = 0; i < n; i++) {
		pthread_join(t[i], NULL);
		total += bench_rounds[i];
	}
	printf("waiter: rounds_per_s=%.1f rounds=%lu seconds=%.3f threads=%d\n", total / dt, total,
	       dt, n);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 3 && strcmp(argv[1], "--bench") == 0)
		return bench(atoi(argv[2]), atof(argv[3]));
	long seconds = argc > 1 ? atol(argv[1]) : 0;
	pthread_t t;
	if (pipe(pipefd) < 0)
		return 1;
	pthread_setname_np(pthread_self(), "writer");
	if (pthread_create(&t, NULL, locker, (void *)0L) ||
	    pthread_create(&t, NULL, locker, (void *)1L) ||
	    pthread_create(&t, NULL, reader, NULL) || pthread_create(&t, NULL, napper, NULL))
		return 1;
	for (long i = 0; !seconds || i < seconds; i++)
		write_pipe();
	return 0;
}
