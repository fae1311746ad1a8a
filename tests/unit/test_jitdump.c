/* Unit tests for jitdump: the record parser (loads, moves, debug lines, a
 * file fed in pieces, records being written, hostile sizes and names) and
 * the file reader (owner, symlink, growth parsed from where it stopped, a
 * rewrite read again) under a fake root. (node and python: test_jitdump.sh.) */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
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

#include "stacktop/symbols/jitdump.h"

/* A jitdump being built in memory. */
struct jd {
	uint8_t b[1 << 16];
	size_t n;
};

static void put(struct jd *d, const void *p, size_t n)
{
	assert_true(d->n + n <= sizeof(d->b));
	memcpy(d->b + d->n, p, n);
	d->n += n;
}

static void put32(struct jd *d, uint32_t v)
{
	put(d, &v, 4);
}

static void put64(struct jd *d, uint64_t v)
{
	put(d, &v, 8);
}

static void header(struct jd *d)
{
	put32(d, JITDUMP_MAGIC);
	put32(d, 1);
	put32(d, 40);
	put32(d, 62);
	put32(d, 0);
	put32(d, 1234);
	put64(d, 0);
	put64(d, 0);
}

static void rec(struct jd *d, uint32_t id, uint32_t size)
{
	put32(d, id);
	put32(d, size);
	put64(d, 0);
}

static void load(struct jd *d, uint64_t addr, uint64_t size, const char *name)
{
	size_t nl = strlen(name) + 1;

	rec(d, JITDUMP_CODE_LOAD, (uint32_t)(16 + 40 + nl + size));
	put32(d, 1234);
	put32(d, 1234);
	put64(d, addr);
	put64(d, addr);
	put64(d, size);
	put64(d, 7);
	put(d, name, nl);
	for (uint64_t i = 0; i < size; i++)
		put(d, "\x90", 1);
}

static void move(struct jd *d, uint64_t from, uint64_t to, uint64_t size)
{
	rec(d, JITDUMP_CODE_MOVE, 16 + 48);
	put32(d, 1234);
	put32(d, 1234);
	put64(d, to);
	put64(d, from);
	put64(d, to);
	put64(d, size);
	put64(d, 7);
}

struct dline {
	uint64_t addr;
	uint32_t line;
	const char *file;
};

static void debug(struct jd *d, uint64_t addr, const struct dline *l, size_t n)
{
	size_t size = 16 + 16;

	for (size_t i = 0; i < n; i++)
		size += 16 + strlen(l[i].file) + 1;
	rec(d, JITDUMP_CODE_DEBUG_INFO, (uint32_t)size);
	put64(d, addr);
	put64(d, n);
	for (size_t i = 0; i < n; i++) {
		put64(d, l[i].addr);
		put32(d, l[i].line);
		put32(d, 0);
		put(d, l[i].file, strlen(l[i].file) + 1);
	}
}

/* The sample file: two functions with lines, one moved, one overlapping. */
static void sample(struct jd *d)
{
	static const struct dline lines[] = {
	    {0x1000, 10, "/src/app.js"},
	    {0x1020, 12, "\xff"}, /* the same file as before */
	    {0x1040, 14, "other.js"},
	};

	header(d);
	debug(d, 0x1000, lines, 3);
	load(d, 0x1000, 0x80, "JS:*hot app.js:10");
	load(d, 0x2000, 0x40, "cold");
	rec(d, 99, 16 + 8); /* an id to come: skipped */
	put64(d, 0);
	load(d, 0x2020, 0x10, "later_wins");
	move(d, 0x1000, 0x5000, 0x80);
}

static void check_sample(const struct jitdump_table *t)
{
	struct jitdump_sym s;

	assert_int_equal(jitdump_table_find(t, 0x1000, &s), 0);
	assert_string_equal(s.name, "JS:*hot app.js:10");
	assert_int_equal(s.start, 0x1000);
	assert_int_equal(s.end, 0x1080);
	assert_string_equal(s.file, "/src/app.js");
	assert_int_equal(s.line, 10);
	assert_int_equal(jitdump_table_find(t, 0x1030, &s), 0);
	assert_string_equal(s.file, "/src/app.js");
	assert_int_equal(s.line, 12);
	assert_int_equal(jitdump_table_find(t, 0x107f, &s), 0);
	assert_string_equal(s.file, "other.js");
	assert_int_equal(s.line, 14);
	assert_int_equal(jitdump_table_find(t, 0x1080, &s), -ENOENT);
	assert_int_equal(jitdump_table_find(t, 0x2010, &s), 0);
	assert_string_equal(s.name, "cold");
	assert_null(s.file);
	assert_int_equal(jitdump_table_find(t, 0x2028, &s), 0);
	assert_string_equal(s.name, "later_wins");
	assert_int_equal(jitdump_table_find(t, 0x2030, &s), 0);
	assert_string_equal(s.name, "cold");
	/* moved: name and lines (as offsets) go along */
	assert_int_equal(jitdump_table_find(t, 0x5030, &s), 0);
	assert_string_equal(s.name, "JS:*hot app.js:10");
	assert_int_equal(s.start, 0x5000);
	assert_int_equal(s.line, 12);
}

static void test_jitdump_whole(void **state)
{
	static struct jd d;
	struct jitdump_table *t;
	size_t used;

	d.n = 0;
	sample(&d);
	assert_int_equal(jitdump_table_new(&t), 0);
	assert_int_equal(jitdump_table_feed(t, d.b, d.n, d.n, &used), 0);
	assert_int_equal(used, d.n);
	assert_int_equal(jitdump_table_count(t), 4);
	check_sample(t);
	jitdump_table_free(t);
}

/* Fed in pieces of every size, as a reader meets a file being written:
 * each piece ends where the file ends for now (a record cut there waits). */
static void test_jitdump_pieces(void **state)
{
	static struct jd d;

	d.n = 0;
	sample(&d);
	for (size_t step = 1; step < 200; step += 7) {
		struct jitdump_table *t;
		size_t done = 0, used;

		assert_int_equal(jitdump_table_new(&t), 0);
		for (size_t end = step; done < d.n; end += step) {
			if (end > d.n)
				end = d.n;
			assert_int_equal(
			    jitdump_table_feed(t, d.b + done, end - done, end - done, &used), 0);
			done += used;
			assert_true(done <= end);
		}
		check_sample(t);
		jitdump_table_free(t);
	}
}

static void test_jitdump_hostile(void **state)
{
	static struct jd d;
	struct jitdump_table *t;
	struct jitdump_sym s;
	char big[3000];
	size_t used;

	/* not a jitdump, or of the other byte order */
	d.n = 0;
	put32(&d, 0x4454694A);
	put32(&d, 1);
	put32(&d, 40);
	for (int i = 0; i < 7; i++)
		put32(&d, 0);
	assert_int_equal(jitdump_table_new(&t), 0);
	assert_int_equal(jitdump_table_feed(t, d.b, d.n, d.n, &used), -EINVAL);
	assert_int_equal(jitdump_table_feed(t, d.b, d.n, d.n, &used), -EINVAL);
	jitdump_table_free(t);

	/* a name past JITDUMP_NAME_MAX is cut; a record shorter than its
	 * header stops the reading for good; a huge entry count is bounded
	 * by the record */
	d.n = 0;
	header(&d);
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	load(&d, 0x1000, 0x10, big);
	rec(&d, JITDUMP_CODE_DEBUG_INFO, 16 + 16 + 17);
	put64(&d, 0x3000);
	put64(&d, UINT64_MAX);
	put64(&d, 0x3000);
	put32(&d, 5);
	put32(&d, 0);
	put(&d, "", 1);
	load(&d, 0x3000, 0x10, "after_debug");
	rec(&d, JITDUMP_CODE_LOAD, 8);
	load(&d, 0x4000, 0x10, "never");
	assert_int_equal(jitdump_table_new(&t), 0);
	assert_int_equal(jitdump_table_feed(t, d.b, d.n, d.n, &used), 0);
	assert_int_equal(jitdump_table_find(t, 0x1000, &s), 0);
	assert_int_equal(strlen(s.name), JITDUMP_NAME_MAX - 1);
	assert_string_equal(s.name + JITDUMP_NAME_MAX - 4, "...");
	assert_int_equal(jitdump_table_find(t, 0x3004, &s), 0);
	assert_string_equal(s.name, "after_debug");
	assert_int_equal(s.line, 5);
	assert_int_equal(jitdump_table_find(t, 0x4000, &s), -ENOENT);
	jitdump_table_free(t);

	/* a file name that is not text (node 20 writes some so) is no file */
	d.n = 0;
	header(&d);
	debug(&d, 0x1000,
	      (const struct dline[]){{0x1000, 7,
				      "\x36\x05\xd7\x16"
				      "ests/x.js"}},
	      1);
	load(&d, 0x1000, 0x10, "f");
	assert_int_equal(jitdump_table_new(&t), 0);
	assert_int_equal(jitdump_table_feed(t, d.b, d.n, d.n, &used), 0);
	assert_int_equal(jitdump_table_find(t, 0x1000, &s), 0);
	assert_null(s.file);
	assert_int_equal(s.line, 7);
	jitdump_table_free(t);
}

static void test_jitdump_paths(void **state)
{
	static const char *const yes[] = {"/tmp/jit-123.dump", "/home/u/app/jit-1.dump"};
	static const char *const no[] = {"jit-1.dump",	      "/tmp/jit-.dump",
					 "/tmp/jit-12x.dump", "/tmp/jit-12.dump (deleted)",
					 "/tmp/perf-12.map",  NULL};

	CHECK_PRED(jitdump_is_path, yes, no);
}

/* Through a fake root: trusted owners only, no symlink, growth and
 * rewrites. */
static void test_jitdump_files(void **state)
{
	char root[] = "/tmp/symtest-jdXXXXXX", path[PATH_MAX + 64], link[PATH_MAX + 64];
	static struct jd d;
	struct jitdump_cache *c;
	struct jitdump_sym s;
	size_t half;

	fake_root(root, 0755);
	snprintf(path, sizeof(path), "%s/tmp/jit-77.dump", root);
	d.n = 0;
	header(&d);
	load(&d, 0x1000, 0x10, "first");
	half = d.n;
	load(&d, 0x2000, 0x10, "second");
	/* the first record and half the second */
	put_bytes(path, d.b, half + 20, O_TRUNC);
	assert_int_equal(jitdump_cache_new(&c), 0);
	jitdump_cache_tune(c, 0, 0);
	assert_int_equal(jitdump_lookup_at(c, root, "/tmp/jit-77.dump", getuid(), 0x1008, &s), 0);
	assert_string_equal(s.name, "first");
	assert_int_equal(jitdump_lookup_at(c, root, "/tmp/jit-77.dump", getuid(), 0x2008, &s),
			 -ENOENT);
	/* the rest written: parsed from where the reading stopped */
	put_bytes(path, d.b + half + 20, d.n - half - 20, O_APPEND);
	assert_int_equal(jitdump_lookup_at(c, root, "/tmp/jit-77.dump", getuid(), 0x2008, &s), 0);
	assert_string_equal(s.name, "second");
	/* rewritten: read again from its start */
	d.n = 0;
	header(&d);
	load(&d, 0x3000, 0x10, "third");
	put_bytes(path, d.b, d.n, O_TRUNC);
	assert_int_equal(jitdump_lookup_at(c, root, "/tmp/jit-77.dump", getuid(), 0x1008, &s),
			 -ENOENT);
	assert_int_equal(jitdump_lookup_at(c, root, "/tmp/jit-77.dump", getuid(), 0x3008, &s), 0);
	/* not a jitdump's name, not absolute, a symlink: nothing */
	assert_int_equal(jitdump_lookup_at(c, root, "/tmp/x.dump", getuid(), 0x3008, &s), -ENOENT);
	assert_int_equal(jitdump_lookup_at(c, root, "tmp/jit-77.dump", getuid(), 0x3008, &s),
			 -ENOENT);
	snprintf(link, sizeof(link), "%s/tmp/jit-78.dump", root);
	assert_int_equal(symlink("jit-77.dump", link), 0);
	assert_int_equal(jitdump_lookup_at(c, root, "/tmp/jit-78.dump", getuid(), 0x3008, &s),
			 -ENOENT);
	/* owned by another user than the target's and root */
	if (geteuid() == 0) {
		assert_int_equal(chown(path, 12345, 12345), 0);
		assert_int_equal(jitdump_lookup_at(c, root, "/tmp/jit-77.dump", 1000, 0x3008, &s),
				 -ENOENT);
		assert_int_equal(jitdump_lookup_at(c, root, "/tmp/jit-77.dump", 12345, 0x3008, &s),
				 0);
	}
	jitdump_cache_free(c);
	rm_rf(root);
}

TEST_MAIN(NULL, NULL, TEST(test_jitdump_whole), TEST(test_jitdump_pieces),
	  TEST(test_jitdump_hostile), TEST(test_jitdump_paths), TEST(test_jitdump_files))
