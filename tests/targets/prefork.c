/*
 * prefork — a pre-fork server in miniature, for --subprocesses: the parent
 * forks WORKERS processes and then only waits; the work is all in them.
 *
 *   prefork [SECONDS]     default: run until killed
 *
 * Each worker runs rounds of
 *
 *   main → prefork_worker → prefork_burn
 *
 * (prefork_burn does all the arithmetic: the workers' hot leaf). The parent
 * sleeps in waitpid, so profiling only the parent shows no prefork_burn at
 * all. Workers ask for SIGTERM when the parent dies (PR_SET_PDEATHSIG) and
 * stop after SECONDS themselves; the parent reaps them and exits 0.
 *
 * Output: one line "prefork: parent PID workers PID PID" on stdout once the
 * workers run.
 */
#include "target.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#define WORKERS 2

KEEP uint64_t prefork_burn(uint64_t x)
{
	SPIN(x, 200000);
	return x;
}

KEEP void prefork_worker(double seconds)
{
	uint64_t x = (uint64_t)getpid();
	double end = mono_s() + seconds;

	while (seconds <= 0 || mono_s() < end) {
		x = prefork_burn(x);
		NO_TAIL();
	}
	sink += x;
}

int main(int argc, char **argv)
{
	double seconds;
	pid_t kids[WORKERS];

	if (arg_seconds(argc, argv, "prefork [SECONDS]", &seconds) < 0)
		return 2;
	for (int i = 0; i < WORKERS; i++) {
		kids[i] = fork();
		if (kids[i] < 0) {
			perror("prefork: fork");
			return 1;
		}
		if (kids[i] == 0) {
			prctl(PR_SET_PDEATHSIG, SIGTERM);
			if (getppid() == 1)
				_exit(0); /* the parent is gone already */
			prefork_worker(seconds);
			_exit(0);
		}
	}
	printf("prefork: parent %d workers %d %d\n", getpid(), kids[0], kids[1]);
	fflush(stdout);
	for (int i = 0; i < WORKERS; i++)
		while (waitpid(kids[i], NULL, 0) < 0 && errno == EINTR)
			;
	return 0;
}
