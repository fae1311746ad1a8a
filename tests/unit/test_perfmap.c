/* Unit tests for perfmap: line parsing; the trust rules (owner, symlinks,
 * FIFOs, a root whose symlinks point out), lookups with overlapping
 * entries, reload on change and the size cap, under a fake root. (A live
 * process's map through sym_resolve_user: test_sym.) */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "runner.h"

#include "stacktop/symbols/perfmap.h"
#include "helpers.h"
#include "symtest.h"

static void test_perfmap_parse(void **state)
{
	uint64_t start, size;
	const char *name;

	assert_int_equal(
	    perfmap_parse_line("7f0012340000 1a0 LazyCompile:~foo bar.js:3", &start, &size, &name),
	    0);
	assert_int_equal(start, 0x7f0012340000ull);
	assert_int_equal(size, 0x1a0);
	assert_string_equal(name, "LazyCompile:~foo bar.js:3");
	assert_int_equal(perfmap_parse_line("ABCdef 10 x", &start, &size, &name), 0);
	assert_int_equal(start, 0xabcdef);
	assert_string_equal(name, "x");
	/* Bad lines. */
	assert_int_equal(perfmap_parse_line("1000 name", &start, &size, &name), -EINVAL);
	assert_int_equal(perfmap_parse_line("1000", &start, &size, &name), -EINVAL);
	assert_int_equal(perfmap_parse_line("zz00 10 name", &start, &size, &name), -EINVAL);
	assert_int_equal(perfmap_parse_line("1000 1g name", &start, &size, &name), -EINVAL);
	assert_int_equal(perfmap_parse_line("1000 10 ", &start, &size, &name), -EINVAL);
	assert_int_equal(perfmap_parse_line("1000 10", &start, &size, &name), -EINVAL);
	assert_int_equal(perfmap_parse_line("", &start, &size, &name), -EINVAL);
	/* perf itself reads these with strtoull(.., 16): a 0x prefix passes. */
	assert_int_equal(perfmap_parse_line("0x1000 10 name", &start, &size, &name), 0);
	assert_int_equal(start, 0x1000);
	assert_int_equal(perfmap_parse_line("100000000000000000 10 name", &start, &size, &name),
			 -EINVAL);
}

static void perfmap_file(const char *root, int nspid, const char *text, uid_t owner)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/tmp/perf-%d.map", root, nspid);
	write_file(path, text);
	assert_int_equal(chown(path, owner, owner), 0);
}

static const char jit_map[] = "1000 100 jit_one\n"
			      "garbage line\n"
			      "2000 0 zero_size\n"
			      "3000 100 _ZN3foo3barEv\n"
			      "3080 10 jit_later_wins\n"
			      "4000 10\n";

static void test_perfmap_trust_and_lookup(void **state)
{
	char root[] = "/tmp/symtest-pmXXXXXX", path[PATH_MAX + 64], path2[PATH_MAX + 64];
	struct perfmap_cache *c;
	struct perfmap_sym ps;

	if (geteuid() != 0) {
		fprintf(stderr, "test_perfmap_trust_and_lookup needs root (chown)\n");
		skip();
	}
	fake_root(root, 01777);
	assert_int_equal(perfmap_cache_new(&c), 0);

	/* Owned by someone else than the target (uid 1000) and not root. */
	perfmap_file(root, 4242, jit_map, 12345);
	assert_int_equal(perfmap_lookup_at(c, root, 4242, 1000, 0x1010, &ps), -ENOENT);
	/* Owned by the target's uid; and by root. */
	perfmap_file(root, 4243, jit_map, 1000);
	assert_int_equal(perfmap_lookup_at(c, root, 4243, 1000, 0x1010, &ps), 0);
	assert_string_equal(ps.name, "jit_one");
	assert_int_equal(ps.start, 0x1000);
	assert_int_equal(ps.end, 0x1100);
	perfmap_file(root, 4244, jit_map, 0);
	assert_int_equal(perfmap_lookup_at(c, root, 4244, 1000, 0x10ff, &ps), 0);
	assert_string_equal(ps.name, "jit_one");
	/* Past the end, zero size, bad lines: nothing. */
	assert_int_equal(perfmap_lookup_at(c, root, 4244, 1000, 0x1100, &ps), -ENOENT);
	assert_int_equal(perfmap_lookup_at(c, root, 4244, 1000, 0x2000, &ps), -ENOENT);
	assert_int_equal(perfmap_lookup_at(c, root, 4244, 1000, 0x4000, &ps), -ENOENT);
	assert_int_equal(perfmap_lookup_at(c, root, 4244, 1000, 0xfff, &ps), -ENOENT);
	/* Raw (sym demangles); and a later overlapping entry wins. */
	assert_int_equal(perfmap_lookup_at(c, root, 4244, 1000, 0x3010, &ps), 0);
	assert_string_equal(ps.name, "_ZN3foo3barEv");
	assert_int_equal(perfmap_lookup_at(c, root, 4244, 1000, 0x3088, &ps), 0);
	assert_string_equal(ps.name, "jit_later_wins");
	assert_int_equal(ps.start, 0x3080);

	/* A symlink to a trusted file is refused, and so is a FIFO (without
	 * blocking on it). */
	snprintf(path, sizeof(path), "%s/tmp/perf-4245.map", root);
	assert_int_equal(symlink("perf-4244.map", path), 0);
	assert_int_equal(perfmap_lookup_at(c, root, 4245, 1000, 0x1010, &ps), -ENOENT);
	snprintf(path, sizeof(path), "%s/tmp/perf-4246.map", root);
	assert_int_equal(mkfifo(path, 0644), 0);
	assert_int_equal(perfmap_lookup_at(c, root, 4246, 0, 0x1010, &ps), -ENOENT);
	/* A symlinked directory pointing outside the root resolves inside it. */
	snprintf(path, sizeof(path), "%s/tmp", root);
	snprintf(path2, sizeof(path2), "%s/tmp2", root);
	assert_int_equal(rename(path, path2), 0);
	assert_int_equal(symlink(path2, path), 0); /* absolute: outside when in root */
	assert_int_equal(perfmap_lookup_at(c, root, 4247, 0, 0x1010, &ps), -ENOENT);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(rename(path2, path), 0);

	/* Reload when the file changes (checked at most once a second). */
	perfmap_file(root, 4243, "1000 100 jit_renamed\n5000 10 jit_new\n", 1000);
	assert_int_equal(perfmap_lookup_at(c, root, 4243, 1000, 0x5004, &ps), -ENOENT);
	usleep(1100 * 1000);
	assert_int_equal(perfmap_lookup_at(c, root, 4243, 1000, 0x5004, &ps), 0);
	assert_string_equal(ps.name, "jit_new");
	assert_int_equal(perfmap_lookup_at(c, root, 4243, 1000, 0x1004, &ps), 0);
	assert_string_equal(ps.name, "jit_renamed");
	perfmap_cache_free(c);
	rm_rf(root);
}

/* A perf map over TFILE_PERFMAP_MAX (64 MiB) is not read at all, even
 * when its first lines are good. */
static void test_perfmap_size_cap(void **state)
{
	char root[] = "/tmp/symtest-pmcapXXXXXX", path[PATH_MAX + 64];
	struct perfmap_cache *c;
	struct perfmap_sym ps;

	fake_root(root, 01777);
	perfmap_file(root, 4250, "1000 100 jit_one\n", 0);
	assert_int_equal(perfmap_cache_new(&c), 0);
	assert_int_equal(perfmap_lookup_at(c, root, 4250, 0, 0x1010, &ps), 0);
	perfmap_file(root, 4251, "1000 100 jit_one\n", 0);
	snprintf(path, sizeof(path), "%s/tmp/perf-4251.map", root);
	assert_int_equal(truncate(path, (off_t)(64ull << 20) + 1), 0);
	assert_int_equal(perfmap_lookup_at(c, root, 4251, 0, 0x1010, &ps), -ENOENT);
	perfmap_cache_free(c);
	rm_rf(root);
}

static void append_file(const char *root, int nspid, const char *text)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/tmp/perf-%d.map", root, nspid);
	put_text(path, "a", text);
}

/* Lines appended to a map are parsed on the next check (the earlier ones
 * are kept, not read again), a later overlapping line still wins, and a
 * file rewritten in place or shrunk is read again whole (issue 28). */
static void test_perfmap_append_and_rewrite(void **state)
{
	char root[] = "/tmp/symtest-pmappXXXXXX";
	struct perfmap_cache *c;
	struct perfmap_sym ps;

	fake_root(root, 01777);
	assert_int_equal(perfmap_cache_new(&c), 0);
	perfmap_cache_tune(c, 0, 0);
	perfmap_file(root, 4260, "1000 100 first\n2000 100 second\n3000 10 partial", 0);
	assert_int_equal(perfmap_lookup_at(c, root, 4260, 0, 0x1010, &ps), 0);
	assert_string_equal(ps.name, "first");
	/* a line being written waits for its newline */
	assert_int_equal(perfmap_lookup_at(c, root, 4260, 0, 0x3004, &ps), -ENOENT);
	append_file(root, 4260, "_done\n1000 10 first_again\n4000 100 fourth\n");
	assert_int_equal(perfmap_lookup_at(c, root, 4260, 0, 0x3004, &ps), 0);
	assert_string_equal(ps.name, "partial_done");
	assert_int_equal(perfmap_lookup_at(c, root, 4260, 0, 0x4010, &ps), 0);
	assert_string_equal(ps.name, "fourth");
	assert_int_equal(perfmap_lookup_at(c, root, 4260, 0, 0x1004, &ps), 0);
	assert_string_equal(ps.name, "first_again");
	assert_int_equal(perfmap_lookup_at(c, root, 4260, 0, 0x1010, &ps), 0);
	assert_string_equal(ps.name, "first");
	assert_int_equal(perfmap_lookup_at(c, root, 4260, 0, 0x2010, &ps), 0);
	assert_string_equal(ps.name, "second");
	/* many appends, one line each: all found, the oldest too */
	for (int i = 0; i < 3000; i++) {
		char line[64];

		snprintf(line, sizeof(line), "%x 10 app_%d\n", 0x100000 + i * 0x10, i);
		append_file(root, 4260, line);
		assert_int_equal(perfmap_lookup_at(c, root, 4260, 0, 0x100000 + i * 0x10 + 4, &ps),
				 0);
	}
	assert_int_equal(perfmap_lookup_at(c, root, 4260, 0, 0x100004, &ps), 0);
	assert_string_equal(ps.name, "app_0");
	assert_int_equal(perfmap_lookup_at(c, root, 4260, 0, 0x2010, &ps), 0);
	assert_string_equal(ps.name, "second");
	/* rewritten in place, longer: the old names are gone */
	perfmap_file(root, 4260, "1000 100 new_first_with_a_much_longer_name\n", 0);
	assert_int_equal(perfmap_lookup_at(c, root, 4260, 0, 0x1010, &ps), 0);
	assert_string_equal(ps.name, "new_first_with_a_much_longer_name");
	assert_int_equal(perfmap_lookup_at(c, root, 4260, 0, 0x2010, &ps), -ENOENT);
	/* shrunk */
	perfmap_file(root, 4260, "5000 10 e\n", 0);
	assert_int_equal(perfmap_lookup_at(c, root, 4260, 0, 0x1010, &ps), -ENOENT);
	assert_int_equal(perfmap_lookup_at(c, root, 4260, 0, 0x5004, &ps), 0);
	assert_string_equal(ps.name, "e");
	perfmap_cache_free(c);
	rm_rf(root);
}

/* A check parses at most a chunk: a big map is read over several checks
 * (what was read is named meanwhile), a line longer than a chunk is
 * skipped, and a name longer than PERFMAP_NAME_MAX is cut with "...". */
static void test_perfmap_parts_and_caps(void **state)
{
	char root[] = "/tmp/symtest-pmpartXXXXXX", *text, *p;
	struct perfmap_cache *c;
	struct perfmap_sym ps;
	size_t len = 0, checks;

	fake_root(root, 01777);
	text = malloc(1 << 20);
	assert_non_null(text);
	for (int i = 0; i < 2000; i++)
		len += (size_t)sprintf(text + len, "%x 10 part_%d\n", 0x10000 + i * 0x10, i);
	len += (size_t)sprintf(text + len, "9000 10 ");
	memset(text + len, 'x', 300);
	len += 300;
	len += (size_t)sprintf(text + len, "\n9100 10 ");
	memset(text + len, 'L', 5000);
	len += 5000;
	len += (size_t)sprintf(text + len, "\n9200 10 after_long\n");
	perfmap_file(root, 4261, text, 0);
	assert_int_equal(perfmap_cache_new(&c), 0);
	perfmap_cache_tune(c, 0, 256);
	assert_int_equal(perfmap_lookup_at(c, root, 4261, 0, 0x10004, &ps), 0);
	assert_string_equal(ps.name, "part_0");
	/* the last one is not read yet after one check of 256 bytes */
	assert_int_equal(perfmap_lookup_at(c, root, 4261, 0, 0x9204, &ps), -ENOENT);
	for (checks = 0; checks < 1000; checks++) {
		if (perfmap_lookup_at(c, root, 4261, 0, 0x9204, &ps) == 0)
			break;
	}
	assert_true(checks > 50 && checks < 1000);
	assert_string_equal(ps.name, "after_long");
	assert_int_equal(perfmap_lookup_at(c, root, 4261, 0, 0x10000 + 1999 * 0x10, &ps), 0);
	assert_string_equal(ps.name, "part_1999");
	/* 300 bytes: longer than a check's 256, skipped */
	assert_int_equal(perfmap_lookup_at(c, root, 4261, 0, 0x9004, &ps), -ENOENT);
	/* with the default chunk: the 5,000-byte name cut */
	perfmap_cache_tune(c, 0, 0);
	perfmap_file(root, 4261, text, 0);
	assert_int_equal(perfmap_lookup_at(c, root, 4261, 0, 0x9104, &ps), 0);
	assert_int_equal(strlen(ps.name), PERFMAP_NAME_MAX - 1);
	p = strstr(ps.name, "...");
	assert_non_null(p);
	assert_int_equal(p - ps.name, PERFMAP_NAME_MAX - 4);
	assert_int_equal(perfmap_lookup_at(c, root, 4261, 0, 0x9004, &ps), 0);
	assert_int_equal(strlen(ps.name), 300);
	perfmap_cache_free(c);
	free(text);
	rm_rf(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    TEST(test_perfmap_parse),	       TEST(test_perfmap_trust_and_lookup),
	    TEST(test_perfmap_size_cap),       TEST(test_perfmap_append_and_rewrite),
	    TEST(test_perfmap_parts_and_caps),
	};
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
