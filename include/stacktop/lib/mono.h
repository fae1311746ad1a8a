/*
 * mono — the one clock stacktop keeps time with: CLOCK_MONOTONIC in
 * nanoseconds, the clock perf samples are stamped with (use_clockid) and
 * that the window, the samplers and the refresh schedule all read; and
 * the calling thread's CPU time, for what stacktop's own work costs (on a
 * saturated box the wall time of that work includes waiting for a CPU).
 */
#ifndef STACKTOP_MONO_H
#define STACKTOP_MONO_H

#include <stdint.h>

#define MONO_SEC_NS 1000000000ull

uint64_t mono_ns(void);

/* CPU time of the calling thread (ns); 0 if the clock is missing. */
uint64_t mono_thread_cpu_ns(void);

#endif
