/*
 * hostile_bigmap — a JIT with a huge perf map that keeps growing (issue 28
 * item 5): /tmp/perf-PID.map first gets FILLER_LINES short entries (about
 * 60 MiB, near the 64 MiB a map may have) for code that never runs; then
 * each second the target copies a small loop to PER_SEC new addresses,
 * appends a line naming each "tail_fn_N_K" (N: the second), and spins in
 * them until the next second. A profiler that re-reads and re-sorts the
 * whole map on every change does ~60 MiB of work a second; the names it
 * should show are only in the appended tail.
 *
 * usage: hostile_bigmap [SECONDS]   (default: forever; the map file is
 * removed at exit). The map is complete (the filler written) once the file
 * PATH.ready exists next to it.
 */
#include "target.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>

#define FILLER_LINES 3100000
#define PER_SEC 4
#define SLOT 256
#define NSLOT 4096

static char map_path[64], ready_path[80];

static void cleanup(int sig)
{
	unlink(map_path);
	unlink(ready_path);
	_exit(0);
}

int main(int argc, char **argv)
{
	unsigned char *region = mmap(NULL, (size_t)NSLOT * SLOT, PROT_READ | PROT_WRITE | PROT_EXEC,
				     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	time_t start, end;
	FILE *f;

	if (region == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	snprintf(map_path, sizeof(map_path), "/tmp/perf-%d.map", getpid());
	snprintf(ready_path, sizeof(ready_path), "%s.ready", map_path);
	signal(SIGTERM, cleanup);
	signal(SIGINT, cleanup);
	if (!(f = fopen(map_path, "w"))) {
		perror(map_path);
		return 1;
	}
	/* Filler far from the region: 0x10000000 up, 0x10 bytes apart. */
	for (long i = 0; i < FILLER_LINES; i++)
		fprintf(f, "%lx 10 f%lx\n", 0x10000000ul + (unsigned long)i * 0x10,
			(unsigned long)i);
	fflush(f);
	close(open(ready_path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
	start = time(NULL);
	end = argc > 1 ? start + atoi(argv[1]) : 0;
	for (long sec = 0;; sec++) {
		unsigned char *code = region + (size_t)(sec % (NSLOT / PER_SEC)) * PER_SEC * SLOT;
		time_t now;

		for (int k = 0; k < PER_SEC; k++) {
			emit_countdown(code + k * SLOT, 200000);
			/* announced before it runs, as JITs do */
			fprintf(f, "%lx %x tail_fn_%ld_%d\n", (unsigned long)(code + k * SLOT),
				SLOT, sec, k);
		}
		fflush(f);
		now = run_code_until(code, PER_SEC, SLOT, start + sec + 1);
		if (end && now >= end)
			cleanup(0);
	}
}
