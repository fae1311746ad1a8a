/*
 * mono — the one clock stacktop keeps time with: CLOCK_MONOTONIC in
 * nanoseconds, the clock perf samples are stamped with (use_clockid) and
 * that the window, the samplers and the refresh schedule all read.
 */
#ifndef STACKTOP_MONO_H
#define STACKTOP_MONO_H

#include <stdint.h>

#define MONO_SEC_NS 1000000000ull

uint64_t mono_ns(void);

#endif
