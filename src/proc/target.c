/*
 * target — processes and threads as procfs shows them; launching a command
 * (see target.h for the contract).
 *
 * All /proc reads are short and bounded. A process is "gone" when /proc/PID
 * is missing or its state is Z/X: a zombie has no address space left to
 * sample.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "stacktop/proc/target.h"

ssize_t target_read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	ssize_t total = 0;
	while ((size_t)total < size - 1) {
		ssize_t n = read(fd, buf + total, size - 1 - (size_t)total);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			int err = errno == ESRCH ? ESRCH : errno;
			close(fd);
			return -err;
		}
		if (n == 0)
			break;
		total += n;
	}
	close(fd);
	buf[total] = '\0';
	return total;
}

ssize_t target_read_proc(pid_t pid, pid_t tid, const char *name, char *buf, size_t size)
{
	char path[96];

	if (tid)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/%s", pid, tid, name);
	else
		snprintf(path, sizeof(path), "/proc/%d/%s", pid, name);
	return target_read_file(path, buf, size);
}

int target_parse_stat_state(const char *stat, char *state)
{
	/* "pid (comm) S ...": comm may hold ") ", so use the last ')'. */
	const char *close_paren = stat ? strrchr(stat, ')') : NULL;
	/* The letters proc(5) lists, old kernels' W, P and K included. */
	if (!close_paren || close_paren[1] != ' ' || !close_paren[2] ||
	    !strchr("RSDTtZXxIWPK", close_paren[2]))
		return -EINVAL;
	*state = close_paren[2];
	return 0;
}

int target_state(pid_t pid, pid_t tid, char *state)
{
	char buf[1024];
	ssize_t n = target_read_proc(pid, tid, "stat", buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	return target_parse_stat_state(buf, state);
}

bool target_is_kthread(pid_t pid)
{
	char buf[1024];
	unsigned long flags = 0;
	ssize_t n = target_read_proc(pid, 0, "stat", buf, sizeof(buf));
	const char *p = n > 0 ? strrchr(buf, ')') : NULL;

	/* ") S ppid pgrp session tty_nr tpgid flags": flags is the 7th after ')' */
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %lu", &flags) != 1)
		return false;
	return flags & 0x00200000; /* PF_KTHREAD, include/linux/sched.h */
}

/* From status, not stat: stat sums the times of every thread in the
 * kernel (a 10,000-thread process's costs ~0.3 ms a read), status's
 * State line does not. */
int target_exists(pid_t pid)
{
	if (pid <= 0)
		return -ESRCH;
	char buf[4096];
	ssize_t n = target_read_proc(pid, 0, "status", buf, sizeof(buf));
	const char *p = n > 0 ? strstr(buf, "\nState:\t") : NULL;
	if (!p)
		return -ESRCH;
	if (p[8] == 'Z' || p[8] == 'X')
		return -ESRCH;
	return 0;
}

int target_comm(pid_t pid, pid_t tid, char *buf, size_t size)
{
	ssize_t n = target_read_proc(pid, tid, "comm", buf, size);
	if (n < 0)
		return (int)n;
	if (n > 0 && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	return 0;
}

int target_cmdline(pid_t pid, char *buf, size_t size)
{
	ssize_t n = target_read_proc(pid, 0, "cmdline", buf, size);
	if (n < 0)
		return (int)n;
	while (n > 0 && buf[n - 1] == '\0')
		n--;
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	buf[n] = '\0';
	if (n == 0) {
		char comm[64];
		if (target_comm(pid, pid, comm, sizeof(comm)) == 0)
			snprintf(buf, size, "[%s]", comm);
	}
	return 0;
}

int target_threads(pid_t pid, pid_t *tids, int max, int *n)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	DIR *d = opendir(path);
	if (!d)
		return errno == ENOENT ? -ESRCH : -errno;
	struct dirent *e;
	*n = 0;
	while ((e = readdir(d)) && *n < max) {
		char *end;
		long tid = strtol(e->d_name, &end, 10);
		if (*end || tid <= 0)
			continue;
		tids[(*n)++] = (pid_t)tid;
	}
	closedir(d);
	return 0;
}

int target_threads_all(pid_t pid, pid_t **tids, int *cap, int *n)
{
	int rc;

	*n = 0;
	if (!*tids || *cap <= 0) {
		pid_t *t = realloc(*tids, 64 * sizeof(*t));
		if (!t)
			return -ENOMEM;
		*tids = t;
		*cap = 64;
	}
	/* A full list may have been cut: list again into twice the room. */
	while ((rc = target_threads(pid, *tids, *cap, n)) == 0 && *n == *cap) {
		pid_t *more =
		    *cap <= INT_MAX / 2 ? realloc(*tids, (size_t)*cap * 2 * sizeof(*more)) : NULL;
		if (!more)
			return -ENOMEM;
		*tids = more;
		*cap *= 2;
	}
	return rc;
}

int target_tracer(pid_t pid, pid_t *tracer)
{
	char buf[4096];
	ssize_t n = target_read_proc(pid, 0, "status", buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	const char *p = strstr(buf, "\nTracerPid:");
	if (!p)
		return -EINVAL;
	*tracer = (pid_t)strtol(p + 11, NULL, 10);
	return 0;
}

/* In the child: wire stdio, wait for the go signal, exec. Never returns. */
static void target_child_main(char *const argv[], enum target_stdio io, int go_rd, int err_wr,
			      pid_t parent)
{
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != parent)
		_exit(127); /* the parent died before we asked */
	if (io != TARGET_STDIO_INHERIT) {
		int null = open("/dev/null", O_RDWR);
		if (null >= 0) {
			dup2(null, 0);
			if (io == TARGET_STDIO_QUIET) {
				dup2(null, 1);
				dup2(null, 2);
			} else {
				dup2(2, 1);
			}
			if (null > 2)
				close(null);
		}
	}
	char c;
	while (read(go_rd, &c, 1) < 0 && errno == EINTR)
		;
	close(go_rd);
	execvp(argv[0], argv);
	int err = errno;
	ssize_t w = write(err_wr, &err, sizeof(err));
	(void)w;
	_exit(127);
}

int target_spawn(char *const argv[], enum target_stdio io, struct target_child *c)
{
	int go[2], err[2];
	if (pipe2(go, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(err, O_CLOEXEC) < 0) {
		int e = errno;
		close(go[0]);
		close(go[1]);
		return -e;
	}
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(go[0]);
		close(go[1]);
		close(err[0]);
		close(err[1]);
		return -e;
	}
	if (pid == 0) {
		close(go[1]);
		close(err[0]);
		/* Restore default signal handling and mask for the command. */
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		target_child_main(argv, io, go[0], err[1], parent);
	}
	close(go[0]);
	close(err[1]);
	c->pid = pid;
	c->go_fd = go[1];
	c->err_fd = err[0];
	return 0;
}

int target_spawn_go(struct target_child *c)
{
	int err = 0;
	close(c->go_fd);
	c->go_fd = -1;
	ssize_t n;
	while ((n = read(c->err_fd, &err, sizeof(err))) < 0 && errno == EINTR)
		;
	close(c->err_fd);
	c->err_fd = -1;
	if (n == (ssize_t)sizeof(err)) {
		waitpid(c->pid, NULL, 0);
		c->pid = 0;
		return -err;
	}
	return 0;
}

int target_child_reap(struct target_child *c, int *status)
{
	if (c->pid <= 0)
		return 1;
	pid_t r = waitpid(c->pid, status, WNOHANG);
	if (r == c->pid) {
		c->pid = 0;
		return 1;
	}
	return 0;
}

void target_child_stop(struct target_child *c, int timeout_ms)
{
	int status;
	if (c->pid <= 0)
		return;
	kill(c->pid, SIGTERM);
	for (int waited = 0; waited < timeout_ms; waited += 10) {
		if (target_child_reap(c, &status))
			return;
		struct timespec ts = {0, 10 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	kill(c->pid, SIGKILL);
	waitpid(c->pid, &status, 0);
	c->pid = 0;
}
