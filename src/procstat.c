/*
 * procstat — procfs readings for the series and the threads view (see
 * procstat.h).
 *
 * /proc/PID/stat's comm field may contain spaces and ')' so fields are
 * counted from the last ')'. utime and stime are fields 14 and 15 (1-based)
 * in clock ticks. Memory comes from /proc/PID/status, which splits RSS into
 * anonymous, file-backed and shared since Linux 4.5. Zombie children are
 * found by scanning /proc for processes whose parent is the target (field
 * 4, ppid) and whose state is Z.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stacktop/procstat.h"
#include "stacktop/target.h"

static double clk_tck(void)
{
	static double tck;
	if (!tck) {
		long v = sysconf(_SC_CLK_TCK);
		tck = v > 0 ? (double)v : 100.0;
	}
	return tck;
}

int procstat_parse_stat(const char *text, char *state, double *cpu_s, char *comm, size_t commsz)
{
	const char *open_paren = strchr(text, '(');
	const char *close_paren = strrchr(text, ')');
	if (!open_paren || !close_paren || close_paren < open_paren || close_paren[1] != ' ')
		return -EINVAL;
	if (comm && commsz) {
		size_t n = (size_t)(close_paren - open_paren - 1);
		if (n >= commsz)
			n = commsz - 1;
		memcpy(comm, open_paren + 1, n);
		comm[n] = '\0';
	}
	/* After ") ": field 3 is state; utime is field 14, stime 15. */
	const char *p = close_paren + 2;
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

int procstat_wchan(pid_t pid, pid_t tid, char *buf, size_t size)
{
	ssize_t n = target_read_proc(pid, tid, "wchan", buf, size);
	if (n < 0)
		return (int)n;
	if (!strcmp(buf, "0"))
		buf[0] = '\0';
	return 0;
}

int procstat_zombie_children(pid_t pid, pid_t *out, int max, int *n)
{
	DIR *d = opendir("/proc");
	if (!d)
		return -errno;
	struct dirent *e;
	*n = 0;
	while ((e = readdir(d)) && *n < max) {
		char *end, buf[1024];
		long child = strtol(e->d_name, &end, 10);
		if (*end || child <= 0)
			continue;
		if (target_read_proc((pid_t)child, 0, "stat", buf, sizeof(buf)) <= 0)
			continue;
		const char *cp = strrchr(buf, ')');
		char st;
		int ppid;
		if (!cp || sscanf(cp + 2, "%c %d", &st, &ppid) != 2)
			continue;
		if (ppid == pid && st == 'Z')
			out[(*n)++] = (pid_t)child;
	}
	closedir(d);
	return 0;
}
