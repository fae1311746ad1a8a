/*
 * mapchurn — maps and unmaps as fast as it can, for what tracing mmap costs
 * the target (bench/memtrace.sh).
 *
 *   mapchurn [SECONDS [KIB [RATE]]]   defaults: 6 s of 64 KiB, flat out
 *
 * Each round: map_round mmaps KIB, writes one byte of its first page (one
 * page fault), munmaps it; with RATE, at most RATE rounds a second (paced
 * by 1 ms sleeps). Every second it prints the rounds of that second and the
 * CPU time the process spent per round ("rounds/s 123456 cpu_us 4.21"), so
 * a tracer attached late is measured only where it ran, and CPU per round
 * does not depend on how busy the machine is.
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
	long rate = argc > 3 ? atol(argv[3]) : 0;
	if (argc > 4 || secs <= 0 || kib <= 0 || kib > 1048576 || rate < 0) {
		fprintf(stderr, "usage: mapchurn [SECONDS [KIB [RATE]]]\n");
		return 2;
	}
	struct timespec t0, t, c0, c1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long s = 1; s <= secs; s++) {
		long n = 0;
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
		for (;;) {
			map_round((size_t)kib << 10);
			n++;
			if (rate && n % (rate / 1000 + 1) == 0) {
				struct timespec ms = {0, 1000000};
				nanosleep(&ms, NULL);
			}
			if (rate || (n & 63) == 0) {
				clock_gettime(CLOCK_MONOTONIC, &t);
				if ((t.tv_sec - t0.tv_sec) * 1000000000L +
					(t.tv_nsec - t0.tv_nsec) >=
				    s * 1000000000L)
					break;
			}
		}
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
		printf("rounds/s %ld cpu_us %.3f\n", n,
		       ((c1.tv_sec - c0.tv_sec) * 1e9 + (c1.tv_nsec - c0.tv_nsec)) / 1e3 /
			   (double)n);
		fflush(stdout);
	}
	return 0;
}
