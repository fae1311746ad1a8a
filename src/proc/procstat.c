/*
 * procstat — procfs readings for the series and the threads view (see
 * procstat.h).
 *
 * /proc/PID/stat's comm field may contain spaces and ')' so fields are
 * counted from the last ')'. utime and stime are fields 14 and 15 (1-based)
 * in clock ticks. Memory comes from /proc/PID/status, which splits RSS into
 * anonymous, file-backed and shared since Linux 4.5.
 *
 * Zombie children come from the kernel's own lists:
 * /proc/PID/task/TID/children holds the pids of the processes that thread
 * forked (Linux 3.5+, CONFIG_PROC_CHILDREN; a child whose parent thread
 * exits moves to another thread of the group), and only those children's
 * stat is read. The cost follows the target's children, never the number of
 * processes on the machine: scanning /proc for ppids cost 6x more CPU with
 * 2,000 extra sleeping processes (bench/cost.sh). Without the children
 * files (an unusual kernel) no zombie is found.
 *
 * A procstat_file keeps a procfs file open between ticks: a read at offset
 * 0 makes the kernel generate the text afresh (seq_file), so pread serves
 * every tick without an open and a close. The fd pins the task, not the
 * number: once the task is gone reads fail with ESRCH, even if its pid is
 * reused, and the reader then opens the path again once.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stacktop/lib/fdread.h"
#include "stacktop/proc/procstat.h"
#include "stacktop/proc/target.h"

static double clk_tck(void)
{
	static double tck;
	if (!tck) {
		long v = sysconf(_SC_CLK_TCK);
		tck = v > 0 ? (double)v : 100.0;
	}
	return tck;
}

/* comm, from the first '(' to the last ')', into comm (cut to commsz):
 * where the fields after it start (past ") "), or NULL. */
static const char *stat_comm(const char *text, char *comm, size_t commsz)
{
	const char *open_paren = strchr(text, '(');
	const char *close_paren = strrchr(text, ')');
	if (!open_paren || !close_paren || close_paren < open_paren || close_paren[1] != ' ')
		return NULL;
	if (comm && commsz) {
		size_t n = (size_t)(close_paren - open_paren - 1);
		if (n >= commsz)
			n = commsz - 1;
		memcpy(comm, open_paren + 1, n);
		comm[n] = '\0';
	}
	return close_paren + 2;
}

int procstat_parse_stat(const char *text, char *state, double *cpu_s, char *comm, size_t commsz)
{
	const char *p = stat_comm(text, comm, commsz);
	if (!p)
		return -EINVAL;
	/* After ") ": field 3 is state; utime is field 14, stime 15. */
	unsigned long long utime = 0, stime = 0;
	char st;
	if (sscanf(p, "%c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &st, &utime,
		   &stime) != 3)
		return -EINVAL;
	if (state)
		*state = st;
	if (cpu_s)
		*cpu_s = (double)(utime + stime) / clk_tck();
	return 0;
}

/* The number at *p (after one space), *p moved past it; false when none. */
static bool stat_field(const char **p, long long *v)
{
	char *end;

	if (**p != ' ')
		return false;
	errno = 0;
	*v = strtoll(*p + 1, &end, 10);
	if (end == *p + 1 || errno || (*end != ' ' && *end != '\n' && *end != '\0'))
		return false;
	*p = end;
	return true;
}

int procstat_parse_stat_full(const char *text, struct procstat_stat *out)
{
	/* Fields 4 to 24 (1-based) after the state; the ones kept by index. */
	enum { PPID = 0, FLAGS = 5, UTIME = 10, STIME, NTHREADS = 16, START = 18, RSS = 20, N };
	long long f[N];
	char *end;

	memset(out, 0, sizeof(*out));
	long pid = strtol(text, &end, 10);
	if (end == text || pid <= 0 || pid > INT32_MAX || *end != ' ')
		return -EINVAL;
	const char *p = stat_comm(end, out->comm, sizeof(out->comm));
	if (!p || !*p || p[1] != ' ')
		return -EINVAL;
	out->state = *p++;
	for (int i = 0; i < N; i++)
		if (!stat_field(&p, &f[i]))
			return -EINVAL;
	out->pid = (pid_t)pid;
	out->ppid = f[PPID] >= 0 && f[PPID] <= INT32_MAX ? (pid_t)f[PPID] : 0;
	out->flags = (unsigned long)f[FLAGS];
	out->cpu_s = (double)((uint64_t)f[UTIME] + (uint64_t)f[STIME]) / clk_tck();
	out->nthreads = f[NTHREADS];
	out->start = (uint64_t)f[START];
	out->rss_pages = f[RSS] > 0 ? (uint64_t)f[RSS] : 0;
	return 0;
}

static uint64_t status_kb(const char *text, const char *key)
{
	const char *p = strstr(text, key);
	if (!p)
		return 0;
	return strtoull(p + strlen(key), NULL, 10) * 1024;
}

int procstat_parse_status_mem(const char *text, struct procstat_mem *m)
{
	memset(m, 0, sizeof(*m));
	if (!strstr(text, "VmRSS:"))
		return -EINVAL; /* a zombie or kernel thread has no memory lines */
	m->rss = status_kb(text, "VmRSS:");
	m->anon = status_kb(text, "RssAnon:");
	m->file = status_kb(text, "RssFile:");
	m->shmem = status_kb(text, "RssShmem:");
	m->swap = status_kb(text, "VmSwap:");
	return 0;
}

int procstat_parse_cgroup(const char *text, char *path, size_t size, int *v2)
{
	const char *line = text;
	int found = 0;
	while (line && *line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		/* "hierarchy-ID:controllers:path" */
		const char *c1 = memchr(line, ':', len);
		const char *c2 = c1 ? memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - line)) : NULL;
		if (c2) {
			size_t plen = len - (size_t)(c2 + 1 - line);
			bool is_v2 = c1 == line + 1 && line[0] == '0' && c2 == c1 + 1;
			bool is_mem = !is_v2 && memmem(c1 + 1, (size_t)(c2 - c1 - 1), "memory", 6);
			if (is_mem || (is_v2 && !found)) {
				snprintf(path, size, "%.*s", (int)plen, c2 + 1);
				*v2 = is_v2;
				found = 1;
				if (is_mem)
					return 0; /* v1 memory controller wins on hybrid systems */
			}
		}
		line = nl ? nl + 1 : NULL;
	}
	return found ? 0 : -ENOENT;
}

void procstat_file_init(struct procstat_file *f)
{
	f->fd = -1;
}

void procstat_file_close(struct procstat_file *f)
{
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
}

static int file_open(pid_t pid, pid_t tid, const char *name)
{
	char path[96];
	if (tid)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/%s", pid, tid, name);
	else
		snprintf(path, sizeof(path), "/proc/%d/%s", pid, name);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd >= 0 ? fd : errno == ENOENT ? -ESRCH : -errno;
}

/* The whole file from offset 0 into buf (NUL-terminated): bytes, or -errno. */
static ssize_t file_pread(int fd, char *buf, size_t size)
{
	ssize_t n = fdread_at(fd, buf, size - 1, 0);

	if (n >= 0)
		buf[n] = '\0';
	return n;
}

ssize_t procstat_file_read(struct procstat_file *f, pid_t pid, pid_t tid, const char *name,
			   char *buf, size_t size)
{
	if (!f)
		return target_read_proc(pid, tid, name, buf, size);
	for (int fresh = f->fd < 0;; fresh = 1) {
		if (f->fd < 0 && (f->fd = file_open(pid, tid, name)) < 0) {
			int e = f->fd;
			f->fd = -1;
			return e;
		}
		ssize_t n = file_pread(f->fd, buf, size);
		if (n >= 0)
			return n;
		procstat_file_close(f);
		if (fresh) /* a new open failed too: the task is gone */
			return n == -ENOENT ? -ESRCH : n;
	}
}

int procstat_process(pid_t pid, char *state, double *cpu_s)
{
	char buf[1024];
	ssize_t n = target_read_proc(pid, 0, "stat", buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	return procstat_parse_stat(buf, state, cpu_s, NULL, 0);
}

int procstat_task(pid_t pid, pid_t tid, struct procstat_task *t)
{
	char buf[1024];
	ssize_t n = target_read_proc(pid, tid, "stat", buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	return procstat_parse_stat(buf, &t->state, &t->cpu_s, t->comm, sizeof(t->comm));
}

int procstat_mem(pid_t pid, struct procstat_mem *m)
{
	char buf[4096];
	ssize_t n = target_read_proc(pid, 0, "status", buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	return procstat_parse_status_mem(buf, m);
}

static int read_u64_file(const char *path, uint64_t *v)
{
	char buf[64];
	if (target_read_file(path, buf, sizeof(buf)) <= 0)
		return -ENOENT;
	if (!strncmp(buf, "max", 3))
		return -ERANGE; /* no limit */
	*v = strtoull(buf, NULL, 10);
	return 0;
}

int procstat_mem_limit(pid_t pid, uint64_t *limit, const char **source)
{
	char path[512], buf[4096], cg[256];
	int v2 = 0;
	if (target_read_proc(pid, 0, "cgroup", buf, sizeof(buf)) > 0 &&
	    procstat_parse_cgroup(buf, cg, sizeof(cg), &v2) == 0) {
		uint64_t v;
		/* Walk up the hierarchy: a parent's limit applies too. */
		while (cg[0]) {
			if (v2)
				snprintf(path, sizeof(path), "/sys/fs/cgroup%s/memory.max", cg);
			else
				snprintf(path, sizeof(path),
					 "/sys/fs/cgroup/memory%s/memory.limit_in_bytes", cg);
			/* v1 reports "no limit" as a huge page-rounded number. */
			if (read_u64_file(path, &v) == 0 && v < (1ull << 60)) {
				*limit = v;
				*source = v2 ? "cgroup" : "cgroup v1";
				return 0;
			}
			char *slash = strrchr(cg, '/');
			if (!slash)
				break;
			*slash = '\0';
		}
	}
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
	if (pages <= 0 || psize <= 0)
		return -ENOENT;
	*limit = (uint64_t)pages * (uint64_t)psize;
	*source = "RAM";
	return 0;
}

int procstat_parse_children(const char *text, pid_t *out, int max)
{
	int n = 0;
	const char *p = text;
	while (n < max) {
		char *end;
		while (*p == ' ' || *p == '\n')
			p++;
		long v = strtol(p, &end, 10);
		if (end == p || v <= 0 || v > INT32_MAX)
			break;
		out[n++] = (pid_t)v;
		p = end;
	}
	return n;
}

int procstat_task_zombies(struct procstat_file *f, pid_t pid, pid_t tid, pid_t *out, int max,
			  int *n)
{
	/* A line of pids, "123 456 "; 4 KiB holds some 600 children, and a
	 * zombie past those is found once the first ones are reaped. */
	char buf[4096];
	pid_t kids[PROCSTAT_CHILDREN_MAX];
	ssize_t len = procstat_file_read(f, pid, tid, "children", buf, sizeof(buf));
	if (len < 0)
		return (int)len;
	int nk = procstat_parse_children(buf, kids, PROCSTAT_CHILDREN_MAX);
	for (int i = 0; i < nk && *n < max; i++) {
		char st = 0;
		if (procstat_process(kids[i], &st, NULL) == 0 && st == 'Z')
			out[(*n)++] = kids[i];
	}
	return nk;
}

int procstat_zombie_children(pid_t pid, pid_t *out, int max, int *n)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return errno == ENOENT ? -ESRCH : -errno;
	struct dirent *e;
	int r = -ESRCH; /* 0 once one thread's list was read */
	*n = 0;
	while ((e = readdir(d)) && *n < max) {
		char *end;
		long tid = strtol(e->d_name, &end, 10);
		if (*end || tid <= 0)
			continue;
		int ri = procstat_task_zombies(NULL, pid, (pid_t)tid, out, max, n);
		if (r < 0)
			r = ri < 0 ? ri : 0;
	}
	closedir(d);
	return r;
}
