/* Fuzz entry point: a large perf map through the file reader (perfmap.c),
 * as a JIT would grow and rewrite it. The input, repeated up to a few
 * dozen KiB (many lines), is written to ROOT/tmp/perf-1.map in a private
 * directory: first a prefix (cut anywhere, mid-line too), looked up; then
 * the rest appended (only the tail is parsed), looked up; then the file
 * rewritten shorter (read again whole). Checks parse 64 bytes to 16 KiB
 * at a time (the first input byte), so reading in parts, lines split
 * across checks and lines longer than a check are all met. Every entry
 * found must hold the pc and have a name that fits PERFMAP_NAME_MAX. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stacktop/symbols/perfmap.h"

#define BIG_MAX (64u << 10)

static char root[64], path[128];

static void put(const uint8_t *d, size_t n, int flags)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | flags, 0600);

	if (fd < 0)
		abort();
	for (size_t off = 0; off < n;) {
		ssize_t w = write(fd, d + off, n - off);

		if (w <= 0)
			abort();
		off += (size_t)w;
	}
	close(fd);
}

static size_t chunk;

static void cleanup(void)
{
	char dir[160];

	unlink(path);
	snprintf(dir, sizeof(dir), "%s/tmp", root);
	rmdir(dir);
	rmdir(root);
}

static void check(const struct perfmap_sym *ps, uint64_t pc)
{
	if (pc < ps->start || pc >= ps->end || strlen(ps->name) >= PERFMAP_NAME_MAX)
		abort();
}

/* Checks (a lookup each) until the map is read or 8 of them; then pcs
 * from the input's own bytes, looked up without checking again. */
static void look(struct perfmap_cache *c, const uint8_t *d, size_t n)
{
	struct perfmap_sym ps;

	perfmap_cache_tune(c, 0, chunk);
	for (size_t k = 0; k < 8 && k <= n / chunk + 1; k++) {
		if (perfmap_lookup_at(c, root, 1, getuid(), 0x1000, &ps) == 0)
			check(&ps, 0x1000);
	}
	perfmap_cache_tune(c, UINT64_MAX / 2, chunk);
	for (size_t i = 0; i + 8 <= n && i < 128; i += 8) {
		uint64_t pc;

		memcpy(&pc, d + i, 8);
		pc &= 0xfffff;
		if (perfmap_lookup_at(c, root, 1, getuid(), pc, &ps) == 0)
			check(&ps, pc);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perfmap_cache *c;
	uint8_t *big;
	size_t n = 0, cut;

	if (!root[0]) {
		/* tmpfs when there is one: a round writes the file three times */
		char tmpl[] = "/dev/shm/fuzz-perfmap.XXXXXX", tmpl2[] = "/tmp/fuzz-perfmap.XXXXXX";
		char *dir = mkdtemp(tmpl);

		if (!dir && !(dir = mkdtemp(tmpl2)))
			abort();
		snprintf(root, sizeof(root), "%s", dir);
		snprintf(path, sizeof(path), "%s/tmp", root);
		mkdir(path, 0700);
		snprintf(path, sizeof(path), "%s/tmp/perf-1.map", root);
		atexit(cleanup);
	}
	if (size < 3)
		return 0;
	big = malloc(BIG_MAX);
	if (!big)
		return 0;
	/* many lines: the input again and again, up to data[1] / 4 KiB */
	for (size_t want = ((size_t)data[1] + 1) * 256;
	     n + size - 2 <= want && n + size - 2 <= BIG_MAX; n += size - 2)
		memcpy(big + n, data + 2, size - 2);
	if (perfmap_cache_new(&c)) {
		free(big);
		return 0;
	}
	chunk = 64 + (size_t)data[0] * 64;
	cut = n ? (size_t)data[0] * 997 % (n + 1) : 0;
	put(big, cut, O_TRUNC);
	look(c, big, n);
	put(big + cut, n - cut, O_APPEND);
	look(c, big, n);
	put(big, n / 3, O_TRUNC);
	look(c, big, n);
	perfmap_cache_free(c);
	unlink(path);
	free(big);
	return 0;
}
