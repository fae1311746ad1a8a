/*
 * pump — the hook slow work calls so the sample rings keep being read (see
 * pump.h).
 */
#include "stacktop/lib/pump.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#include "stacktop/lib/mono.h"

static void (*pump_fn)(void *ctx);
static void *pump_ctx;
static uint64_t pump_last_ns;
static bool pump_inside;
static pthread_t pump_thread; /* the one that set the hook */

void pump_set(void (*fn)(void *ctx), void *ctx)
{
	pump_fn = fn;
	pump_ctx = ctx;
	pump_last_ns = 0;
	pump_thread = pthread_self();
}

void pump(void)
{
	if (!pump_fn || pump_inside || !pthread_equal(pthread_self(), pump_thread))
		return;
	uint64_t now = mono_ns();
	if (now - pump_last_ns < PUMP_EVERY_NS)
		return;
	pump_inside = true;
	pump_fn(pump_ctx);
	pump_inside = false;
	pump_last_ns = mono_ns();
}
