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
#include <time.h>
#include <unistd.h>

#include "stacktop/lib/dirstream.h"
#include "stacktop/lib/fdread.h"

int demand_parse(const char *text, uint64_t *run, uint64_t *dem)
{
	char *end;
	unsigned long long r, wait;

	errno = 0;
	r = strtoull(text, &end, 10);
	if (end == text || errno)
		return -EINVAL;
	text = end;
	wait = strtoull(text, &end, 10);
	if (end == text || errno)
		return -EINVAL;
	*run = (uint64_t)r;
	*dem = (uint64_t)r + (uint64_t)wait;
	return 0;
}

static int cmp_tid(const void *pa, const void *pb)
{
	const struct demand_ns *a = pa, *b = pb;

	return a->tid < b->tid ? -1 : a->tid > b->tid;
}

/* The deltas of the threads in both r (sorted) and d's last read into
 * out, and their sums. */
static void step_of(const struct demand *d, uint64_t dt, const struct demand_ns *r, size_t n,
		    struct demand_step *out)
{
	uint64_t run = 0, dem = 0;
	size_t j = 0;

	out->dt_ns = dt;
	out->n = 0;
	for (size_t i = 0; i < n; i++) {
		while (j < d->n && d->th[j].tid < r[i].tid)
			j++;
		if (j >= d->n || d->th[j].tid != r[i].tid || r[i].dem < d->th[j].dem ||
		    r[i].run < d->th[j].run)
			continue;
		struct demand_ns *o = &out->delta[out->n++];
		*o = (struct demand_ns){r[i].tid, r[i].run - d->th[j].run, r[i].dem - d->th[j].dem};
		run += o->run;
		dem += o->dem < dt ? o->dem : dt;
	}
	out->run_pct = (double)run / (double)dt * 100.0;
	out->pct = (double)dem / (double)dt * 100.0;
}

int demand_update(struct demand *d, uint64_t now_ns, const struct demand_ns *r, size_t n,
		  struct demand_step *out)
{
	struct demand_ns s[DEMAND_THREADS];
	int have = d->at_ns && now_ns > d->at_ns;

	if (n > DEMAND_THREADS)
		n = DEMAND_THREADS;
	memcpy(s, r, n * sizeof(*s));
	if (n > 1)
		qsort(s, n, sizeof(s[0]), cmp_tid);
	/* Threads at both reads: their deltas (a wait the kernel adds when
	 * it ends may have begun before the last read: the demand's sum
	 * takes at most the interval of each); new ones count from now. */
	if (have)
		step_of(d, now_ns - d->at_ns, s, n, out);
	memcpy(d->th, s, n * sizeof(*s));
	d->n = n;
	if (!d->at_ns || now_ns > d->at_ns)
		d->at_ns = now_ns;
	return have;
}

/* The tids of pid's task directory, at most max. */
static int list_tids(int procfd, pid_t pid, char *buf, size_t size, pid_t *tids, size_t max,
		     size_t *n)
{
	struct dirstream ds = {.buf = buf, .size = size};
	const struct dirent64 *e;
	char path[32];

	snprintf(path, sizeof(path), "%d/task", (int)pid);
	if ((ds.fd = openat(procfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	*n = 0;
	while (*n < max && (e = dirstream_next(&ds)))
		if ((tids[*n] = dirstream_pid(e->d_name)))
			++*n;
	dirstream_close(&ds);
	return 0;
}

static int read_schedstat(int procfd, pid_t pid, struct demand_ns *t)
{
	char path[64], buf[128];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%d/task/%d/schedstat", (int)pid, (int)t->tid);
	if ((fd = openat(procfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY)) < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	n = fdread_at(fd, buf, sizeof(buf) - 1, 0);
	close(fd);
	if (n < 0)
		return (int)n;
	buf[n] = '\0';
	return demand_parse(buf, &t->run, &t->dem);
}

int demand_read(int procfd, pid_t pid, int nthreads, struct demand *d, char *buf, size_t size,
		struct demand_step *out, unsigned *files)
{
	pid_t tids[DEMAND_THREADS];
	struct demand_ns r[DEMAND_THREADS];
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
		r[k].tid = tids[i];
		if (read_schedstat(procfd, pid, &r[k]) == 0)
			k++; /* a thread gone meanwhile drops out */
	}
	if (!k)
		return -ESRCH;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return demand_update(d, (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec, r, k,
			     out);
}
