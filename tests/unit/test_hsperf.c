/* Unit tests for hsperf: a real JDK 17 G1 hsperfdata file (the fuzz seed
 * tests/fuzz/corpus/hsperf/jdk17-g1, captured from GcChurn: jstat -gc said
 * EC+OC about 32 MiB), files built here in both byte orders, hostile
 * offsets and lengths, the maps line that names the file, and the owner
 * check through a fake root. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "runner.h"

#include "helpers.h"

#include "stacktop/runtime/hsperf.h"

#define SAMPLE "tests/fuzz/corpus/hsperf/jdk17-g1"

static uint8_t *slurp(const char *path, size_t *n)
{
	static uint8_t buf[HSPERF_MAX];
	FILE *f = fopen(path, "rb");

	assert_non_null(f);
	*n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	return buf;
}

static void test_hsperf_real(void **state)
{
	size_t n;
	uint8_t *b = slurp(SAMPLE, &n);
	struct hsperf h;

	assert_int_equal(n, 32768);
	assert_int_equal(hsperf_parse(b, n, &h), 0);
	/* -Xmx32m, G1: 32 MiB committed (the generations' capacities) */
	assert_true(h.heap_committed >= 30ull << 20 && h.heap_committed <= 34ull << 20);
	assert_true(h.heap_used > 1ull << 20 && h.heap_used <= h.heap_committed);
	assert_true(h.gc_count > 100); /* GcChurn collects all the time */
	assert_true(h.gc_time_s > 0.1 && h.gc_time_s < 60);
	/* torn: any cut is refused or parsed, never read past */
	for (size_t cut = 0; cut < n; cut += 97) {
		int err = hsperf_parse(b, cut, &h);

		assert_true(err == 0 || err == -EINVAL || err == -ENOENT);
	}
	/* not ready yet */
	b[7] = 0;
	assert_int_equal(hsperf_parse(b, n, &h), -EAGAIN);
	b[7] = 1;
}

/* A file of our own: prologue and entries in either byte order. */
struct hs {
	uint8_t b[4096];
	size_t n;
	bool big;
	uint32_t nent;
};

static void put32(struct hs *f, size_t off, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		f->b[off + (size_t)i] = (uint8_t)(v >> (f->big ? 24 - 8 * i : 8 * i));
}

static void put64(struct hs *f, size_t off, uint64_t v)
{
	put32(f, off + (f->big ? 0 : 4), (uint32_t)(v >> 32));
	put32(f, off + (f->big ? 4 : 0), (uint32_t)v);
}

static void start(struct hs *f, bool big)
{
	memset(f, 0, sizeof(*f));
	f->big = big;
	f->b[0] = 0xca, f->b[1] = 0xfe, f->b[2] = 0xc0, f->b[3] = 0xc0;
	f->b[4] = big ? 0 : 1;
	f->b[5] = 2;
	f->b[7] = 1;
	put32(f, 24, 32);
	f->n = 32;
}

static void add(struct hs *f, const char *name, uint64_t v)
{
	size_t nl = strlen(name) + 1, dat = (20 + nl + 7) / 8 * 8, len = dat + 8;

	put32(f, f->n, (uint32_t)len);
	put32(f, f->n + 4, 20);
	put32(f, f->n + 8, 0);
	f->b[f->n + 12] = 'J';
	f->b[f->n + 14] = 4;
	f->b[f->n + 15] = 2;
	put32(f, f->n + 16, (uint32_t)dat);
	memcpy(f->b + f->n + 20, name, nl);
	put64(f, f->n + dat, v);
	f->n += len;
	put32(f, 28, ++f->nent);
}

static void heap(struct hs *f, bool big)
{
	start(f, big);
	add(f, "sun.os.hrt.frequency", 1000000000);
	add(f, "sun.gc.generation.0.capacity", 8 << 20);
	add(f, "sun.gc.generation.0.space.0.used", 3 << 20);
	add(f, "sun.gc.generation.0.space.1.used", 1 << 20);
	add(f, "sun.gc.generation.1.capacity", 24 << 20);
	add(f, "sun.gc.generation.1.space.0.used", 10 << 20);
	add(f, "sun.gc.generation.1.spacex.0.used", 99); /* not a space */
	add(f, "sun.gc.collector.0.invocations", 40);
	add(f, "sun.gc.collector.1.invocations", 2);
	add(f, "sun.gc.collector.2.invocations", 7); /* G1's concurrent cycles: not jstat's GC */
	add(f, "sun.gc.collector.0.time", 1500000000);
	add(f, "sun.gc.collector.1.time", 500000000);
}

static void test_hsperf_built(void **state)
{
	static struct hs f;
	struct hsperf h;

	for (int big = 0; big < 2; big++) {
		heap(&f, big);
		assert_int_equal(hsperf_parse(f.b, f.n, &h), 0);
		assert_int_equal(h.heap_used, 14 << 20);
		assert_int_equal(h.heap_committed, 32 << 20);
		assert_int_equal(h.gc_count, 42);
		assert_float_equal(h.gc_time_s, 2.0, 1e-9);
	}
	/* no heap counters: not a JVM's heap */
	start(&f, false);
	add(&f, "sun.os.hrt.frequency", 1000);
	assert_int_equal(hsperf_parse(f.b, f.n, &h), -ENOENT);
	/* hostile: an entry longer than the file, one shorter than its
	 * header, a count past the file, a first entry outside it, a bad
	 * magic or version */
	heap(&f, false);
	put32(&f, 32, 1u << 30);
	assert_int_equal(hsperf_parse(f.b, f.n, &h), -EINVAL);
	put32(&f, 32, 8);
	assert_int_equal(hsperf_parse(f.b, f.n, &h), -EINVAL);
	heap(&f, false);
	put32(&f, 28, 100000);
	assert_int_equal(hsperf_parse(f.b, f.n, &h), -EINVAL);
	heap(&f, false);
	put32(&f, 24, (uint32_t)f.n + 8);
	assert_int_equal(hsperf_parse(f.b, f.n, &h), -EINVAL);
	heap(&f, false);
	f.b[5] = 1;
	assert_int_equal(hsperf_parse(f.b, f.n, &h), -EINVAL);
	f.b[5] = 2;
	f.b[0] = 0;
	assert_int_equal(hsperf_parse(f.b, f.n, &h), -EINVAL);
	/* a name without its NUL in the entry, a data offset past it: skipped */
	heap(&f, false);
	memset(f.b + 32 + 20, 'x', 28);
	put32(&f, 32 + 16, 4000);
	assert_int_equal(hsperf_parse(f.b, f.n, &h), 0);
	assert_int_equal(h.heap_used, 14 << 20);
}

static void test_hsperf_maps(void **state)
{
	char path[256];

	assert_int_equal(
	    hsperf_path_in_maps("7f0-7f1 r-xp 0 fe:00 1 /usr/lib/libc.so.6\n"
				"7ff4b978e000-7ff4b9796000 rw-s 00000000 fe:00 10960906"
				"                   /tmp/hsperfdata_root/14143\n"
				"7ff5-7ff6 rw-p 0 0:0 0\n",
				path, sizeof(path)),
	    0);
	assert_string_equal(path, "/tmp/hsperfdata_root/14143");
	assert_int_equal(
	    hsperf_path_in_maps("1-2 rw-s 0 fe:00 1 /tmp/hsperfdata_u/12x\n", path, sizeof(path)),
	    -ENOENT);
	assert_int_equal(
	    hsperf_path_in_maps("1-2 rw-s 0 fe:00 1 /tmp/hsperfdata_u/\n", path, sizeof(path)),
	    -ENOENT);
	assert_int_equal(
	    hsperf_path_in_maps("1-2 rw-s 0 fe:00 1 /tmp/perfdata_u/12\n", path, sizeof(path)),
	    -ENOENT);
	assert_int_equal(hsperf_path_in_maps("", path, sizeof(path)), -ENOENT);
}

static void test_hsperf_files(void **state)
{
	char root[] = "/tmp/symtest-hsXXXXXX", dir[PATH_MAX], path[PATH_MAX + 16];
	static struct hs f;
	struct hsperf h;

	fake_root(root, 0755);
	snprintf(dir, sizeof(dir), "%s/tmp/hsperfdata_u", root);
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(path, sizeof(path), "%s/77", dir);
	heap(&f, false);
	put_bytes(path, f.b, f.n, O_TRUNC);
	assert_int_equal(hsperf_read_at(root, "/tmp/hsperfdata_u/77", getuid(), &h), 0);
	assert_int_equal(h.heap_committed, 32 << 20);
	if (geteuid() == 0) {
		assert_int_equal(chown(path, 12345, 12345), 0);
		assert_int_equal(hsperf_read_at(root, "/tmp/hsperfdata_u/77", 1000, &h), -EPERM);
		assert_int_equal(hsperf_read_at(root, "/tmp/hsperfdata_u/77", 12345, &h), 0);
	}
	snprintf(dir, sizeof(dir), "%s/tmp/hsperfdata_u/78", root);
	assert_int_equal(symlink("77", dir), 0);
	assert_true(hsperf_read_at(root, "/tmp/hsperfdata_u/78", 12345, &h) < 0);
	rm_rf(root);
}

TEST_MAIN(NULL, NULL, TEST(test_hsperf_real), TEST(test_hsperf_built), TEST(test_hsperf_maps),
	  TEST(test_hsperf_files))
