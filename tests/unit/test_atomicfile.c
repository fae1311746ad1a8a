/* Unit tests for atomicfile: what check refuses (symlink, existing file
 * without force, a directory even with force), that write gives the exact
 * mode, never replaces a file that appeared after the check unless forced,
 * replaces with force, and leaves nothing behind when it fails. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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

#include "stacktop/formats/atomicfile.h"

static char dir[64];

static int setup(void **state)
{
	snprintf(dir, sizeof(dir), "/tmp/stacktop-atomicfile-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd);
}

/* Entries in dir (a temporary file left over would show). */
static int entries(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.' || (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."));
	closedir(d);
	return n;
}

static void slurp(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	assert_true(fd >= 0);
	n = read(fd, buf, size - 1);
	assert_true(n >= 0);
	buf[n] = '\0';
	close(fd);
}

static void test_check(void **state)
{
	char path[128], link[128], err[256];

	snprintf(path, sizeof(path), "%s/out", dir);
	snprintf(link, sizeof(link), "%s/link", dir);
	assert_int_equal(atomicfile_check(path, false, err, sizeof(err)), 0);
	assert_int_equal(atomicfile_check("", false, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "no output file given.");
	assert_int_equal(atomicfile_write(path, "x", 1, false, 0, err, sizeof(err)), 0);
	assert_int_equal(atomicfile_check(path, false, err, sizeof(err)), -EEXIST);
	assert_non_null(strstr(err, "exists; use --force to overwrite it."));
	assert_int_equal(atomicfile_check(path, true, err, sizeof(err)), 0);
	assert_int_equal(symlink(path, link), 0);
	assert_int_equal(atomicfile_check(link, true, err, sizeof(err)), -ELOOP);
	assert_non_null(strstr(err, "is a symbolic link"));
	assert_int_equal(atomicfile_check(dir, true, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "is not a regular file"));
}

static void test_write(void **state)
{
	char path[128], err[256], buf[64];
	struct stat st;

	snprintf(path, sizeof(path), "%s/w", dir);
	assert_int_equal(atomicfile_write(path, "first", 5, false, 0640, err, sizeof(err)), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0640); /* exactly, whatever the umask */
	/* a file that is there by now is not replaced without force */
	assert_int_equal(atomicfile_write(path, "second", 6, false, 0, err, sizeof(err)), -EEXIST);
	assert_non_null(strstr(err, "exists; use --force"));
	slurp(path, buf, sizeof(buf));
	assert_string_equal(buf, "first");
	assert_int_equal(atomicfile_write(path, "second", 6, true, 0, err, sizeof(err)), 0);
	slurp(path, buf, sizeof(buf));
	assert_string_equal(buf, "second");
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600); /* 0: 0600 */
	assert_int_equal(entries(), 1);
}

static void test_fail_leaves_nothing(void **state)
{
	char path[128], err[256];

	/* a directory that does not exist: the temporary file cannot be made */
	snprintf(path, sizeof(path), "%s/no/such/out", dir);
	assert_true(atomicfile_write(path, "x", 1, false, 0, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "cannot create"));
	/* disk full: /dev/full says ENOSPC to every write */
	int fd = open("/dev/full", O_WRONLY);
	if (fd >= 0) {
		assert_int_equal(atomicfile_write_all(fd, "x", 1), -ENOSPC);
		close(fd);
	}
	assert_int_equal(entries(), 0);
}

TEST_MAIN(NULL, NULL, TEST_FX(test_check), TEST_FX(test_write), TEST_FX(test_fail_leaves_nothing))
