/*
 * memtrace — which code paths map the memory a process holds: the
 * process's mmap, munmap, brk and mremap calls, each with its user stack,
 * and sampled page faults, fed to memhold (bytes still mapped per stack).
 *
 * Events, one of each per online CPU and thread of the target:
 *   syscalls:sys_exit_mmap, sys_exit_munmap, sys_exit_brk, sys_exit_mremap
 *     (tracepoints; ids from tracefs, see memtrace.c), sampling the user
 *     registers and a copy of the user stack the way the CPU sampler's
 *     events do (perfevent_attr_user_stack), so perfrecord decodes them
 *     and ingest unwinds them like CPU samples. At syscall exit the user
 *     registers still hold the arguments (rdi, rsi, rdx, r10, r8) and rax
 *     the result, so one event per call carries both. munmap copies no
 *     stack (it needs none).
 *   page-faults (software event) every fault_period faults, with a stack:
 *     who touches new memory, counted, never blamed for holding it.
 * The events are per task (not CPU-wide with pidfilter's program: see
 * memtrace.c for why): one per thread of the target at start and CPU,
 * inherited by the threads they create, all of a CPU's written into its
 * one ring (perfevent_set_output); a thread created by a thread that had
 * no event yet is missed. The sampling period set later reaches the events
 * opened here, not the copies inherited before (PERF_EVENT_IOC_PERIOD is
 * per event).
 *
 * Cost: the target pays for each traced call in its own thread (a stack
 * copy and a ring write; bench/README.md has the figures). When the
 * mmap rate goes over max_hz a second, the mmap events sample one call in
 * N (PERF_EVENT_IOC_PERIOD, N a power of two) and each kept region stands
 * for N: memtrace_stats.period says N, the view says "mmap sampled 1 in
 * N". munmap, brk and mremap are always traced: an unmap not seen would
 * leave its region held for ever, and brk is a position, not a size.
 *
 * Records of the rings are put in time order before they are applied (a
 * thread can map on one CPU and unmap on another within one drain).
 * Only the first target process is attributed (one address space).
 *
 * Contract: memtrace_new (after ingest knows the process) →
 * (memtrace_collect every tick, memtrace_refresh once a refresh)* →
 * memtrace_free. Errors are -errno with one sentence in err.
 */
#ifndef STACKTOP_MEMTRACE_H
#define STACKTOP_MEMTRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define MEMTRACE_MAX_HZ 1000	 /* traced mmap calls a second before sampling */
#define MEMTRACE_FAULT_PERIOD 64 /* one page-fault sample per 64 faults */

struct frames;
struct ingest;
struct memhold;
struct memtrace;

enum memtrace_kind {
	MEMTRACE_MMAP = 0,
	MEMTRACE_MUNMAP,
	MEMTRACE_BRK,
	MEMTRACE_MREMAP,
	MEMTRACE_FAULT,
	MEMTRACE_KIND_COUNT
};

struct memtrace_config {
	pid_t pid;
	unsigned stack_size;   /* user stack bytes copied per event */
	uint64_t window_ns;    /* memhold's window */
	unsigned max_hz;       /* 0: MEMTRACE_MAX_HZ */
	unsigned fault_period; /* 0: MEMTRACE_FAULT_PERIOD */
};

struct memtrace_stats {
	uint64_t events[MEMTRACE_KIND_COUNT]; /* samples received per kind */
	uint64_t lost;	      /* mmap/munmap/brk/mremap records dropped: held bytes may be off */
	uint64_t lost_faults; /* page-fault samples dropped (fewer samples, nothing wrong) */
	uint64_t failed;      /* calls that returned an error (ignored) */
	unsigned period;      /* mmap: 1 = every call, N = one in N */
	unsigned fault_period;
	double calls_hz; /* mmap calls a second (estimated), at the last refresh */
};

int memtrace_new(const struct memtrace_config *cfg, struct ingest *in, struct frames *fr,
		 struct memtrace **out, char *err, size_t errsz);
void memtrace_free(struct memtrace *mt); /* NULL is fine */
/* Drain the rings, order the records, apply them to memhold. */
void memtrace_collect(struct memtrace *mt, uint64_t now_ns);
/* Once a refresh: the call rate, and sampling on or off. */
void memtrace_refresh(struct memtrace *mt, uint64_t now_ns);
struct memhold *memtrace_hold(const struct memtrace *mt);
void memtrace_stats(const struct memtrace *mt, struct memtrace_stats *out);

/* The ids of syscall tracepoints (names like "sys_exit_mmap") into ids:
 * from a mounted tracefs or debugfs, else from a tracefs mounted in a
 * child's private mount namespace (nothing is left mounted). 0 or -errno
 * (the first that failed). */
int memtrace_tracepoint_ids(const char *const *names, int n, int *ids);

#endif
