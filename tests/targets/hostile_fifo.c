/*
 * hostile_fifo — a target that plants a FIFO where its code's file was.
 *
 *   hostile_fifo DIR [SECONDS]     default: run until killed
 *
 * It copies its own executable to DIR/hostile-code, maps the copy
 * executable, closes and unlinks it, and creates a FIFO at the same path
 * (nobody ever writes to it). Then it burns CPU in hostile_spin, called in
 * the copy. A profiler without CAP_SYS_ADMIN cannot read
 * /proc/PID/map_files and falls back to /proc/PID/root/DIR/hostile-code:
 * a plain blocking open there waits for a writer for ever. stacktop must
 * refuse the FIFO, finish, and leave this process running (and, in wall
 * mode, not stopped).
 *
 * Prints "ready" on stdout once the FIFO is in place. hostile_spin is pure
 * register arithmetic (no calls, no globals), so its bytes run the same at
 * any address.
 */
#include "target.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

KEEP uint64_t hostile_spin(uint64_t x, uint64_t n)
{
	SPIN(x, n);
	return x;
}

int main(int argc, char **argv)
{
	char path[4096];
	uint64_t (*spin)(uint64_t, uint64_t);
	uint64_t x = 1;
	double secs = argc > 2 ? atof(argv[2]) : 0;
	long off = file_offset_of((const void *)&hostile_spin);
	size_t size;
	void *base;
	int fd;

	if (argc < 2 || off < 0) {
		fprintf(stderr, "usage: hostile_fifo DIR [SECONDS]\n");
		return 2;
	}
	base = map_self_copy(path, sizeof(path), argv[1], "hostile-code", O_RDONLY, &size, &fd);
	if (!base)
		return 1;
	close(fd);
	if (unlink(path) || mkfifo(path, 0666))
		return perror(path), 1;
	spin = (uint64_t(*)(uint64_t, uint64_t))((char *)base + off);
	printf("ready\n");
	fflush(stdout);
	double t0 = mono_s();
	for (;;) {
		x = spin(x, 1000000);
		sink = x;
		if (secs > 0 && mono_s() - t0 > secs)
			break;
	}
	return 0;
}
