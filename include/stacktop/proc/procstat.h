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
	char state;   /* R S D T t Z X I */
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

/* The fields of a whole /proc/PID/stat line the machine table uses. */
struct procstat_stat {
	pid_t pid, ppid;
	char state;	     /* R S D T t Z X I */
	char comm[32];	     /* raw, cut at 31 bytes */
	unsigned long flags; /* PF_* (PROCSTAT_PF_KTHREAD) */
	double cpu_s;	     /* utime + stime, seconds */
	long nthreads;
	uint64_t start;	    /* start time, clock ticks since boot */
	uint64_t rss_pages; /* resident pages */
};
#define PROCSTAT_PF_KTHREAD 0x00200000ul /* include/linux/sched.h */
/* Fields 1 to 24 of a stat line: comm runs from the first '(' to the last
 * ')' (it may hold spaces and parentheses). 0, or -EINVAL when a field is
 * missing or malformed (a truncated line). */
int procstat_parse_stat_full(const char *text, struct procstat_stat *out);
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

/* A procfs file kept open between ticks (fd -1: not open yet); init before
 * use, close when done. */
struct procstat_file {
	int fd;
};
void procstat_file_init(struct procstat_file *f);
void procstat_file_close(struct procstat_file *f);
/* /proc/PID/NAME (tid 0) or /proc/PID/task/TID/NAME into buf, NUL-terminated:
 * bytes read, or -ESRCH when the task is gone, or -errno. Opens f on first
 * use and then reads it again from offset 0; f NULL: open, read, close. */
ssize_t procstat_file_read(struct procstat_file *f, pid_t pid, pid_t tid, const char *name,
			   char *buf, size_t size);

/* Children examined per thread and tick. */
#define PROCSTAT_CHILDREN_MAX 256
/* From a /proc/PID/task/TID/children line ("12 34 "): up to max pids into
 * out; returns how many. */
int procstat_parse_children(const char *text, pid_t *out, int max);
/* The children of thread tid (its children file through f, which may be
 * NULL) that are zombies, appended to out[*n..max). Reads the stat of those
 * children only. The number of children listed (zombies or not), or -errno
 * when the children file cannot be read. */
int procstat_task_zombies(struct procstat_file *f, pid_t pid, pid_t tid, pid_t *out, int max,
			  int *n);
/* Children of pid (of any of its threads) that are zombies (state Z), up to
 * max: procstat_task_zombies over /proc/PID/task, never a scan of /proc. */
int procstat_zombie_children(pid_t pid, pid_t *out, int max, int *n);

#endif
