/*
 * mapchurn — maps and unmaps as fast as it can, for what tracing mmap costs
 * the target (bench/memtrace.sh).
 *
 *   mapchurn [SECONDS [KIB]]     defaults: 6 s of 64 KiB mappings
 *
 * Each round: map_round mmaps KIB, writes one byte of its first page (one
 * page fault), munmaps it. Every second it prints the rounds of that second
 * ("rounds/s 123456"), so a tracer attached late is measured only where it
 * ran.
 */
#include "target.h"

#include <sys/mman.h>

KEEP static void map_round(size_t len)
{
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return;
	p[0] = 1;
	munmap(p, len);
	NO_TAIL();
}

int main(int argc, char **argv)
{
	long secs = argc > 1 ? atol(argv[1]) : 6, kib = argc > 2 ? atol(argv[2]) : 64;
	if (argc > 3 || secs <= 0 || kib <= 0 || kib > 1048576) {
		fprintf(stderr, "usage: mapchurn [SECONDS [KIB]]\n");
		return 2;
	}
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long s = 1; s <= secs; s++) {
		long n = 0;
		for (;;) {
			map_round((size_t)kib << 10);
			n++;
			if ((n & 63) == 0) {
				clock_gettime(CLOCK_MONOTONIC, &t);
				if ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) >=
				    s * 1000000000L)
					break;
			}
		}
		printf("rounds/s %ld\n", n);
		fflush(stdout);
	}
	return 0;
}
