/*
 * boxstat — the box's CPU and memory (see boxstat.h).
 */
#include "stacktop/proc/boxstat.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stacktop/lib/fdread.h"

#define STAT_BUF (32 * 1024)

int boxstat_init(struct boxstat *b)
{
	*b = (struct boxstat){.stat_fd = -1, .meminfo_fd = -1};
	return (b->statbuf = malloc(STAT_BUF)) ? 0 : -ENOMEM;
}

void boxstat_free(struct boxstat *b)
{
	if (b->stat_fd >= 0)
		close(b->stat_fd);
	if (b->meminfo_fd >= 0)
		close(b->meminfo_fd);
	free(b->statbuf);
	*b = (struct boxstat){.stat_fd = -1, .meminfo_fd = -1};
}

static ssize_t kept_read(int procfd, int *fd, const char *name, char *buf, size_t size)
{
	ssize_t n;

	if (*fd < 0 && (*fd = openat(procfd, name, O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	if ((n = fdread_at(*fd, buf, size - 1, 0)) < 0)
		return n;
	buf[n] = '\0';
	return n;
}

/* /proc/stat: online CPUs (its cpuN lines) and the busy share since the
 * last read, over every CPU's jiffies. */
static void read_cpu(struct boxstat *b, int procfd)
{
	unsigned long long v[8] = {0};
	const char *p = b->statbuf;
	int ncpu = 0;

	if (!b->statbuf || kept_read(procfd, &b->stat_fd, "stat", b->statbuf, STAT_BUF) <= 0 ||
	    sscanf(p, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
		   &v[4], &v[5], &v[6], &v[7]) < 4)
		return;
	while ((p = strchr(p, '\n')) && !strncmp(++p, "cpu", 3))
		ncpu += p[3] >= '0' && p[3] <= '9';
	/* user nice system idle iowait irq softirq steal (guest is in user) */
	uint64_t idle = v[3] + v[4], busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
	if (b->busy_prev && busy >= b->busy_prev && idle >= b->idle_prev) {
		uint64_t db = busy - b->busy_prev, di = idle - b->idle_prev;
		b->cpu_pct = db + di ? (double)db / (double)(db + di) * ncpu * 100.0 : 0;
	}
	b->busy_prev = busy;
	b->idle_prev = idle;
	b->ncpu = ncpu;
}

static uint64_t meminfo_kb(const char *text, const char *key)
{
	const char *p = strstr(text, key);

	return p ? strtoull(p + strlen(key), NULL, 10) * 1024 : 0;
}

static void read_mem(struct boxstat *b, int procfd)
{
	char buf[4096];

	if (kept_read(procfd, &b->meminfo_fd, "meminfo", buf, sizeof(buf)) <= 0)
		return;
	uint64_t total = meminfo_kb(buf, "MemTotal:"), avail = meminfo_kb(buf, "MemAvailable:");
	b->mem_total = total;
	b->mem_used = total > avail ? total - avail : 0;
}

void boxstat_read(struct boxstat *b, int procfd)
{
	read_cpu(b, procfd);
	read_mem(b, procfd);
}
