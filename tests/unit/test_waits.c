/* test_waits — the wait classification table and the procfs parsers. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>

#include <cmocka.h>

#include "runner.h"

#include "stacktop/proc/waits.h"

static void test_lock(void **state)
{
	assert_int_equal(waits_classify('S', SYS_futex, "futex_wait_queue"), SAMPLE_WAIT_LOCK);
	assert_int_equal(waits_classify('S', SYS_futex, NULL), SAMPLE_WAIT_LOCK);
}

static void test_io(void **state)
{
	const int io[] = {SYS_read,   SYS_write,   SYS_pread64, SYS_readv,  SYS_recvfrom,
			  SYS_sendto, SYS_poll,	   SYS_ppoll,	SYS_select, SYS_pselect6,
			  SYS_accept, SYS_accept4, SYS_connect, SYS_fsync,  SYS_fdatasync};
	for (size_t i = 0; i < sizeof(io) / sizeof(io[0]); i++) {
		enum sample_wait w = waits_classify('S', io[i], "do_sys_poll");
		if (w != SAMPLE_WAIT_IO)
			fail_msg("syscall %d (%s) classified %d, want I/O", io[i],
				 waits_syscall_name(io[i]), (int)w);
	}
}

static void test_sleep(void **state)
{
	assert_int_equal(waits_classify('S', SYS_nanosleep, "hrtimer_nanosleep"),
			 SAMPLE_WAIT_SLEEP);
	assert_int_equal(waits_classify('S', SYS_clock_nanosleep, NULL), SAMPLE_WAIT_SLEEP);
}

static void test_dstate_wins(void **state)
{
	assert_int_equal(waits_classify('D', SYS_read, "nfs_wait_bit"), SAMPLE_WAIT_DSTATE);
	assert_int_equal(waits_classify('D', SYS_futex, NULL), SAMPLE_WAIT_DSTATE);
	assert_int_equal(waits_classify('D', -1, "io_schedule"), SAMPLE_WAIT_DSTATE);
}

static void test_running(void **state)
{
	assert_int_equal(waits_classify('R', -1, ""), SAMPLE_WAIT_NONE);
	assert_int_equal(waits_classify('R', SYS_futex, ""), SAMPLE_WAIT_NONE);
}

static void test_other_named(void **state)
{
	assert_int_equal(waits_classify('S', SYS_wait4, "do_wait"), SAMPLE_WAIT_OTHER);
	assert_string_equal(waits_syscall_name(SYS_wait4), "wait4");
	assert_string_equal(waits_syscall_name(SYS_futex), "futex");
	assert_string_equal(waits_syscall_name(SYS_epoll_wait), "epoll_wait");
	assert_null(waits_syscall_name(99999));
	/* Blocked outside a syscall, wchan decides. */
	assert_int_equal(waits_classify('S', -1, "futex_wait_queue"), SAMPLE_WAIT_LOCK);
	assert_int_equal(waits_classify('S', -1, "do_page_fault"), SAMPLE_WAIT_OTHER);
}

/* After any ptrace stop an interrupted sleep continues as restart_syscall. */
static void test_restart_syscall(void **state)
{
	assert_int_equal(waits_classify('S', SYS_restart_syscall, "hrtimer_nanosleep"),
			 SAMPLE_WAIT_SLEEP);
	assert_int_equal(waits_classify('S', SYS_restart_syscall, "futex_wait_queue"),
			 SAMPLE_WAIT_LOCK);
	assert_int_equal(waits_classify('S', SYS_restart_syscall, "do_sys_poll"), SAMPLE_WAIT_IO);
	assert_int_equal(waits_classify('S', SYS_restart_syscall, "0"), SAMPLE_WAIT_OTHER);
	/* Any other wchan is read by funckind, as every view reads it. */
	assert_int_equal(
	    waits_classify('S', SYS_restart_syscall, "poll_schedule_timeout.constprop.0"),
	    SAMPLE_WAIT_IO);
	assert_int_equal(waits_classify('S', -1, "do_select"), SAMPLE_WAIT_IO);
	assert_int_equal(waits_classify('S', -1, "__do_sys_pause"), SAMPLE_WAIT_SLEEP);
	assert_string_equal(waits_syscall_name(SYS_restart_syscall), "restart_syscall");
}

/* A blocked epoll_wait is an event loop with nothing ready: idle. */
static void test_epoll_idle(void **state)
{
	assert_int_equal(waits_classify('S', SYS_epoll_wait, "do_epoll_wait"), SAMPLE_WAIT_IDLE);
	assert_int_equal(waits_classify('S', SYS_epoll_pwait, NULL), SAMPLE_WAIT_IDLE);
	assert_int_equal(waits_classify('S', SYS_restart_syscall, "ep_poll"), SAMPLE_WAIT_IDLE);
	assert_int_equal(waits_classify('S', SYS_read, "anon_pipe_read"), SAMPLE_WAIT_IO);
}

/* The stack tells contention from waiting for work: the first frame (leaf
 * first) with an opinion decides. */
static void test_by_function(void **state)
{
	const int fx = SYS_futex;
	const char *idle[] = {"pthread_cond_wait",
			      "__pthread_cond_wait_common",
			      "pthread_cond_timedwait",
			      "sem_wait",
			      "__new_sem_wait_slow64.constprop.0",
			      "pthread_join",
			      "__pthread_clockjoin_ex",
			      "pthread_barrier_wait",
			      "std::condition_variable::wait(std::unique_lock<std::mutex>&)",
			      "runtime.notesleep",
			      "sync.(*Cond).Wait",
			      "ObjectMonitor::wait(long, bool, JavaThread*)"};
	const char *lock[] = {"pthread_mutex_lock",
			      "__GI___lll_lock_wait",
			      "__lll_lock_wait_private",
			      "pthread_rwlock_wrlock",
			      "__pthread_mutex_cond_lock",
			      "std::sys::sync::mutex::futex::Mutex::lock_contended",
			      "runtime.lock2",
			      "ObjectMonitor::enter(JavaThread*)"};
	for (size_t i = 0; i < sizeof(idle) / sizeof(idle[0]); i++)
		if (waits_by_function(SAMPLE_WAIT_LOCK, fx, idle[i]) != SAMPLE_WAIT_IDLE)
			fail_msg("%s should be idle", idle[i]);
	for (size_t i = 0; i < sizeof(lock) / sizeof(lock[0]); i++)
		if (waits_by_function(SAMPLE_WAIT_LOCK, fx, lock[i]) != SAMPLE_WAIT_LOCK)
			fail_msg("%s should be lock", lock[i]);
	assert_int_equal(waits_by_function(SAMPLE_WAIT_LOCK, fx, "__futex_abstimed_wait_common"),
			 SAMPLE_WAIT_NONE);
	assert_int_equal(waits_by_function(SAMPLE_WAIT_LOCK, fx, NULL), SAMPLE_WAIT_NONE);
	/* A GC, a runtime, a futex wrapper or an I/O call says nothing about a
	 * futex: the frames above it decide. */
	assert_int_equal(waits_by_function(SAMPLE_WAIT_LOCK, fx, "runtime.gcBgMarkWorker"),
			 SAMPLE_WAIT_NONE);
	assert_int_equal(waits_by_function(SAMPLE_WAIT_LOCK, fx, "runtime.futexsleep"),
			 SAMPLE_WAIT_NONE);
	assert_int_equal(waits_by_function(SAMPLE_WAIT_LOCK, fx, "__libc_read"), SAMPLE_WAIT_NONE);
	assert_int_equal(waits_by_function(SAMPLE_WAIT_OTHER, fx, "sem_wait"), SAMPLE_WAIT_IDLE);
	/* An event loop's poll is idle; a poll elsewhere stays I/O; a read in
	 * an event loop is not refined. */
	assert_int_equal(waits_by_function(SAMPLE_WAIT_IO, SYS_poll, "g_main_context_iterate"),
			 SAMPLE_WAIT_IDLE);
	assert_int_equal(waits_by_function(SAMPLE_WAIT_IO, SYS_poll, "fetch_reply"),
			 SAMPLE_WAIT_NONE);
	assert_int_equal(waits_by_function(SAMPLE_WAIT_IO, SYS_read, "g_main_context_iterate"),
			 SAMPLE_WAIT_NONE);
	/* A sleep is never refined. */
	assert_int_equal(waits_by_function(SAMPLE_WAIT_SLEEP, SYS_nanosleep, "pthread_cond_wait"),
			 SAMPLE_WAIT_NONE);
}

/* The wait each function kind names: only the four that are waits. */
static void test_of_funckind(void **state)
{
	assert_int_equal(waits_of_funckind(FUNCKIND_LOCK), SAMPLE_WAIT_LOCK);
	assert_int_equal(waits_of_funckind(FUNCKIND_IDLE), SAMPLE_WAIT_IDLE);
	assert_int_equal(waits_of_funckind(FUNCKIND_IO), SAMPLE_WAIT_IO);
	assert_int_equal(waits_of_funckind(FUNCKIND_SLEEP), SAMPLE_WAIT_SLEEP);
	assert_int_equal(waits_of_funckind(FUNCKIND_GC), SAMPLE_WAIT_NONE);
	assert_int_equal(waits_of_funckind(FUNCKIND_RUNTIME), SAMPLE_WAIT_NONE);
	assert_int_equal(waits_of_funckind(FUNCKIND_SYSCALL), SAMPLE_WAIT_NONE);
	assert_int_equal(waits_of_funckind(FUNCKIND_NONE), SAMPLE_WAIT_NONE);
	/* The same words: what funckind names is what waits names. */
	for (int k = FUNCKIND_LOCK; k <= FUNCKIND_SLEEP; k++)
		assert_string_equal(waits_name(waits_of_funckind((enum funckind)k)),
				    funckind_name((enum funckind)k));
}

static void test_names(void **state)
{
	assert_string_equal(waits_name(SAMPLE_WAIT_IO), "I/O");
	assert_string_equal(waits_name(SAMPLE_WAIT_NONE), "running");
	assert_string_equal(waits_frame_name(SAMPLE_WAIT_LOCK), "[lock]");
	assert_string_equal(waits_frame_name(SAMPLE_WAIT_DSTATE), "[D-state]");
	assert_string_equal(waits_name(SAMPLE_WAIT_IDLE), "idle");
	assert_string_equal(waits_name(SAMPLE_WAIT_CPU), "CPU-wait");
	assert_string_equal(waits_frame_name(SAMPLE_WAIT_CPU), "[CPU-wait]");
	assert_string_equal(waits_name((enum sample_wait)42), "?");
}

static void test_parse_syscall(void **state)
{
	int nr;
	unsigned long long sp, pc;
	assert_int_equal(waits_parse_syscall("running\n", &nr, &sp, &pc), 0);
	assert_int_equal(nr, -1);
	assert_int_equal(waits_parse_syscall("202 0x7f00 0x80 0x0 0x0 0x0 0x0 0x7ffd1000 "
					     "0x7f12345678\n",
					     &nr, &sp, &pc),
			 0);
	assert_int_equal(nr, 202);
	assert_int_equal(sp, 0x7ffd1000ull);
	assert_int_equal(pc, 0x7f12345678ull);
	assert_int_equal(waits_parse_syscall("-1 0x7ffd2000 0x401000\n", &nr, &sp, &pc), 0);
	assert_int_equal(nr, -1);
	assert_int_equal(sp, 0x7ffd2000ull);
	assert_int_equal(waits_parse_syscall("", &nr, NULL, NULL), -EINVAL);
	assert_int_equal(waits_parse_syscall("7 0x1 0x2\n", &nr, NULL, NULL), -EINVAL);
}

static void test_parse_stat(void **state)
{
	/* The stat state letter: target_parse_stat_state (test_target). */
	unsigned long long run = 0;
	assert_int_equal(waits_parse_schedstat("123456 789 10\n", &run), 0);
	assert_int_equal(run, 123456ull);
	assert_int_equal(waits_parse_schedstat("x", &run), -EINVAL);
	unsigned long long delay = 0;
	assert_int_equal(waits_parse_schedstat2("123456 789 10\n", &run, &delay), 0);
	assert_int_equal(delay, 789ull);
	assert_int_equal(waits_parse_schedstat2("123456\n", &run, &delay), -EINVAL);
}

/* The way into the kernel is no wait (issue 17 item 9). */
static void test_wchan_generic(void **state)
{
	static const char *const yes[] = {"do_syscall_64", "__do_syscall_64", "restart_syscall"};
	static const char *const no[] = {"hrtimer_nanosleep", "futex_wait_queue", "", NULL};

	CHECK_PRED(waits_wchan_generic, yes, no);
}

TEST_MAIN(NULL, NULL, TEST(test_wchan_generic), TEST(test_lock), TEST(test_io), TEST(test_sleep),
	  TEST(test_dstate_wins), TEST(test_running), TEST(test_other_named), TEST(test_names),
	  TEST(test_parse_syscall), TEST(test_parse_stat), TEST(test_restart_syscall),
	  TEST(test_of_funckind), TEST(test_epoll_idle), TEST(test_by_function))
