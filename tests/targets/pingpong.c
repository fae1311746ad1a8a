/*
 * pingpong — a switch-heavy target, a server and its load generator in
 * miniature: PAIRS pongs (default 2) in this process, each served by a ping
 * in a child process (the client, like `ab` beside a web server). A ping
 * sends a byte through a pipe, the pong does UNITS of arithmetic
 * (pong_work) and sends it back. Every pass is a wake-up and a context
 * switch between two processes, thousands a second (issue 24, item 3: the
 * per-CPU clock sampled finish_task_switch more often than per-task
 * events do).
 *
 *   pingpong [PAIRS [UNITS [SECONDS]]]   defaults: 2 pairs, 200 units
 *                                        (~50 us), run until killed
 *
 * Threads "pong-K" here, "ping-K" in the child, which dies with this
 * process (PR_SET_PDEATHSIG). Prints nothing.
 */
#include "target.h"

#include <signal.h>
#include <sys/prctl.h>

static uint64_t units = 200;

SPIN_LEAF(pong_work, 100)

struct pair {
	int ab[2], ba[2];
};

/* Wait for the byte on in, work (n units), pass it on through out;
 * forever. */
static KEEP void pong_loop(int in, int out, uint64_t n)
{
	uint64_t x = (uint64_t)in * 2654435761u + 1;
	char c = 0;

	for (;;) {
		if (read(in, &c, 1) != 1)
			_exit(1);
		if (n)
			x = pong_work(x, n);
		sink = x;
		if (write(out, &c, 1) != 1)
			_exit(1);
	}
}

/* The client: serves first, then only passes the byte back. */
static void *run_ping(void *arg)
{
	struct pair *p = arg;
	char c = 'x';
	if (write(p->ab[1], &c, 1) != 1)
		_exit(1);
	pong_loop(p->ba[0], p->ab[1], 0);
	return NULL;
}

static void *run_pong(void *arg)
{
	struct pair *p = arg;
	pong_loop(p->ab[0], p->ba[1], units);
	return NULL;
}

/* Start a thread named prefix-i running fn(p). */
static void start(void *(*fn)(void *), struct pair *p, const char *prefix, int i)
{
	pthread_t t;
	char name[16];
	if (pthread_create(&t, NULL, fn, p)) {
		fprintf(stderr, "pingpong: cannot start %s-%d\n", prefix, i);
		_exit(1);
	}
	snprintf(name, sizeof(name), "%s-%d", prefix, i);
	pthread_setname_np(t, name);
}

int main(int argc, char **argv)
{
	int pairs = argc > 1 ? atoi(argv[1]) : 2;
	double seconds = argc > 3 ? atof(argv[3]) : 0;
	if (argc > 2)
		units = (uint64_t)atoi(argv[2]);
	if (pairs < 1 || pairs > 64 || argc > 4 || units < 1 || seconds < 0) {
		fprintf(stderr, "usage: pingpong [PAIRS (1..64) [UNITS [SECONDS]]]\n");
		return 2;
	}
	struct pair *p = calloc((size_t)pairs, sizeof(*p));
	for (int i = 0; p && i < pairs; i++)
		if (pipe(p[i].ab) || pipe(p[i].ba))
			return 1;
	pid_t self = getpid(), child = p ? fork() : -1;
	if (child < 0)
		return 1;
	if (child == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != self)
			_exit(0);
		for (int i = 0; i < pairs; i++)
			start(run_ping, &p[i], "ping", i);
		sleep_forever();
	}
	for (int i = 0; i < pairs; i++)
		start(run_pong, &p[i], "pong", i);
	if (seconds > 0)
		sleep_s(seconds);
	else
		sleep_forever();
	return 0;
}
