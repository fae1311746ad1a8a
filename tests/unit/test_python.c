/*
 * test_python — the Python reader against every CPython found here
 * (Debian's /usr/bin/python3.11, pyenv's 3.8–3.13 under /root/.pyenv)
 * running tests/targets/pystack.py, whose frames and lines are known; and
 * against a made-up 3.11 memory image, where a code object's address is
 * reused by another one.
 */
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "runner.h"
#include "stacktop/runtime/pylayout.h"
#include "stacktop/runtime/python.h"
#include "stacktop/unwind/space.h"

#define SCRIPT "tests/targets/pystack.py"

/* The line of SCRIPT that carries "# at:mark". */
static int mark_line(const char *mark)
{
	char line[512], want[64];
	FILE *f = fopen(SCRIPT, "r");
	int n = 0, found = 0;

	assert_non_null(f);
	snprintf(want, sizeof(want), "# at:%s", mark);
	while (fgets(line, sizeof(line), f)) {
		n++;
		if (strstr(line, want)) {
			found = n;
			break;
		}
	}
	fclose(f);
	assert_true(found > 0);
	return found;
}

/* The read end of the running target's stdout: kept open while it runs
 * (closed early, its print of the newline after "ready" would fail and
 * end its main thread). */
static int target_out = -1;

static void stop_target(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(target_out);
	target_out = -1;
}

/* Start python on SCRIPT; its pid once it printed "ready", or -1. */
static pid_t start_target(const char *python)
{
	int fd[2];
	pid_t pid;
	char buf[64];
	size_t got = 0;

	assert_int_equal(pipe(fd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(fd[1], 1);
		close(fd[0]);
		execl(python, python, SCRIPT, (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	for (int i = 0; i < 300 && got < sizeof(buf) - 1; i++) {
		struct pollfd p = {.fd = fd[0], .events = POLLIN};
		ssize_t r;

		if (poll(&p, 1, 100) <= 0)
			continue;
		if ((r = read(fd[0], buf + got, sizeof(buf) - 1 - got)) <= 0)
			break;
		got += (size_t)r;
		buf[got] = '\0';
		if (strstr(buf, "ready\n"))
			break;
	}
	target_out = fd[0];
	buf[got] = '\0';
	if (!strstr(buf, "ready\n")) {
		stop_target(pid);
		return -1;
	}
	return pid;
}

static bool ends_with(const char *s, const char *tail)
{
	size_t a = strlen(s), b = strlen(tail);

	return a >= b && !strcmp(s + a - b, tail);
}

static void expect(const struct python_frame *f, const char *func, const char *mark)
{
	if (strcmp(f->func, func) || !ends_with(f->file, "pystack.py") ||
	    f->line != mark_line(mark))
		fail_msg("frame %s (%s:%d), expected %s (pystack.py:%d)", f->func, f->file, f->line,
			 func, mark_line(mark));
}

/* The reader names every thread of pystack.py under python (3.minor). */
static void check_python(const char *python, int minor)
{
	pid_t pid = start_target(python);
	struct space sp = {0};
	struct python *py = NULL;
	struct python_thread t[16];
	struct python_frame f[64];
	struct python_state st;
	int n = 0, k = 0;
	unsigned flags;
	bool holder = false, waiter = false;
	bool qual = minor >= 11; /* co_qualname */

	if (pid < 0)
		fail_msg("%s did not start %s", python, SCRIPT);
	print_message("      %s (3.%d)\n", python, minor);
	assert_int_equal(space_load(&sp, pid), 0);
	assert_int_equal(python_open(&sp, &py), 0);
	assert_int_equal(python_where(py)->minor, minor);
	assert_int_equal(python_where(py)->debug_offsets, minor >= 13);
	/* "ready" comes after the threads started; a loaded machine may
	 * still be slow to show them: polled, 10 s at most. */
	for (int i = 0; i < 100; i++) {
		assert_int_equal(python_threads(py, t, 16, &n), 0);
		if (n == 3)
			break;
		usleep(100000);
	}
	assert_int_equal(n, 3);
	assert_int_equal(python_state(py, &st), 0);
	assert_int_equal(st.nthreads, 3);
	assert_int_equal(st.gc, 0);

	/* The main thread: the chain, innermost first (it prints "ready"
	 * just before it goes down the chain: polled, 10 s at most). */
	for (int i = 0; i < 100; i++) {
		assert_int_equal(python_stack(py, pid, f, 64, &k, &flags), 0);
		if (k == 5 && !strcmp(f[0].func, qual ? "Chain.inner" : "inner"))
			break;
		usleep(100000);
	}
	assert_int_equal(flags, 0);
	assert_int_equal(k, 5);
	/* All three wait now: nobody holds the GIL (a thread just back from
	 * its wait may hold it a moment on a loaded box: polled, 10 s). */
	for (int i = 0; i < 100; i++) {
		assert_int_equal(python_state(py, &st), 0);
		if (!st.gil_tid)
			break;
		usleep(100000);
	}
	assert_int_equal(st.gil_tid, 0);
	expect(&f[0], qual ? "Chain.inner" : "inner", "inner");
	expect(&f[1], qual ? "Chain.middle" : "middle", "middle");
	expect(&f[2], "outer", "outer");
	expect(&f[3], "main", "main");
	assert_string_equal(f[4].func, "<module>");
	assert_true(f[4].entry);
	/* 3.8–3.10: one C call a frame; 3.11+: Python calls Python inline. */
	assert_int_equal(f[0].entry, minor <= 10);
	/* Again: every code object from the cache, checked. */
	uint64_t misses = python_get_stats(py)->code_misses;
	assert_int_equal(python_stack(py, pid, f, 64, &k, &flags), 0);
	assert_int_equal(k, 5);
	assert_int_equal(python_get_stats(py)->code_misses, misses);
	assert_true(python_get_stats(py)->code_hits >= 5);
	/* Room for two: the innermost two, and the cut said. */
	assert_int_equal(python_stack(py, pid, f, 2, &k, &flags), 0);
	assert_int_equal(k, 2);
	assert_true(flags & PYTHON_TRUNCATED);

	/* The holder asleep, the waiter on the lock (polled: a loaded
	 * machine may not have taken them there yet). */
	for (int round = 0; round < 100 && !(holder && waiter); round++) {
		holder = waiter = false;
		for (int i = 0; i < n; i++) {
			if (t[i].tid == pid)
				continue;
			assert_int_equal(python_stack(py, t[i].tid, f, 64, &k, &flags), 0);
			assert_true(k >= 2);
			assert_true(ends_with(f[k - 1].file, "threading.py"));
			holder |= !strcmp(f[0].func, "holder") && f[0].line == mark_line("holder");
			waiter |= !strcmp(f[0].func, "waiter") && f[0].line == mark_line("waiter");
		}
		if (!(holder && waiter))
			usleep(100000);
	}
	if (!(holder && waiter))
		fail_msg("holder at pystack.py:%d %s, waiter at :%d %s", mark_line("holder"),
			 holder ? "seen" : "not seen", mark_line("waiter"),
			 waiter ? "seen" : "not seen");
	/* A tid of no thread state. */
	assert_int_equal(python_stack(py, 1, f, 64, &k, &flags), -ENOENT);

	python_free(py);
	space_release(&sp);
	stop_target(pid);
}

static void test_every_cpython(void **state)
{
	glob_t g;
	int ran = 0;

	if (access("/usr/bin/python3.11", X_OK) == 0) {
		check_python("/usr/bin/python3.11", 11);
		ran++;
	}
	for (int minor = 8; minor <= 13; minor++) {
		char pat[128], exe[PATH_MAX];

		snprintf(pat, sizeof(pat), "/root/.pyenv/versions/3.%d.*", minor);
		if (glob(pat, 0, NULL, &g) != 0)
			continue;
		for (size_t i = 0; i < g.gl_pathc; i++) {
			snprintf(exe, sizeof(exe), "%s/bin/python3.%d", g.gl_pathv[i], minor);
			if (access(exe, X_OK) == 0) {
				check_python(exe, minor);
				ran++;
			}
		}
		globfree(&g);
	}
	if (!ran) {
		print_message("      no CPython 3.8-3.13 here: skipped\n");
		skip();
	}
}

/* ---- a made-up 3.11 process ---- */

#define BASE 0x100000ull
static uint8_t img[16384];

static int img_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	if (addr < BASE || addr - BASE > sizeof(img) || len > sizeof(img) - (addr - BASE))
		return -EFAULT;
	memcpy(buf, img + (addr - BASE), len);
	return 0;
}

static void put64(uint64_t at, int off, uint64_t v)
{
	memcpy(img + (at - BASE) + off, &v, 8);
}

static void put32(uint64_t at, int off, uint32_t v)
{
	memcpy(img + (at - BASE) + off, &v, 4);
}

/* An ASCII str at at. */
static void put_str(const struct pylayout *l, uint64_t at, uint64_t type, const char *s)
{
	put64(at, l->ob_type, type);
	put64(at, l->u_length, strlen(s));
	put32(at, l->u_state, 1u << 2 | 1u << 5 | 1u << 6); /* kind 1, compact, ascii */
	memcpy(img + (at - BASE) + l->u_ascii_size, s, strlen(s));
}

static void test_code_reuse(void **state)
{
	const struct pylayout *l = pylayout_find(3, 11);
	struct python_where w = {.major = 3,
				 .minor = 11,
				 .runtime = BASE,
				 .code_type = 0xc0de,
				 .str_type = 0x57,
				 .bytes_type = 0xb7};
	struct python_mem m = {img_read, NULL, NULL};
	uint64_t interp = BASE + 0x400, ts = BASE + 0x800, cframe = BASE + 0xc00,
		 frame = BASE + 0xd00, code = BASE + 0x1000, name1 = BASE + 0x2000,
		 name2 = BASE + 0x2100, file = BASE + 0x2200, table = BASE + 0x2300;
	struct python *py;
	struct python_frame f[4];
	int n;
	unsigned flags;
	/* One entry: a long form (code 14), line +3, 4 code units. */
	const uint8_t lt[] = {0x80 | 14 << 3 | 3, 6, 0, 1, 1};

	assert_non_null(l);
	memset(img, 0, sizeof(img));
	put64(BASE, l->rt_interp_head, interp);
	put64(interp, l->is_tstate_head, ts);
	put64(ts, l->ts_interp, interp);
	put64(ts, l->ts_native_thread_id, 42);
	put64(ts, l->ts_cframe, cframe);
	put64(cframe, l->cf_current_frame, frame);
	put64(frame, l->fr_code, code);
	put64(frame, l->fr_instr, code + (uint64_t)l->co_code_adaptive + 2);
	img[frame - BASE + (uint64_t)l->fr_is_entry] = 1;
	put64(code, l->ob_type, 0xc0de);
	put64(code, l->co_name, name1);
	put64(code, l->co_qualname, name1);
	put64(code, l->co_filename, file);
	put64(code, l->co_linetable, table);
	put32(code, l->co_firstlineno, 10);
	put_str(l, name1, 0x57, "first");
	put_str(l, name2, 0x57, "second");
	put_str(l, file, 0x57, "app.py");
	put64(table, l->ob_type, 0xb7);
	put64(table, l->b_size, sizeof(lt));
	memcpy(img + (table - BASE) + l->b_sval, lt, sizeof(lt));

	assert_int_equal(python_open_mem(l, &w, &m, 1, &py), 0);
	assert_int_equal(python_stack(py, 42, f, 4, &n, &flags), 0);
	assert_int_equal(n, 1);
	assert_string_equal(f[0].func, "first");
	assert_string_equal(f[0].file, "app.py");
	assert_int_equal(f[0].line, 13);
	assert_true(f[0].entry);
	/* The address now holds another code object: read again, not the
	 * cached name. */
	put64(code, l->co_qualname, name2);
	assert_int_equal(python_stack(py, 42, f, 4, &n, &flags), 0);
	assert_int_equal(n, 1);
	assert_string_equal(f[0].func, "second");
	assert_int_equal(python_get_stats(py)->code_stale, 1);
	/* Not a code object any more: the stack stops, torn, nameless. */
	put64(code, l->ob_type, 0xbad);
	assert_int_equal(python_stack(py, 42, f, 4, &n, &flags), 0);
	assert_int_equal(n, 0);
	assert_true(flags & PYTHON_TORN);
	/* A frame chain that loops ends. */
	put64(code, l->ob_type, 0xc0de);
	put64(frame, l->fr_previous, frame);
	assert_int_equal(python_stack(py, 42, f, 4, &n, &flags), 0);
	assert_int_equal(n, 4);
	assert_true(flags & PYTHON_TRUNCATED);
	python_free(py);
}

/* -X perf's trampolines: a copy of the template (3.12/3.13's `sub $8,%rsp;
 * call *%rcx; add $8,%rsp; ret`, or the frame-pointer form) is known by its
 * call's return address less one, with its frame; a pc elsewhere in it, a
 * copy that differs, or a template of another shape is not. */
static void test_trampoline(void **state)
{
	static const struct {
		const char *name, *code;
		size_t len;
		int32_t cfa, bp;
		int call_end;
	} cases[] = {
	    {"sub", "\x48\x83\xec\x08\xff\xd1\x48\x83\xc4\x08\xc3", 11, 16, 0, 6},
	    {"endbr64, sub", "\xf3\x0f\x1e\xfa\x48\x83\xec\x08\xff\xd1\x48\x83\xc4\x08\xc3", 15, 16,
	     0, 10},
	    {"push rbp", "\x55\x48\x89\xe5\xff\xd1\x5d\xc3", 8, 16, -16, 6},
	    {"unknown shape", "\x48\x83\xec\x08\xff\xd0\x48\x83\xc4\x08\xc3", 11, 0, 0, 6},
	};
	const struct pylayout *l = pylayout_find(3, 12);

	assert_non_null(l);
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		uint64_t tmpl = BASE + 0x100, copy = BASE + 0x1000, other = BASE + 0x2000;
		struct python_where w = {.major = 3,
					 .minor = 12,
					 .runtime = BASE,
					 .tramp_start = tmpl,
					 .tramp_end = tmpl + cases[c].len};
		struct python_mem m = {img_read, NULL, NULL};
		struct python *py;
		int32_t cfa = 0, bp = 1;
		bool want = cases[c].cfa != 0;

		memset(img, 0, sizeof(img));
		memcpy(img + (tmpl - BASE), cases[c].code, cases[c].len);
		memcpy(img + (copy - BASE), cases[c].code, cases[c].len);
		memcpy(img + (other - BASE), cases[c].code, cases[c].len);
		img[other - BASE + cases[c].len - 1] ^= 0xff;
		assert_int_equal(python_open_mem(l, &w, &m, 1, &py), 0);
		uint64_t pc = copy + (uint64_t)cases[c].call_end - 1;
		if (python_trampoline(py, pc, &cfa, &bp) != want)
			fail_msg("%s: the copy %s", cases[c].name, want ? "not known" : "known");
		if (want && (cfa != cases[c].cfa || bp != cases[c].bp))
			fail_msg("%s: frame %d/%d", cases[c].name, cfa, bp);
		/* Asked again: the same answer, from the cache. */
		assert_int_equal(python_trampoline(py, pc, NULL, NULL), want);
		assert_false(python_trampoline(py, pc + 1, NULL, NULL));
		assert_false(
		    python_trampoline(py, other + (uint64_t)cases[c].call_end - 1, NULL, NULL));
		python_free(py);
	}
}

TEST_MAIN(NULL, NULL, TEST(test_code_reuse), TEST(test_every_cpython), TEST(test_trampoline))
