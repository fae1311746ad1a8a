/*
 * test_memmap — the smaps parser and the growth history: mappings folded
 * into rows by kind (heap, anonymous with their count, stack, file,
 * shared memory, pseudo names), Rss summed per row, a row's change over a
 * span of snapshots, a row that went away showing 0, lines that are not
 * smaps skipped and counted, and a path with control bytes kept raw (the
 * view sanitizes).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "runner.h"

#include "stacktop/memory/memmap.h"

#define SEC 1000000000ull

/* One mapping's smaps entry. */
static int entry(char *out, size_t size, unsigned long start, const char *perms, const char *path,
		 unsigned rss, unsigned anon)
{
	return snprintf(out, size,
			"%012lx-%012lx %s 00000000 00:00 0%s%s\n"
			"Size:               1024 kB\n"
			"Rss:                %u kB\n"
			"Pss:                %u kB\n"
			"Anonymous:          %u kB\n"
			"VmFlags: rd wr mr mw me ac\n",
			start, start + 0x100000, perms, *path ? "                 " : "", path, rss,
			rss, anon);
}

static const struct memmap_row *find(const struct memmap *m, const char *name)
{
	for (int i = 0; i < m->n; i++)
		if (!strcmp(m->rows[i].name, name))
			return &m->rows[i];
	return NULL;
}

static int rowi(const struct memmap *m, const char *name)
{
	const struct memmap_row *r = find(m, name);
	return r ? (int)(r - m->rows) : -1;
}

static void snapshot(struct memmap *m, uint64_t t, unsigned leak_kb, unsigned file_kb)
{
	char buf[8192];
	size_t n = 0;
	n += (size_t)entry(buf + n, sizeof(buf) - n, 0x555500000000, "rw-p", "[heap]", 400, 400);
	n += (size_t)entry(buf + n, sizeof(buf) - n, 0x7f0000000000, "rw-p", "", leak_kb, leak_kb);
	n += (size_t)entry(buf + n, sizeof(buf) - n, 0x7f0000200000, "rw-p", "", 100, 100);
	n += (size_t)entry(buf + n, sizeof(buf) - n, 0x7f0000400000, "rw-s", "/tmp/grow.dat",
			   file_kb, 0);
	n += (size_t)entry(buf + n, sizeof(buf) - n, 0x7f0000600000, "rw-s", "/dev/shm/q", 64, 0);
	n += (size_t)entry(buf + n, sizeof(buf) - n, 0x7f0000800000, "r-xp", "[vdso]", 8, 0);
	n += (size_t)entry(buf + n, sizeof(buf) - n, 0x7ffc00000000, "rw-p", "[stack]", 132, 132);
	assert_int_equal(memmap_parse(m, buf, n, t), 0);
}

static void test_kinds(void **state)
{
	struct memmap m;
	memmap_init(&m, 1, SEC);
	snapshot(&m, SEC, 1000, 2048);
	assert_int_equal(m.nmappings, 7);
	assert_int_equal(m.nanon, 2);
	const struct memmap_row *r = find(&m, "anonymous");
	assert_non_null(r);
	assert_int_equal(r->kind, MEMMAP_ANON);
	assert_int_equal(r->nmaps, 2);
	assert_int_equal(r->rss_kb[0], 1100);
	assert_int_equal(find(&m, "[heap]")->kind, MEMMAP_HEAP);
	assert_int_equal(find(&m, "[stack]")->kind, MEMMAP_STACK);
	assert_int_equal(find(&m, "/tmp/grow.dat")->kind, MEMMAP_FILE);
	assert_int_equal(find(&m, "/dev/shm/q")->kind, MEMMAP_SHMEM);
	assert_int_equal(find(&m, "[vdso]")->kind, MEMMAP_OTHER);
	assert_true(memmap_kind_anon(MEMMAP_HEAP));
	assert_false(memmap_kind_anon(MEMMAP_FILE));
	assert_string_equal(memmap_kind_name(MEMMAP_SHMEM), "shmem");
	assert_int_equal(m.parse_errors, 0);
	memmap_free(&m);
}

static void test_change(void **state)
{
	struct memmap m;
	uint64_t now;
	int64_t d;
	double span;
	memmap_init(&m, 1, SEC);
	for (unsigned s = 0; s < 10; s++)
		snapshot(&m, (s + 1) * SEC, 1000 + 256 * s, 2048 + 1024 * s);
	memmap_change(&m, rowi(&m, "anonymous"), 0, &now, &d, &span);
	assert_int_equal(now, 1100 + 256 * 9);
	assert_int_equal(d, 256 * 9);
	assert_true(span > 8.99 && span < 9.01);
	/* Over the last 4 s only. */
	memmap_change(&m, rowi(&m, "/tmp/grow.dat"), 6 * SEC, &now, &d, &span);
	assert_int_equal(d, 1024 * 4);
	assert_true(span > 3.99 && span < 4.01);
	memmap_change(&m, rowi(&m, "[heap]"), 0, &now, &d, &span);
	assert_int_equal(d, 0);
	memmap_free(&m);
}

static void test_gone_and_history_wraps(void **state)
{
	struct memmap m;
	uint64_t now;
	int64_t d;
	double span;
	char buf[1024];
	memmap_init(&m, 1, SEC);
	snapshot(&m, SEC, 5000, 100);
	int n = entry(buf, sizeof(buf), 0x555500000000, "rw-p", "[heap]", 400, 400);
	assert_int_equal(memmap_parse(&m, buf, (size_t)n, 2 * SEC), 0);
	memmap_change(&m, rowi(&m, "anonymous"), 0, &now, &d, &span);
	assert_int_equal(now, 0);
	assert_int_equal(d, -5100);
	/* More snapshots than the ring keeps: the oldest kept one is used. */
	for (unsigned s = 0; s < MEMMAP_HIST + 10; s++)
		assert_int_equal(memmap_parse(&m, buf, (size_t)n, (3 + s) * SEC), 0);
	memmap_change(&m, rowi(&m, "[heap]"), 0, &now, &d, &span);
	assert_int_equal(now, 400);
	assert_true(span > MEMMAP_HIST - 1.5 && span < MEMMAP_HIST - 0.5);
	memmap_free(&m);
}

static void test_junk(void **state)
{
	struct memmap m;
	memmap_init(&m, 1, SEC);
	const char text[] = "garbage line\n"
			    "Rss: 99 kB\n"
			    "00400000-00500000 rw-p 00000000 00:00 0          /tmp/a\x1b[2Jb\n"
			    "Rss:            12 kB\n"
			    "name with a newline\n"
			    "Rss:   banana\n"
			    "ffff-0000 rw-p 00000000 00:00 0\n";
	assert_int_equal(memmap_parse(&m, text, sizeof(text) - 1, SEC), 0);
	assert_int_equal(m.parse_errors, 3);
	const struct memmap_row *r = find(&m, "/tmp/a\x1b[2Jb");
	assert_non_null(r); /* kept raw: sanitized where drawn */
	assert_int_equal(r->rss_kb[0], 12);
	assert_int_equal(m.nmappings, 1);
	memmap_free(&m);
}

/* Our own process: a real read, a snapshot, an interval of at least the
 * configured one and at least 50 times the read's cost. */
static void test_tick_self(void **state)
{
	struct memmap m;
	memmap_init(&m, getpid(), SEC);
	assert_int_equal(memmap_tick(&m, 5 * SEC), 1);
	assert_int_equal(memmap_tick(&m, 5 * SEC + 1), 0); /* not due */
	assert_true(m.nmappings > 5);
	assert_true(m.interval_ns >= SEC);
	assert_true(m.interval_ns >= m.cost_ns * MEMMAP_COST_FACTOR);
	assert_non_null(find(&m, "[stack]"));
	memmap_free(&m);
	memmap_init(&m, 999999999, SEC);
	assert_true(memmap_tick(&m, SEC) < 0);
	memmap_free(&m);
}

TEST_MAIN(NULL, NULL, TEST(test_kinds), TEST(test_change), TEST(test_gone_and_history_wraps),
	  TEST(test_junk), TEST(test_tick_self))
