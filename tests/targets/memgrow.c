/*
 * memgrow — a leak next to a churner, and a file mapping that grows
 * (issue 14): the memory view must rank the leak's code path first.
 *
 *   memgrow [FILE]
 *
 * Every 100 ms, in one thread:
 *   cache_put       maps 256 KiB, touches it, keeps it: 2.5 MiB/s, never freed
 *                   (capped at 512 MiB);
 *   handle_request  maps 4 MiB, touches every page, unmaps it: 40 MiB/s of
 *                   churn that holds nothing (far more page faults);
 *   grow_file       with FILE: a 256 MiB shared mapping of FILE (made
 *                   sparse), 1 MiB more of it touched each step: file-backed
 *                   RSS that grows 10 MiB/s (capped at the mapping).
 * Prints nothing; runs until killed.
 */
#include "target.h"

#include <fcntl.h>
#include <sys/mman.h>

#define STEP_NS 100000000
#define LEAK_CHUNK (256u << 10)
#define CHURN_CHUNK (4u << 20)
#define FILE_SIZE (256u << 20)
#define FILE_STEP (1u << 20)

static size_t leaked;

/* The leak: mapped, written, never unmapped. */
KEEP static void cache_put(void)
{
	if (leaked >= (512u << 20))
		return;
	char *p =
	    mmap(NULL, LEAK_CHUNK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return;
	memset(p, 0x5a, LEAK_CHUNK);
	leaked += LEAK_CHUNK;
	NO_TAIL();
}

/* Churn: more faults than the leak, but everything is given back. */
KEEP static void handle_request(void)
{
	char *p =
	    mmap(NULL, CHURN_CHUNK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return;
	for (size_t i = 0; i < CHURN_CHUNK; i += 4096)
		p[i] = (char)i;
	munmap(p, CHURN_CHUNK);
	NO_TAIL();
}

/* File-backed growth: touch the next MiB of a shared file mapping. */
KEEP static void grow_file(char *map, size_t *done)
{
	if (!map || *done >= FILE_SIZE)
		return;
	memset(map + *done, 0x11, FILE_STEP);
	*done += FILE_STEP;
	NO_TAIL();
}

int main(int argc, char **argv)
{
	char *map = NULL;
	size_t done = 0;
	struct timespec next;

	if (argc > 2) {
		fprintf(stderr, "usage: memgrow [FILE]\n");
		return 2;
	}
	if (argc == 2) {
		int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0 || ftruncate(fd, FILE_SIZE) < 0) {
			perror(argv[1]);
			return 1;
		}
		map = mmap(NULL, FILE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		close(fd);
		if (map == MAP_FAILED) {
			perror("mmap");
			return 1;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (;;) {
		cache_put();
		handle_request();
		grow_file(map, &done);
		tick_abs(&next, STEP_NS);
	}
}
