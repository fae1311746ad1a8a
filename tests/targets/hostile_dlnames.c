/*
 * hostile_dlnames — a program that loads library after library, each
 * with functions never named before (issue 28, the last finding): it
 * copies LIB (build/targets/hostile_dlnames.so: 24 nested functions of
 * 912-byte names ending in QQQQQQQQ) into DIR with QQQQQQQQ rewritten to
 * a counter, dlopens the copy, spins in it MS milliseconds, dlcloses it
 * and unlinks it RING libraries later, again and again (a file unlinked
 * at once hands its inode to the next: a profiler that knows files by
 * device and inode would take it for the last one while it still holds
 * that). Before each dlopen it maps one page
 * (PROT_NONE, kept) where the last library began: the next one lands a
 * page lower, so no two libraries share a pc (a profiler that still holds
 * a frame at a pc names it as it did before). A profiler that keeps every function
 * name it met until exit grows by 24 names a library; one whose names
 * follow its window does not. Prints "ready" after the first library.
 *
 * usage: hostile_dlnames LIB DIR [MS]   (default 200; runs until killed)
 *
 * A library must live a while to be named: a profiler rereads a
 * process's maps at most every 100 ms.
 */
#include "target.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#define MARK "QQQQQQQQ"
#define RING 64

/* The file at path, whole, into a new buffer; NULL on error. */
static char *read_all(const char *path, size_t *size)
{
	struct stat st;
	char *buf;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st) || !(buf = malloc((size_t)st.st_size + 1)) ||
	    read(fd, buf, (size_t)st.st_size) != st.st_size) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	close(fd);
	*size = (size_t)st.st_size;
	return buf;
}

/* Every MARK in lib rewritten to the counter n (8 hex digits). */
static void mark_all(char *lib, size_t size, unsigned n)
{
	char hex[16];

	snprintf(hex, sizeof(hex), "%08x", n);
	for (char *p = lib; (p = memmem(p, size - (size_t)(p - lib), MARK, 8)); p += 8)
		memcpy(p, hex, 8);
}

static int write_all(const char *path, const char *buf, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0700);

	if (fd < 0)
		return -1;
	if (write(fd, buf, size) != (ssize_t)size) {
		close(fd);
		return -1;
	}
	return close(fd);
}

int main(int argc, char **argv)
{
	size_t size;
	static char paths[RING][4096];
	char *tmpl, *lib, *path;
	unsigned ms = argc > 3 ? (unsigned)atoi(argv[3]) : 200;

	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: hostile_dlnames LIB DIR [MS]\n");
		return 2;
	}
	if (!(tmpl = read_all(argv[1], &size)) || !(lib = malloc(size))) {
		perror(argv[1]);
		return 1;
	}
	for (unsigned n = 0;; n++) {
		void *h;
		void (*run)(unsigned);

		/* The top of the last library's hole: adjacent pages merge into one
		 * mapping, so the maps do not grow. */
		mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		path = paths[n % RING];
		if (n >= RING)
			unlink(path);
		memcpy(lib, tmpl, size);
		mark_all(lib, size, n);
		snprintf(path, sizeof(paths[0]), "%s/dlnames-%u.so", argv[2], n);
		if (write_all(path, lib, size)) {
			perror(path);
			return 1;
		}
		if (!(h = dlopen(path, RTLD_NOW | RTLD_LOCAL)) ||
		    !(run = (void (*)(unsigned))dlsym(h, "dlnames_run"))) {
			fprintf(stderr, "%s: %s\n", path, dlerror());
			return 1;
		}
		run(ms);
		dlclose(h);
		if (n == 0) {
			printf("ready\n");
			fflush(stdout);
		}
	}
}
