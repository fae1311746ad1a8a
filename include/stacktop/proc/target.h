/*
 * target — what is profiled, as procfs shows it: processes, their threads,
 * names, command lines and states; and launching a command to profile from
 * its first instruction.
 *
 * Launching: target_spawn forks a child that waits on a pipe before it
 * execs, so the sampler can open its events (enable_on_exec) first;
 * target_spawn_go lets it exec and reports an exec failure (a second,
 * close-on-exec pipe carries errno back). The child asks for SIGTERM when
 * stacktop dies (PR_SET_PDEATHSIG), so a launched command never outlives a
 * killed profiler.
 *
 * Nothing here sanitizes: names and command lines are raw bytes from the
 * target, and the views clean them before drawing.
 */
#ifndef STACKTOP_TARGET_H
#define STACKTOP_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Read a small procfs file into buf (always NUL-terminated, at most
 * size - 1 bytes). Returns the bytes read, or -errno (-ESRCH when the file
 * is gone: the process or thread ended). */
ssize_t target_read_file(const char *path, char *buf, size_t size);
/* target_read_file of /proc/PID/NAME (tid 0) or /proc/PID/task/TID/NAME. */
ssize_t target_read_proc(pid_t pid, pid_t tid, const char *name, char *buf, size_t size);
/* 0 if the process exists and is not a zombie, -ESRCH otherwise. */
int target_exists(pid_t pid);
/* Command line with NULs turned into spaces (truncated to size). Falls back
 * to "[comm]" for kernel threads and zombies. 0 or -errno. */
int target_cmdline(pid_t pid, char *buf, size_t size);
/* Thread (or process, tid == pid) name from /proc/PID/task/TID/comm. */
int target_comm(pid_t pid, pid_t tid, char *buf, size_t size);
/* Thread ids of pid, up to max. 0 or -errno. */
int target_threads(pid_t pid, pid_t *tids, int max, int *n);
/* Every thread id of pid into *tids (*cap entries), grown with realloc as
 * needed (*tids NULL, *cap 0: allocated here; the caller frees it). 0 or
 * -errno (-ENOMEM: *n holds the threads listed so far). */
int target_threads_all(pid_t pid, pid_t **tids, int *cap, int *n);
/* State letter (R, S, D, T, t, Z, X, I) of a thread; 0 or -errno. */
int target_state(pid_t pid, pid_t tid, char *state);
/* true when pid is a kernel thread (PF_KTHREAD in the flags of its stat
 * line): it has no user space to trace or unwind. */
bool target_is_kthread(pid_t pid);
/* TracerPid from /proc/PID/status (0 when not traced); 0 or -errno. */
int target_tracer(pid_t pid, pid_t *tracer);
/* Parse the state letter out of a /proc/.../stat line (comm may contain
 * spaces and parentheses; NULL is -EINVAL). Used by wall too. 0 or -EINVAL. */
int target_parse_stat_state(const char *stat, char *state);

struct target_child {
	pid_t pid;
	int go_fd;  /* write end: the child execs when it is closed */
	int err_fd; /* read end: errno of a failed exec, or EOF */
};

enum target_stdio {
	TARGET_STDIO_INHERIT, /* the child shares our terminal */
	TARGET_STDIO_QUIET,   /* stdin and stdout/stderr go to /dev/null (TUI) */
	TARGET_STDIO_STDERR,  /* stdin /dev/null, stdout to our stderr (batch) */
};

int target_spawn(char *const argv[], enum target_stdio io, struct target_child *c);
/* Let the child exec. 0, or -errno of the failed exec (the child is reaped). */
int target_spawn_go(struct target_child *c);
/* Non-blocking: 1 and *status (waitpid status) when the child has exited,
 * 0 while it runs. */
int target_child_reap(struct target_child *c, int *status);
/* SIGTERM the child, wait up to timeout_ms, then SIGKILL. */
void target_child_stop(struct target_child *c, int timeout_ms);

#endif
