/*
 * stuck — a target with a thread stuck in uninterruptible sleep (D) and an
 * unreaped zombie child, for the threads view (issue 3).
 *
 *   stuck [SECONDS]        default: the D state lasts 1000 s
 *
 * D state without root tricks or a misbehaving filesystem: a thread that
 * calls vfork() sleeps until the child execs or exits, and the kernel waits
 * in wait_for_vfork_done() with TASK_KILLABLE (= TASK_WAKEKILL |
 * TASK_UNINTERRUPTIBLE; kernel/fork.c), which /proc reports as "D"
 * (checked on this kernel: /proc/PID/task/TID/stat). TASK_KILLABLE is
 * skipped by the hung-task detector, so no kernel warnings. The child does
 * nothing but sleep SECONDS with raw system calls (it shares our memory
 * and stack, so it must not touch libc state) and asks for SIGKILL when
 * its parent thread dies (PR_SET_PDEATHSIG), so killing stuck also ends it.
 *
 * Threads: main ("stuck") sleeps in nanosleep; "loader" is the one in D.
 * The zombie: a child forked at start that exits at once and is never
 * waited for (SIGCHLD left at its default, which does not reap).
 */
#include "target.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

static long d_seconds = 1000;

/* The vfork child: raw syscalls only, then _exit, which releases the parent. */
static void child_sleep(void)
{
	struct timespec ts = {.tv_sec = d_seconds};

	syscall(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	if (syscall(SYS_getppid) == 1)
		syscall(SYS_exit, 0);
	syscall(SYS_nanosleep, &ts, NULL);
	syscall(SYS_exit, 0);
}

KEEP void load_blocking(void)
{
	pid_t p = vfork();

	if (p == 0)
		child_sleep();
}

static void *run_loader(void *arg)
{
	for (;;) {
		load_blocking();
		pause();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t loader;
	pid_t z;

	if (argc > 2 || (argc > 1 && atol(argv[1]) <= 0)) {
		fprintf(stderr, "usage: stuck [SECONDS]\n");
		return 2;
	}
	if (argc > 1)
		d_seconds = atol(argv[1]);
	z = fork();
	if (z == 0)
		_exit(0); /* the zombie: never reaped */
	if (z < 0 || pthread_create(&loader, NULL, run_loader, NULL)) {
		fprintf(stderr, "stuck: cannot fork or create a thread\n");
		return 1;
	}
	pthread_setname_np(loader, "loader");
	for (;;)
		pause();
}
