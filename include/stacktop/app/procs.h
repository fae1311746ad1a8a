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
 * Following child processes (procs_follow, --subprocesses): every scan also
 * reads /proc/PID/task/TID/children of each thread of each process tracked
 * (targets and the descendants found so far, so grandchildren and deeper
 * come in the same scan), never the whole of /proc. Descendants live in
 * their own table, which grows (array_grow) up to PROCS_CHILDREN_MAX at once;
 * one found past that is not followed and counted (unfollowed). A
 * descendant that ends (or is a zombie: nothing left to sample) leaves the
 * table at the next procs_check_exit. Whoever keeps per-process state
 * (ingest) learns of both through procs_take_new and procs_take_ended.
 * While following, the run is over when the targets AND every descendant
 * are gone; the exit text stays the target's (a launched command's status).
 * A child that forks and exits between two scans leaves its own children
 * orphaned (reparented to init), out of reach of the children files: only
 * a sampler that follows forks itself (inherited perf events) sees those.
 *
 * Errors come back as -errno with one sentence in err; nothing prints.
 * procs_free releases the descendant tables (a zeroed struct needs none).
 */
#ifndef STACKTOP_PROCS_H
#define STACKTOP_PROCS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "stacktop/proc/target.h"

/* Targets given with -p, or the launched command. */
#define PROCS_MAX 64
/* Descendants followed at once (--subprocesses); more are counted. */
#define PROCS_CHILDREN_MAX 4096

struct sampler;

struct procs_entry {
	pid_t pid;
	bool gone;
	char cmdline[1024];
};

/* A descendant of a target, followed with procs_follow. */
struct procs_child {
	pid_t pid;
	pid_t parent; /* the tracked process it was found under */
	bool fresh;   /* not handed out by procs_take_new yet */
};

struct procs {
	struct procs_entry p[PROCS_MAX]; /* the targets; p[0] is the first */
	int n;
	bool follow;		  /* follow descendants (procs_follow) */
	struct procs_child *kids; /* descendants alive at the last check */
	int nkids;
	size_t kids_cap;
	pid_t *ended; /* descendants gone, not taken by procs_take_ended yet */
	int nended;
	size_t ended_cap;
	uint64_t kids_total; /* descendants followed since the start */
	int unfollowed;	     /* descendants the last scan found past PROCS_CHILDREN_MAX */
	struct target_child child;
	bool launched;
	bool exited;	     /* every process is gone */
	char exit_text[160]; /* "target exited with status 0", "target 42 exited" */
	int nthreads;	     /* threads seen at the last scan */
	int unsampled;	     /* threads the last scan could not sample (EMFILE...) */
	int unsampled_err;   /* why (-errno of the last such failure), 0: none */
	/* Not following: the CPU seconds the targets' children used, at the
	 * last scan, and whether it grew (a master idle while its workers
	 * burn: "try --subprocesses"). */
	double kids_cpu_s;
	bool kids_busy;
	/* Whether the children were looked at, any listed then, and the
	 * sampler's fork count then (procs_watch_children). */
	bool kids_looked, kids_any;
	uint64_t forks_seen;
};

/* Attach to existing processes: each must exist. */
/* 0 when every pid exists; else -ESRCH and a sentence naming the first
 * that does not. */
int procs_check_pids(const pid_t *pids, int n, char *err, size_t errsz);
int procs_attach(struct procs *ps, const pid_t *pids, int n, char *err, size_t errsz);
/* Start argv, stopped before its exec; then procs_go lets it exec. */
int procs_spawn(struct procs *ps, char *const argv[], enum target_stdio io, char *err,
		size_t errsz);
int procs_go(struct procs *ps, char *const argv[], char *err, size_t errsz);
/* SIGTERM a launched command, SIGKILL after timeout_ms; following, its
 * descendants get the SIGTERM too. */
void procs_stop_child(struct procs *ps, int timeout_ms);

/* Follow (or not) every process the targets fork, from the next scan. */
void procs_follow(struct procs *ps, bool on);
/* The descendant tables; the struct may be reused after it (zeroed). */
void procs_free(struct procs *ps);

/* Hand every thread not sampled yet to s (following: of the descendants
 * too, found first). Returns the first hard error
 * (not -ESRCH/-EEXIST: a thread that ended meanwhile), 0 when none. */
int procs_scan(struct procs *ps, struct sampler *s);
/* Notice processes that ended; true when the last one just did. */
bool procs_check_exit(struct procs *ps);
/* Descendants found since the last call: up to max pids into out, the
 * count returned (call again while it returns max). */
int procs_take_new(struct procs *ps, pid_t *out, int max);
/* Descendants that ended since the last call, the same way. */
int procs_take_ended(struct procs *ps, pid_t *out, int max);
/* Read the command lines again (after an exec). */
void procs_reread_cmdlines(struct procs *ps);
/* The process tracing the first target (a debugger), 0 when none or us. */
pid_t procs_tracer(const struct procs *ps);

#endif
