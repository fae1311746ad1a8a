/*
 * procs — the processes being profiled: attached by PID or launched as a
 * command, their threads handed to the sampler as they appear (a rescan of
 * /proc/PID/task each refresh, besides what the sampler learns itself),
 * their command lines, and the moment the last one exits (with the exit
 * status of a launched command, in words for the header).
 *
 * A launched command is started in two steps so the sampler can open its
 * events before the first instruction: procs_spawn (the child waits),
 * then procs_go (it execs). It is stopped (SIGTERM, then SIGKILL) by
 * procs_stop_child, and dies with stacktop anyway (PR_SET_PDEATHSIG).
 *
 * Errors come back as -errno with one sentence in err; nothing prints.
 */
#ifndef STACKTOP_PROCS_H
#define STACKTOP_PROCS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "stacktop/target.h"

#define PROCS_MAX 64

struct sampler;

struct procs_entry {
	pid_t pid;
	bool gone;
	char cmdline[1024];
};

struct procs {
	struct procs_entry p[PROCS_MAX];
	int n;
	struct target_child child;
	bool launched;
	bool exited;	     /* every process is gone */
	char exit_text[160]; /* "target exited with status 0", "target 42 exited" */
	int nthreads;	     /* threads seen at the last scan */
	int unsampled;	     /* threads the last scan could not sample (EMFILE...) */
	int unsampled_err;   /* why (-errno of the last such failure), 0: none */
};

/* Attach to existing processes: each must exist. */
int procs_attach(struct procs *ps, const pid_t *pids, int n, char *err, size_t errsz);
/* Start argv, stopped before its exec; then procs_go lets it exec. */
int procs_spawn(struct procs *ps, char *const argv[], enum target_stdio io, char *err,
		size_t errsz);
int procs_go(struct procs *ps, char *const argv[], char *err, size_t errsz);
/* SIGTERM a launched command, SIGKILL after timeout_ms. */
void procs_stop_child(struct procs *ps, int timeout_ms);

/* Hand every thread not sampled yet to s. Returns the first hard error
 * (not -ESRCH/-EEXIST: a thread that ended meanwhile), 0 when none. */
int procs_scan(struct procs *ps, struct sampler *s);
/* Notice processes that ended; true when the last one just did. */
bool procs_check_exit(struct procs *ps);
/* Read the command lines again (after an exec). */
void procs_reread_cmdlines(struct procs *ps);
/* The process tracing the first target (a debugger), 0 when none or us. */
pid_t procs_tracer(const struct procs *ps);

#endif
