/*
 * sleepers — a crowd of idle processes, for the cost bench and test: what
 * stacktop pays per second must not grow with the number of processes on
 * the machine.
 *
 *   sleepers [N]      default 2000: fork N children that sleep forever
 *
 * Prints "sleepers: ready N" on stdout once every child exists, then
 * sleeps until killed. Each child asks for SIGKILL when its parent dies
 * (PR_SET_PDEATHSIG), so killing the parent by its pid ends all of them:
 * nothing is left behind, and no one needs to kill by name.
 */
#include "target.h"

#include <signal.h>
#include <sys/prctl.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 2000;
	pid_t parent = getpid();

	if (n < 0 || n > 100000 || argc > 2) {
		fprintf(stderr, "usage: sleepers [N]\n");
		return 2;
	}
	for (long i = 0; i < n; i++) {
		pid_t p = fork();
		if (p < 0) {
			perror("sleepers: fork");
			return 1;
		}
		if (p == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() != parent) /* the parent died before prctl */
				_exit(0);
			for (;;)
				pause();
		}
	}
	printf("sleepers: ready %ld\n", n);
	fflush(stdout);
	for (;;)
		pause();
}
