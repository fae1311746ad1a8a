/*
 * helpers.h — what several unit tests share (header only, static inline):
 * sleeping, clocks, burning CPU, running the waiter test target (or a child of
 * parked threads) as a child to sample, and
 * finding a symbol in an ELF file. Include after the system headers and
 * cmocka.h.
 */
#ifndef STACKTOP_TEST_HELPERS_H
#define STACKTOP_TEST_HELPERS_H

#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "stacktop/proc/target.h"

#define WAITER "build/targets/waiter"

/* Write text to the file at path, opened with mode ("w" replaces, "a"
 * appends). */
static inline void put_text(const char *path, const char *mode, const char *text)
{
	FILE *f = fopen(path, mode);

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* Write the n bytes at p to the file at path, created 0644 if missing,
 * opened with flags (O_TRUNC replaces, O_APPEND appends). */
static inline void put_bytes(const char *path, const void *p, size_t n, int flags)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | flags, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, p, n), (ssize_t)n);
	close(fd);
}

static inline void rm_rf(const char *dir)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* A fake root for a target's files: a new directory from the mkdtemp
 * template root, with a tmp/ of mode in it. Remove it with rm_rf. */
static inline void fake_root(char *root, mode_t mode)
{
	char path[PATH_MAX];

	assert_non_null(mkdtemp(root));
	snprintf(path, sizeof(path), "%s/tmp", root);
	assert_int_equal(mkdir(path, mode), 0);
}

/* The 1-based line of the first occurrence of text in the file at path,
 * or -1 (no such file, or not found). */
static inline int line_of(const char *path, const char *text)
{
	FILE *f = fopen(path, "r");
	char line[512];
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		n++;
		if (strstr(line, text)) {
			fclose(f);
			return n;
		}
	}
	fclose(f);
	return -1;
}

static inline void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* CLOCK_MONOTONIC in microseconds, for timing a loop. */
static inline double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* Burn this much of the calling thread's CPU time (not wall time: on a busy
 * machine it may get only part of a core, and cpu-clock samples follow CPU
 * time). */
static inline void burn_cpu_s(double seconds)
{
	struct timespec t0, t;
	volatile uint64_t x = 1;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	do {
		for (int i = 0; i < 10000; i++)
			x = x * 6364136223846793005ull + 1;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	} while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
}

/* Fork a child held on a pipe made here: the child keeps only the read end
 * hold[0] (a read returns 0 once the parent closes hold[1]), the parent
 * only the write end hold[1]. Returns fork's pid (0 in the child). */
static inline pid_t fork_held(int hold[2])
{
	assert_int_equal(pipe(hold), 0);
	pid_t kid = fork();

	assert_true(kid >= 0);
	close(hold[kid == 0 ? 1 : 0]);
	return kid;
}

/* Start build/targets/waiter for 30 s and wait until its five threads exist
 * and are named, then settle_ms more. Skips the test when it is not built. */
static inline pid_t spawn_waiter(long settle_ms)
{
	if (access(WAITER, X_OK) != 0)
		skip();
	pid_t pid = fork();
	if (pid == 0) {
		execl(WAITER, WAITER, "30", (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 200; i++) {
		pid_t tids[64];
		int n = 0;
		char comm[32] = "";
		if (target_threads(pid, tids, 64, &n) == 0 && n == 5 &&
		    target_comm(pid, tids[4], comm, sizeof(comm)) == 0 &&
		    strcmp(comm, "napper") == 0)
			break;
		sleep_ms(10);
	}
	sleep_ms(settle_ms);
	return pid;
}

static inline void kill_reap(pid_t pid)
{
	int st;
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
}

/* A thread of spawn_parked's child: parked for good. */
static inline void *parked_thread(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

/* A child process of nthreads threads (its main one included), all
 * parked in pause(), killed with us (PDEATHSIG): its pid once every
 * thread exists, or -1 when it could not make them all. */
static inline pid_t spawn_parked(int nthreads)
{
	int ready[2];
	char c;

	if (pipe(ready))
		return -1;
	pid_t kid = fork();
	if (kid == 0) {
		pthread_attr_t a;
		pthread_t t;
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		pthread_attr_init(&a);
		pthread_attr_setstacksize(&a, 64 * 1024);
		for (int i = 1; i < nthreads; i++)
			if (pthread_create(&t, &a, parked_thread, NULL))
				_exit(1);
		if (write(ready[1], "x", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(ready[1]);
	bool up = kid > 0 && read(ready[0], &c, 1) == 1;
	close(ready[0]);
	if (kid > 0 && !up)
		kill_reap(kid);
	return up ? kid : -1;
}

/* A child (*victim) that pauses for good and a second one (*tracer) that
 * has PTRACE_SEIZEd it when this returns. Reap both with kill_reap. */
static inline void spawn_traced(pid_t *victim, pid_t *tracer)
{
	int ready[2];
	char ok = 0;

	*victim = fork();
	if (*victim == 0) {
		for (;;)
			pause();
	}
	assert_int_equal(pipe(ready), 0);
	*tracer = fork();
	if (*tracer == 0) {
		char c = ptrace(PTRACE_SEIZE, *victim, 0, 0) == 0 ? 'y' : 'n';
		if (write(ready[1], &c, 1) < 0)
			_exit(1);
		for (;;)
			pause();
	}
	assert_int_equal(read(ready[0], &ok, 1), 1);
	assert_int_equal(ok, 'y');
	close(ready[0]);
	close(ready[1]);
}

/* The first defined symbol called name in e's table of type sht
 * (SHT_SYMTAB or SHT_DYNSYM) whose ELF type is stt (-1: any): 0 with *out,
 * or -1. */
static inline int elf_find_symbol(Elf *e, GElf_Word sht, int stt, const char *name, GElf_Sym *out)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != sht || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			const char *nm;

			if (!gelf_getsym(d, (int)i, out) || out->st_shndx == SHN_UNDEF ||
			    (stt >= 0 && GELF_ST_TYPE(out->st_info) != stt))
				continue;
			nm = elf_strptr(e, sh.sh_link, out->st_name);
			if (nm && !strcmp(nm, name))
				return 0;
		}
	}
	return -1;
}

#endif
