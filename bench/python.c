/*
 * bench/python.c — what reading a CPython thread's Python stack costs per
 * sample (runtime/python.h), the first time and with the code objects
 * cached. Not a test: prints a table (bench/python.sh builds and runs it).
 *
 * For each interpreter given it starts tests/targets/pyshares.py (a thread
 * running Python: the stack changes under the reads, as a sampled one
 * does) and pystack.py (a sleeping main thread five frames deep), opens
 * the reader (space_load + python_open, timed once), then times ROUNDS
 * python_stack calls of the main thread: "first" is the first call (every
 * code object read), "cached" the mean of the rest, with the reads
 * (process_vm_readv calls) and frames per call. ingest adds one
 * frames_script lookup per Python frame on top (an index probe).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "stacktop/runtime/python.h"
#include "stacktop/unwind/space.h"

#define ROUNDS 2000

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static void run(const char *python, const char *script)
{
	pid_t pid = fork();
	struct space sp = {0};
	struct python *py;
	struct python_frame f[256];
	int n = 0;
	unsigned flags;
	double t0, t_open, t_first, t_rest;
	uint64_t r0, r1;

	if (pid == 0) {
		execl(python, python, script, (char *)NULL);
		_exit(127);
	}
	usleep(700000);
	t0 = now_us();
	if (space_load(&sp, pid) || python_open(&sp, &py)) {
		printf("%-44s %-12s not read\n", python, strrchr(script, '/') + 1);
		goto out;
	}
	t_open = now_us() - t0;
	t0 = now_us();
	python_stack(py, pid, f, 256, &n, &flags);
	t_first = now_us() - t0;
	r0 = python_get_stats(py)->reads;
	t0 = now_us();
	for (int i = 0; i < ROUNDS; i++)
		python_stack(py, pid, f, 256, &n, &flags);
	t_rest = (now_us() - t0) / ROUNDS;
	r1 = python_get_stats(py)->reads;
	printf("%-44s %-12s %8.0f %8.1f %8.2f %6.1f %6d\n", python, strrchr(script, '/') + 1,
	       t_open, t_first, t_rest, (double)(r1 - r0) / ROUNDS, n);
	python_free(py);
out:
	space_release(&sp);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "tests/targets";
	char a[512], b[512];

	snprintf(a, sizeof(a), "%s/pyshares.py", dir);
	snprintf(b, sizeof(b), "%s/pystack.py", dir);
	printf("%-44s %-12s %8s %8s %8s %6s %6s\n", "interpreter", "script", "open_us", "first_us",
	       "cached_us", "reads", "frames");
	for (int i = 2; i < argc; i++) {
		run(argv[i], a);
		run(argv[i], b);
	}
	return 0;
}
