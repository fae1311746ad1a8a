/*
 * perfrecord — decoding the records of a perf ring whose events were set up
 * by perfevent.h (its sample layout: IP, TID, TIME, [CALLCHAIN], REGS_USER
 * of PERFEVENT_REGS_MASK, STACK_USER; sample_id_all).
 *
 * Pure functions over one contiguous record (as ring_next hands it out):
 * no state, no allocation, no system calls. A decoded record borrows the
 * record's memory (a sample's stack copy and kernel pcs point into it), so
 * it is valid while the record is: until the next ring_next. Every length
 * in the record is checked against the record's size before it is read; a
 * record that does not fit its type is -EBADMSG, never a partial result.
 *
 * What is kept: of a sample, pid, tid, time, the kernel frames of the
 * callchain (the run after PERF_CONTEXT_KERNEL), the user registers in
 * DWARF order (struct sample) and the valid part of the stack copy; of the
 * side-band records, the ids and what a sampler acts on (a FORK's parent,
 * an exec's new name, a LOST count). What to do with them (filtering by
 * process, thread tables, counting) is the caller's: perf.c, memtrace.c.
 */
#ifndef STACKTOP_PERFRECORD_H
#define STACKTOP_PERFRECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "stacktop/sample/sample.h"

struct perf_event_header;

enum perfrecord_kind {
	PERFRECORD_OTHER,    /* a type (or COMM without exec) nobody here uses */
	PERFRECORD_SAMPLE,   /* sample */
	PERFRECORD_LOST,     /* lost: records the kernel dropped */
	PERFRECORD_THROTTLE, /* the kernel throttled the event (no payload read) */
	PERFRECORD_FORK,     /* pid, tid, task: a new thread or process */
	PERFRECORD_EXIT,     /* pid, tid, task: a thread ended */
	PERFRECORD_EXEC,     /* pid, tid, comm: COMM with PERF_RECORD_MISC_COMM_EXEC */
	PERFRECORD_MMAP,     /* pid, tid: MMAP or MMAP2, a new mapping */
};

struct perfrecord {
	enum perfrecord_kind kind;
	pid_t pid, tid;
	struct sample sample; /* SAMPLE */
	uint64_t lost;	      /* LOST */
	pid_t ppid, ptid;     /* FORK, EXIT: the parent */
	uint64_t time;	      /* FORK, EXIT: CLOCK_MONOTONIC */
	char comm[17];	      /* EXEC: the new name, NUL-terminated */
};

/* Decode record h (h->size bytes readable from h) into out; callchain:
 * its samples carry one (the kernel frames). 0, or -EBADMSG when the
 * record is too short for its type. */
int perfrecord_decode(const struct perf_event_header *h, bool callchain, struct perfrecord *out);

/* Decode one PERF_RECORD_SAMPLE of size bytes (header included). Exposed
 * for memtrace, tests and fuzzing. 0 or -EBADMSG. */
int perfrecord_parse_sample(const void *rec, size_t size, bool callchain, struct sample *out);

/* A sample's stack copy cut to the bytes the kernel filled (dyn_size,
 * rounded up to 8): a 16 KiB copy of a shallow stack is mostly zeros, and
 * the backlog holds hundreds of them while the first samples load symbols.
 * Returns the size of the cut record: rec->size when rec is no sample,
 * does not parse, or has nothing to cut. With dst (room for that size),
 * writes the cut record there; perfrecord_parse_sample reads it as it
 * read rec. */
size_t perfrecord_cut_stack(const struct perf_event_header *rec, bool callchain, void *dst);

/* The kinds whose records a CPU-wide event gets for every process on the
 * machine (FORK, EXIT, EXEC, MMAP). */
bool perfrecord_is_sideband(enum perfrecord_kind kind);

#endif
