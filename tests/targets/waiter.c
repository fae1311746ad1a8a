/*
 * waiter — a program that is slow without using CPU, for wall-clock mode
 * (issue 5). Every thread's wall time is known:
 *
 *   waiter [SECONDS]        default: runs until killed (SECONDS > 0: exits then)
 *
 *   thread   name       where its time goes                       share of wall
 *   main     "writer"   sleep in write_pipe (writes the pipe 1/s)  100% sleep
 *   2nd      "locker1"  50% lock in take_lock, 50% sleep in hold_lock
 *   3rd      "locker2"  the same, strictly alternating with locker1
 *   4th      "reader"   I/O in read_pipe (blocked in read)         100% I/O
 *   5th      "napper"   sleep in nap (nanosleep 0.5 s)             100% sleep
 *
 * So over the process (5 threads): lock 20% (take_lock), I/O 20%
 * (read_pipe), sleep 60% (nap 20%, hold_lock 20%, write_pipe 20%), running
 * about 0%. The lockers hand one mutex back and forth with a turn variable
 * and a condition variable (a plain mutex is unfair: the releasing thread
 * would often take it again), and hold it for 10 ms asleep, so CPU mode sees
 * almost nothing. Waiting for the turn is pthread_cond_wait → futex.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#if defined(__clang__)
#define KEEP __attribute__((noinline, used))
#else
#define KEEP __attribute__((noipa, used))
#endif
/* An empty asm after a call keeps it from becoming a tail call, so the
 * named function stays on the stack. */
#define NO_TAIL() __asm__ volatile("" ::: "memory")

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int turn;
static int pipefd[2];

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0)
		;
}

/* Wait (futex) until it is this locker's turn; returns holding mu. */
KEEP void take_lock(int me)
{
	pthread_mutex_lock(&mu);
	while (turn != me)
		pthread_cond_wait(&cv, &mu);
	NO_TAIL();
}

/* Hold the lock for 10 ms, asleep, then hand the turn over. */
KEEP void hold_lock(int me)
{
	sleep_ms(10);
	turn = !me;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	NO_TAIL();
}

static void *locker(void *arg)
{
	int me = (int)(long)arg;
	pthread_setname_np(pthread_self(), me ? "locker2" : "locker1");
	for (;;) {
		take_lock(me);
		hold_lock(me);
	}
	return NULL;
}

KEEP void read_pipe(void)
{
	char buf[64];
	if (read(pipefd[0], buf, sizeof(buf)) < 0)
		sleep_ms(100);
	NO_TAIL();
}

static void *reader(void *arg)
{
	pthread_setname_np(pthread_self(), "reader");
	for (;;)
		read_pipe();
	return NULL;
}

KEEP void nap(void)
{
	sleep_ms(500);
	NO_TAIL();
}

static void *napper(void *arg)
{
	pthread_setname_np(pthread_self(), "napper");
	for (;;)
		nap();
	return NULL;
}

KEEP void write_pipe(void)
{
	sleep_ms(1000);
	if (write(pipefd[1], "x", 1) < 0)
		sleep_ms(1);
	NO_TAIL();
}

int main(int argc, char **argv)
{
	long seconds = argc > 1 ? atol(argv[1]) : 0;
	pthread_t t;
	if (pipe(pipefd) < 0)
		return 1;
	pthread_setname_np(pthread_self(), "writer");
	if (pthread_create(&t, NULL, locker, (void *)0L) || pthread_create(&t, NULL, locker, (void *)1L) ||
	    pthread_create(&t, NULL, reader, NULL) || pthread_create(&t, NULL, napper, NULL))
		return 1;
	for (long i = 0; !seconds || i < seconds; i++)
		write_pipe();
	return 0;
}
