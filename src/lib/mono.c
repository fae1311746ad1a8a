/*
 * mono — CLOCK_MONOTONIC in nanoseconds (see mono.h).
 */
#include "stacktop/lib/mono.h"

#include <time.h>

uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * MONO_SEC_NS + (uint64_t)ts.tv_nsec;
}
