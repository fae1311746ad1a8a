/*
 * test_dump — `stacktop dump` against the waiter target: thread names,
 * frame order (leaf first), file:line of known functions, JSON checked by
 * python3's json module, JSON string escaping, and the error sentences.
 * After each dump no thread of the target may be stopped or traced. A
 * process with more threads than descriptors left is dumped in batches.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "runner.h"

#include "stacktop/app/dump.h"
#include "stacktop/proc/target.h"
#include "helpers.h"

static void assert_untouched(pid_t pid)
{
	pid_t tids[16];
	int n = 0;
	assert_int_equal(target_threads(pid, tids, 16, &n), 0);
	for (int i = 0; i < n; i++) {
		char st = 0;
		pid_t tracer = -1;
		for (int k = 0; k < 50 && target_state(pid, tids[i], &st) == 0 && st == 't'; k++)
			sleep_ms(2);
		assert_int_equal(target_tracer(tids[i], &tracer), 0);
		assert_int_equal(tracer, 0);
		assert_true(st != 'T' && st != 't');
	}
}

/* The text block of one thread, from "Thread TID \"name\"" to the next blank line. */
static char *thread_block(const char *text, const char *name, char *out, size_t size)
{
	char key[64];
	snprintf(key, sizeof(key), "\"%s\" (", name);
	const char *p = strstr(text, key);
	if (!p)
		return NULL;
	while (p > text && p[-1] != '\n')
		p--;
	const char *e = strstr(p, "\n\n");
	size_t len = e ? (size_t)(e - p) : strlen(p);
	if (len >= size)
		len = size - 1;
	memcpy(out, p, len);
	out[len] = '\0';
	return out;
}

/* Line number of the first line of waiter.c containing needle. */
static int source_line(const char *needle)
{
	return line_of("tests/targets/waiter.c", needle);
}

static void test_text(void **state)
{
	pid_t pid = spawn_waiter(150);
	char *buf = NULL, err[256] = "", blk[4096], want[128];
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	struct dump_opts o = {.pid = pid};
	assert_int_equal(dump_run(&o, out, err, sizeof(err)), 0);
	fclose(out);
	assert_untouched(pid);
	kill_reap(pid);
	if (getenv("DUMP_SHOW"))
		printf("%s", buf);

	snprintf(want, sizeof(want), "Process %d: " WAITER " 30\n", pid);
	assert_true(strncmp(buf, want, strlen(want)) == 0);
	/* Every thread, by name. */
	assert_non_null(thread_block(buf, "writer", blk, sizeof(blk)));
	assert_non_null(thread_block(buf, "locker1", blk, sizeof(blk)));
	assert_non_null(thread_block(buf, "locker2", blk, sizeof(blk)));

	/* The reader: I/O in read; leaf (#0) in libc, then read_pipe with its
	 * file:line, then the thread function. */
	assert_non_null(thread_block(buf, "reader", blk, sizeof(blk)));
	assert_non_null(strstr(blk, "(S, waiting: I/O in "));
	const char *f0 = strstr(blk, "    #0  0x");
	const char *rp = strstr(blk, " read_pipe (waiter.c:");
	const char *th = strstr(blk, " reader (waiter.c:");
	assert_non_null(f0);
	assert_non_null(rp);
	assert_non_null(th);
	assert_true(f0 < rp && rp < th);
	assert_non_null(strstr(f0, "[libc.so.6]"));
	snprintf(want, sizeof(want), " read_pipe (waiter.c:%d) [waiter]",
		 source_line("if (read(pipefd[0], buf, sizeof(buf)) < 0)"));
	assert_non_null(strstr(blk, want));

	/* The napper: sleep in nap. */
	assert_non_null(thread_block(buf, "napper", blk, sizeof(blk)));
	assert_non_null(strstr(blk, "(S, waiting: sleep in "));
	assert_non_null(strstr(blk, " nap (waiter.c:"));
	free(buf);
}

static void test_json(void **state)
{
	pid_t pid = spawn_waiter(150);
	char path[] = "/tmp/test_dump_XXXXXX", err[256] = "", cmd[2048], line[512] = "";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *out = fdopen(fd, "w");
	struct dump_opts o = {.pid = pid, .json = true};
	assert_int_equal(dump_run(&o, out, err, sizeof(err)), 0);
	fclose(out);
	assert_untouched(pid);
	kill_reap(pid);
	/* A real JSON parser reads it back; print what we check. */
	snprintf(
	    cmd, sizeof(cmd),
	    "python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); "
	    "t={x[\"name\"]:x for x in d[\"threads\"]}; "
	    "r=t[\"reader\"]; f=[x[\"function\"] for x in r[\"frames\"]]; "
	    "print(d[\"pid\"], len(d[\"threads\"]), r[\"wait\"], r[\"state\"], "
	    "t[\"napper\"][\"wait\"], t[\"locker1\"][\"syscall\"] is None or "
	    "isinstance(t[\"locker1\"][\"syscall\"], str), "
	    "f.index(\"read_pipe\") < f.index(\"reader\"), "
	    "[x for x in r[\"frames\"] if x[\"function\"]==\"read_pipe\"][0][\"file\"], "
	    "[x for x in r[\"frames\"] if x[\"function\"]==\"read_pipe\"][0][\"line\"] > 0)' %s",
	    path);
	FILE *p = popen(cmd, "r");
	if (!p)
		skip();
	char *got = fgets(line, sizeof(line), p);
	int rc = pclose(p);
	unlink(path);
	if (rc != 0 && !got)
		fail_msg("python3 could not parse the JSON");
	char want[128];
	snprintf(want, sizeof(want), "%d 5 I/O S sleep True True waiter.c True\n", pid);
	assert_string_equal(line, want);
}

static void test_json_string(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	dump_json_string(out, "a\"b\\c\n\x01\x1b[2J");
	fputc('|', out);
	dump_json_string(out, "caf\xc3\xa9 \xff\xfe ok"); /* valid é, invalid bytes */
	fputc('|', out);
	dump_json_string(out, "\xe2\x80\xae"
			      "evil"); /* RIGHT-TO-LEFT OVERRIDE */
	fputc('|', out);
	dump_json_string(out, NULL);
	fclose(out);
	assert_string_equal(buf, "\"a\\\"b\\\\c\\n\\u0001\\u001b[2J\"|"
				 "\"caf\xc3\xa9 \\ufffd\\ufffd ok\"|"
				 "\"\\u202eevil\"|null");
	free(buf);
}

static void test_errors(void **state)
{
	char err[256];
	struct dump_opts o = {.pid = 999999999};
	FILE *out = fopen("/dev/null", "w");
	assert_int_equal(dump_run(&o, out, err, sizeof(err)), -ESRCH);
	assert_string_equal(err, "no process with PID 999999999 (is it still running?).");

	/* Already traced: the tracer's pid is named. */
	pid_t victim, tracer;
	char want[256];
	spawn_traced(&victim, &tracer);
	o.pid = victim;
	assert_int_equal(dump_run(&o, out, err, sizeof(err)), -EBUSY);
	snprintf(want, sizeof(want), "process %d is already traced by pid %d", victim, tracer);
	assert_true(strncmp(err, want, strlen(want)) == 0);
	kill_reap(tracer);
	kill_reap(victim);
	fclose(out);
}

/* Descriptors for a few threads at a time (the wall sampler keeps some
 * open per thread): every thread is dumped all the same, in batches. */
static void test_fds_batches(void **state)
{
	enum { N = 60 };
	pid_t pid = spawn_parked(N);
	struct rlimit old, low;
	char *buf = NULL, err[256] = "";
	size_t len = 0;
	assert_true(pid > 0);
	FILE *out = open_memstream(&buf, &len);
	int probe = open("/", O_PATH | O_CLOEXEC);
	assert_true(probe >= 0);
	close(probe);
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	low = old;
	low.rlim_cur = (rlim_t)probe + 64; /* a sampler's reserve, and ~10 threads */
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	struct dump_opts o = {.pid = pid};
	int rc = dump_run(&o, out, err, sizeof(err));
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
	fclose(out);
	assert_int_equal(rc, 0);
	assert_untouched(pid);
	kill_reap(pid);
	int threads = 0;
	for (const char *p = buf; (p = strstr(p, "\nThread ")); p++)
		threads++;
	threads += strncmp(buf, "Thread ", 7) == 0;
	assert_int_equal(threads, N);
	free(buf);
}

TEST_MAIN(NULL, NULL, TEST(test_fds_batches), TEST(test_text), TEST(test_json),
	  TEST(test_json_string), TEST(test_errors))
