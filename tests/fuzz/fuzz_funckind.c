/*
 * Fuzz entry point: funckind on any name (a symbol comes from the target's
 * files: any bytes), as a user-space and as a kernel name, and
 * locks_hint_of_function and waits_by_function over it, as every view asks.
 *
 * Input: the name (a NUL ends it early).
 *
 * Properties: no crash, no read past the name (posix_word copies at most
 * its buffer); every answer is a known kind, lock, hint or wait; a name
 * that is LOCK for funckind_lock_of is LOCK for funckind_of, with a lock
 * other than ANY only then; the hint agrees with the kind (NOOWNER only for
 * idle, MUTEX/RDLOCK/WRLOCK only for lock).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include "fuzztext.h"

#include "stacktop/proc/funckind.h"
#include "stacktop/proc/locks.h"
#include "stacktop/proc/waits.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *name = fuzz_text(data, size);
	enum funckind_lock lock;

	if (!name)
		return 0;
	enum funckind k = funckind_of(name, false), kk = funckind_of(name, true);
	enum funckind kl = funckind_lock_of(name, &lock);
	enum locks_hint h = locks_hint_of_function(name);
	enum sample_wait w = waits_by_function(SAMPLE_WAIT_LOCK, SYS_futex, name);

	if ((unsigned)k >= FUNCKIND_COUNT || (unsigned)kk >= FUNCKIND_COUNT || kl != k)
		abort();
	if (lock != FUNCKIND_LOCK_ANY && k != FUNCKIND_LOCK)
		abort();
	if ((h == LOCKS_HINT_NOOWNER) != (k == FUNCKIND_IDLE))
		abort();
	if ((h == LOCKS_HINT_MUTEX || h == LOCKS_HINT_RDLOCK || h == LOCKS_HINT_WRLOCK) &&
	    k != FUNCKIND_LOCK)
		abort();
	if (w != waits_of_funckind(k) && w != SAMPLE_WAIT_NONE)
		abort();
	if (w == SAMPLE_WAIT_NONE && (k == FUNCKIND_LOCK || k == FUNCKIND_IDLE))
		abort();
	if (!funckind_name(k)[0])
		abort();
	free(name);
	return 0;
}
