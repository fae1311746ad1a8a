/*
 * procstat — once-per-tick readings of a process from procfs: CPU time of
 * the process and of each thread, thread states, memory split by kind, and
 * the memory limit that applies to it.
 *
 * The parsers take file text and are pure (tested on literal text); the
 * readers open /proc and call them. CPU times are in seconds (clock ticks /
 * sysconf(_SC_CLK_TCK)); memory in bytes.
 */
#ifndef STACKTOP_PROCSTAT_H
#define STACKTOP_PROCSTAT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct procstat_task {
	pid_t tid;
	char state; /* R S D T t Z X I */
	double cpu_s; /* utime + stime */
	char comm[32];
	char wchan[48]; /* filled by procstat_read_wchan only */
};

struct procstat_mem {
	uint64_t rss, anon, file, shmem; /* bytes */
	uint64_t swap;
};

/* From a /proc/.../stat line: state, utime+stime (seconds), comm. */
int procstat_parse_stat(const char *text, char *state, double *cpu_s, char *comm, size_t commsz);
/* From /proc/PID/status: RssAnon, RssFile, RssShmem, VmSwap (kB). */
int procstat_parse_status_mem(const char *text, struct procstat_mem *m);
/* From /proc/PID/cgroup: the cgroup v2 path ("0::/x"), or the v1 memory
 * controller's path. *v2 tells which. */
int procstat_parse_cgroup(const char *text, char *path, size_t size, int *v2);

/* Process CPU seconds (all threads, including exited ones). */
int procstat_process(pid_t pid, char *state, double *cpu_s);
int procstat_task(pid_t pid, pid_t tid, struct procstat_task *t);
int procstat_mem(pid_t pid, struct procstat_mem *m);
/* The memory limit in bytes: cgroup v2 memory.max, else v1
 * memory.limit_in_bytes, else physical memory; *source says which
 * ("cgroup", "cgroup v1", "RAM"). */
int procstat_mem_limit(pid_t pid, uint64_t *limit, const char **source);
/* Kernel function the thread sleeps in ("" when running). */
int procstat_wchan(pid_t pid, pid_t tid, char *buf, size_t size);
/* Children of pid that are zombies (state Z), up to max. */
int procstat_zombie_children(pid_t pid, pid_t *out, int max, int *n);

#endif
