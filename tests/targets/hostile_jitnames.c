/*
 * hostile_jitnames — a JIT that renames its code every second (issue 28
 * item 4): each second it writes NFN fresh copies of a small loop at new
 * addresses of an executable anonymous mapping and runs them in turn until
 * the next second. /tmp/perf-PID.map, rewritten each second, names this
 * second's code and next second's (announced a second ahead, so a
 * profiler that checks the map once a second names every one) with long
 * names never used before (NAMELEN bytes, the second and index in front).
 * A profiler that interns every name it meets until exit grows by about
 * NFN * NAMELEN bytes a second; one whose names follow its window does not.
 *
 * usage: hostile_jitnames [SECONDS]   (default: forever; the map file is
 * removed at exit)
 */
#include "target.h"

#include <signal.h>
#include <sys/mman.h>

#define NFN 64
#define NAMELEN (64 * 1024)
#define SLOT 256
#define REGION (4u << 20)

static char map_path[64];

static void cleanup(int sig)
{
	unlink(map_path);
	_exit(0);
}

static unsigned char *region;

/* Where second sec's code goes. */
static unsigned char *code_of(long sec)
{
	return region + (size_t)(sec % (REGION / (NFN * SLOT))) * NFN * SLOT;
}

/* The map at second sec: NFN entries for it and NFN for sec + 1. */
static void write_map(long sec, char *name)
{
	FILE *f = fopen(map_path, "w");
	if (!f) {
		perror(map_path);
		exit(1);
	}
	for (long s = sec; s <= sec + 1; s++) {
		for (int i = 0; i < NFN; i++) {
			int n = snprintf(name, NAMELEN, "jit_s%ld_f%d_", s, i);

			memset(name + n, 'a' + (int)(s % 26), NAMELEN - 1 - (size_t)n);
			name[NAMELEN - 1] = '\0';
			fprintf(f, "%lx %x %s\n", (unsigned long)(code_of(s) + i * SLOT), SLOT,
				name);
		}
	}
	fclose(f);
}

int main(int argc, char **argv)
{
	region = mmap(NULL, REGION, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
		      -1, 0);
	char *name = malloc(NAMELEN);
	time_t start = time(NULL), end = argc > 1 ? start + atoi(argv[1]) : 0;

	if (region == MAP_FAILED || !name) {
		perror("mmap");
		return 1;
	}
	snprintf(map_path, sizeof(map_path), "/tmp/perf-%d.map", getpid());
	signal(SIGTERM, cleanup);
	signal(SIGINT, cleanup);
	for (long sec = 0;; sec++) {
		unsigned char *code = code_of(sec);
		time_t now;

		for (int i = 0; i < NFN; i++)
			emit_countdown(code + i * SLOT, 200000);
		write_map(sec, name);
		now = run_code_until(code, NFN, SLOT, start + sec + 1);
		if (end && now >= end)
			cleanup(0);
	}
}
