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

#define WANT_MAX 16

/* Names of one kind (the list ends at WANT_MAX or the first NULL). */
struct want {
	enum funckind kind;
	const char *func[WANT_MAX];
};

/* Every name in want[] is its kind, as a user-space name (kernel: false)
 * or a kernel one. */
static void check(const struct want *w, size_t n, bool kernel)
{
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < WANT_MAX && w[i].func[j]; j++) {
			enum funckind k = funckind_of(w[i].func[j], kernel);

			if (k != w[i].kind)
				fail_msg("%s%s: %s, want %s", w[i].func[j], kernel ? " [k]" : "",
					 funckind_name(k), funckind_name(w[i].kind));
		}
}

#define CHECK(w, kernel) check(w, sizeof(w) / sizeof(w[0]), kernel)

static void test_glibc(void **state)
{
	static const struct want w[] = {
	    {FUNCKIND_IDLE,
	     {"pthread_cond_wait", "___pthread_cond_wait", "__pthread_cond_wait_common",
	      "___pthread_cond_timedwait64", "pthread_cond_clockwait", "sem_wait",
	      "__new_sem_wait_slow64.constprop.0", "pthread_join", "__pthread_clockjoin_ex",
	      "pthread_barrier_wait", "epoll_wait", "__GI_epoll_pwait"}},
	    {FUNCKIND_LOCK,
	     {"pthread_mutex_lock", "___pthread_mutex_lock", "__pthread_mutex_lock_full",
	      "__pthread_mutex_cond_lock", "__GI___lll_lock_wait", "__lll_lock_wait_private",
	      "pthread_mutex_unlock", "__pthread_rwlock_rdlock_full64", "pthread_spin_lock"}},
	    {FUNCKIND_IO,
	     {"__GI___libc_read", "__read_nocancel", "__pread64_nocancel", "__recv_chk", "__poll",
	      "__libc_write", "__open64_nocancel", "accept4", "fwrite"}},
	    {FUNCKIND_SLEEP,
	     {"__nanosleep", "clock_nanosleep", "__clock_nanosleep_time64", "usleep", "sleep",
	      "__libc_pause"}},
	    {FUNCKIND_SYSCALL,
	     {"__futex_abstimed_wait_common", "__futex_abstimed_wait_common64", "syscall"}},
	    {FUNCKIND_RUNTIME, {"malloc", "__libc_malloc", "_int_free", "__libc_free", "free"}},
	    /* what says nothing, or only looks like a known word (pipe_read: a
	     * program's own; only the kernel's is I/O) */
	    {FUNCKIND_NONE,
	     {"main", "memcpy", "start_thread", "thread_main", "readline", "pipe_read", "blk_copy",
	      "freelist_push", "pthread_cond_signal", ""}},
	};
	CHECK(w, false);
	assert_int_equal(funckind_of(NULL, false), FUNCKIND_NONE);
	assert_int_equal(funckind_of(NULL, true), FUNCKIND_NONE);
}

static void test_kernel(void **state)
{
	static const struct want w[] = {
	    {FUNCKIND_SYSCALL,
	     {"futex_wait_queue", "futex_wait", "__x64_sys_futex", "entry_SYSCALL_64_after_hwframe",
	      "do_syscall_64", "__x64_sys_getpid"}},
	    {FUNCKIND_IDLE, {"ep_poll", "do_epoll_wait", "__x64_sys_epoll_wait"}},
	    {FUNCKIND_SLEEP, {"do_nanosleep", "hrtimer_nanosleep_restart", "__do_sys_pause"}},
	    {FUNCKIND_IO,
	     {"pipe_read", "do_select", "do_sys_poll", "poll_schedule_timeout.constprop.0",
	      "ksys_read", "__x64_sys_read", "vfs_write", "io_schedule", "blk_mq_submit_bio",
	      "unix_stream_read_generic"}},
	    {FUNCKIND_LOCK, {"mutex_lock", "_raw_spin_lock_irqsave", "rwsem_down_read_slowpath"}},
	    {FUNCKIND_NONE, {"clear_page_erms", "schedule", "wait_for_vfork_done"}},
	};
	CHECK(w, true);
}

static void test_go(void **state)
{
	static const struct want w[] = {
	    {FUNCKIND_GC,
	     {"runtime.gcBgMarkWorker", "runtime.gcDrain", "runtime.gcDrainMarkWorkerDedicated",
	      "runtime.markroot", "runtime.scanobject", "runtime.bgsweep", "runtime.bgscavenge",
	      "runtime.gcAssistAlloc1"}},
	    {FUNCKIND_RUNTIME, {"runtime.mallocgc", "runtime.schedule"}},
	    {FUNCKIND_SYSCALL, {"runtime.futex", "runtime.futexsleep", "syscall.Syscall"}},
	    {FUNCKIND_IDLE,
	     {"runtime.notesleep", "runtime.stopm", "runtime.netpoll", "sync.(*Cond).Wait",
	      "sync.(*WaitGroup).Wait"}},
	    {FUNCKIND_LOCK, {"runtime.lock2", "sync.(*Mutex).lockSlow", "sync.(*RWMutex).RLock"}},
	    {FUNCKIND_SLEEP, {"runtime.usleep", "time.Sleep"}},
	    {FUNCKIND_IO, {"internal/poll.(*FD).Read"}},
	    {FUNCKIND_NONE, {"main.handler"}},
	};
	CHECK(w, false);
}

static void test_jvm(void **state)
{
	static const struct want w[] = {
	    {FUNCKIND_IDLE,
	     {"ObjectMonitor::wait(long, bool, JavaThread*)", "Monitor::wait(unsigned long)",
	      "JVM_MonitorWait"}},
	    {FUNCKIND_LOCK,
	     {"ObjectMonitor::enter(JavaThread*)", "ObjectMonitor::EnterI(JavaThread*)",
	      "Mutex::lock()"}},
	    {FUNCKIND_SLEEP, {"JVM_Sleep", "os::naked_short_sleep(long)"}},
	    {FUNCKIND_GC,
	     {"G1ConcurrentMark::mark_from_roots()",
	      "G1ParScanThreadState::trim_queue_to_threshold(unsigned int)",
	      "G1YoungCollector::collect()", "G1ParEvacuateFollowersClosure::do_void()",
	      "GenCollectedHeap::do_collection(bool, bool, unsigned long, bool, GenerationType)",
	      "ParallelScavengeHeap::collect(GCCause::Cause)", "PSScavenge::invoke()",
	      "ZMark::work()", "ConcurrentGCThread::run()", "GCTaskThread::run()"}},
	    {FUNCKIND_RUNTIME,
	     {"SafepointSynchronize::begin()",
	      "InterpreterRuntime::resolve_from_cache(JavaThread*, Bytecodes::Code)"}},
	    {FUNCKIND_NONE,
	     {"JavaCalls::call_helper(JavaValue*, methodHandle const&, JavaCallArguments*, "
	      "JavaThread*)"}},
	};
	CHECK(w, false);
}

static void test_other_runtimes(void **state)
{
	static const struct want w[] = {
	    /* CPython (collect*: gcmodule.c, before 3.12) */
	    {FUNCKIND_GC,
	     {"gc_collect_main", "gc_collect_region", "_PyGC_Collect", "collect",
	      "collect_with_callback", "collect_generations"}},
	    {FUNCKIND_NONE, {"_PyEval_EvalFrameDefault", "collect_metrics"}},
	    /* V8 */
	    {FUNCKIND_GC,
	     {"v8::internal::ConcurrentMarking::RunMajor()",
	      "v8::internal::IncrementalMarking::Step()",
	      "v8::internal::ScavengerCollector::CollectGarbage()",
	      "v8::internal::MarkCompactCollector::CollectGarbage()",
	      "v8::internal::Heap::CollectGarbage(v8::internal::AllocationSpace)"}},
	    /* C++ and Rust */
	    {FUNCKIND_IDLE,
	     {"std::condition_variable::wait(std::unique_lock<std::mutex>&)",
	      "std::sys::sync::condvar::futex::Condvar::wait"}},
	    {FUNCKIND_LOCK,
	     {"std::mutex::lock()", "std::sys::sync::mutex::futex::Mutex::lock_contended",
	      "parking_lot::raw_mutex::RawMutex::lock_slow"}},
	    {FUNCKIND_SLEEP,
	     {"std::this_thread::sleep_for<long, std::ratio<1l, 1000l> >", "std::thread::sleep"}},
	    {FUNCKIND_RUNTIME, {"operator new(unsigned long)"}},
	    /* event loops */
	    {FUNCKIND_IDLE, {"g_main_context_iterate.isra.0", "uv__io_poll", "event_base_loop"}},
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
