/*
 * perfevent — setting up perf events: the attributes of our samples, opening
 * an event, mapping its ring, the online CPUs. No policy: which events a
 * target gets, and what is read from the rings, is the caller's (perf.c for
 * the CPU sampler, memtrace.c for memory events).
 *
 * The sample layout. Every event opened here or filled by
 * perfevent_attr_user_stack samples IP|TID|TIME|REGS_USER|STACK_USER
 * (CPU clock events also CALLCHAIN, the user's frame-pointer walk and the
 * kernel's frames when they are allowed), the user registers of
 * PERFEVENT_REGS_MASK (AX..IP and R8..R15 in perf_regs.h order; the segment
 * registers are refused for 64-bit tasks by the kernel) and CLOCK_MONOTONIC
 * times, so one decoder reads them all (perfrecord.h) and the times line up
 * with the window.
 *
 * The CPU clock (struct perfevent_clock): a PERF_COUNT_SW_CPU_CLOCK event,
 * period 1e9 / rate_hz ns of CPU time, with the side-band records a
 * sampler needs (FORK, EXIT, COMM with exec, MMAP2; sample_id_all). Kernel
 * callchains need exclude_kernel = 0, which an unprivileged user at
 * perf_event_paranoid >= 2 may not have: the first EACCES or EPERM of
 * perfevent_open_clock clears clock.kernel and retries user-only; after the
 * first event opened the choice is kept (kernel_probed). The caller owns the
 * struct and may change inherit and enable_on_exec between opens.
 *
 * Rings (struct perfevent_ring): perfevent_ring_map maps an event's ring of
 * 2^n data pages and the ring then owns the fd; perfevent_ring_close unmaps
 * and closes it (a ring never mapped, fd -1, is fine). The caller allocates
 * the struct. Functions return an fd, 0 or -errno.
 */
#ifndef STACKTOP_PERFEVENT_H
#define STACKTOP_PERFEVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "stacktop/sample/ring.h"

/* perf_regs.h (x86-64) bits of the user registers sampled: AX..IP (0..8)
 * and R8..R15 (16..23), PERFEVENT_NREGS of them. */
#define PERFEVENT_REGS_MASK 0x0000000000ff01ffull
#define PERFEVENT_NREGS 17

struct perf_event_attr;

/* A cpu-clock event of a sampler, and the kernel-callchain probe. */
struct perfevent_clock {
	unsigned rate_hz;    /* samples per second of CPU time (> 0) */
	unsigned stack_size; /* user stack bytes copied per sample */
	bool inherit;	     /* copied into the threads the task creates */
	bool enable_on_exec; /* disabled until the task's next exec */
	bool kernel;	     /* kernel callchains (set true before the first open) */
	bool kernel_probed;  /* an event was opened: kernel is decided */
};

/* One mapped ring and the event that owns it. */
struct perfevent_ring {
	int fd; /* -1: not mapped */
	void *map;
	size_t map_len;
	struct ring ring;
};

/* Fill a with c's cpu-clock event (all other fields zero). */
void perfevent_clock_attr(const struct perfevent_clock *c, struct perf_event_attr *a);
/* Open c's event on thread tid (-1: every task) and cpu (-1: any); the
 * kernel probe described above. The fd (close-on-exec) or -errno. */
int perfevent_open_clock(struct perfevent_clock *c, pid_t tid, int cpu);

/* Set a's sample_type, user registers, stack copy and clock the way the
 * sampler's own events have them, without a callchain, so that their
 * samples decode with perfrecord and unwind like CPU samples (memtrace's
 * tracepoint and page-fault events). The rest of a is left as it is. */
void perfevent_attr_user_stack(struct perf_event_attr *a, unsigned stack_size);

/* perf_event_open(a, tid, cpu, no group, close-on-exec): the fd or -errno. */
int perfevent_open(const struct perf_event_attr *a, pid_t tid, int cpu);
/* Send fd's records into the ring of ring_fd (same CPU, same clock). */
int perfevent_set_output(int fd, int ring_fd);
/* A new sample period for fd (PERF_EVENT_IOC_PERIOD). */
int perfevent_set_period(int fd, uint64_t period);
/* fd's count so far (its read value): 0 or -errno. */
int perfevent_read_count(int fd, uint64_t *count);

/* Map fd's ring of data_pages pages (a power of two) into rb, which then
 * owns fd. On failure fd is still the caller's: -errno (EPERM: over the
 * locked-memory allowance), -ENOMEM, -EINVAL. */
int perfevent_ring_map(struct perfevent_ring *rb, int fd, unsigned data_pages);
/* The same, halving *data_pages while the locked-memory allowance refuses
 * the mapping (EPERM) down to 2 pages, then -ENOMEM. *data_pages is left at
 * the size that was mapped (or last tried). */
int perfevent_ring_map_fit(struct perfevent_ring *rb, int fd, unsigned *data_pages);
void perfevent_ring_close(struct perfevent_ring *rb);

/* Parse a CPU list such as "0-3,8,10-11\n" into cpus. The count, or
 * -EINVAL, -E2BIG (more than max). */
int perfevent_parse_cpus(const char *s, int *cpus, int max);
/* The online CPUs (sysfs), else all that sysconf knows of; the count. */
int perfevent_online_cpus(int *cpus, int max);

#endif
