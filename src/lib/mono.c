/*
 * mono — CLOCK_MONOTONIC and the thread CPU clock in nanoseconds (see
 * mono.h).
 */
#include "stacktop/lib/mono.h"

#include <time.h>

uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * MONO_SEC_NS + (uint64_t)ts.tv_nsec;
}

uint64_t mono_thread_cpu_ns(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * MONO_SEC_NS + (uint64_t)ts.tv_nsec;
}
