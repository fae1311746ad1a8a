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
	assert_non_null(mkdtemp(root));
	snprintf(path, sizeof(path), "%s/tmp", root);
	assert_int_equal(mkdir(path, 01777), 0);
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

	assert_non_null(mkdtemp(root));
	snprintf(path, sizeof(path), "%s/tmp", root);
	assert_int_equal(mkdir(path, 01777), 0);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_perfmap_parse),
	    cmocka_unit_test(test_perfmap_trust_and_lookup),
	    cmocka_unit_test(test_perfmap_size_cap),
	};
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
