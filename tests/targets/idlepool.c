/*
 * idlepool — a process that waits for work everywhere but in one thread,
 * for wall mode's "idle" against "lock" and "I/O" (issue 17, item 3).
 *
 *   idlepool [SECONDS]      default: runs until killed
 *
 *   thread     where it waits                                  wall kind
 *   main       pool_join: pthread_join on a worker              idle
 *   worker1-3  pool_worker: pthread_cond_wait, no job ever      idle
 *   sem        sem_waiter: sem_wait on a semaphore never posted idle
 *   loop       event_wait: epoll_wait on a pipe never written   idle
 *   reader     pipe_read: read() on a pipe never written        I/O
 *
 * So over the process (7 threads): idle 6/7 (86%), I/O 1/7 (14%), lock 0
 * and running about 0. The reader is not idle: a thread blocked reading a
 * pipe may be what the program waits for, so `i` must not hide it.
 */
#include "target.h"

#include <semaphore.h>
#include <sys/epoll.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int jobs;
static sem_t sem;
static int quiet_pipe[2], loop_pipe[2];

KEEP void pool_worker(void)
{
	pthread_mutex_lock(&mu);
	while (!jobs)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	NO_TAIL();
}

static void *worker(void *arg)
{
	char name[16];
	snprintf(name, sizeof(name), "worker%ld", (long)arg);
	pthread_setname_np(pthread_self(), name);
	for (;;)
		pool_worker();
	return NULL;
}

KEEP void sem_waiter(void)
{
	while (sem_wait(&sem) != 0)
		;
	NO_TAIL();
}

/* Defines name, a thread that calls itself comm and then calls fn for
 * good. */
#define LOOP_THREAD(name, comm, fn)                                                                \
	static void *name(void *arg)                                                               \
	{                                                                                          \
		pthread_setname_np(pthread_self(), comm);                                          \
		for (;;)                                                                           \
			fn();                                                                      \
		return NULL;                                                                       \
	}

LOOP_THREAD(sem_thread, "sem", sem_waiter)

KEEP void event_wait(int ep)
{
	struct epoll_event ev;
	epoll_wait(ep, &ev, 1, -1);
	NO_TAIL();
}

static void *loop_thread(void *arg)
{
	struct epoll_event ev = {.events = EPOLLIN};
	int ep = epoll_create1(0);
	pthread_setname_np(pthread_self(), "loop");
	if (ep >= 0)
		epoll_ctl(ep, EPOLL_CTL_ADD, loop_pipe[0], &ev);
	for (;;)
		event_wait(ep);
	return NULL;
}

KEEP void pipe_read(void)
{
	char c;
	if (read(quiet_pipe[0], &c, 1) < 0)
		sleep_s(0.1);
	NO_TAIL();
}

LOOP_THREAD(reader_thread, "reader", pipe_read)

KEEP void pool_join(pthread_t t)
{
	pthread_join(t, NULL);
	NO_TAIL();
}

static void *timer_thread(void *arg)
{
	sleep_s(*(double *)arg);
	exit(0);
}

int main(int argc, char **argv)
{
	static double seconds;
	pthread_t t[3], other;

	seconds = argc > 1 ? atof(argv[1]) : 0;
	if (argc > 2 || seconds < 0) {
		fprintf(stderr, "usage: idlepool [SECONDS]\n");
		return 2;
	}
	if (pipe(quiet_pipe) || pipe(loop_pipe) || sem_init(&sem, 0, 0))
		return 1;
	for (long i = 0; i < 3; i++)
		pthread_create(&t[i], NULL, worker, (void *)(i + 1));
	pthread_create(&other, NULL, sem_thread, NULL);
	pthread_create(&other, NULL, loop_thread, NULL);
	pthread_create(&other, NULL, reader_thread, NULL);
	if (seconds > 0) {
		/* The timer is an 8th thread only when asked to end. */
		pthread_create(&other, NULL, timer_thread, &seconds);
	}
	for (;;)
		pool_join(t[0]);
	return 0;
}
