/*
 * test_record — `stacktop record`'s checks before sampling: the format
 * from --format or the file name, an existing file refused without
 * --force, and the progress line.
 */
#include <errno.h>
#include <fcntl.h>
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

#include "stacktop/app/record.h"

static void assert_format(const char *output, const char *format, enum export_format want)
{
	enum export_format f = (enum export_format) - 1;
	char err[256] = "";

	assert_int_equal(record_format(output, format, &f, err, sizeof(err)), 0);
	assert_int_equal(f, want);
	assert_string_equal(err, "");
}

static void test_format_from_name(void **state)
{
	assert_format("out.pb.gz", NULL, EXPORT_PPROF);
	assert_format("out.pprof", NULL, EXPORT_PPROF);
	assert_format("out.pb", NULL, EXPORT_PPROF);
	assert_format("/tmp/x/out.folded", NULL, EXPORT_FOLDED);
	assert_format("out.txt", NULL, EXPORT_FOLDED);
	assert_format("out.json", NULL, EXPORT_SPEEDSCOPE);
	assert_format("out.speedscope.json", NULL, EXPORT_SPEEDSCOPE);
}

static void test_format_given(void **state)
{
	/* --format wins over the name. */
	assert_format("out.dat", "folded", EXPORT_FOLDED);
	assert_format("out.json", "pprof", EXPORT_PPROF);
	assert_format("out.folded", "speedscope", EXPORT_SPEEDSCOPE);
}

static void test_format_unknown_name(void **state)
{
	enum export_format f;
	char err[256] = "";

	assert_int_equal(record_format("profile.dat", NULL, &f, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "'profile.dat'"));
	assert_non_null(strstr(err, "--format"));
	assert_non_null(strstr(err, "folded, pprof or speedscope"));
	assert_int_equal(err[strlen(err) - 1], '.');
}

/* An explicit --format that is no format: the sentence names it, and
 * does not blame the file's name (which was not used). */
static void test_format_bad_given(void **state)
{
	enum export_format f;
	char err[256] = "";

	assert_int_equal(record_format("out.pb.gz", "flame", &f, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "'flame'"));
	assert_non_null(strstr(err, "--format"));
	assert_null(strstr(err, "out.pb.gz"));
	assert_int_equal(record_check("out.pb.gz", "flame", true, err, sizeof(err)), -EINVAL);
}

static void test_check(void **state)
{
	char dir[] = "/tmp/test_record.XXXXXX", path[128], link[128], err[256] = "";
	int fd;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/out.folded", dir);
	snprintf(link, sizeof(link), "%s/dangling.pb.gz", dir);
	/* Not there yet: fine either way. */
	assert_int_equal(record_check(path, NULL, false, err, sizeof(err)), 0);
	assert_int_equal(record_check(path, NULL, true, err, sizeof(err)), 0);
	fd = open(path, O_CREAT | O_WRONLY | O_EXCL, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(record_check(path, NULL, false, err, sizeof(err)), -EEXIST);
	assert_non_null(strstr(err, path));
	assert_non_null(strstr(err, "--force"));
	err[0] = '\0';
	assert_int_equal(record_check(path, NULL, true, err, sizeof(err)), 0);
	/* The name is judged before the file: a bad name is a usage error. */
	assert_int_equal(record_check(path, "bogus", false, err, sizeof(err)), -EINVAL);
	/* A symbolic link, even one to nothing, is there. */
	assert_int_equal(symlink("/nonexistent/target", link), 0);
	assert_int_equal(record_check(link, NULL, false, err, sizeof(err)), -EEXIST);
	unlink(link);
	unlink(path);
	rmdir(dir);
}

static void test_progress_text(void **state)
{
	char buf[128];

	record_progress_text(42, 12.2, 1188, 0, buf, sizeof(buf));
	assert_string_equal(buf, "recording pid 42: 12s, 1,188 samples, lost 0");
	record_progress_text(7, 0, 0, 3, buf, sizeof(buf));
	assert_string_equal(buf, "recording pid 7: 0s, 0 samples, lost 3");
	record_progress_text(4242, 3600, 1234567, 12, buf, 16);
	assert_string_equal(buf, "recording pid 4");
}

TEST_MAIN(NULL, NULL, TEST(test_format_from_name), TEST(test_format_given),
	  TEST(test_format_unknown_name), TEST(test_format_bad_given), TEST(test_check),
	  TEST(test_progress_text))
