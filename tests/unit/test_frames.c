/* Unit tests for frames: interning live, kernel, wait and named frames;
 * inline chains (build/targets/inltest);
 * names at once but file:line only on request (a real function of this
 * binary, built with -g); references, reclaiming and id reuse; the window's
 * references. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "runner.h"

#include "stacktop/symbols/frames.h"
#include "stacktop/unwind/space.h"
#include "stacktop/symbols/sym.h"
#include "stacktop/proc/waits.h"
#include "stacktop/model/window.h"

#define SEC 1000000000ull

/* A function of ours with known lines, for the lazy line lookup. */
static const int target_line = __LINE__ + 1;
static int __attribute__((noinline)) frames_test_target(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x * 3 + 1;
}

static void test_live_intern(void **state)
{
	struct sym *sy;
	struct frames *fr;
	struct space s = {0}, other;
	uint64_t pc = (uint64_t)(uintptr_t)frames_test_target;
	int64_t a, b, c, k1, k2, k3;

	assert_int_equal(sym_new(&sy), 0);
	assert_int_equal(frames_new(sy, &fr), 0);
	assert_int_equal(space_load(&s, getpid()), 0);
	a = frames_user(fr, &s, pc);
	b = frames_user(fr, &s, pc);
	assert_true(a >= 0);
	assert_int_equal(a, b); /* same pc, same id */
	c = frames_user(fr, &s, pc + 1);
	assert_true(c >= 0 && c != a);
	/* The same pc in another process is another frame. */
	other = s;
	other.pid = s.pid + 1;
	b = frames_user(fr, &other, pc);
	assert_true(b >= 0 && b != a && b != c);
	assert_int_equal(frames_get(fr, (uint32_t)b)->pid, s.pid + 1);
	/* Kernel: by (pid, pc) too, and never the user frame of that pc. */
	k1 = frames_kernel(fr, 10, 0xffffffff81000000ull);
	k2 = frames_kernel(fr, 10, 0xffffffff81000000ull);
	k3 = frames_kernel(fr, 11, 0xffffffff81000000ull);
	assert_true(k1 >= 0);
	assert_int_equal(k1, k2);
	assert_true(k3 >= 0 && k3 != k1);
	assert_true(frames_get(fr, (uint32_t)k1)->kernel);
	assert_true(frames_get(fr, (uint32_t)k1)->has_sym);
	assert_true(frames_preset(fr, 10, 0xffffffff81000000ull, false, NULL, false) != k1);
	assert_int_equal(frames_span(fr), 6);
	assert_int_equal(frames_live(fr), 6);
	assert_null(frames_get(fr, 6));
	assert_null(frames_line(fr, 99));
	frames_free(fr);
	space_release(&s);
	sym_free(sy);
}

/* Named at once (function, module), file:line only when asked, and then
 * even after the space that named it is gone. */
static void test_lazy_line(void **state)
{
	struct sym *sy;
	struct frames *fr;
	struct space s = {0};
	uint64_t pc = (uint64_t)(uintptr_t)frames_test_target;
	const struct frame *f;
	int64_t id;

	assert_int_equal(frames_test_target(1), 4);
	assert_int_equal(sym_new(&sy), 0);
	assert_int_equal(frames_new(sy, &fr), 0);
	assert_int_equal(space_load(&s, getpid()), 0);
	id = frames_user(fr, &s, pc);
	assert_true(id >= 0);
	f = frames_get(fr, (uint32_t)id);
	assert_true(f->has_sym);
	assert_false(f->has_line);
	assert_false(f->kernel);
	assert_string_equal(f->sym.func, "frames_test_target");
	assert_string_equal(f->sym.module, "test_frames");
	assert_int_equal(f->sym.offset, 0);
	assert_null(f->sym.file);
	assert_int_equal(f->sym.line, 0);
	space_release(&s); /* the module stays referenced by the frame */
	f = frames_line(fr, (uint32_t)id);
	assert_non_null(f);
	assert_true(f->has_line);
	assert_non_null(f->sym.file);
	assert_string_equal(f->sym.file, "test_frames.c");
	assert_in_range(f->sym.line, target_line, target_line + 4);
	assert_string_equal(f->sym.func, "frames_test_target"); /* names kept */
	/* Cached: the same answer, and frames_get sees it too. */
	assert_ptr_equal(frames_line(fr, (uint32_t)id), f);
	assert_true(frames_get(fr, (uint32_t)id)->has_line);
	/* A pc outside every mapping stays unnamed (named again once the
	 * maps change: it may be code mapped since), and has no line. */
	assert_int_equal(space_load(&s, getpid()), 0);
	id = frames_user(fr, &s, 0x10);
	assert_true(id >= 0);
	assert_false(frames_get(fr, (uint32_t)id)->has_sym);
	assert_false(frames_get(fr, (uint32_t)id)->has_line);
	f = frames_line(fr, (uint32_t)id);
	assert_true(f->has_line);
	assert_null(f->sym.file);
	assert_int_equal(f->sym.line, 0);
	space_release(&s);
	frames_free(fr);
	sym_free(sy);
}

static void test_wait(void **state)
{
	struct frames *fr;
	int64_t lock, io, again;
	const struct frame *f;

	assert_int_equal(frames_new(NULL, &fr), 0);
	lock = frames_wait(fr, SAMPLE_WAIT_LOCK);
	io = frames_wait(fr, SAMPLE_WAIT_IO);
	again = frames_wait(fr, SAMPLE_WAIT_LOCK);
	assert_true(lock >= 0 && io >= 0 && lock != io);
	assert_int_equal(again, lock);
	assert_int_equal(frames_wait(fr, SAMPLE_WAIT_NONE), -EINVAL);
	assert_int_equal(frames_wait(fr, SAMPLE_WAIT_COUNT), -EINVAL);
	f = frames_get(fr, (uint32_t)lock);
	assert_int_equal(f->pid, -1);
	assert_int_equal(f->pc, SAMPLE_WAIT_LOCK);
	assert_int_equal(f->wait, SAMPLE_WAIT_LOCK);
	assert_true(f->has_sym);
	assert_string_equal(f->sym.func, waits_frame_name(SAMPLE_WAIT_LOCK));
	assert_string_equal(f->sym.module, "[wait]");
	/* A real frame of pid -1 at pc 1..5 cannot exist; a user frame of
	 * another pid with pc = the kind is another frame. */
	assert_true(frames_preset(fr, 7, SAMPLE_WAIT_LOCK, false, NULL, false) != lock);
	/* No line to look up: marked looked up, nothing found. */
	f = frames_line(fr, (uint32_t)io);
	assert_true(f->has_line);
	assert_null(f->sym.file);
	frames_free(fr);
}

static void test_named(void **state)
{
	struct frames *fr;
	char func[32], file[32];
	struct sym_info si = {.func = func, .module = "app", .file = file, .line = 12};
	int64_t a, b, c, d, k;
	const struct frame *f;

	assert_int_equal(frames_new(NULL, &fr), 0);
	snprintf(func, sizeof(func), "handle");
	snprintf(file, sizeof(file), "server.c");
	a = frames_named(fr, &si);
	assert_true(a >= 0);
	/* The strings were copied: changing ours changes nothing there. */
	snprintf(func, sizeof(func), "other");
	f = frames_get(fr, (uint32_t)a);
	assert_string_equal(f->sym.func, "handle");
	assert_string_equal(f->sym.file, "server.c");
	assert_int_equal(f->sym.line, 12);
	assert_true(f->has_sym && f->has_line);
	assert_int_equal(f->pid, 0);
	/* By content: equal strings in other buffers are the same frame. */
	snprintf(func, sizeof(func), "handle");
	b = frames_named(fr, &si);
	assert_int_equal(b, a);
	si.line = 13;
	c = frames_named(fr, &si);
	assert_true(c >= 0 && c != a);
	si.line = 12;
	si.file = NULL;
	d = frames_named(fr, &si);
	assert_true(d >= 0 && d != a && d != c);
	si.kernel = true;
	k = frames_named(fr, &si);
	assert_true(k >= 0 && k != d);
	assert_true(frames_get(fr, (uint32_t)k)->kernel);
	/* Unique pcs: a pprof export gives each its own location address. */
	assert_true(frames_get(fr, (uint32_t)a)->pc != frames_get(fr, (uint32_t)c)->pc);
	assert_ptr_equal(frames_line(fr, (uint32_t)a), frames_get(fr, (uint32_t)a));
	assert_int_equal(frames_live(fr), 4);
	frames_free(fr);
}

/* Unreferenced frames go, their ids come back, the rest stay findable. */
static void test_refs(void **state)
{
	struct frames *fr;
	struct sym_info si = {.func = "f", .module = "m"};
	int64_t ids[200], id;
	int i;

	assert_int_equal(frames_new(NULL, &fr), 0);
	for (i = 0; i < 200; i++) {
		ids[i] = frames_preset(fr, 1, 0x1000 + (uint64_t)i, false, &si, false);
		assert_int_equal(ids[i], i);
		frames_ref(fr, (uint32_t)ids[i]);
	}
	frames_ref(fr, 5);
	frames_unref(fr, 5);
	assert_non_null(frames_get(fr, 5)); /* one reference left */
	for (i = 0; i < 200; i += 2)
		frames_unref(fr, (uint32_t)ids[i]);
	assert_int_equal(frames_live(fr), 100);
	assert_int_equal(frames_span(fr), 200);
	assert_null(frames_get(fr, 0));
	assert_null(frames_get(fr, 198));
	assert_null(frames_line(fr, 0));
	frames_unref(fr, 0); /* not live: ignored */
	frames_ref(fr, 0);
	assert_null(frames_get(fr, 0));
	/* The survivors are found again under their ids... */
	for (i = 1; i < 200; i += 2)
		assert_int_equal(frames_preset(fr, 1, 0x1000 + (uint64_t)i, false, NULL, false),
				 ids[i]);
	/* ...and new frames reuse the freed ids before growing. */
	for (i = 0; i < 100; i++) {
		id = frames_preset(fr, 2, 0x1000 + (uint64_t)i, false, &si, false);
		assert_true(id >= 0 && id < 200 && id % 2 == 0);
		assert_int_equal(frames_get(fr, (uint32_t)id)->pid, 2);
	}
	assert_int_equal(frames_span(fr), 200);
	assert_int_equal(frames_live(fr), 200);
	id = frames_preset(fr, 2, 0x9999, false, NULL, false);
	assert_int_equal(id, 200);
	/* A reclaimed named frame is interned afresh. */
	id = frames_named(fr, &si);
	frames_ref(fr, (uint32_t)id);
	frames_unref(fr, (uint32_t)id);
	assert_null(frames_get(fr, (uint32_t)id));
	assert_int_equal(frames_named(fr, &si), id); /* the freed id again */
	assert_non_null(frames_get(fr, (uint32_t)id));
	frames_free(fr);
}

/* The window holds one reference per trie node and drops them when freed. */
static void test_window_refs(void **state)
{
	struct frames *fr;
	struct window *w;
	struct sym_info si = {.func = "g", .module = "m"};
	uint32_t a, b, c;

	assert_int_equal(frames_new(NULL, &fr), 0);
	assert_int_equal(window_new(60, SEC, fr, &w), 0);
	a = (uint32_t)frames_preset(fr, 1, 0x10, false, &si, false);
	b = (uint32_t)frames_preset(fr, 1, 0x20, false, &si, false);
	c = (uint32_t)frames_wait(fr, SAMPLE_WAIT_SLEEP);
	assert_int_equal(window_add(w, SEC, 1, (uint32_t[]){a, b, c}, 3, 1), 0);
	assert_int_equal(window_add(w, SEC, 1, (uint32_t[]){a, b}, 2, 1), 0);
	assert_int_equal(window_add(w, SEC, 1, (uint32_t[]){b, a}, 2, 1), 0);
	assert_ptr_equal(window_frames(w), fr);
	/* Frames not live are refused. */
	assert_int_equal(window_add(w, SEC, 1, (uint32_t[]){77}, 1, 1), -EINVAL);
	assert_int_equal(frames_live(fr), 3);
	window_free(w);
	assert_int_equal(frames_live(fr), 0); /* every frame was only the window's */
	assert_null(frames_get(fr, a));
	frames_free(fr);
}

/* The inlining target (tests/targets/inltest.c), next to this binary. */
static void inltest_path(char *buf, size_t size)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	assert_true(n > 0);
	exe[n] = '\0';
	*strrchr(exe, '/') = '\0';
	snprintf(buf, size, "%.3900s/../targets/inltest", exe);
	if (access(buf, X_OK)) {
		print_error("missing %s: run make targets\n", buf);
		fail();
	}
}

/* A pc in inlined code is its inline levels then its function, innermost
 * first, the chain asked of sym once; an inline level reclaimed comes
 * back with the same names; the function's line is the call's. */
static void test_inline_chain(void **state)
{
	char path[4096];
	struct sym_info chain[SYM_INLINE_MAX], si;
	struct module *mod;
	struct mapping m = {0};
	struct space s = {0};
	struct frames *fr;
	struct sym *sy;
	uint32_t ids[SYM_INLINE_MAX + 1], again[SYM_INLINE_MAX + 1];
	uint64_t pc = 0, a;
	const struct frame *f;
	int n, k;

	(void)state;
	inltest_path(path, sizeof(path));
	assert_int_equal(sym_new(&sy), 0);
	assert_int_equal(frames_new(sy, &fr), 0);
	assert_int_equal(space_module_open_path(path, &mod), 0);
	/* One mapping at bias 0: pcs are ELF addresses. */
	m = (struct mapping){.start = 0, .end = 1ull << 40, .mod = mod, .path = path};
	s = (struct space){.pid = 0, .generation = 1, .maps = &m, .nmaps = 1};
	for (a = 0x1000; a < 0x3000 && !pc; a++) {
		if (sym_resolve_module(sy, mod, "", a, false, &si) || !si.func ||
		    strcmp(si.func, "inl_outer"))
			continue;
		assert_int_equal(sym_inline_module(sy, mod, "", a, chain, SYM_INLINE_MAX, &n), 0);
		if (n == 1 && !strcmp(chain[0].func, "inl_hot"))
			pc = a;
	}
	assert_true(pc != 0);
	n = frames_user_chain(fr, &s, pc, ids, SYM_INLINE_MAX + 1);
	assert_int_equal(n, 2);
	f = frames_get(fr, ids[0]);
	assert_string_equal(f->sym.func, "inl_hot");
	assert_true(f->sym.inlined);
	assert_true(f->has_line); /* the chain came with its line */
	assert_string_equal(f->sym.file, "inltest.c");
	assert_int_equal(f->pc, pc);
	f = frames_get(fr, ids[1]);
	assert_string_equal(f->sym.func, "inl_outer");
	assert_false(f->sym.inlined);
	assert_int_equal(ids[1], frames_user(fr, &s, pc)); /* the level-0 frame is frames_user's */
	/* Again: the same ids. */
	assert_int_equal(frames_user_chain(fr, &s, pc, again, SYM_INLINE_MAX + 1), 2);
	assert_memory_equal(ids, again, 2 * sizeof(ids[0]));
	/* Too little room: the function itself is kept, inline levels cut. */
	assert_int_equal(frames_user_chain(fr, &s, pc, again, 1), 1);
	assert_int_equal(again[0], ids[1]);
	/* The inline level aged out of the window: named again, the same. */
	frames_ref(fr, ids[0]);
	frames_unref(fr, ids[0]);
	assert_null(frames_get(fr, ids[0]));
	assert_int_equal(frames_user_chain(fr, &s, pc, again, SYM_INLINE_MAX + 1), 2);
	assert_int_equal(again[1], ids[1]);
	f = frames_get(fr, again[0]);
	assert_non_null(f);
	assert_string_equal(f->sym.func, "inl_hot");
	assert_true(f->sym.inlined);
	/* The function's line is the call of inl_hot, not a line inside it. */
	k = frames_get(fr, again[0])->sym.line;
	f = frames_line(fr, ids[1]);
	assert_true(f->sym.line > 0 && f->sym.line != k);
	/* The frames hold their own names: sym's next call leaves them be,
	 * and the last frame using one frees it (a dlopen loop of new names
	 * does not grow the table). */
	assert_int_equal(sym_resolve_module(sy, mod, "", 0x10, true, &si), 0);
	assert_int_equal(sym_inline_module(sy, mod, "", pc, chain, SYM_INLINE_MAX, &n), 0);
	assert_string_equal(frames_get(fr, ids[1])->sym.func, "inl_outer");
	assert_string_equal(frames_get(fr, ids[1])->sym.module, "inltest");
	assert_string_equal(frames_get(fr, again[0])->sym.func, "inl_hot");
	assert_true(frames_names(fr) > 0);
	frames_ref(fr, ids[1]);
	frames_ref(fr, again[0]);
	frames_unref(fr, ids[1]);
	assert_true(frames_names(fr) > 0); /* inl_hot's frame still holds its own */
	frames_unref(fr, again[0]);
	assert_int_equal(frames_names(fr), 0);
	frames_free(fr);
	space_module_put(mod);
	sym_free(sy);
}

static int live_lookup(void *ctx, uint64_t pc, struct sym_info *out)
{
	return sym_perfmap_lookup(ctx, getpid(), pc, out);
}

/* JIT code met before its perf map has it (a JVM's code compiled after
 * its map): unnamed, and named in place once the map has it. */
static void test_jit_rename(void **state)
{
	struct sym *sy;
	struct frames *fr;
	struct space s = {0};
	char path[64];
	void *code = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t pc = (uint64_t)(uintptr_t)code + 0x10;
	FILE *f;

	(void)state;
	assert_true(code != MAP_FAILED);
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	unlink(path);
	assert_int_equal(sym_new(&sy), 0);
	assert_int_equal(frames_new(sy, &fr), 0);
	assert_int_equal(space_load(&s, getpid()), 0);
	int64_t id = frames_user(fr, &s, pc);
	int64_t own = frames_user(fr, &s, (uint64_t)(uintptr_t)frames_test_target);
	assert_true(id >= 0 && own >= 0);
	assert_true(frames_jit_unnamed(fr, (uint32_t)id));
	assert_false(frames_jit_unnamed(fr, (uint32_t)own));
	assert_null(frames_get(fr, (uint32_t)id)->sym.func);
	assert_int_equal(frames_rename_jit(fr, getpid(), live_lookup, sy), 0); /* no map yet */
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%" PRIx64 " 100 LJvmHot;stacktopLateSpin\n", pc - 0x10);
	fclose(f);
	usleep(250000); /* a miss has the map checked again a tenth of a second on */
	assert_int_equal(frames_rename_jit(fr, getpid() + 1, live_lookup, sy), 0); /* not its pid */
	assert_int_equal(frames_rename_jit(fr, getpid(), live_lookup, sy), 1);
	const struct frame *fm = frames_get(fr, (uint32_t)id);
	assert_string_equal(fm->sym.func, "LJvmHot;stacktopLateSpin");
	assert_true(fm->sym.jit);
	assert_false(frames_jit_unnamed(fr, (uint32_t)id));
	assert_int_equal(frames_rename_jit(fr, getpid(), live_lookup, sy), 0); /* once */
	unlink(path);
	space_release(&s);
	frames_free(fr);
	sym_free(sy);
	munmap(code, 4096);
}

/* A Python function's frame: by content (line included), its own kind,
 * its names counted and given back with the last frame using them. */
static void test_script(void **state)
{
	struct frames *fr;
	char func[32];
	struct sym_info si = {.func = func, .module = "app.py", .file = "app.py", .line = 7};
	int64_t a, b, c, n;

	assert_int_equal(frames_new(NULL, &fr), 0);
	snprintf(func, sizeof(func), "Handler.get");
	a = frames_script(fr, FRAME_LANG_PYTHON, &si);
	b = frames_script(fr, FRAME_LANG_PYTHON, &si);
	assert_true(a >= 0);
	assert_int_equal(a, b);
	assert_int_equal(frames_get(fr, (uint32_t)a)->lang, FRAME_LANG_PYTHON);
	assert_string_equal(frames_get(fr, (uint32_t)a)->sym.func, "Handler.get");
	assert_true(frames_get(fr, (uint32_t)a)->has_line);
	si.line = 8;
	c = frames_script(fr, FRAME_LANG_PYTHON, &si);
	assert_true(c >= 0 && c != a);
	/* A saved profile's frame of the same names is another frame. */
	n = frames_named(fr, &si);
	assert_true(n >= 0 && n != c);
	assert_int_equal(frames_get(fr, (uint32_t)n)->lang, FRAME_LANG_NATIVE);
	assert_int_equal(frames_names(fr), 2); /* Handler.get, app.py */
	frames_ref(fr, (uint32_t)a);
	frames_ref(fr, (uint32_t)c);
	frames_unref(fr, (uint32_t)c);
	assert_int_equal(frames_names(fr), 2); /* a still holds them */
	frames_unref(fr, (uint32_t)a);
	assert_int_equal(frames_names(fr), 0);
	frames_free(fr);
}

TEST_MAIN(NULL, NULL, TEST(test_jit_rename), TEST(test_live_intern), TEST(test_lazy_line),
	  TEST(test_inline_chain), TEST(test_wait), TEST(test_named), TEST(test_refs),
	  TEST(test_window_refs), TEST(test_script))
