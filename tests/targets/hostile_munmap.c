/*
 * hostile_munmap — a target that makes stacktop's memory tracer record
 * hundreds of thousands of regions, then removes them all with one munmap.
 *
 *   hostile_munmap [HOLES]      default 200000
 *
 * It prints "ready" and waits for SIGUSR1 (sent once the tracer runs).
 * Then reserve_space maps one PROT_NONE reservation of 2 x HOLES pages
 * (one traced mmap: one region), and punch_holes, from the bottom up,
 * unmaps every other page and maps it again at once (MAP_FIXED, same
 * flags). Each munmap is traced (munmap is never sampled, and its records
 * carry no stack) and splits the tracer's region; the kernel merges the
 * refilled page back into the reservation, so its mapping count stays at
 * one and vm.max_map_count (65,530) is no limit. The re-maps are mmap
 * calls the tracer samples (one in N past 1,000 a second): a traced one
 * is one more region, a sampled-out one a gap. At most ~40,000 rounds a
 * second (1,000 then a 20 ms sleep), so the munmap records fit the
 * tracer's rings. Then drop_space unmaps the whole reservation at once,
 * prints "done HOLES", and sleeps in a loop.
 *
 * Before memhold kept its regions in chunks, the regions were one sorted
 * array: a split from the bottom up only appended (cheap, so no record is
 * lost on the way), but the final munmap removed region after region from
 * the front of the run, a move of all the rest each time: time quadratic
 * in the regions (400,000: 82.7 s), the refreshes stopped meanwhile.
 */
#include "target.h"

#include <signal.h>

static volatile sig_atomic_t go;

static void on_usr1(int sig)
{
	(void)sig;
	go = 1;
}

KEEP static char *reserve_space(size_t len)
{
	char *p = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	NO_TAIL();
	return p == MAP_FAILED ? NULL : p;
}

KEEP static long punch_holes(char *base, long holes, long page)
{
	long done = 0;

	for (long i = 0; i < holes; i++) {
		char *at = base + (2 * i + 1) * page;

		if (munmap(at, (size_t)page) ||
		    mmap(at, (size_t)page, PROT_NONE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0) != at)
			break;
		if (++done % 1000 == 0) {
			struct timespec ms = {0, 20000000};
			nanosleep(&ms, NULL);
		}
	}
	NO_TAIL();
	return done;
}

KEEP static void drop_space(char *base, size_t len)
{
	munmap(base, len);
	NO_TAIL();
}

int main(int argc, char **argv)
{
	long holes = argc > 1 ? atol(argv[1]) : 200000, page = sysconf(_SC_PAGESIZE), done;
	struct sigaction sa = {.sa_handler = on_usr1};
	size_t len;
	char *base;

	if (argc > 2 || holes <= 0 || holes > 4000000) {
		fprintf(stderr, "usage: hostile_munmap [HOLES]\n");
		return 2;
	}
	sigaction(SIGUSR1, &sa, NULL);
	printf("ready\n");
	fflush(stdout);
	while (!go)
		usleep(10000);
	len = (size_t)(2 * holes + 1) * (size_t)page;
	if (!(base = reserve_space(len)))
		return perror("hostile_munmap: mmap"), 1;
	done = punch_holes(base, holes, page);
	drop_space(base, len);
	printf("done %ld\n", done);
	fflush(stdout);
	for (;;)
		sleep(1);
}
