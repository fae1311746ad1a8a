/*
 * churn — a target whose memory rises and falls like a rollercoaster: it
 * allocates up to PEAK MiB over RAMP seconds, frees everything, and
 * starts again (issue 3). Healthy churn, not a leak.
 *
 *   churn [PEAK_MIB [RAMP_S]]     defaults: 200 MiB over 10 s
 *
 * Each chunk is its own mmap (touched page by page, so it is resident) and
 * is given back with munmap, so RSS really drops at the end of a ramp;
 * malloc'd memory could stay in the heap and hide the drop. The memory
 * stays at the peak for one second before it is freed, so the peak is seen
 * by a once-a-second reader. Prints nothing; runs until killed.
 */
#include "target.h"

#include <sys/mman.h>

#define STEPS_PER_S 10
#define MAX_CHUNKS 4096

static void *chunks[MAX_CHUNKS];

KEEP static void *grab(size_t n)
{
	char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	memset(p, 0x5a, n);
	return p;
}

KEEP static void release_all(int n, size_t size)
{
	for (int i = 0; i < n; i++)
		if (chunks[i])
			munmap(chunks[i], size);
}

int main(int argc, char **argv)
{
	double peak = argc > 1 ? atof(argv[1]) : 200, ramp = argc > 2 ? atof(argv[2]) : 10;
	struct timespec next;
	int steps, i;
	size_t size;

	if (argc > 3 || !(peak > 0) || !(ramp > 0)) {
		fprintf(stderr, "usage: churn [PEAK_MIB [RAMP_S]]\n");
		return 2;
	}
	steps = (int)(ramp * STEPS_PER_S);
	if (steps < 1)
		steps = 1;
	if (steps > MAX_CHUNKS)
		steps = MAX_CHUNKS;
	size = (size_t)(peak * 1048576 / steps + 4095) & ~(size_t)4095;
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (;;) {
		for (i = 0; i < steps; i++) {
			chunks[i] = grab(size);
			tick_abs(&next, 1000000000 / STEPS_PER_S);
		}
		for (i = 0; i < STEPS_PER_S; i++) /* hold the peak for a second */
			tick_abs(&next, 1000000000 / STEPS_PER_S);
		release_all(steps, size);
		for (i = 0; i < steps; i++)
			chunks[i] = NULL;
	}
}
