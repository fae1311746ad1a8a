/*
 * jit — a stand-in for a JIT compiler: copies a few bytes of machine code
 * into an anonymous executable mapping, announces it in /tmp/perf-PID.map
 * the way JITs do for perf ("START SIZE name", hex), and spins in it. The
 * code lies in no ELF file, so only the perf map can name it.
 *
 * usage: jit [SECONDS]   (default: forever; the map file is removed at exit)
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static char map_path[64];

static void cleanup(int sig)
{
	unlink(map_path);
	_exit(0);
}

int main(int argc, char **argv)
{
	/* 1: inc %rax; jmp 1b — a loop that never returns. */
	static const unsigned char code[] = {0x48, 0xff, 0xc0, 0xeb, 0xfb};
	unsigned char *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	memcpy(page + 64, code, sizeof(code));
	snprintf(map_path, sizeof(map_path), "/tmp/perf-%d.map", getpid());
	FILE *f = fopen(map_path, "w");
	if (!f) {
		perror(map_path);
		return 1;
	}
	fprintf(f, "%lx %zx jit_spin_loop\n", (unsigned long)(page + 64), sizeof(code));
	fclose(f);
	signal(SIGTERM, cleanup);
	signal(SIGINT, cleanup);
	if (argc > 1) {
		signal(SIGALRM, cleanup);
		alarm((unsigned)atoi(argv[1]));
	}
	((void (*)(void))(page + 64))();
	return 0;
}
