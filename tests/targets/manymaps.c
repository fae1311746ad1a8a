/*
 * manymaps — a process with many mappings, for the cost of reading its
 * smaps (bench/memtrace.sh) and for the memory view's interval.
 *
 *   manymaps [N [KIB]]     defaults: 10,000 mappings of 64 KiB
 *
 * N private anonymous mappings of KIB each, every other one read-only so
 * the kernel cannot merge neighbours, every page written (resident). Then
 * it only sleeps. Prints "ready" on stdout once mapped.
 */
#include "target.h"

#include <sys/mman.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10000, kib = argc > 2 ? atol(argv[2]) : 64;
	if (argc > 3 || n <= 0 || n > 60000 || kib <= 0 || kib > 65536) {
		fprintf(stderr, "usage: manymaps [N [KIB]]\n");
		return 2;
	}
	size_t len = (size_t)kib << 10;
	for (long i = 0; i < n; i++) {
		char *p =
		    mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			perror("mmap");
			return 1;
		}
		memset(p, 1, len);
		if (i % 2)
			mprotect(p, len, PROT_READ);
	}
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
