/*
 * demo — the `make demo` workload: one process whose threads exercise every
 * view of stacktop. Plain C, runs until killed.
 *
 *   demo [SECONDS]        default: forever
 *
 * Threads (names set with pthread_setname_np, as the thread table shows them):
 *   "parser"    hot, ~100% CPU, a clear hot path:
 *               parse_file → parse_row → decode_field → checksum
 *               (checksum ~65% of its time, decode_field ~20% own,
 *               parse_row ~10% own, plus a little in format_report)
 *   "poller"    busy-polls a flag for ~2 ms, then sleeps ~18 ms: a low
 *               (~10%) CPU floor that never drops
 *   "sleeper"   sleeps in nanosleep, wakes once a second for a moment
 *   "waiter"    blocks in pthread_cond_wait, woken every 5 s by the sleeper
 *   "allocator" grows its heap in stairs: +4 MiB (touched) every 2 s up to
 *               256 MiB, then frees everything and climbs again
 *   main        ("demo") waits in pthread_join
 *
 * Built -O2 -g without frame pointers like every test target; the chain
 * functions are noipa so they survive as separate frames.
 */
#include "target.h"

#include <malloc.h>

/* ---- parser: the hot path ------------------------------------------------ */

KEEP uint32_t checksum(const unsigned char *p, size_t n)
{
	uint32_t h = 2166136261u;

	for (int round = 0; round < 16; round++)
		for (size_t i = 0; i < n; i++)
			h = (h ^ p[i]) * 16777619u;
	return h;
}

KEEP uint64_t decode_field(unsigned char *field, size_t n, uint64_t seed)
{
	uint64_t v = seed;

	/* "decode": a reversible scramble of the bytes, costing ~half of the
	 * checksum below */
	for (int round = 0; round < 4; round++)
		for (size_t i = 0; i < n; i++) {
			v = v * 6364136223846793005ULL + field[i];
			field[i] = (unsigned char)(field[i] ^ (v >> 56));
		}
	v ^= checksum(field, n);
	return v;
}

KEEP uint64_t parse_row(unsigned char *row, size_t n, uint64_t seed)
{
	uint64_t acc = seed;

	/* tokenising: find separators (own time of parse_row) */
	for (int round = 0; round < 3; round++)
		for (size_t i = 0; i < n; i++)
			acc += (row[i] == ',') ? i * 31 : row[i];
	for (size_t off = 0; off + 64 <= n; off += 64)
		acc ^= decode_field(row + off, 64, acc);
	return acc;
}

KEEP uint64_t format_report(uint64_t v)
{
	char buf[64];
	uint64_t acc = 0;

	for (int i = 0; i < 20; i++) {
		int len = snprintf(buf, sizeof(buf), "%016llx-%d", (unsigned long long)v, i);

		for (int k = 0; k < len; k++)
			acc += (unsigned char)buf[k];
	}
	return acc;
}

KEEP uint64_t parse_file(unsigned char *buf, size_t n, uint64_t seed)
{
	uint64_t acc = seed;

	for (size_t off = 0; off + 512 <= n; off += 512)
		acc += parse_row(buf + off, 512, acc);
	acc += format_report(acc);
	sink += acc;
	return acc;
}

KEEP void *run_parser(void *arg)
{
	static unsigned char buf[64 * 1024];
	uint64_t seed = 1;

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)((i * 7 + 3) % 91 + 32);
	for (;;)
		seed = parse_file(buf, sizeof(buf), seed);
	return NULL;
}

/* ---- poller: a low, steady CPU floor --------------------------------------- */

static volatile int ready_flag;

KEEP int poll_once(void)
{
	return ready_flag; /* never set: the poll always comes back empty */
}

KEEP void busy_poll(double seconds)
{
	double end = mono_s() + seconds;

	while (mono_s() < end)
		if (poll_once())
			break;
}

KEEP void *run_poller(void *arg)
{
	for (;;) {
		busy_poll(0.002);
		sleep_s(0.018);
	}
	return NULL;
}

/* ---- sleeper and waiter: off-CPU threads ----------------------------------- */

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static unsigned long wakeups;

KEEP void *run_sleeper(void *arg)
{
	for (unsigned long n = 1;; n++) {
		sleep_s(1);
		if (n % 5 == 0) {
			pthread_mutex_lock(&mu);
			wakeups++;
			pthread_cond_signal(&cv);
			pthread_mutex_unlock(&mu);
		}
	}
	return NULL;
}

KEEP void wait_for_work(unsigned long *seen)
{
	pthread_mutex_lock(&mu);
	while (wakeups == *seen)
		pthread_cond_wait(&cv, &mu);
	*seen = wakeups;
	pthread_mutex_unlock(&mu);
}

KEEP void *run_waiter(void *arg)
{
	unsigned long seen = 0;

	for (;;) {
		wait_for_work(&seen);
		sink += seen;
	}
	return NULL;
}

/* ---- allocator: memory in stairs ------------------------------------------- */

#define STEP_BYTES (4u << 20)
#define MAX_STEPS 64

KEEP void *grow_heap(void)
{
	void *p = malloc(STEP_BYTES);

	if (p)
		memset(p, 0xA5, STEP_BYTES); /* touch it, so RSS climbs */
	return p;
}

KEEP void *run_allocator(void *arg)
{
	void *blocks[MAX_STEPS];

	for (;;) {
		int n = 0;

		while (n < MAX_STEPS) {
			blocks[n] = grow_heap();
			if (blocks[n])
				n++;
			sleep_s(2);
		}
		while (n > 0)
			free(blocks[--n]);
	}
	return NULL;
}

/* ---- main ------------------------------------------------------------------ */

static void *run_timer(void *arg)
{
	sleep_s(*(double *)arg);
	exit(0);
}

int main(int argc, char **argv)
{
	static double seconds;
	pthread_t t[6];

	if (arg_seconds(argc, argv, "demo [SECONDS]", &seconds))
		return 2;
	/* A fixed mmap threshold: every 4 MiB step is its own mapping and free()
	 * returns it, so RSS climbs in stairs and drops every cycle (glibc's
	 * dynamic threshold would otherwise keep freed steps in the heap). */
	mallopt(M_MMAP_THRESHOLD, 1 << 20);
	pthread_setname_np(pthread_self(), "demo");
	if (spawn_named(&t[0], run_parser, NULL, "parser") ||
	    spawn_named(&t[1], run_poller, NULL, "poller") ||
	    spawn_named(&t[2], run_sleeper, NULL, "sleeper") ||
	    spawn_named(&t[3], run_waiter, NULL, "waiter") ||
	    spawn_named(&t[4], run_allocator, NULL, "allocator"))
		return 1;
	if (seconds > 0 && pthread_create(&t[5], NULL, run_timer, &seconds) == 0)
		pthread_setname_np(t[5], "timer");
	pthread_join(t[0], NULL);
	return 0;
}
