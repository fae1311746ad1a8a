/*
 * hostile_truncate — a target that truncates the file its running code is
 * mapped from, so that a profiler holding a mapping of that file faults.
 *
 *   hostile_truncate DIR [SECONDS]    SECONDS before the truncation (2)
 *
 * It copies its own executable to DIR/hostile-lib.so and maps the copy
 * whole, executable (as dlopen maps a library: a PIE executable cannot be
 * dlopened, and mapping it ourselves keeps the code independent of the
 * loader). It burns CPU in hostile_spin_a, called in the copy, for
 * SECONDS, so that a profiler attached meanwhile opens the copy as a
 * module. Then it truncates the copy to the end of its executable PT_LOAD
 * (page-rounded): .eh_frame_hdr, .eh_frame, .symtab and the section table
 * all lie after the code (ld's -z separate-code layout: R, RX, R, RW) and
 * are gone, while the code pages it runs stay inside the file. It prints
 * "truncated" and burns CPU in hostile_spin_b, whose pcs the profiler has
 * not seen: their CFI must be looked up now. A profiler that kept a
 * mapping of the file takes SIGBUS on that lookup (the kernel unmaps the
 * pages past the new end from every mapping); one that copied what it
 * reads names hostile_spin_b and unwinds it.
 *
 * The spin functions are pure register arithmetic (no calls, no globals,
 * no constants in .rodata), so they run from the copy at any address and
 * touch nothing past the truncation point.
 */
#include "target.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

KEEP uint64_t hostile_spin_a(uint64_t x, uint64_t n)
{
	SPIN(x, n);
	return x;
}

KEEP uint64_t hostile_spin_b(uint64_t x, uint64_t n)
{
	SPIN(x, n);
	x ^= 7;
	return x;
}

/* The end of the executable PT_LOAD in the file, page-rounded; 0 if none. */
static off_t code_end(int fd)
{
	long page = sysconf(_SC_PAGESIZE);
	Elf64_Ehdr eh;
	Elf64_Phdr ph;

	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh))
		return 0;
	for (int i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) != sizeof(ph))
			return 0;
		if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X))
			return (off_t)((ph.p_offset + ph.p_filesz + page - 1) & ~(page - 1));
	}
	return 0;
}

int main(int argc, char **argv)
{
	char path[4096];
	uint64_t (*spin_a)(uint64_t, uint64_t), (*spin_b)(uint64_t, uint64_t);
	uint64_t x = 1;
	double secs = argc > 2 ? atof(argv[2]) : 2;
	long off_a = file_offset_of((const void *)&hostile_spin_a);
	long off_b = file_offset_of((const void *)&hostile_spin_b);
	double t0;
	size_t size;
	off_t end;
	char *base;
	int fd;

	if (argc < 2 || off_a < 0 || off_b < 0) {
		fprintf(stderr, "usage: hostile_truncate DIR [SECONDS]\n");
		return 2;
	}
	base = map_self_copy(path, sizeof(path), argv[1], "hostile-lib.so", O_RDWR, &size, &fd);
	if (!base)
		return 1;
	end = code_end(fd);
	if (end <= off_b || end >= (off_t)size)
		return fprintf(stderr, "hostile_truncate: no code segment to keep\n"), 1;
	spin_a = (uint64_t(*)(uint64_t, uint64_t))(base + off_a);
	spin_b = (uint64_t(*)(uint64_t, uint64_t))(base + off_b);
	printf("ready\n");
	fflush(stdout);
	t0 = mono_s();
	while (mono_s() - t0 < secs) {
		x = spin_a(x, 1000000);
		sink = x;
	}
	if (ftruncate(fd, end))
		return perror("ftruncate"), 1;
	close(fd);
	printf("truncated at %lld of %zu bytes\n", (long long)end, size);
	fflush(stdout);
	for (;;) {
		x = spin_b(x, 1000000);
		sink = x;
	}
}
