/*
 * perfevent — perf event set-up (see perfevent.h for the contract).
 *
 * The CPU clock is PERF_TYPE_SOFTWARE/PERF_COUNT_SW_CPU_CLOCK (the hardware
 * counters are missing on these VMs). CALLCHAIN is sampled with its user
 * part, though the user stack comes from our own DWARF unwinder (frame
 * pointers are missing from -fomit-frame-pointer code): a Go thread caught
 * in its signal handler has the interrupted goroutine's frames outside the
 * stack copy, and the kernel's frame-pointer walk at the sample, which Go's
 * frame pointers keep right, is the only record of them (unwind.c checks
 * it frame by frame). The walk stops at the first bad frame record or at
 * kernel.perf_event_max_stack entries (127 by default: 1 KiB a sample).
 */
#include "stacktop/sample/perfevent.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PERFEVENT_PAGE 4096

_Static_assert(__builtin_popcountll(PERFEVENT_REGS_MASK) == PERFEVENT_NREGS,
	       "one register a mask bit");

/* What every sample of ours carries, the callchain aside. */
#define PERFEVENT_SAMPLE_TYPE                                                                      \
	(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_REGS_USER |             \
	 PERF_SAMPLE_STACK_USER)

void perfevent_attr_user_stack(struct perf_event_attr *a, unsigned stack_size)
{
	a->sample_type = PERFEVENT_SAMPLE_TYPE;
	a->sample_regs_user = PERFEVENT_REGS_MASK;
	a->sample_stack_user = stack_size;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
}

void perfevent_clock_attr(const struct perfevent_clock *c, struct perf_event_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_CPU_CLOCK;
	a->sample_period = 1000000000ull / c->rate_hz;
	perfevent_attr_user_stack(a, c->stack_size);
	a->sample_type |= PERF_SAMPLE_CALLCHAIN;
	if (!c->kernel) {
		a->exclude_kernel = 1;
		a->exclude_callchain_kernel = 1;
	}
	a->exclude_hv = 1;
	a->mmap = 1;
	a->mmap2 = 1;
	a->comm = 1;
	a->comm_exec = 1;
	a->task = 1;
	a->sample_id_all = 1;
	a->inherit = c->inherit;
	if (c->enable_on_exec) {
		a->disabled = 1;
		a->enable_on_exec = 1;
	}
}

int perfevent_open(const struct perf_event_attr *a, pid_t tid, int cpu)
{
	int fd = (int)syscall(SYS_perf_event_open, a, tid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int perfevent_open_clock(struct perfevent_clock *c, pid_t tid, int cpu)
{
	struct perf_event_attr a;
	perfevent_clock_attr(c, &a);
	int fd = perfevent_open(&a, tid, cpu);
	if ((fd == -EACCES || fd == -EPERM) && c->kernel && !c->kernel_probed) {
		/* Not allowed to see the kernel: sample user space only. */
		c->kernel = false;
		perfevent_clock_attr(c, &a);
		fd = perfevent_open(&a, tid, cpu);
	}
	if (fd >= 0)
		c->kernel_probed = true;
	return fd;
}

int perfevent_set_output(int fd, int ring_fd)
{
	return ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, ring_fd) < 0 ? -errno : 0;
}

int perfevent_set_period(int fd, uint64_t period)
{
	return ioctl(fd, PERF_EVENT_IOC_PERIOD, &period) < 0 ? -errno : 0;
}

int perfevent_read_count(int fd, uint64_t *count)
{
	ssize_t n = read(fd, count, sizeof(*count));
	if (n == (ssize_t)sizeof(*count))
		return 0;
	return n < 0 ? -errno : -EIO;
}

int perfevent_ring_map(struct perfevent_ring *rb, int fd, unsigned data_pages)
{
	size_t len = ((size_t)data_pages + 1) * PERFEVENT_PAGE;
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		return -errno;
	int err = ring_init(&rb->ring, m, (uint64_t)data_pages * PERFEVENT_PAGE);
	if (err) {
		ring_fini(&rb->ring);
		munmap(m, len);
		return err;
	}
	rb->fd = fd;
	rb->map = m;
	rb->map_len = len;
	return 0;
}

int perfevent_ring_map_fit(struct perfevent_ring *rb, int fd, unsigned *data_pages)
{
	for (;;) {
		int err = perfevent_ring_map(rb, fd, *data_pages);
		if (err != -EPERM)
			return err;
		if (*data_pages <= 2)
			return -ENOMEM;
		*data_pages /= 2; /* over the locked-memory allowance */
	}
}

void perfevent_ring_close(struct perfevent_ring *rb)
{
	ring_fini(&rb->ring);
	if (rb->map)
		munmap(rb->map, rb->map_len);
	if (rb->fd >= 0)
		close(rb->fd);
	rb->map = NULL;
	rb->fd = -1;
}

int perfevent_parse_cpus(const char *s, int *cpus, int max)
{
	int n = 0;
	while (*s && *s != '\n') {
		char *end;
		long a = strtol(s, &end, 10), b;
		if (end == s || a < 0)
			return -EINVAL;
		s = end;
		b = a;
		if (*s == '-') {
			b = strtol(s + 1, &end, 10);
			if (end == s + 1 || b < a)
				return -EINVAL;
			s = end;
		}
		for (long c = a; c <= b; c++) {
			if (n >= max)
				return -E2BIG;
			cpus[n++] = (int)c;
		}
		if (*s == ',')
			s++;
		else if (*s && *s != '\n')
			return -EINVAL;
	}
	return n;
}

int perfevent_online_cpus(int *cpus, int max)
{
	char buf[4096];
	int n = -ENOENT;
	FILE *f = fopen("/sys/devices/system/cpu/online", "re");
	if (f) {
		if (fgets(buf, sizeof(buf), f))
			n = perfevent_parse_cpus(buf, cpus, max);
		fclose(f);
	}
	if (n > 0)
		return n;
	long c = sysconf(_SC_NPROCESSORS_CONF);
	n = c < 1 ? 1 : c > max ? max : (int)c;
	for (int i = 0; i < n; i++)
		cpus[i] = i;
	return n;
}
