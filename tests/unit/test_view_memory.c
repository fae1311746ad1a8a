/*
 * test_view_memory — the memory view drawn from a hand-made smaps and a
 * memhold: at 80x24 the split line, the growing file mapping as "file",
 * the anonymous row with its count, mappings sorted by growth; code paths
 * ranked by what they hold of the window, the churner (faults, nothing
 * held) below the leak, each named by its innermost frame outside libc
 * and its caller, a hostile path sanitized; the sampling note in the
 * title; the top holder sentence for the MEM alert; without a tracer, the
 * reason instead of the code paths.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "runner.h"

#include "stacktop/symbols/frames.h"
#include "stacktop/memory/memhold.h"
#include "stacktop/memory/memmap.h"
#include "stacktop/ui/view_memory.h"

#define SEC 1000000000ull
#define MIB (1ull << 20)

struct fx {
	struct frames *fr;
	struct memhold *h;
	struct memmap mm;
	struct grid g;
	struct view_memory_state st;
	struct view_header hdr;
};

static uint32_t frame(struct fx *fx, uint64_t pc, const char *mod, const char *func,
		      const char *file, int line)
{
	struct sym_info si = {.func = func, .module = mod, .file = file, .line = line};
	int64_t id = frames_preset(fx->fr, 4242, pc, false, &si, file != NULL);
	assert_true(id >= 0);
	return (uint32_t)id;
}

static void smaps(struct fx *fx, uint64_t t, unsigned anon_kb, unsigned file_kb)
{
	char buf[4096];
	int n = snprintf(
	    buf, sizeof(buf),
	    "7f0000000000-7f0010000000 rw-p 00000000 00:00 0\nRss: %u kB\n"
	    "7f0010000000-7f0010100000 rw-p 00000000 00:00 0\nRss: 4 kB\n"
	    "7f0020000000-7f0030000000 rw-s 00000000 08:01 77   /tmp/grow.dat\nRss: %u kB\n"
	    "7f0030000000-7f0030100000 r--p 00000000 08:01 78   /tmp/evil\x1b]0;x\x07.so\n"
	    "Rss: 100 kB\n"
	    "555500000000-555500100000 rw-p 00000000 00:00 0   [heap]\nRss: 300 kB\n",
	    anon_kb, file_kb);
	assert_int_equal(memmap_parse(&fx->mm, buf, (size_t)n, t), 0);
}

static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));
	assert_non_null(fx);
	assert_int_equal(frames_new(NULL, &fx->fr), 0);
	assert_int_equal(memhold_new(fx->fr, 60 * SEC, &fx->h), 0);
	memmap_init(&fx->mm, 4242, SEC);
	assert_int_equal(grid_init(&fx->g, 80, 24), 0);
	fx->hdr = (struct view_header){.pid = 4242,
				       .npids = 1,
				       .cmdline = "./memgrow",
				       .mode = "cpu",
				       .nthreads = 1,
				       .rate_hz = 99,
				       .window_s = 60,
				       .span_s = 20};
	uint32_t m = frame(fx, 0x1000, "memgrow", "main", "memgrow.c", 80);
	uint32_t put = frame(fx, 0x1100, "memgrow", "cache_put", "memgrow.c", 35);
	uint32_t req = frame(fx, 0x1200, "memgrow", "handle_request", "memgrow.c", 50);
	uint32_t mmap_ = frame(fx, 0x7000, "libc.so.6", "mmap64", NULL, 0);
	uint32_t leak[] = {m, put, mmap_}, churn[] = {m, req}, churn_map[] = {m, req, mmap_};
	int sl = memhold_stack(fx->h, leak, 3), sc = memhold_stack(fx->h, churn, 2);
	int scm = memhold_stack(fx->h, churn_map, 3);
	for (int i = 0; i < 20; i++) {
		uint64_t t = (uint64_t)(i + 1) * SEC;
		smaps(fx, t, 1000 + 2560 * (unsigned)i, 1024 * (unsigned)i);
		assert_int_equal(
		    memhold_map(fx->h, 0x7f0000000000 + (uint64_t)i * 2 * MIB, 2 * MIB, sl, t), 0);
		assert_int_equal(memhold_map(fx->h, 0x100000000, 32 * MIB, scm, t), 0);
		memhold_unmap(fx->h, 0x100000000, 32 * MIB);
		memhold_fault(fx->h, sc, 8192 * 64, t);
	}
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;
	view_memory_state_free(&fx->st);
	memhold_free(fx->h);
	memmap_free(&fx->mm);
	frames_free(fx->fr);
	grid_free(&fx->g);
	free(fx);
	return 0;
}

static const char *row(const struct grid *g, int y)
{
	static char b[4096];
	assert_true(grid_row_text(g, y, b, sizeof(b)) >= 0);
	return b;
}

static void dump(const struct grid *g)
{
	if (getenv("DUMP"))
		for (int y = 0; y < g->h; y++)
			printf("|%s\n", row(g, y));
}

static struct view_memory_input input(struct fx *fx, bool traced)
{
	struct view_memory_input in = {
	    .mm = &fx->mm,
	    .hold = traced ? fx->h : NULL,
	    .fr = fx->fr,
	    .trace_err = traced ? "" : "memory attribution needs CAP_BPF and CAP_PERFMON (or root)",
	    .window_s = 60,
	    .now_ns = 20 * SEC,
	    .since_ns = 0,
	};
	in.trace.period = 4;
	in.trace.fault_period = 64;
	return in;
}

/* The view of fx's process, traced or not, updated and drawn at 80x24
 * (DUMP=1 prints it). */
static void render(struct fx *fx, bool traced)
{
	struct view_memory_input in = input(fx, traced);

	assert_int_equal(view_memory_update(&fx->st, &in, 80, 24), 0);
	assert_int_equal(view_memory_render(&fx->g, &fx->hdr, &fx->st), 0);
	dump(&fx->g);
}

static void assert_top_holder(struct fx *fx, const char *want)
{
	char top[256];

	view_memory_top_holder(&fx->st, top, sizeof(top));
	assert_string_equal(top, want);
}

/* Under the leak's row: handle_request's faults (it holds nothing), the
 * last code path. */
static void assert_faulter_row_last(struct fx *fx)
{
	assert_string_equal(row(&fx->g, 11), "      0 B       0 B       0 B  10.5M  handle_request "
					     "(memgrow.c:50) < main");
	assert_string_equal(row(&fx->g, 12), "");
}

static void test_render_80x24(void **state)
{
	struct fx *fx = *state;

	render(fx, true);
	assert_string_equal(row(&fx->g, 2),
			    "anon +150 MiB/min  file +60 MiB/min  shmem 0/min  2 anon maps"
			    "   smaps every 1.0s");
	assert_string_equal(row(&fx->g, 3), "KIND       RSS   +WINDOW   PER MIN  MAPS  MAPPING");
	assert_string_equal(row(&fx->g, 4), "anon    48 MiB   +48 MiB  +150 MiB     2  anonymous");
	assert_string_equal(row(&fx->g, 5),
			    "file    19 MiB   +19 MiB   +60 MiB     1  /tmp/grow.dat");
	assert_string_equal(row(&fx->g, 6), "heap   300 KiB       0 B       0 B     1  [heap]");
	assert_string_equal(row(&fx->g, 7),
			    "file   100 KiB       0 B       0 B     1  /tmp/evil?]0;x?.so");
	assert_string_equal(row(&fx->g, 8), "CODE PATHS holding it \xc2\xb7 traced 20.0s "
					    "\xc2\xb7 mmap sampled 1 in 4 \xc2\xb7 faults 1/64");
	assert_string_equal(row(&fx->g, 9), "    HOLDS   +WINDOW   PER MIN FAULTS  CODE PATH");
	/* The leak first, named by cache_put, not by libc's mmap64. */
	assert_string_equal(
	    row(&fx->g, 10),
	    "   40 MiB   +40 MiB  +120 MiB      0  cache_put (memgrow.c:35) < main");
	assert_faulter_row_last(fx);
	assert_string_equal(row(&fx->g, 23),
			    " 1 top  2 icicle  3 threads  4 memory  space pause  ? help  q quit");
	assert_top_holder(fx, "cache_put");
}

static void test_untraced(void **state)
{
	struct fx *fx = *state;

	render(fx, false);
	assert_non_null(strstr(row(&fx->g, 8), "no code paths: memory attribution needs CAP_BPF"));
	assert_top_holder(fx, "");
	/* Too small: the notice only. */
	assert_int_equal(grid_resize(&fx->g, 50, 10), 0);
	assert_int_equal(view_memory_render(&fx->g, &fx->hdr, &fx->st), 0);
	assert_non_null(strstr(row(&fx->g, 5), "terminal too small"));
}

/* Two stacks that differ only in the allocator's frame (mmap64 or
 * __sbrk under cache_put) name the same code path: one row with both
 * figures, not two rows that read the same (issue 24: "handle_request
 * (churn.c:52) < churner" four times). */
static void test_same_label_merged(void **state)
{
	struct fx *fx = *state;
	uint32_t m = frame(fx, 0x1000, "memgrow", "main", "memgrow.c", 80);
	uint32_t put = frame(fx, 0x1100, "memgrow", "cache_put", "memgrow.c", 35);
	uint32_t sbrk_ = frame(fx, 0x7100, "libc.so.6", "__sbrk", NULL, 0);
	uint32_t grow[] = {m, put, sbrk_};
	int sg = memhold_stack(fx->h, grow, 3);

	for (int i = 0; i < 20; i++)
		assert_int_equal(memhold_map(fx->h, 0x200000000 + (uint64_t)i * MIB, MIB, sg,
					     (uint64_t)(i + 1) * SEC),
				 0);
	render(fx, true);
	assert_string_equal(
	    row(&fx->g, 10),
	    "   60 MiB   +60 MiB  +180 MiB      0  cache_put (memgrow.c:35) < main");
	assert_faulter_row_last(fx);
}

TEST_MAIN(NULL, NULL, TEST_FX(test_render_80x24), TEST_FX(test_untraced),
	  TEST_FX(test_same_label_merged))
