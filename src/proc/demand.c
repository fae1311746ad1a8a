/*
 * demand — a process's demand for CPU from its threads' schedstat (see
 * demand.h). The threads of the last read are kept sorted by tid, so a
 * new read (sorted the same way) is matched to them in one merge.
 */
#include "stacktop/proc/demand.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "stacktop/lib/fdread.h"

int demand_parse(const char *text, uint64_t *ns)
{
	char *end;
	unsigned long long run, wait;

	errno = 0;
	run = strtoull(text, &end, 10);
	if (end == text || errno)
		return -EINVAL;
	text = end;
	wait = strtoull(text, &end, 10);
	if (end == text || errno)
		return -EINVAL;
	*ns = (uint64_t)run + (uint64_t)wait;
	return 0;
}

/* A thread's reading, to sort the new ones by tid. */
struct tread {
	pid_t tid;
	uint64_t ns;
};

static int cmp_tread(const void *pa, const void *pb)
{
	const struct tread *a = pa, *b = pb;

	return a->tid < b->tid ? -1 : a->tid > b->tid;
}

int demand_update(struct demand *d, uint64_t now_ns, const pid_t *tid, const uint64_t *ns, size_t n,
		  double *pct)
{
	struct tread r[DEMAND_THREADS];
	uint64_t sum = 0;
	size_t i, j = 0;
	int have;

	if (n > DEMAND_THREADS)
		n = DEMAND_THREADS;
	for (i = 0; i < n; i++)
		r[i] = (struct tread){tid[i], ns[i]};
	if (n > 1)
		qsort(r, n, sizeof(r[0]), cmp_tread);
	have = d->at_ns && now_ns > d->at_ns;
	/* Threads at both reads: their delta, at most the interval (a wait
	 * the kernel adds when it ends may have begun before the last read);
	 * new ones count from now. */
	for (i = 0; i < n && have; i++) {
		while (j < d->n && d->tid[j] < r[i].tid)
			j++;
		if (j < d->n && d->tid[j] == r[i].tid && r[i].ns >= d->ns[j]) {
			uint64_t delta = r[i].ns - d->ns[j];
			sum += delta < now_ns - d->at_ns ? delta : now_ns - d->at_ns;
		}
	}
	if (have)
		*pct = (double)sum / (double)(now_ns - d->at_ns) * 100.0;
	for (i = 0; i < n; i++) {
		d->tid[i] = r[i].tid;
		d->ns[i] = r[i].ns;
	}
	d->n = n;
	if (!d->at_ns || now_ns > d->at_ns)
		d->at_ns = now_ns;
	return have;
}

/* The tids of pid's task directory, at most max. */
static int list_tids(int procfd, pid_t pid, char *buf, size_t size, pid_t *tids, size_t max,
		     size_t *n)
{
	char path[32];
	int fd;

	snprintf(path, sizeof(path), "%d/task", (int)pid);
	if ((fd = openat(procfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	*n = 0;
	for (;;) {
		long got = syscall(SYS_getdents64, fd, buf, size);

		if (got <= 0)
			break;
		for (long pos = 0; pos < got;) {
			const struct dirent64 *e = (const struct dirent64 *)(buf + pos);
			char *end;
			long v = strtol(e->d_name, &end, 10);

			pos += e->d_reclen;
			if (e->d_name[0] >= '1' && e->d_name[0] <= '9' && !*end && v > 0 &&
			    *n < max)
				tids[(*n)++] = (pid_t)v;
		}
		if (*n >= max)
			break;
	}
	close(fd);
	return 0;
}

static int read_schedstat(int procfd, pid_t pid, pid_t tid, uint64_t *ns)
{
	char path[64], buf[128];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%d/task/%d/schedstat", (int)pid, (int)tid);
	if ((fd = openat(procfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY)) < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	n = fdread_at(fd, buf, sizeof(buf) - 1, 0);
	close(fd);
	if (n < 0)
		return (int)n;
	buf[n] = '\0';
	return demand_parse(buf, ns);
}

int demand_read(int procfd, pid_t pid, int nthreads, struct demand *d, char *buf, size_t size,
		double *pct, unsigned *files)
{
	pid_t tids[DEMAND_THREADS];
	uint64_t ns[DEMAND_THREADS];
	size_t n = 1, k = 0;
	struct timespec ts;
	int e;

	tids[0] = pid;
	if (nthreads > 1) {
		++*files;
		if ((e = list_tids(procfd, pid, buf, size, tids, DEMAND_THREADS, &n)) < 0)
			return e;
	}
	for (size_t i = 0; i < n; i++) {
		++*files;
		if (read_schedstat(procfd, pid, tids[i], &ns[k]) == 0)
			tids[k++] = tids[i]; /* a thread gone meanwhile drops out */
	}
	if (!k)
		return -ESRCH;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return demand_update(d, (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec, tids,
			     ns, k, pct);
}
