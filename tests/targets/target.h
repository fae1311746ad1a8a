/*
 * target.h — what the test targets share: the attribute that keeps a named
 * function its own frame, the arithmetic they burn CPU with, clocks and
 * sleeps, and thread and argument boilerplate. Header only, all static
 * inline. stacktop shows an inlined function as a frame of its own (from
 * DWARF), so the work a target measures is a macro (SPIN), never one of
 * these helpers: its samples belong to the named function that runs it, and
 * a target's profile holds only the names its comment promises; a helper's
 * own code (a clock read, a sleep) is a small share of any stack.
 * Targets are built by `$(B)/targets/%` in the GNUmakefile, which lists this
 * file as a prerequisite.
 */
#ifndef STACKTOP_TEST_TARGET_H
#define STACKTOP_TEST_TARGET_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* A function that must appear in the profile under its own name: noipa (no
 * inlining, cloning or IPA) where the compiler has it. */
#if defined(__clang__)
#define KEEP __attribute__((noinline, used))
#else
#define KEEP __attribute__((noipa, used))
#endif

/* An empty asm after a call keeps it from becoming a tail call, so the
 * named function stays on the stack. */
#define NO_TAIL() __asm__ volatile("" ::: "memory")

/* Folded into its caller, whatever the optimiser thinks. */
#define TARGET_INLINE static inline __attribute__((always_inline))

/* Defeats dead-code elimination of the arithmetic. */
static volatile uint64_t sink __attribute__((unused));

/* The arithmetic every burner does: a 64-bit LCG plus a xorshift, a serial
 * dependency chain the compiler cannot vectorise or fold. A macro, not a
 * function, so each caller owns its loop (and its source line with -L). */
#define SPIN(x, n)                                                                                 \
	do {                                                                                       \
		for (uint64_t i_ = 0; i_ < (n); i_++) {                                            \
			(x) = (x)*6364136223846793005ULL + 1442695040888963407ULL;                 \
			(x) ^= (x) >> 29;                                                          \
		}                                                                                  \
	} while (0)

/* Defines name(x, units), a leaf that runs SPIN for k * units iterations
 * and returns x: a KEEP function, so its samples are a frame of its own
 * under that name (with -L, all of them on the line that uses the macro). */
#define SPIN_LEAF(name, k)                                                                         \
	KEEP uint64_t name(uint64_t x, uint64_t units)                                             \
	{                                                                                          \
		SPIN(x, (k)*units);                                                                \
		return x;                                                                          \
	}

/* Defines name, a thread start routine that runs fn() (which never
 * returns): a frame of its own under name, with fn's beneath it. */
#define THREAD_RUNS(name, fn)                                                                      \
	static void *name(void *arg)                                                               \
	{                                                                                          \
		fn();                                                                              \
		return NULL;                                                                       \
	}

/* One xorshift64 step: per-round jitter, so a round never locks in phase
 * with a sampling timer. */
TARGET_INLINE uint64_t xorshift64(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

TARGET_INLINE double clock_s(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

TARGET_INLINE double mono_s(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

TARGET_INLINE double thread_cpu_s(void)
{
	return clock_s(CLOCK_THREAD_CPUTIME_ID);
}

/* Sleep s seconds, resumed after a signal handler; nothing for s <= 0. */
TARGET_INLINE void sleep_s(double s)
{
	struct timespec ts = {.tv_sec = (time_t)s,
			      .tv_nsec = (long)((s - (double)(time_t)s) * 1e9)};

	if (s <= 0)
		return;
	while (nanosleep(&ts, &ts) != 0)
		;
}

/* Move the absolute deadline *next on by ns and sleep until it: a periodic
 * step whose rate does not drift with the work done in it. */
TARGET_INLINE void tick_abs(struct timespec *next, long ns)
{
	next->tv_nsec += ns;
	while (next->tv_nsec >= 1000000000) {
		next->tv_nsec -= 1000000000;
		next->tv_sec++;
	}
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, next, NULL) != 0)
		;
}

/* How many SPIN iterations take unit_s of this thread's CPU time: the
 * fastest of three ~10 ms runs, so a preemption does not skew it. */
TARGET_INLINE uint64_t spin_calibrate(double unit_s)
{
	uint64_t n = 1 << 16, x = 1;
	double best = 1e9;

	for (;;) {
		double t0 = thread_cpu_s();

		SPIN(x, n);
		if (thread_cpu_s() - t0 >= 0.01)
			break;
		n *= 2;
	}
	for (int k = 0; k < 3; k++) {
		double t0 = thread_cpu_s();

		SPIN(x, n);
		double dt = thread_cpu_s() - t0;

		if (dt < best)
			best = dt;
	}
	sink += x;
	uint64_t per = (uint64_t)(n * unit_s / best);
	return per ? per : 1;
}

/* Sleep for good, a second at a time. */
TARGET_INLINE void sleep_forever(void)
{
	for (;;)
		sleep_s(1);
}

/* Block for good in pthread_cond_wait on a condition nobody signals. */
TARGET_INLINE void block_forever(void)
{
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;

	pthread_mutex_lock(&mu);
	for (;;)
		pthread_cond_wait(&cv, &mu);
}

/* Start fn(arg) in a thread called name; says why on stderr and returns -1
 * if it cannot. */
TARGET_INLINE int spawn_named(pthread_t *t, void *(*fn)(void *), void *arg, const char *name)
{
	int err = pthread_create(t, NULL, fn, arg);

	if (err) {
		fprintf(stderr, "%s: pthread_create: %s\n", program_invocation_short_name,
			strerror(err));
		return -1;
	}
	pthread_setname_np(*t, name);
	return 0;
}

/* The optional SECONDS argument of `NAME [SECONDS]` (0 when absent): -1
 * after printing usage (then exit 2) if there are more arguments or it is
 * negative. */
TARGET_INLINE int arg_seconds(int argc, char **argv, const char *usage, double *seconds)
{
	*seconds = argc > 1 ? atof(argv[1]) : 0;
	if (argc > 2 || *seconds < 0) {
		fprintf(stderr, "usage: %s\n", usage);
		return -1;
	}
	return 0;
}

/* ---- for the hostile targets: their own code copied and mapped elsewhere,
 * JIT code written by hand ---- */

/* File offset of addr in our executable, from /proc/self/maps; -1 when
 * no mapping holds it. */
TARGET_INLINE long file_offset_of(const void *addr)
{
	unsigned long a, b, off, pc = (unsigned long)addr;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	long ret = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %*s %lx", &a, &b, &off) == 3 && a <= pc && pc < b) {
			ret = (long)(pc - a + off);
			break;
		}
	}
	fclose(f);
	return ret;
}

/* Copy our executable to path (mode 0755), its size into *size. 0 or -1. */
TARGET_INLINE int copy_self(const char *to, size_t *size)
{
	char buf[65536];
	int in = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	ssize_t r;

	*size = 0;
	if (in < 0 || out < 0)
		return -1;
	while ((r = read(in, buf, sizeof(buf))) > 0) {
		if (write(out, buf, (size_t)r) != r)
			return -1;
		*size += (size_t)r;
	}
	close(in);
	close(out);
	return r < 0 ? -1 : 0;
}

/* Open path (flags, close-on-exec) and map size bytes of it readable and
 * executable, as the loader maps code; the descriptor stays in *fd. NULL,
 * said on stderr, if either fails. */
TARGET_INLINE char *map_code(const char *path, int flags, size_t size, int *fd)
{
	void *base;

	*fd = open(path, flags | O_CLOEXEC);
	if (*fd < 0)
		return perror(path), NULL;
	base = mmap(NULL, size, PROT_READ | PROT_EXEC, MAP_PRIVATE, *fd, 0);
	if (base == MAP_FAILED)
		return perror("mmap"), NULL;
	return base;
}

/* Copy our executable to dir/name (copy_self; path[len] gets the path)
 * and map the copy (map_code). */
TARGET_INLINE char *map_self_copy(char *path, size_t len, const char *dir, const char *name,
				  int flags, size_t *size, int *fd)
{
	snprintf(path, len, "%s/%s", dir, name);
	if (copy_self(path, size))
		return perror(path), NULL;
	return map_code(path, flags, *size, fd);
}

/* x86-64 code that counts n down and returns, 10 bytes at p:
 * mov $n, %ecx; 1: dec %ecx; jnz 1b; ret */
TARGET_INLINE void emit_countdown(unsigned char *p, uint32_t n)
{
	static const unsigned char tail[] = {0xff, 0xc9, 0x75, 0xfc, 0xc3};

	p[0] = 0xb9;
	memcpy(p + 1, &n, 4);
	memcpy(p + 5, tail, sizeof(tail));
}

/* Call the n functions at code, slot bytes apart (emit_countdown's), over
 * and over until the clock reaches until; the time then. */
TARGET_INLINE time_t run_code_until(const unsigned char *code, int n, int slot, time_t until)
{
	time_t now;

	do {
		for (int i = 0; i < n; i++)
			((void (*)(void))(code + i * slot))();
		now = time(NULL);
	} while (now < until);
	return now;
}

#endif
