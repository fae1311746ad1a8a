/*
 * test_ingest — a struct sample becomes a stack of frame ids in the
 * window: ready frame ids pass as they are, unknown pids are counted, a real
 * register set and stack copy of this process unwinds into the names of
 * this file's call chain (capture.h, as test_unwind takes it), off-CPU
 * samples end in their wait frame, ready user pcs are used as given, and
 * the sink's callbacks reach ingest. Following child processes: a sample
 * of a pid not added adopts its process (and without following is
 * dropped); a process said to have ended is given back after a refresh,
 * and a late sample of it is not adopted again.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "runner.h"

#include "stacktop/symbols/frames.h"
#include "stacktop/model/ingest.h"
#include "stacktop/symbols/sym.h"
#include "stacktop/model/window.h"
#include "capture.h"

#define SEC 1000000000ull

struct fx {
	struct sym *sy;
	struct frames *fr;
	struct window *w;
	struct ingest *in;
	struct space self; /* this process, for capture.h */
};

static volatile int sink_v;

static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));

	if (!fx || sym_new(&fx->sy) || frames_new(fx->sy, &fx->fr) ||
	    window_new(60, SEC, fx->fr, &fx->w) || ingest_new(fx->fr, fx->w, &fx->in) ||
	    space_load(&fx->self, getpid()))
		return -1;
	cap_space = &fx->self;
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;

	ingest_free(fx->in);
	window_free(fx->w);
	frames_free(fx->fr);
	sym_free(fx->sy);
	space_release(&fx->self);
	free(fx);
	return 0;
}

static const char *func_of(const struct fx *fx, uint32_t id)
{
	const struct frame *f = frames_get(fx->fr, id);

	assert_non_null(f);
	return f->sym.func ? f->sym.func : "?";
}

/* The top row of the window by self samples (the leaf function). */
static void assert_top_leaf(struct fx *fx, const char *func, uint64_t self)
{
	struct window_top_query q = {.key = WINDOW_KEY_FUNCTION};
	struct window_top_row *rows;
	size_t n, best = 0;
	uint64_t total;

	assert_int_equal(window_top(fx->w, &q, &rows, &n, &total), 0);
	assert_true(n > 0);
	for (size_t i = 1; i < n; i++)
		if (rows[i].self > rows[best].self)
			best = i;
	assert_string_equal(func_of(fx, rows[best].frame), func);
	assert_int_equal(rows[best].self, self);
	free(rows);
}

/* (a) A saved profile's sample: its frame ids go to the window as given. */
static void test_frame_ids(void **state)
{
	struct fx *fx = *state;
	struct sym_info outer = {.func = "outer", .module = "prog"};
	struct sym_info inner = {.func = "inner", .module = "prog"};
	uint32_t ids[2], got[INGEST_MAX_FRAMES];
	int n = -1;

	ids[0] = (uint32_t)frames_named(fx->fr, &outer);
	ids[1] = (uint32_t)frames_named(fx->fr, &inner);
	struct sample s = {.pid = 777,
			   .tid = 778,
			   .time_ns = 5 * SEC,
			   .weight = 3,
			   .frame_ids = ids,
			   .nframe_ids = 2};

	/* No process 777 was added: frame ids need none. */
	assert_int_equal(ingest_stack(fx->in, &s, got, INGEST_MAX_FRAMES, &n), 0);
	assert_int_equal(n, 2);
	assert_memory_equal(got, ids, sizeof(ids));
	ingest_sample(fx->in, &s);
	assert_int_equal(window_total(fx->w), 3);
	assert_int_equal(window_thread_total(fx->w, 778), 3);
	assert_top_leaf(fx, "inner", 3);
	assert_int_equal(ingest_get_stats(fx->in)->samples, 1);
	assert_int_equal(ingest_get_stats(fx->in)->unknown_pid, 0);
}

/* (b) A pid never added: counted, nothing in the window. */
static void test_unknown_pid(void **state)
{
	struct fx *fx = *state;
	uint64_t upcs[1] = {0x401000};
	uint32_t got[INGEST_MAX_FRAMES];
	int n = -1;
	struct sample s = {.pid = 999999, .tid = 999999, .weight = 1, .upcs = upcs, .nupcs = 1};

	assert_int_equal(ingest_stack(fx->in, &s, got, INGEST_MAX_FRAMES, &n), -ESRCH);
	assert_int_equal(n, 0);
	ingest_sample(fx->in, &s);
	assert_int_equal(ingest_get_stats(fx->in)->unknown_pid, 2);
	assert_int_equal(ingest_get_stats(fx->in)->samples, 1);
	assert_int_equal(window_total(fx->w), 0);
}

/* ---- (c) a real stack of this process ---- */

__attribute__((noipa)) static void test_own_stack(void **state)
{
	struct fx *fx = *state;
	uint32_t got[INGEST_MAX_FRAMES];
	struct sample s;
	int n = 0;

	assert_int_equal(ingest_add_process(fx->in, getpid()), 0);
	assert_int_equal(ingest_add_process(fx->in, getpid()), -EEXIST);
	sink_v += unw_a(3);
	make_sample(&s, cap.size);
	s.time_ns = 7 * SEC;
	assert_int_equal(ingest_stack(fx->in, &s, got, INGEST_MAX_FRAMES, &n), 0);
	assert_true(n >= 5);
	/* Caller first, the leaf last. */
	assert_string_equal(func_of(fx, got[n - 1]), "unw_c");
	assert_string_equal(func_of(fx, got[n - 2]), "unw_b");
	assert_string_equal(func_of(fx, got[n - 3]), "unw_a");
	assert_string_equal(func_of(fx, got[n - 4]), "test_own_stack");
	assert_string_equal(func_of(fx, got[0]), "_start");
	for (int i = 0; i < n; i++)
		assert_false(frames_get(fx->fr, got[i])->kernel);
	ingest_sample(fx->in, &s);
	assert_int_equal(window_total(fx->w), 1);
	assert_int_equal(window_thread_total(fx->w, getpid()), 1);
	assert_top_leaf(fx, "unw_c", 1);
	assert_int_equal(ingest_get_stats(fx->in)->failed, 0);
}

/* (d) An off-CPU wall sample ends in its wait frame. */
static void test_offcpu_wait(void **state)
{
	struct fx *fx = *state;
	uint32_t got[INGEST_MAX_FRAMES];
	const struct frame *last;
	struct sample s;
	int n = 0;

	assert_int_equal(ingest_add_process(fx->in, getpid()), 0);
	sink_v += unw_a(4);
	make_sample(&s, cap.size);
	s.state = SAMPLE_OFFCPU;
	s.wait = SAMPLE_WAIT_LOCK;
	assert_int_equal(ingest_stack(fx->in, &s, got, INGEST_MAX_FRAMES, &n), 0);
	assert_true(n >= 5);
	last = frames_get(fx->fr, got[n - 1]);
	assert_non_null(last);
	assert_int_equal(last->wait, SAMPLE_WAIT_LOCK);
	assert_int_equal(last->pid, -1);
	assert_string_equal(func_of(fx, got[n - 2]), "unw_c");
	/* The wait frame is the window's wait kind for the sample. */
	ingest_sample(fx->in, &s);
	uint64_t counts[SAMPLE_WAIT_COUNT];
	assert_int_equal(window_wait_counts(fx->w, 0, counts), 1);
	assert_int_equal(counts[SAMPLE_WAIT_LOCK], 1);
	/* On CPU, the same stack has no wait frame. */
	s.state = SAMPLE_ONCPU;
	assert_int_equal(ingest_stack(fx->in, &s, got, INGEST_MAX_FRAMES, &n), 0);
	assert_string_equal(func_of(fx, got[n - 1]), "unw_c");
}

/* (f) Ready user pcs (no registers) are used as given, leaf first. */
static void test_ready_upcs(void **state)
{
	struct fx *fx = *state;
	uint64_t upcs[2] = {(uint64_t)(uintptr_t)&unw_b + 1, (uint64_t)(uintptr_t)&unw_a + 1};
	uint32_t got[INGEST_MAX_FRAMES];
	struct sample s = {.pid = getpid(), .tid = getpid(), .weight = 1, .upcs = upcs, .nupcs = 2};
	int n = 0;

	assert_int_equal(ingest_add_process(fx->in, getpid()), 0);
	assert_int_equal(ingest_stack(fx->in, &s, got, INGEST_MAX_FRAMES, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(func_of(fx, got[0]), "unw_a");
	assert_string_equal(func_of(fx, got[1]), "unw_b");
	assert_int_equal(frames_get(fx->fr, got[1])->pc, upcs[0]);
}

/* (e) The sink: sample goes to the window, exec is counted, maps_changed
 * of an unknown pid does nothing. */
static void test_sink(void **state)
{
	struct fx *fx = *state;
	uint64_t upcs[1] = {(uint64_t)(uintptr_t)&unw_c + 1};
	struct sample s = {.pid = getpid(), .tid = getpid(), .weight = 2, .upcs = upcs, .nupcs = 1};
	struct sampler_sink sink;

	ingest_sink(fx->in, &sink);
	assert_ptr_equal(sink.ctx, fx->in);
	assert_int_equal(ingest_add_process(fx->in, getpid()), 0);
	sink.exec(sink.ctx, getpid(), "test_ingest");
	sink.exec(sink.ctx, 999999, "other");
	assert_int_equal(ingest_get_stats(fx->in)->execs, 2);
	sink.maps_changed(sink.ctx, 999999);
	sink.maps_changed(sink.ctx, getpid());
	sink.sample(sink.ctx, &s);
	assert_int_equal(ingest_get_stats(fx->in)->samples, 1);
	assert_int_equal(window_total(fx->w), 2);
	assert_top_leaf(fx, "unw_c", 2);
	/* After the exec and maps_changed, maps were reloaded: a real stack
	 * still unwinds. */
	sink_v += unw_a(5);
	make_sample(&s, cap.size);
	sink.sample(sink.ctx, &s);
	assert_int_equal(window_total(fx->w), 3);
	assert_int_equal(ingest_get_stats(fx->in)->unknown_pid, 0);
}

/* No window: ingest_stack works, ingest_sample only counts. */
static void test_no_window(void **state)
{
	struct fx *fx = *state;
	struct ingest *in;
	uint64_t upcs[1] = {(uint64_t)(uintptr_t)&unw_c + 1};
	struct sample s = {.pid = getpid(), .tid = getpid(), .weight = 1, .upcs = upcs, .nupcs = 1};
	uint32_t got[INGEST_MAX_FRAMES];
	int n = 0;

	assert_int_equal(ingest_new(fx->fr, NULL, &in), 0);
	assert_int_equal(ingest_add_process(in, getpid()), 0);
	assert_int_equal(ingest_stack(in, &s, got, INGEST_MAX_FRAMES, &n), 0);
	assert_int_equal(n, 1);
	ingest_sample(in, &s);
	assert_int_equal(ingest_get_stats(in)->samples, 1);
	ingest_free(in);
	ingest_free(NULL);
}

/* Following: a sample of this process, never added, adopts it; it is
 * unwound with its own maps and counted in the window. */
static void test_follow_adopts(void **state)
{
	struct fx *fx = *state;
	uint64_t upcs[1] = {(uint64_t)(uintptr_t)&unw_c + 1};
	struct sample s = {.pid = getpid(), .tid = getpid(), .weight = 1, .upcs = upcs, .nupcs = 1};

	ingest_sample(fx->in, &s);
	assert_int_equal(ingest_get_stats(fx->in)->unknown_pid, 1);
	assert_false(ingest_has_process(fx->in, getpid()));
	assert_int_equal(window_total(fx->w), 0);

	ingest_follow(fx->in, true);
	ingest_sample(fx->in, &s);
	assert_true(ingest_has_process(fx->in, getpid()));
	assert_int_equal(ingest_get_stats(fx->in)->adopted, 1);
	assert_int_equal(ingest_get_stats(fx->in)->nprocs, 1);
	assert_int_equal(ingest_get_stats(fx->in)->unknown_pid, 1);
	assert_int_equal(window_total(fx->w), 1);
	assert_top_leaf(fx, "unw_c", 1);
	/* Known now: the next one is not adopted again. */
	ingest_sample(fx->in, &s);
	assert_int_equal(ingest_get_stats(fx->in)->adopted, 1);
	assert_int_equal(window_total(fx->w), 2);
	/* Off again: a new pid is dropped as before. */
	ingest_follow(fx->in, false);
	s.pid = s.tid = 999999;
	ingest_sample(fx->in, &s);
	assert_int_equal(ingest_get_stats(fx->in)->unknown_pid, 2);
	assert_false(ingest_has_process(fx->in, 999999));
}

/* A child process that ended: given back after ingest_process_exited and
 * one more refresh; a late sample of it is then dropped, not adopted. */
static void test_exited_released(void **state)
{
	struct fx *fx = *state;
	uint64_t upcs[1] = {0x401000};
	pid_t kid = fork();

	assert_true(kid >= 0);
	if (kid == 0)
		_exit(0);
	assert_int_equal(waitpid(kid, NULL, 0), kid);
	ingest_follow(fx->in, true);
	assert_int_equal(ingest_add_process(fx->in, kid), 0);
	assert_int_equal(ingest_add_process(fx->in, kid), -EEXIST);
	assert_int_equal(ingest_add_process(fx->in, getpid()), 0);
	assert_int_equal(ingest_get_stats(fx->in)->nprocs, 2);

	ingest_process_exited(fx->in, kid);
	ingest_refresh(fx->in); /* its last samples may still come */
	assert_true(ingest_has_process(fx->in, kid));
	ingest_refresh(fx->in);
	assert_false(ingest_has_process(fx->in, kid));
	assert_true(ingest_has_process(fx->in, getpid()));
	assert_int_equal(ingest_get_stats(fx->in)->released, 1);
	assert_int_equal(ingest_get_stats(fx->in)->nprocs, 1);

	struct sample s = {.pid = kid, .tid = kid, .weight = 1, .upcs = upcs, .nupcs = 1};
	ingest_sample(fx->in, &s);
	assert_false(ingest_has_process(fx->in, kid));
	assert_int_equal(ingest_get_stats(fx->in)->adopted, 0);
	assert_int_equal(ingest_get_stats(fx->in)->unknown_pid, 1);
	/* A live process nobody reports ended stays, however quiet. */
	for (int i = 0; i < 2 * INGEST_IDLE_REFRESHES; i++)
		ingest_refresh(fx->in);
	assert_true(ingest_has_process(fx->in, getpid()));
}

/* An ended process nobody reports (adopted, never seen by procs) goes
 * once it has been quiet a few refreshes and /proc no longer has it. */
static void test_quiet_gone_released(void **state)
{
	struct fx *fx = *state;
	pid_t kid = fork();

	assert_true(kid >= 0);
	if (kid == 0)
		_exit(0);
	assert_int_equal(waitpid(kid, NULL, 0), kid);
	assert_int_equal(ingest_add_process(fx->in, kid), 0);
	for (int i = 0; i < INGEST_IDLE_REFRESHES - 1; i++)
		ingest_refresh(fx->in);
	assert_true(ingest_has_process(fx->in, kid));
	ingest_refresh(fx->in);
	assert_false(ingest_has_process(fx->in, kid));
}

/* Many processes: the table grows past the old fixed 64; each found by
 * its pid through leaves and returns. */
static void test_many_processes(void **state)
{
	struct fx *fx = *state;

	for (pid_t pid = 1000000; pid < 1000000 + 300; pid++)
		assert_int_equal(ingest_add_process(fx->in, pid), 0);
	assert_int_equal(ingest_get_stats(fx->in)->nprocs, 300);
	assert_true(ingest_has_process(fx->in, 1000000));
	assert_true(ingest_has_process(fx->in, 1000299));
	ingest_process_exited(fx->in, 1000100);
	for (pid_t pid = 1000000; pid < 1000000 + 300; pid += 7)
		ingest_process_exited(fx->in, pid);
	ingest_refresh(fx->in);
	ingest_refresh(fx->in);
	/* Only those said to have ended: the others (which /proc does not
	 * have either) have not been quiet for INGEST_IDLE_REFRESHES yet.
	 * Each is found by its pid (the last ones took leavers' places),
	 * also a pid that came back. */
	assert_false(ingest_has_process(fx->in, 1000100));
	assert_int_equal(ingest_get_stats(fx->in)->nprocs, 300 - 43 - 1);
	assert_int_equal(ingest_add_process(fx->in, 1000100), 0);
	assert_int_equal(ingest_add_process(fx->in, 1000100), -EEXIST);
	for (pid_t pid = 1000000; pid < 1000000 + 300; pid++)
		if (ingest_has_process(fx->in, pid) != (pid == 1000100 || (pid - 1000000) % 7 != 0))
			fail_msg("pid %d: %s", (int)pid,
				 ingest_has_process(fx->in, pid) ? "found" : "lost");
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

TEST_MAIN(NULL, NULL, T(test_frame_ids), T(test_unknown_pid), T(test_own_stack),
	  T(test_offcpu_wait), T(test_ready_upcs), T(test_sink), T(test_no_window),
	  T(test_follow_adopts), T(test_exited_released), T(test_quiet_gone_released),
	  T(test_many_processes))
