/*
 * deadlock — threads stuck on locks whose holders are known (issue 15):
 *
 *   deadlock [SECONDS]     default: runs until killed
 *
 *   thread       holds            waits on
 *   "alpha"      lock_a           lock_b      } AB-BA deadlock: the cycle
 *   "beta"       lock_b           lock_a      }
 *   "bystander"  -                lock_a      held by alpha, not in the cycle
 *   "holder"     lock_c (asleep)  -           a sleeping holder
 *   "contender"  -                lock_c      held by holder
 *   "condwait"   -                a condition variable: no owner
 *   "recursive"  lock_r twice     -           a recursive mutex (asleep)
 *   "recwaiter"  -                lock_r      held by recursive
 *   "writer"     rw for writing   -           an rwlock's writer (asleep)
 *   "reader"     -                rw          held by writer (known from the
 *                                             stack: wall mode and dump)
 *   main         -                -           sleeps
 *
 * The condition variable sits just before lock_c in one struct, so its
 * futex word's neighbours are a locked mutex's: a tool that took a
 * condition variable for a mutex would name holder as its owner. Nothing
 * here burns CPU; every waiter blocks in futex(2) for good.
 */
#include "target.h"

static pthread_mutex_t lock_a = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t lock_b = PTHREAD_MUTEX_INITIALIZER;
static struct {
	pthread_cond_t cv;
	pthread_mutex_t lock_c;
} near = {PTHREAD_COND_INITIALIZER, PTHREAD_MUTEX_INITIALIZER};
static pthread_mutex_t cv_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t lock_r;
static pthread_barrier_t ab_held;  /* alpha, beta and bystander: a and b are held */
static pthread_barrier_t c_r_held; /* holder, recursive, contender, recwaiter, writer, reader */
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;

KEEP void take_b_after_a(void)
{
	pthread_mutex_lock(&lock_a);
	pthread_barrier_wait(&ab_held);
	pthread_mutex_lock(&lock_b); /* never returns */
	NO_TAIL();
}

KEEP void take_a_after_b(void)
{
	pthread_mutex_lock(&lock_b);
	pthread_barrier_wait(&ab_held);
	pthread_mutex_lock(&lock_a); /* never returns */
	NO_TAIL();
}

KEEP void stand_by(void)
{
	pthread_barrier_wait(&ab_held);
	pthread_mutex_lock(&lock_a);
	NO_TAIL();
}

KEEP void hold_c_asleep(void)
{
	pthread_mutex_lock(&near.lock_c);
	pthread_barrier_wait(&c_r_held);
	sleep_forever();
}

KEEP void contend_c(void)
{
	pthread_barrier_wait(&c_r_held);
	pthread_mutex_lock(&near.lock_c);
	NO_TAIL();
}

KEEP void wait_cond(void)
{
	pthread_mutex_lock(&cv_mu);
	for (;;)
		pthread_cond_wait(&near.cv, &cv_mu);
}

KEEP void hold_r_twice(void)
{
	pthread_mutex_lock(&lock_r);
	pthread_mutex_lock(&lock_r);
	pthread_barrier_wait(&c_r_held);
	sleep_forever();
}

KEEP void wait_r(void)
{
	pthread_barrier_wait(&c_r_held);
	pthread_mutex_lock(&lock_r);
	NO_TAIL();
}

KEEP void write_asleep(void)
{
	pthread_rwlock_wrlock(&rw);
	pthread_barrier_wait(&c_r_held);
	sleep_forever();
}

KEEP void read_rw(void)
{
	pthread_barrier_wait(&c_r_held);
	pthread_rwlock_rdlock(&rw);
	NO_TAIL();
}

static void *run(void *arg)
{
	((void (*)(void))arg)();
	return NULL;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		void (*fn)(void);
	} th[] = {{"alpha", take_b_after_a},   {"beta", take_a_after_b}, {"bystander", stand_by},
		  {"holder", hold_c_asleep},   {"contender", contend_c}, {"condwait", wait_cond},
		  {"recursive", hold_r_twice}, {"recwaiter", wait_r},	 {"writer", write_asleep},
		  {"reader", read_rw}};
	pthread_mutexattr_t ra;
	pthread_t t;
	double seconds;

	if (arg_seconds(argc, argv, "deadlock [SECONDS]", &seconds))
		return 2;
	pthread_mutexattr_init(&ra);
	pthread_mutexattr_settype(&ra, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&lock_r, &ra);
	pthread_barrier_init(&ab_held, NULL, 3);
	pthread_barrier_init(&c_r_held, NULL, 6);
	for (size_t i = 0; i < sizeof(th) / sizeof(th[0]); i++)
		if (spawn_named(&t, run, (void *)th[i].fn, th[i].name))
			return 1;
	if (seconds > 0) {
		sleep_s(seconds);
		return 0;
	}
	sleep_forever();
}
