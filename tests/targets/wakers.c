/*
 * wakers — a target for the thread-count sweep (bench/threads.sh): N threads
 * ("waker-K", default 1000), 2 of them busy ("burner-0", "burner-1": spin
 * in burn_loop), the rest asleep, each waking every 2 s (staggered over the
 * 2 s, so N/2 wake-ups a second) to go back to sleep at once. Stacks are
 * 64 KiB so 10,000 threads cost little memory.
 *
 *   wakers [THREADS [SECONDS]]   SECONDS 0 or absent: forever
 */
#include <stdbool.h>

#include "target.h"

static KEEP void burn_loop(void)
{
	uint64_t x = 7;
	for (;;)
		SPIN(x, 100000);
}

static void *run_burner(void *arg)
{
	burn_loop();
	return NULL;
}

static void *run_waker(void *arg)
{
	long k = (long)arg;
	/* First wake-up at k's slot in the 2 s, then every 2 s. */
	struct timespec ts = {.tv_sec = 0, .tv_nsec = (k * 7919 % 2000) * 1000000L};
	nanosleep(&ts, NULL);
	for (;;) {
		ts = (struct timespec){.tv_sec = 2};
		nanosleep(&ts, NULL);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	double seconds = argc > 2 ? atof(argv[2]) : 0;
	pthread_attr_t attr;
	char name[16];

	if (n < 3 || n > 100000 || seconds < 0 || argc > 3) {
		fprintf(stderr, "usage: wakers [THREADS [SECONDS]]\n");
		return 2;
	}
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (long i = 0; i < n - 1; i++) {
		pthread_t t;
		bool burner = i < 2;
		if (pthread_create(&t, &attr, burner ? run_burner : run_waker, (void *)i)) {
			fprintf(stderr, "wakers: thread %ld: cannot create\n", i);
			return 1;
		}
		snprintf(name, sizeof(name), burner ? "burner-%ld" : "waker-%ld", i);
		pthread_setname_np(t, name);
	}
	if (seconds > 0) {
		struct timespec ts = {.tv_sec = (time_t)seconds,
				      .tv_nsec = (long)((seconds - (time_t)seconds) * 1e9)};
		nanosleep(&ts, NULL);
		return 0;
	}
	for (;;)
		pause();
}
