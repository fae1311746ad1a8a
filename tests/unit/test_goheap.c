/* Unit tests for runtime/goheap: a Go program built here holds 64 MiB it
 * allocated; goheap reads its heap from its memory (symbols and DWARF of
 * the unstripped build) within a sane range of that; the stripped build
 * says -ENODATA, a C program (this test) -ENOENT. Skipped without go. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "runner.h"

#include "stacktop/runtime/goheap.h"

#define MIB (1ull << 20)

/* 64 one-MiB slices kept live, one collection forced, then "ready". */
static const char prog[] = "package main\n"
			   "\n"
			   "import (\n\t\"fmt\"\n\t\"os\"\n\t\"runtime\"\n\t\"time\"\n)\n"
			   "\n"
			   "var keep [][]byte\n"
			   "\n"
			   "func main() {\n"
			   "\tfor i := 0; i < 64; i++ {\n"
			   "\t\tb := make([]byte, 1<<20)\n"
			   "\t\tfor j := range b {\n\t\t\tb[j] = byte(j)\n\t\t}\n"
			   "\t\tkeep = append(keep, b)\n"
			   "\t}\n"
			   "\truntime.GC()\n"
			   "\tfmt.Println(\"ready\")\n"
			   "\tos.Stdout.Sync()\n"
			   "\tfor {\n\t\ttime.Sleep(time.Second)\n\t\tkeep[0][0]++\n\t}\n"
			   "}\n";

static char dir[] = "/tmp/test_goheap.XXXXXX";
static bool have_go;

static int group_setup(void **state)
{
	char cmd[1024], path[512];
	FILE *f;

	(void)state;
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof(path), "%s/main.go", dir);
	if (!(f = fopen(path, "w")))
		return -1;
	fputs(prog, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd),
		 "cd %s && command -v go >/dev/null && export GO111MODULE=off GOFLAGS= "
		 "GOCACHE=%s/cache HOME=%s && go build -o plain main.go >/dev/null 2>&1 && "
		 "go build -ldflags='-s -w' -o stripped main.go >/dev/null 2>&1",
		 dir, dir, dir);
	have_go = system(cmd) == 0;
	return 0;
}

static int group_teardown(void **state)
{
	char cmd[600];

	(void)state;
	snprintf(cmd, sizeof(cmd), "chmod -R u+w %s; rm -rf %s", dir, dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Start dir/name; wait for its "ready" line. Its pid. */
static pid_t start(const char *name)
{
	char path[600], buf[16] = "";
	int p[2];
	pid_t pid;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(p[1], 1);
		execl(path, name, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	assert_true(read(p[0], buf, sizeof(buf) - 1) > 0);
	close(p[0]);
	assert_non_null(strstr(buf, "ready"));
	return pid;
}

static void stop(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* The test is skipped without Go; else start dir/name (*pid, for stop)
 * and open its heap into *g: goheap_open's return. */
static int start_open(const char *name, pid_t *pid, struct goheap **g)
{
	if (!have_go)
		skip();
	*pid = start(name);
	return goheap_open(*pid, g);
}

static void test_reads_allocated_heap(void **state)
{
	struct goheap *g;
	struct goheap_figures f;
	pid_t pid;
	int rc;

	(void)state;
	rc = start_open("plain", &pid, &g);
	if (rc) {
		stop(pid);
		fail_msg("goheap_open: %d", rc);
	}
	rc = goheap_read(g, &f);
	goheap_free(g);
	stop(pid);
	assert_int_equal(rc, 0);
	/* 64 MiB live after a collection: the runtime's own data beside it is
	 * a few MiB, not 64 more */
	assert_in_range(f.heap_used, 64 * MIB, 96 * MIB);
	assert_in_range(f.heap_committed, f.heap_used, 256 * MIB);
	assert_in_range(f.gc_count, 1, 1000);
	assert_true(f.gc_pause_s >= 0 && f.gc_pause_s < 60);
}

static void test_stripped_says_so(void **state)
{
	struct goheap *g = NULL;
	pid_t pid;
	int rc;

	(void)state;
	rc = start_open("stripped", &pid, &g);
	stop(pid);
	assert_int_equal(rc, -ENODATA);
	assert_null(g);
}

static void test_not_go(void **state)
{
	struct goheap *g = NULL;

	(void)state;
	assert_int_equal(goheap_open(getpid(), &g), -ENOENT);
	assert_null(g);
}

TEST_MAIN(group_setup, group_teardown, TEST(test_reads_allocated_heap), TEST(test_stripped_says_so),
	  TEST(test_not_go))
