/*
 * dump — `stacktop dump -p PID`: every thread of a process once, with its
 * state, what it waits in and its symbolized stack (file:line), like
 * eu-stack or py-spy dump. Text for people, --json for machines.
 *
 * Each thread is stopped once, one at a time, for as short a time as
 * possible (the wall sampler: seize, interrupt, copy registers and stack,
 * resume); all are detached before anything is unwound or symbolized.
 */
#ifndef STACKTOP_DUMP_H
#define STACKTOP_DUMP_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

struct dump_opts {
	pid_t pid;
	bool json;
	bool native;	     /* a Python thread's native frames too (text); else its traceback */
	unsigned stack_size; /* bytes of stack copied per thread; 0: 16 KiB */
};

/* Dump the process to out. 0, or -errno with one sentence (and the fix)
 * in err: -ESRCH no such process, -EPERM not permitted, -EBUSY already
 * traced (the tracer's pid is named). */
int dump_run(const struct dump_opts *o, FILE *out, char *err, size_t errsz);

/* Write s as a JSON string (quotes included): ", \ and control characters
 * escaped (\u00XX), bidi/C1 controls as \uXXXX, invalid UTF-8 as U+FFFD.
 * NULL is written as null. Exposed for tests. */
void dump_json_string(FILE *out, const char *s);

#endif
