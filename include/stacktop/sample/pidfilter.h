/*
 * pidfilter — a kernel-side filter that keeps the samples of chosen
 * processes out of CPU-wide perf events and drops all others before the
 * kernel copies their stacks.
 *
 * A CPU-wide cpu-clock event (pid -1, one per CPU) runs its clock per CPU,
 * not per task: a thread that lives 1 ms is sampled as often as its CPU
 * time says, which inherited per-task events (whose copies each start a
 * full period late) cannot do. The price is that the event fires for
 * whatever runs on the CPU; this filter is a small eBPF program
 * (BPF_PROG_TYPE_PERF_EVENT, attached with PERF_EVENT_IOC_SET_BPF) that
 * returns 0 — drop the sample — unless the current task's process id is
 * in a hash map that the caller keeps (pidfilter_add / pidfilter_remove).
 *
 * Needs CAP_BPF and CAP_PERFMON (or root). pidfilter_new returns -errno
 * when the kernel refuses; the caller then samples per task instead.
 */
#ifndef STACKTOP_PIDFILTER_H
#define STACKTOP_PIDFILTER_H

#include <stdbool.h>
#include <sys/types.h>

#define PIDFILTER_MAX 8192 /* processes the map holds */

struct pidfilter;

int pidfilter_new(struct pidfilter **out);
void pidfilter_free(struct pidfilter *f); /* NULL is fine */
/* Filter perf event fd's samples (PERF_EVENT_IOC_SET_BPF). */
int pidfilter_attach(struct pidfilter *f, int perf_fd);
/* 0, -ENOSPC when PIDFILTER_MAX processes are in already. */
int pidfilter_add(struct pidfilter *f, pid_t pid);
void pidfilter_remove(struct pidfilter *f, pid_t pid);
bool pidfilter_has(const struct pidfilter *f, pid_t pid);
int pidfilter_count(const struct pidfilter *f);
pid_t pidfilter_pid(const struct pidfilter *f, int i); /* 0 <= i < count */

#endif
