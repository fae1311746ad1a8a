/* test_locks — the glibc layouts locks.c relies on (checked against this
 * machine's pthread types and live locks of this process), the decoder, the
 * syscall parser, and the wait-for graph with its cycle finder. */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "runner.h"

#include "stacktop/proc/locks.h"

/* ---- layout ---------------------------------------------------------------- */

static void test_mutex_layout(void **state)
{
	/* locks.c reads __owner 8 and __kind 16 bytes after the futex word. */
	assert_int_equal(offsetof(pthread_mutex_t, __data.__lock), 0);
	assert_int_equal(offsetof(pthread_mutex_t, __data.__owner), 8);
	assert_int_equal(offsetof(pthread_mutex_t, __data.__kind), 16);
	assert_int_equal(offsetof(pthread_rwlock_t, __data.__wrphase_futex), 8);
	assert_int_equal(offsetof(pthread_rwlock_t, __data.__writers_futex), 12);
	assert_int_equal(offsetof(pthread_rwlock_t, __data.__cur_writer), 24);
}

/* ---- live locks of this process ---------------------------------------------- */

struct waiter {
	pthread_mutex_t *m;
	pthread_cond_t *c;
	pthread_rwlock_t *rw;
	sem_t *sem;
	volatile pid_t tid;
	volatile int done;
};

static void *wait_mutex(void *arg)
{
	struct waiter *w = arg;

	w->tid = (pid_t)syscall(SYS_gettid);
	pthread_mutex_lock(w->m);
	pthread_mutex_unlock(w->m);
	w->done = 1;
	return NULL;
}

static void *wait_cond(void *arg)
{
	struct waiter *w = arg;

	w->tid = (pid_t)syscall(SYS_gettid);
	pthread_mutex_lock(w->m);
	while (!w->done)
		pthread_cond_wait(w->c, w->m);
	pthread_mutex_unlock(w->m);
	return NULL;
}

static void *wait_sem(void *arg)
{
	struct waiter *w = arg;

	w->tid = (pid_t)syscall(SYS_gettid);
	sem_wait(w->sem);
	return NULL;
}

static void *wait_rd(void *arg)
{
	struct waiter *w = arg;

	w->tid = (pid_t)syscall(SYS_gettid);
	pthread_rwlock_rdlock(w->rw);
	pthread_rwlock_unlock(w->rw);
	return NULL;
}

/* Poll until the waiter is blocked in futex (its syscall file says 202). */
static int read_blocked(struct waiter *w, enum locks_hint hint, struct locks_wait *out)
{
	int e = -ENOENT;

	for (int i = 0; i < 400; i++) {
		if (w->tid && (e = locks_read_thread(getpid(), w->tid, hint, out)) == 0)
			return 0;
		usleep(5000);
	}
	return e;
}

static void check_mutex_kind(int type, bool robust)
{
	pthread_mutexattr_t a;
	pthread_mutex_t m;
	struct waiter w = {.m = &m};
	struct locks_wait lw;
	pthread_t th;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, type);
	if (robust)
		pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(&m, &a);
	pthread_mutex_lock(&m);
	if (type == PTHREAD_MUTEX_RECURSIVE)
		pthread_mutex_lock(&m); /* held twice: the owner is still us */
	pthread_create(&th, NULL, wait_mutex, &w);
	assert_int_equal(read_blocked(&w, LOCKS_HINT_NONE, &lw), 0);
	assert_int_equal(lw.addr, (uint64_t)(uintptr_t)&m);
	assert_int_equal(lw.kind, robust ? LOCKS_KIND_ROBUST : LOCKS_KIND_MUTEX);
	assert_int_equal(lw.owner, (pid_t)syscall(SYS_gettid));
	/* The stack hint agrees. */
	assert_int_equal(read_blocked(&w, LOCKS_HINT_MUTEX, &lw), 0);
	assert_int_equal(lw.owner, (pid_t)syscall(SYS_gettid));
	if (type == PTHREAD_MUTEX_RECURSIVE)
		pthread_mutex_unlock(&m);
	pthread_mutex_unlock(&m);
	pthread_join(th, NULL);
	assert_true(w.done);
	pthread_mutex_destroy(&m);
}

static void test_live_normal(void **state)
{
	check_mutex_kind(PTHREAD_MUTEX_NORMAL, false);
}

static void test_live_recursive(void **state)
{
	check_mutex_kind(PTHREAD_MUTEX_RECURSIVE, false);
}

static void test_live_errorcheck(void **state)
{
	check_mutex_kind(PTHREAD_MUTEX_ERRORCHECK, false);
}

static void test_live_robust(void **state)
{
	check_mutex_kind(PTHREAD_MUTEX_NORMAL, true);
}

static void test_live_cond_no_owner(void **state)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t c = PTHREAD_COND_INITIALIZER;
	struct waiter w = {.m = &m, .c = &c};
	struct locks_wait lw;
	pthread_t th;

	pthread_create(&th, NULL, wait_cond, &w);
	assert_int_equal(read_blocked(&w, LOCKS_HINT_NONE, &lw), 0);
	/* Hold the mutex while looking: the cond's neighbour is a locked mutex. */
	pthread_mutex_lock(&m);
	assert_int_equal(read_blocked(&w, LOCKS_HINT_NONE, &lw), 0);
	assert_int_equal(lw.kind, LOCKS_KIND_NOOWNER);
	assert_int_equal(lw.owner, 0);
	assert_int_equal(read_blocked(&w, LOCKS_HINT_NOOWNER, &lw), 0);
	assert_int_equal(lw.owner, 0);
	w.done = 1;
	pthread_cond_signal(&c);
	pthread_mutex_unlock(&m);
	pthread_join(th, NULL);
}

static void test_live_sem_no_owner(void **state)
{
	sem_t s;
	struct waiter w = {.sem = &s};
	struct locks_wait lw;
	pthread_t th;

	sem_init(&s, 0, 0);
	pthread_create(&th, NULL, wait_sem, &w);
	assert_int_equal(read_blocked(&w, LOCKS_HINT_NONE, &lw), 0);
	assert_int_equal(lw.kind, LOCKS_KIND_NOOWNER);
	assert_int_equal(lw.owner, 0);
	sem_post(&s);
	pthread_join(th, NULL);
	sem_destroy(&s);
}

static void test_live_rwlock_writer(void **state)
{
	pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
	struct waiter w = {.rw = &rw};
	struct locks_wait lw;
	pthread_t th;

	pthread_rwlock_wrlock(&rw);
	pthread_create(&th, NULL, wait_rd, &w);
	/* Without a stack an rwlock is not told from a condition variable. */
	assert_int_equal(read_blocked(&w, LOCKS_HINT_NONE, &lw), 0);
	assert_int_equal(lw.owner, 0);
	assert_int_equal(read_blocked(&w, LOCKS_HINT_RDLOCK, &lw), 0);
	assert_int_equal(lw.kind, LOCKS_KIND_RWLOCK);
	assert_int_equal(lw.owner, (pid_t)syscall(SYS_gettid));
	pthread_rwlock_unlock(&rw);
	pthread_join(th, NULL);
}

/* ---- decoder -------------------------------------------------------------------- */

static bool alive_all(void *ctx, pid_t pid, pid_t tid)
{
	return tid != 999; /* 999 is dead */
}

static void put32(uint8_t *mem, int off, uint32_t v)
{
	memcpy(mem + LOCKS_MEM_BEFORE + off, &v, sizeof(v));
}

static void test_decode(void **state)
{
	uint8_t mem[LOCKS_MEM_SIZE] = {0};
	struct locks_futex f = {.addr = 0x1000, .op = 128, .val = 2};
	pid_t o;

	put32(mem, 0, 2);
	put32(mem, 8, 1234);
	put32(mem, 16, 1); /* recursive */
	assert_int_equal(locks_decode(&f, mem, true, LOCKS_HINT_NONE, 1, 1, alive_all, NULL, &o),
			 LOCKS_KIND_MUTEX);
	assert_int_equal(o, 1234);
	/* The waiter is never its own owner; a dead owner is unknown. */
	assert_int_equal(locks_decode(&f, mem, true, LOCKS_HINT_NONE, 1, 1234, alive_all, NULL, &o),
			 LOCKS_KIND_MUTEX);
	assert_int_equal(o, 0);
	put32(mem, 8, 999);
	locks_decode(&f, mem, true, LOCKS_HINT_NONE, 1, 1, alive_all, NULL, &o);
	assert_int_equal(o, 0);
	/* A __kind that is no mutex's: not a pthread mutex, no owner. */
	put32(mem, 8, 1234);
	put32(mem, 16, 0x41414141);
	locks_decode(&f, mem, true, LOCKS_HINT_NONE, 1, 1, alive_all, NULL, &o);
	assert_int_equal(o, 0);
	put32(mem, 16, 0);
	/* A condition variable (WAIT_BITSET) or a cond in the stack: never an owner. */
	f.op = 137;
	assert_int_equal(locks_decode(&f, mem, true, LOCKS_HINT_NONE, 1, 1, alive_all, NULL, &o),
			 LOCKS_KIND_NOOWNER);
	assert_int_equal(o, 0);
	f.op = 128;
	assert_int_equal(locks_decode(&f, mem, true, LOCKS_HINT_NOOWNER, 1, 1, alive_all, NULL, &o),
			 LOCKS_KIND_NOOWNER);
	assert_int_equal(o, 0);
	/* Robust: the owner is in the word. */
	f.op = 0;
	f.val = 0x80000000u | 4321;
	put32(mem, 0, 0x80000000u | 4321);
	assert_int_equal(locks_decode(&f, mem, true, LOCKS_HINT_NONE, 1, 1, alive_all, NULL, &o),
			 LOCKS_KIND_ROBUST);
	assert_int_equal(o, 4321);
	/* PI. */
	f.op = 6 | 128;
	put32(mem, 0, 0x80000000u | 77);
	assert_int_equal(locks_decode(&f, mem, true, LOCKS_HINT_NONE, 1, 1, alive_all, NULL, &o),
			 LOCKS_KIND_ROBUST);
	assert_int_equal(o, 77);
	/* rwlock: a reader waits on __wrphase_futex (8) for the writer in
	 * __cur_writer (24), with the value 1 | PTHREAD_RWLOCK_FUTEX_USED. */
	memset(mem, 0, sizeof(mem));
	f = (struct locks_futex){.addr = 0x1008, .op = 137, .val = 3};
	put32(mem, 24 - 8, 555);
	assert_int_equal(locks_decode(&f, mem, true, LOCKS_HINT_RDLOCK, 1, 1, alive_all, NULL, &o),
			 LOCKS_KIND_RWLOCK);
	assert_int_equal(o, 555);
	assert_int_equal(locks_decode(&f, mem, true, LOCKS_HINT_NONE, 1, 1, alive_all, NULL, &o),
			 LOCKS_KIND_NOOWNER); /* no stack: never from a BITSET wait */
	assert_int_equal(o, 0);
	assert_int_equal(locks_decode(&f, mem, false, LOCKS_HINT_RDLOCK, 1, 1, alive_all, NULL, &o),
			 LOCKS_KIND_RWLOCK); /* the bytes before the word are needed */
	assert_int_equal(o, 0);
	f.val = 0; /* a stale hint on a condition variable's wait */
	locks_decode(&f, mem, true, LOCKS_HINT_RDLOCK, 1, 1, alive_all, NULL, &o);
	assert_int_equal(o, 0);
	/* A writer waits on __writers_futex (12). */
	memset(mem, 0, sizeof(mem));
	f = (struct locks_futex){.addr = 0x100c, .op = 137, .val = 3};
	put32(mem, 24 - 12, 556);
	locks_decode(&f, mem, true, LOCKS_HINT_WRLOCK, 1, 1, alive_all, NULL, &o);
	assert_int_equal(o, 556);
	memset(mem, 0, sizeof(mem));
	/* Unreadable memory: a mutex with an unknown owner. */
	f = (struct locks_futex){.addr = 0x1000, .op = 128, .val = 2};
	assert_int_equal(locks_decode(&f, NULL, false, LOCKS_HINT_NONE, 1, 1, alive_all, NULL, &o),
			 LOCKS_KIND_MUTEX);
	assert_int_equal(o, 0);
}

static void test_hints(void **state)
{
	assert_int_equal(locks_hint_of_function("___pthread_cond_wait"), LOCKS_HINT_NOOWNER);
	assert_int_equal(locks_hint_of_function("__new_sem_wait_slow64"), LOCKS_HINT_NOOWNER);
	assert_int_equal(locks_hint_of_function("___pthread_mutex_lock"), LOCKS_HINT_MUTEX);
	assert_int_equal(locks_hint_of_function("__pthread_mutex_lock_full"), LOCKS_HINT_MUTEX);
	assert_int_equal(locks_hint_of_function("__pthread_mutex_clocklock_common"),
			 LOCKS_HINT_MUTEX);
	assert_int_equal(locks_hint_of_function("pthread_mutex_unlock"), LOCKS_HINT_NONE);
	assert_int_equal(locks_hint_of_function("__pthread_rwlock_rdlock_full64"),
			 LOCKS_HINT_RDLOCK);
	assert_int_equal(locks_hint_of_function("___pthread_rwlock_wrlock"), LOCKS_HINT_WRLOCK);
	assert_int_equal(locks_hint_of_function("main"), LOCKS_HINT_NONE);
	/* funckind's idle has no owner; a lock of no known layout says
	 * nothing (glibc's internal locks wait in __lll_lock_wait too). */
	assert_int_equal(locks_hint_of_function("pthread_join"), LOCKS_HINT_NOOWNER);
	assert_int_equal(locks_hint_of_function("pthread_barrier_wait"), LOCKS_HINT_NOOWNER);
	assert_int_equal(locks_hint_of_function("__lll_lock_wait"), LOCKS_HINT_NONE);
	assert_int_equal(locks_hint_of_function("std::mutex::lock()"), LOCKS_HINT_NONE);
	assert_int_equal(locks_hint_of_function("__futex_abstimed_wait_common"), LOCKS_HINT_NONE);
	assert_int_equal(locks_hint_of_function(NULL), LOCKS_HINT_NONE);
}

static void test_parse_syscall(void **state)
{
	struct locks_futex f;

	assert_int_equal(locks_parse_syscall("202 0x7f00000010a0 0x80 0x2 0x0 0x0 0x0 0x7ffd "
					     "0x7f12\n",
					     &f),
			 0);
	assert_int_equal(f.addr, 0x7f00000010a0ull);
	assert_int_equal(f.op, 128);
	assert_int_equal(f.val, 2);
	assert_int_equal(locks_parse_syscall("running\n", &f), -ENOENT);
	assert_int_equal(locks_parse_syscall("0 0x3 0x7f 0x10 0 0 0 0x1 0x2\n", &f), -ENOENT);
	assert_int_equal(locks_parse_syscall("-1 0x7ffd 0x7f12\n", &f), -ENOENT);
	assert_int_equal(locks_parse_syscall("202 zz\n", &f), -EINVAL);
	assert_int_equal(locks_parse_syscall("", &f), -EINVAL);
	assert_int_equal(locks_parse_syscall(NULL, &f), -EINVAL);
}

/* ---- graph -------------------------------------------------------------------- */

static void add(struct locks *g, pid_t tid, pid_t owner, uint64_t addr)
{
	struct locks_wait w = {
	    .pid = 1, .tid = tid, .addr = addr, .kind = LOCKS_KIND_MUTEX, .owner = owner};
	assert_int_equal(locks_add(g, &w), 0);
}

static void test_graph_abba_bystander(void **state)
{
	struct locks g = {0};

	/* 11 holds A wants B; 12 holds B wants A; 13 wants A (bystander);
	 * 14 waits on 13 (a chain into nothing, not a cycle). */
	add(&g, 12, 11, 0xa0);
	add(&g, 11, 12, 0xb0);
	add(&g, 13, 11, 0xa0);
	add(&g, 14, 13, 0xc0);
	assert_int_equal(locks_build(&g), 0);
	assert_int_equal(g.ncycles, 1);
	assert_int_equal(g.cycles[0].n, 2);
	assert_int_equal(g.tids[g.cycles[0].first], 11); /* starts at the lowest TID */
	assert_int_equal(g.tids[g.cycles[0].first + 1], 12);
	assert_int_equal(locks_find(&g, 11)->cycle, 1);
	assert_int_equal(locks_find(&g, 12)->cycle, 1);
	assert_int_equal(locks_find(&g, 13)->cycle, 0);
	assert_int_equal(locks_find(&g, 14)->cycle, 0);
	assert_int_equal(locks_find(&g, 13)->owner, 11);
	assert_null(locks_find(&g, 99));
	assert_int_equal(locks_waiters_on(&g, 11), 2);
	/* Built again after a reset: nothing stays. */
	locks_reset(&g);
	add(&g, 11, 0, 0xa0);
	assert_int_equal(locks_build(&g), 0);
	assert_int_equal(g.ncycles, 0);
	locks_free(&g);
}

static void test_graph_two_cycles_and_three(void **state)
{
	struct locks g = {0};

	add(&g, 30, 20, 1); /* 20 → 10 → 30 → 20 */
	add(&g, 20, 10, 2);
	add(&g, 10, 30, 3);
	add(&g, 40, 41, 4);
	add(&g, 41, 40, 5);
	add(&g, 50, 0, 6);  /* owner unknown */
	add(&g, 51, 52, 7); /* owner not waiting */
	assert_int_equal(locks_build(&g), 0);
	assert_int_equal(g.ncycles, 2);
	assert_int_equal(g.cycles[0].n, 3);
	assert_int_equal(g.tids[g.cycles[0].first], 10);
	assert_int_equal(g.tids[g.cycles[0].first + 1], 30);
	assert_int_equal(g.tids[g.cycles[0].first + 2], 20);
	assert_int_equal(g.cycles[1].n, 2);
	assert_int_equal(g.tids[g.cycles[1].first], 40);
	assert_int_equal(locks_find(&g, 50)->cycle, 0);
	assert_int_equal(locks_find(&g, 51)->cycle, 0);
	assert_int_equal(locks_find(&g, 41)->cycle, 2);
	locks_free(&g);
}

static void test_tally(void **state)
{
	struct locks g = {0};
	pid_t o[2];
	double sh[2];

	/* Three scans: 21 waits on 11 twice, then on 12; 22 on a futex with no owner. */
	for (int scan = 0; scan < 3; scan++) {
		locks_reset(&g);
		add(&g, 21, scan < 2 ? 11 : 12, 0xa0);
		struct locks_wait cv = {
		    .pid = 1, .tid = 22, .addr = 0xc0, .kind = LOCKS_KIND_NOOWNER};
		assert_int_equal(locks_add(&g, &cv), 0);
		assert_int_equal(locks_build(&g), 0);
		assert_int_equal(locks_tally(&g, 1.0), 0);
	}
	assert_int_equal(g.nhold, 1); /* 21 (on 11 and 12): nothing for 22 */
	assert_int_equal(g.hold[0].nowners, 2);
	assert_int_equal(locks_held_by(&g, 21, o, sh, 2), 2);
	assert_int_equal(o[0], 11);
	assert_float_equal(sh[0], 2.0 / 3, 1e-9);
	assert_int_equal(o[1], 12);
	assert_int_equal(locks_held_by(&g, 21, o, sh, 1), 1);
	assert_int_equal(o[0], 11);
	assert_int_equal(locks_held_by(&g, 22, o, sh, 2), 0);
	assert_int_equal(locks_held_by(&g, 21, o, sh, 0), 0);
	/* Decay: what is not seen again fades out. */
	locks_reset(&g);
	assert_int_equal(locks_build(&g), 0);
	for (int i = 0; i < 200; i++)
		assert_int_equal(locks_tally(&g, 0.9), 0);
	assert_int_equal(g.nhold, 0);
	locks_free(&g);
}

/* A target rotating the owner field of its mutexes each second, 2,100
 * waiters, for 300 scans with a minute's decay: the table keeps one entry
 * a waiter and LOCKS_HOLD_OWNERS owners at most (it grew by an entry per
 * waiter per scan: 563k entries), and the shares still name the owner a
 * waiter keeps seeing. */
static void test_tally_bounded(void **state)
{
	enum { WAITERS = 2100, SCANS = 300 };
	struct locks g = {0};
	pid_t o[2];
	double sh[2];

	for (int scan = 0; scan < SCANS; scan++) {
		locks_reset(&g);
		for (int t = 0; t < WAITERS; t++)
			add(&g, 10000 + t, t == 0 ? 7 : 20000 + scan, 0xa0 + (uint64_t)t * 64);
		assert_int_equal(locks_build(&g), 0);
		assert_int_equal(locks_tally(&g, 1.0 - 1.0 / 60), 0);
	}
	assert_int_equal(g.nhold, WAITERS);
	for (int i = 0; i < g.nhold; i++)
		assert_true(g.hold[i].nowners <= LOCKS_HOLD_OWNERS);
	assert_true(g.hold_cap <= 2 * WAITERS);
	assert_int_equal(locks_held_by(&g, 10000, o, sh, 2), 1);
	assert_int_equal(o[0], 7);
	assert_int_equal(locks_held_by(&g, 10001, o, sh, 2), 2);
	assert_int_equal(o[0], 20000 + SCANS - 1); /* the latest, least decayed */
	locks_free(&g);
}

static void test_graph_empty(void **state)
{
	struct locks g = {0};

	assert_int_equal(locks_build(&g), 0);
	assert_int_equal(g.ncycles, 0);
	assert_null(locks_find(&g, 1));
	assert_null(locks_find(NULL, 1));
	assert_string_equal(locks_kind_name(LOCKS_KIND_NOOWNER), "futex");
	locks_free(&g);
}

TEST_MAIN(NULL, NULL, TEST(test_mutex_layout), TEST(test_live_normal), TEST(test_live_recursive),
	  TEST(test_live_errorcheck), TEST(test_live_robust), TEST(test_live_cond_no_owner),
	  TEST(test_live_sem_no_owner), TEST(test_live_rwlock_writer), TEST(test_decode),
	  TEST(test_hints), TEST(test_parse_syscall), TEST(test_graph_abba_bystander),
	  TEST(test_graph_two_cycles_and_three), TEST(test_graph_empty), TEST(test_tally),
	  TEST(test_tally_bounded))
