/*
 * idle — a target that takes no CPU: the main thread and one extra thread
 * ("idle-sleeper") sleep. Used by the error and safety tests, where only
 * the process's existence, owner and state matter.
 *
 *   idle [SECONDS [NAME]]   SECONDS 0 or absent: forever (exits 0 after
 *                           SECONDS); NAME: the extra thread's name instead
 *                           (the safety test gives it control characters)
 */
#include "target.h"

static void *run_sleeper(void *arg)
{
	sleep_forever();
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
		sleep_s(seconds);
		return 0;
	}
	for (;;)
		pause();
}
