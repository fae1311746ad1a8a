/*
 * idle — a target that takes no CPU: the main thread and one extra thread
 * ("idle-sleeper") sleep. Used by the error and safety tests, where only
 * the process's existence, owner and state matter.
 *
 *   idle [SECONDS [NAME]]   SECONDS 0 or absent: forever (exits 0 after
 *                           SECONDS); NAME: the extra thread's name instead
 *                           (the safety test gives it control characters)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static void *run_sleeper(void *arg)
{
	for (;;) {
		struct timespec ts = {.tv_sec = 1};

		nanosleep(&ts, NULL);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0;
	const char *name = argc > 2 ? argv[2] : "idle-sleeper";
	char comm[16];
	pthread_t t;

	if (seconds < 0 || argc > 3) {
		fprintf(stderr, "usage: idle [SECONDS [THREAD_NAME]]\n");
		return 2;
	}
	snprintf(comm, sizeof(comm), "%s", name); /* the kernel keeps 15 bytes */
	if (pthread_create(&t, NULL, run_sleeper, NULL) == 0)
		pthread_setname_np(t, comm);
	if (seconds > 0) {
		struct timespec ts = {.tv_sec = (time_t)seconds,
				      .tv_nsec = (long)((seconds - (time_t)seconds) * 1e9)};

		nanosleep(&ts, NULL);
		return 0;
	}
	for (;;)
		pause();
}
