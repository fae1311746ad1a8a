/* test_funckind — what a function is, from names as glibc, the kernel, Go,
 * HotSpot, CPython, V8, C++ and Rust spell them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "runner.h"

#include "stacktop/proc/funckind.h"

struct want {
	const char *func;
	enum funckind kind;
};

/* Every name in want[] is its kind, as a user-space name (kernel: false)
 * or a kernel one. */
static void check(const struct want *w, size_t n, bool kernel)
{
	for (size_t i = 0; i < n; i++) {
		enum funckind k = funckind_of(w[i].func, kernel);

		if (k != w[i].kind)
			fail_msg("%s%s: %s, want %s", w[i].func, kernel ? " [k]" : "",
				 funckind_name(k), funckind_name(w[i].kind));
	}
}

#define CHECK(w, kernel) check(w, sizeof(w) / sizeof(w[0]), kernel)

static void test_glibc(void **state)
{
	static const struct want w[] = {
	    {"pthread_cond_wait", FUNCKIND_IDLE},
	    {"___pthread_cond_wait", FUNCKIND_IDLE},
	    {"__pthread_cond_wait_common", FUNCKIND_IDLE},
	    {"___pthread_cond_timedwait64", FUNCKIND_IDLE},
	    {"pthread_cond_clockwait", FUNCKIND_IDLE},
	    {"sem_wait", FUNCKIND_IDLE},
	    {"__new_sem_wait_slow64.constprop.0", FUNCKIND_IDLE},
	    {"pthread_join", FUNCKIND_IDLE},
	    {"__pthread_clockjoin_ex", FUNCKIND_IDLE},
	    {"pthread_barrier_wait", FUNCKIND_IDLE},
	    {"epoll_wait", FUNCKIND_IDLE},
	    {"__GI_epoll_pwait", FUNCKIND_IDLE},
	    {"pthread_mutex_lock", FUNCKIND_LOCK},
	    {"___pthread_mutex_lock", FUNCKIND_LOCK},
	    {"__pthread_mutex_lock_full", FUNCKIND_LOCK},
	    {"__pthread_mutex_cond_lock", FUNCKIND_LOCK},
	    {"__GI___lll_lock_wait", FUNCKIND_LOCK},
	    {"__lll_lock_wait_private", FUNCKIND_LOCK},
	    {"pthread_mutex_unlock", FUNCKIND_LOCK},
	    {"__pthread_rwlock_rdlock_full64", FUNCKIND_LOCK},
	    {"pthread_spin_lock", FUNCKIND_LOCK},
	    {"__GI___libc_read", FUNCKIND_IO},
	    {"__read_nocancel", FUNCKIND_IO},
	    {"__pread64_nocancel", FUNCKIND_IO},
	    {"__recv_chk", FUNCKIND_IO},
	    {"__poll", FUNCKIND_IO},
	    {"__libc_write", FUNCKIND_IO},
	    {"__open64_nocancel", FUNCKIND_IO},
	    {"accept4", FUNCKIND_IO},
	    {"fwrite", FUNCKIND_IO},
	    {"__nanosleep", FUNCKIND_SLEEP},
	    {"clock_nanosleep", FUNCKIND_SLEEP},
	    {"__clock_nanosleep_time64", FUNCKIND_SLEEP},
	    {"usleep", FUNCKIND_SLEEP},
	    {"sleep", FUNCKIND_SLEEP},
	    {"__libc_pause", FUNCKIND_SLEEP},
	    {"__futex_abstimed_wait_common", FUNCKIND_SYSCALL},
	    {"__futex_abstimed_wait_common64", FUNCKIND_SYSCALL},
	    {"syscall", FUNCKIND_SYSCALL},
	    {"malloc", FUNCKIND_RUNTIME},
	    {"__libc_malloc", FUNCKIND_RUNTIME},
	    {"_int_free", FUNCKIND_RUNTIME},
	    {"__libc_free", FUNCKIND_RUNTIME},
	    {"free", FUNCKIND_RUNTIME},
	    /* what says nothing, or only looks like a known word */
	    {"main", FUNCKIND_NONE},
	    {"memcpy", FUNCKIND_NONE},
	    {"start_thread", FUNCKIND_NONE},
	    {"thread_main", FUNCKIND_NONE},
	    {"readline", FUNCKIND_NONE},
	    {"pipe_read", FUNCKIND_NONE}, /* a program's own: only the kernel's is I/O */
	    {"blk_copy", FUNCKIND_NONE},
	    {"freelist_push", FUNCKIND_NONE},
	    {"pthread_cond_signal", FUNCKIND_NONE},
	    {"", FUNCKIND_NONE},
	};
	CHECK(w, false);
	assert_int_equal(funckind_of(NULL, false), FUNCKIND_NONE);
	assert_int_equal(funckind_of(NULL, true), FUNCKIND_NONE);
}

static void test_kernel(void **state)
{
	static const struct want w[] = {
	    {"futex_wait_queue", FUNCKIND_SYSCALL},
	    {"futex_wait", FUNCKIND_SYSCALL},
	    {"__x64_sys_futex", FUNCKIND_SYSCALL},
	    {"entry_SYSCALL_64_after_hwframe", FUNCKIND_SYSCALL},
	    {"do_syscall_64", FUNCKIND_SYSCALL},
	    {"__x64_sys_getpid", FUNCKIND_SYSCALL},
	    {"ep_poll", FUNCKIND_IDLE},
	    {"do_epoll_wait", FUNCKIND_IDLE},
	    {"__x64_sys_epoll_wait", FUNCKIND_IDLE},
	    {"do_nanosleep", FUNCKIND_SLEEP},
	    {"hrtimer_nanosleep_restart", FUNCKIND_SLEEP},
	    {"__do_sys_pause", FUNCKIND_SLEEP},
	    {"pipe_read", FUNCKIND_IO},
	    {"do_select", FUNCKIND_IO},
	    {"do_sys_poll", FUNCKIND_IO},
	    {"poll_schedule_timeout.constprop.0", FUNCKIND_IO},
	    {"ksys_read", FUNCKIND_IO},
	    {"__x64_sys_read", FUNCKIND_IO},
	    {"vfs_write", FUNCKIND_IO},
	    {"io_schedule", FUNCKIND_IO},
	    {"blk_mq_submit_bio", FUNCKIND_IO},
	    {"unix_stream_read_generic", FUNCKIND_IO},
	    {"mutex_lock", FUNCKIND_LOCK},
	    {"_raw_spin_lock_irqsave", FUNCKIND_LOCK},
	    {"rwsem_down_read_slowpath", FUNCKIND_LOCK},
	    {"clear_page_erms", FUNCKIND_NONE},
	    {"schedule", FUNCKIND_NONE},
	    {"wait_for_vfork_done", FUNCKIND_NONE},
	};
	CHECK(w, true);
}

static void test_go(void **state)
{
	static const struct want w[] = {
	    {"runtime.gcBgMarkWorker", FUNCKIND_GC},
	    {"runtime.gcDrain", FUNCKIND_GC},
	    {"runtime.gcDrainMarkWorkerDedicated", FUNCKIND_GC},
	    {"runtime.markroot", FUNCKIND_GC},
	    {"runtime.scanobject", FUNCKIND_GC},
	    {"runtime.bgsweep", FUNCKIND_GC},
	    {"runtime.bgscavenge", FUNCKIND_GC},
	    {"runtime.gcAssistAlloc1", FUNCKIND_GC},
	    {"runtime.mallocgc", FUNCKIND_RUNTIME},
	    {"runtime.schedule", FUNCKIND_RUNTIME},
	    {"runtime.futex", FUNCKIND_SYSCALL},
	    {"runtime.futexsleep", FUNCKIND_SYSCALL},
	    {"runtime.notesleep", FUNCKIND_IDLE},
	    {"runtime.stopm", FUNCKIND_IDLE},
	    {"runtime.netpoll", FUNCKIND_IDLE},
	    {"runtime.lock2", FUNCKIND_LOCK},
	    {"runtime.usleep", FUNCKIND_SLEEP},
	    {"sync.(*Mutex).lockSlow", FUNCKIND_LOCK},
	    {"sync.(*RWMutex).RLock", FUNCKIND_LOCK},
	    {"sync.(*Cond).Wait", FUNCKIND_IDLE},
	    {"sync.(*WaitGroup).Wait", FUNCKIND_IDLE},
	    {"time.Sleep", FUNCKIND_SLEEP},
	    {"internal/poll.(*FD).Read", FUNCKIND_IO},
	    {"syscall.Syscall", FUNCKIND_SYSCALL},
	    {"main.handler", FUNCKIND_NONE},
	};
	CHECK(w, false);
}

static void test_jvm(void **state)
{
	static const struct want w[] = {
	    {"ObjectMonitor::wait(long, bool, JavaThread*)", FUNCKIND_IDLE},
	    {"Monitor::wait(unsigned long)", FUNCKIND_IDLE},
	    {"JVM_MonitorWait", FUNCKIND_IDLE},
	    {"ObjectMonitor::enter(JavaThread*)", FUNCKIND_LOCK},
	    {"ObjectMonitor::EnterI(JavaThread*)", FUNCKIND_LOCK},
	    {"Mutex::lock()", FUNCKIND_LOCK},
	    {"JVM_Sleep", FUNCKIND_SLEEP},
	    {"os::naked_short_sleep(long)", FUNCKIND_SLEEP},
	    {"G1ConcurrentMark::mark_from_roots()", FUNCKIND_GC},
	    {"G1ParScanThreadState::trim_queue_to_threshold(unsigned int)", FUNCKIND_GC},
	    {"G1YoungCollector::collect()", FUNCKIND_GC},
	    {"G1ParEvacuateFollowersClosure::do_void()", FUNCKIND_GC},
	    {"GenCollectedHeap::do_collection(bool, bool, unsigned long, bool, GenerationType)",
	     FUNCKIND_GC},
	    {"ParallelScavengeHeap::collect(GCCause::Cause)", FUNCKIND_GC},
	    {"PSScavenge::invoke()", FUNCKIND_GC},
	    {"ZMark::work()", FUNCKIND_GC},
	    {"ConcurrentGCThread::run()", FUNCKIND_GC},
	    {"GCTaskThread::run()", FUNCKIND_GC},
	    {"SafepointSynchronize::begin()", FUNCKIND_RUNTIME},
	    {"InterpreterRuntime::resolve_from_cache(JavaThread*, Bytecodes::Code)",
	     FUNCKIND_RUNTIME},
	    {"JavaCalls::call_helper(JavaValue*, methodHandle const&, JavaCallArguments*, "
	     "JavaThread*)",
	     FUNCKIND_NONE},
	};
	CHECK(w, false);
}

static void test_other_runtimes(void **state)
{
	static const struct want w[] = {
	    /* CPython */
	    {"gc_collect_main", FUNCKIND_GC},
	    {"gc_collect_region", FUNCKIND_GC},
	    {"_PyGC_Collect", FUNCKIND_GC},
	    {"_PyEval_EvalFrameDefault", FUNCKIND_NONE},
	    {"collect", FUNCKIND_GC}, /* before 3.12: gcmodule.c */
	    {"collect_with_callback", FUNCKIND_GC},
	    {"collect_generations", FUNCKIND_GC},
	    {"collect_metrics", FUNCKIND_NONE},
	    {"v8::internal::ConcurrentMarking::RunMajor()", FUNCKIND_GC},
	    {"v8::internal::IncrementalMarking::Step()", FUNCKIND_GC},
	    /* V8 */
	    {"v8::internal::ScavengerCollector::CollectGarbage()", FUNCKIND_GC},
	    {"v8::internal::MarkCompactCollector::CollectGarbage()", FUNCKIND_GC},
	    {"v8::internal::Heap::CollectGarbage(v8::internal::AllocationSpace)", FUNCKIND_GC},
	    /* C++ and Rust */
	    {"std::condition_variable::wait(std::unique_lock<std::mutex>&)", FUNCKIND_IDLE},
	    {"std::mutex::lock()", FUNCKIND_LOCK},
	    {"std::this_thread::sleep_for<long, std::ratio<1l, 1000l> >", FUNCKIND_SLEEP},
	    {"operator new(unsigned long)", FUNCKIND_RUNTIME},
	    {"std::sys::sync::mutex::futex::Mutex::lock_contended", FUNCKIND_LOCK},
	    {"std::sys::sync::condvar::futex::Condvar::wait", FUNCKIND_IDLE},
	    {"std::thread::sleep", FUNCKIND_SLEEP},
	    {"parking_lot::raw_mutex::RawMutex::lock_slow", FUNCKIND_LOCK},
	    /* event loops */
	    {"g_main_context_iterate.isra.0", FUNCKIND_IDLE},
	    {"uv__io_poll", FUNCKIND_IDLE},
	    {"event_base_loop", FUNCKIND_IDLE},
	};
	CHECK(w, false);
}

/* A runtime's collector threads by name: HotSpot's GC workers are GC
 * whatever their (often unnamed) libjvm frames say. */
static void test_gc_thread(void **state)
{
	static const char *const yes[] = {"GC Thread#0", "GC Thread#12",   "G1 Conc#0",
					  "G1 Refine#0", "G1 Main Marker", "ZWorker#3"};
	static const char *const no[] = {"VM Thread",	     "main", "C2 CompilerThre",
					 "worker GC Thread", "",     NULL};

	CHECK_PRED(funckind_gc_thread, yes, no);
}

/* Which lock: the glibc calls whose layout the locks module reads. */
static void test_lock_of(void **state)
{
	static const struct {
		const char *func;
		enum funckind kind;
		enum funckind_lock lock;
	} w[] = {
	    {"___pthread_mutex_lock", FUNCKIND_LOCK, FUNCKIND_LOCK_MUTEX},
	    {"__pthread_mutex_clocklock_common", FUNCKIND_LOCK, FUNCKIND_LOCK_MUTEX},
	    {"__pthread_mutex_cond_lock", FUNCKIND_LOCK, FUNCKIND_LOCK_MUTEX},
	    {"__pthread_rwlock_rdlock_full64", FUNCKIND_LOCK, FUNCKIND_LOCK_RDLOCK},
	    {"pthread_rwlock_timedwrlock", FUNCKIND_LOCK, FUNCKIND_LOCK_WRLOCK},
	    {"__lll_lock_wait", FUNCKIND_LOCK, FUNCKIND_LOCK_ANY},
	    {"pthread_mutex_unlock", FUNCKIND_LOCK, FUNCKIND_LOCK_ANY},
	    {"std::mutex::lock()", FUNCKIND_LOCK, FUNCKIND_LOCK_ANY},
	    {"pthread_cond_wait", FUNCKIND_IDLE, FUNCKIND_LOCK_ANY},
	    {"main", FUNCKIND_NONE, FUNCKIND_LOCK_ANY},
	};
	for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++) {
		enum funckind_lock l = FUNCKIND_LOCK_WRLOCK;

		assert_int_equal(funckind_lock_of(w[i].func, &l), w[i].kind);
		if (l != w[i].lock)
			fail_msg("%s: lock %d, want %d", w[i].func, l, w[i].lock);
	}
	assert_int_equal(funckind_lock_of("pthread_mutex_lock", NULL), FUNCKIND_LOCK);
}

/* Every kind's word, and "?" past the last. */
static void test_names(void **state)
{
	static const char *const want[FUNCKIND_COUNT + 1] = {
	    [FUNCKIND_NONE] = "none",	    [FUNCKIND_LOCK] = "lock",
	    [FUNCKIND_IDLE] = "idle",	    [FUNCKIND_IO] = "I/O",
	    [FUNCKIND_SLEEP] = "sleep",	    [FUNCKIND_GC] = "GC",
	    [FUNCKIND_RUNTIME] = "runtime", [FUNCKIND_SYSCALL] = "syscall",
	    [FUNCKIND_COUNT] = "?",
	};

	for (int k = 0; k <= FUNCKIND_COUNT; k++)
		assert_string_equal(funckind_name((enum funckind)k), want[k]);
}

/* A name longer than any POSIX word is never one, and is read whole. */
static void test_long_names(void **state)
{
	char name[600];

	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	assert_int_equal(funckind_of(name, false), FUNCKIND_NONE);
	memcpy(name + 400, "cond_wait", 9);
	assert_int_equal(funckind_of(name, false), FUNCKIND_IDLE);
}

TEST_MAIN(NULL, NULL, TEST(test_glibc), TEST(test_kernel), TEST(test_go), TEST(test_jvm),
	  TEST(test_other_runtimes), TEST(test_gc_thread), TEST(test_lock_of), TEST(test_names),
	  TEST(test_long_names))
