/*
 * hostile_locks — threads that wait on fake mutexes whose owner field the
 * target rotates, so every scan of stacktop's lock table sees each waiter
 * wait on a new owner (issue 28 item 7).
 *
 *   hostile_locks [THREADS]      default 2000
 *
 * Each thread sleeps in futex(FUTEX_WAIT, 2) on the lock word of its own
 * fake glibc mutex (__lock 2: locked with waiters, __kind 0), nobody ever
 * wakes it. Every 100 ms the main thread writes into each mutex's __owner
 * another live thread of the process, one step further round the ring
 * each time, never the waiter itself. A lock table keyed by (waiter,
 * owner) gains an entry per waiter per scan (563k entries and a full core
 * after 4 min at 2,100 threads); one entry a waiter with at most 8 owners
 * stays at the waiters' count.
 */
#include "target.h"

#include <linux/futex.h>
#include <sys/syscall.h>

struct fake_mutex {
	int lock;
	unsigned count;
	int owner;
	unsigned nusers;
	int kind;
	int pad[5];
};

static struct fake_mutex *mutexes;
static pid_t *tids;

KEEP static void wait_forever(struct fake_mutex *m)
{
	for (;;)
		syscall(SYS_futex, &m->lock, FUTEX_WAIT, 2, NULL, NULL, 0);
}

static void *waiter(void *arg)
{
	long i = (long)arg;

	__atomic_store_n(&tids[i], (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	wait_forever(&mutexes[i]);
	return NULL;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 2000;
	pthread_attr_t at;

	if (argc > 2 || n < 2 || n > 30000) {
		fprintf(stderr, "usage: hostile_locks [THREADS]\n");
		return 2;
	}
	mutexes = calloc((size_t)n, sizeof(*mutexes));
	tids = calloc((size_t)n, sizeof(*tids));
	if (!mutexes || !tids)
		return 1;
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 64 << 10);
	for (long i = 0; i < n; i++) {
		pthread_t th;

		mutexes[i].lock = 2;
		if (pthread_create(&th, &at, waiter, (void *)i))
			return perror("hostile_locks: pthread_create"), 1;
	}
	for (long i = 0; i < n; i++)
		while (!__atomic_load_n(&tids[i], __ATOMIC_ACQUIRE))
			usleep(1000);
	printf("ready %ld\n", n);
	fflush(stdout);
	for (long step = 1;; step++) {
		for (long i = 0; i < n; i++) {
			long k = 1 + step % (n - 1); /* 1..n-1: never the waiter */
			__atomic_store_n(&mutexes[i].owner, tids[(i + k) % n], __ATOMIC_RELAXED);
		}
		struct timespec ms = {0, 100000000};
		nanosleep(&ms, NULL);
	}
}
