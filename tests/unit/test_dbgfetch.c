/*
 * test_dbgfetch — the debuginfod worker against a file:// "server" (a
 * directory laid out as debuginfod serves: buildid/HEX/debuginfo), which
 * libdebuginfod reads without a network: a wanted build-id arrives in the
 * background and is handed over once by dbgfetch_poll, an unknown one ends
 * missing, duplicates are asked once, and no server at all is refused.
 * DEBUGINFOD_CACHE_PATH is a temporary directory. Then sym over it: a
 * stripped module (symtest-buildid) is asked for once, and when its file
 * arrives sym_fetched rebuilds its table, so symtest_gamma gets its name.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "runner.h"

#include "stacktop/symbols/dbgfetch.h"
#include "stacktop/unwind/space.h"
#include "stacktop/symbols/sym.h"
#include "helpers.h"

static char dir[] = "/tmp/test_dbgfetch.XXXXXX";
static char url[256];
static const uint8_t id[4] = {0xde, 0xad, 0xbe, 0xef};
static const uint8_t unknown[4] = {0x01, 0x02, 0x03, 0x04};

static int setup(void **state)
{
	char path[256], cache[300];
	FILE *f;

	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof(path), "%s/srv/buildid/deadbeef", dir);
	snprintf(cache, sizeof(cache), "mkdir -p %s", path);
	if (system(cache) != 0)
		return -1;
	strcat(path, "/debuginfo");
	f = fopen(path, "w");
	if (!f)
		return -1;
	fputs("not really ELF, but a file", f);
	fclose(f);
	/* cafebabe: 3 MiB, over the 1 MiB cap test_too_big sets */
	snprintf(path, sizeof(path), "%s/srv/buildid/cafebabe", dir);
	snprintf(cache, sizeof(cache), "mkdir -p %s && head -c 3145728 /dev/zero >%s/debuginfo",
		 path, path);
	if (system(cache) != 0)
		return -1;
	snprintf(cache, sizeof(cache), "%s/cache", dir);
	setenv("DEBUGINFOD_CACHE_PATH", cache, 1);
	snprintf(url, sizeof(url), "file://%s/srv", dir);
	return 0;
}

static int teardown(void **state)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

struct got {
	int n;
	char path[512];
	uint8_t id[20];
	size_t len;
};

static void on_got(void *ctx, const uint8_t *bid, size_t len, const char *path)
{
	struct got *g = ctx;

	g->n++;
	snprintf(g->path, sizeof(g->path), "%s", path);
	memcpy(g->id, bid, len);
	g->len = len;
}

/* Poll until nothing is pending (at most 10 s). */
static void settle(struct dbgfetch *f, struct got *g)
{
	struct dbgfetch_stats st;

	for (int i = 0; i < 1000; i++) {
		dbgfetch_poll(f, on_got, g);
		dbgfetch_stats(f, &st);
		if (!st.pending)
			break;
		usleep(10000);
	}
	dbgfetch_poll(f, on_got, g);
}

static void test_fetch(void **state)
{
	struct dbgfetch *f;
	struct dbgfetch_stats st;
	struct got g = {0};
	struct stat sb;

	assert_int_equal(dbgfetch_new(url, 5, 0, &f), 0);
	assert_int_equal(dbgfetch_want(f, id, sizeof(id)), 0);
	assert_int_equal(dbgfetch_want(f, id, sizeof(id)), 0); /* asked once */
	assert_int_equal(dbgfetch_want(f, unknown, sizeof(unknown)), 0);
	settle(f, &g);
	assert_int_equal(g.n, 1);
	assert_int_equal(g.len, sizeof(id));
	assert_memory_equal(g.id, id, sizeof(id));
	/* the file is libdebuginfod's cached copy */
	assert_non_null(strstr(g.path, "/cache/deadbeef/debuginfo"));
	assert_int_equal(stat(g.path, &sb), 0);
	dbgfetch_stats(f, &st);
	assert_int_equal(st.pending, 0);
	assert_int_equal(st.found, 1);
	assert_int_equal(st.missing, 1);
	/* handed over once */
	assert_int_equal(dbgfetch_poll(f, on_got, &g), 0);
	assert_int_equal(g.n, 1);
	dbgfetch_free(f);
}

/* A server whose file is over the cap: missing, and nothing of it stays
 * in the cache (a hostile server cannot fill the disk). */
static void test_too_big(void **state)
{
	static const uint8_t big[4] = {0xca, 0xfe, 0xba, 0xbe};
	struct dbgfetch *f;
	struct dbgfetch_stats st;
	struct got g = {0};
	char cached[512];
	struct stat sb;

	assert_int_equal(dbgfetch_new(url, 5, 1u << 20, &f), 0);
	assert_int_equal(dbgfetch_want(f, big, sizeof(big)), 0);
	settle(f, &g);
	assert_int_equal(g.n, 0);
	dbgfetch_stats(f, &st);
	assert_int_equal(st.found, 0);
	assert_int_equal(st.missing, 1);
	snprintf(cached, sizeof(cached), "%s/cache/cafebabe/debuginfo", dir);
	assert_int_not_equal(stat(cached, &sb), 0);
	dbgfetch_free(f);
}

static void test_no_server(void **state)
{
	struct dbgfetch *f = NULL;
	char *old = getenv("DEBUGINFOD_URLS") ? strdup(getenv("DEBUGINFOD_URLS")) : NULL;

	unsetenv("DEBUGINFOD_URLS");
	assert_int_equal(dbgfetch_new(NULL, 5, 0, &f), -EINVAL);
	setenv("DEBUGINFOD_URLS", "", 1);
	assert_int_equal(dbgfetch_new(NULL, 5, 0, &f), -EINVAL);
	assert_null(f);
	if (old)
		setenv("DEBUGINFOD_URLS", old, 1);
	free(old);
	/* bad arguments */
	assert_int_equal(dbgfetch_new(url, 5, 0, &f), 0);
	assert_int_equal(dbgfetch_want(f, id, 0), -EINVAL);
	assert_int_equal(dbgfetch_want(f, id, 21), -EINVAL);
	dbgfetch_free(f);
	dbgfetch_free(NULL);
}

/* symtest-buildid (no .symtab, no debuglink) named through a fetched copy
 * of its unstripped twin, build/targets/symtest. */
static void test_sym_renames(void **state)
{
	char path[512], cmd[1200], hex[41];
	struct module *mod, *full;
	struct dbgfetch *f;
	struct sym_info si;
	struct sym *sy;
	GElf_Sym gs;
	unsigned gen;
	int k = 0;

	char abs[PATH_MAX];

	/* modules of processes have absolute paths; only those are fetched */
	assert_non_null(realpath("build/targets/symtest-buildid", abs));
	assert_int_equal(space_module_open_path(abs, &mod), 0);
	assert_int_equal(space_module_open_path("build/targets/symtest", &full), 0);
	assert_int_equal(elf_find_symbol(full->elf, SHT_SYMTAB, STT_FUNC, "symtest_gamma", &gs), 0);
	assert_true(mod->build_id_len > 0 && mod->build_id_len <= 20);
	for (size_t i = 0; i < mod->build_id_len; i++)
		sprintf(hex + 2 * i, "%02x", mod->build_id[i]);
	snprintf(path, sizeof(path), "%s/srv/buildid/%s", dir, hex);
	snprintf(cmd, sizeof(cmd), "mkdir -p %s && cp build/targets/symtest %s/debuginfo", path,
		 path);
	assert_int_equal(system(cmd), 0);

	assert_int_equal(sym_new(&sy), 0);
	assert_int_equal(dbgfetch_new(url, 5, 0, &f), 0);
	sym_set_fetch(sy, f);
	gen = sym_names_gen(sy);
	assert_int_equal(sym_resolve_module(sy, mod, "", gs.st_value, false, &si), 0);
	/* not yet (asked in the background): at most its eh_frame range's name */
	assert_true(si.func == NULL || si.by_range);
	for (int i = 0; i < 1000 && k == 0; i++) {
		k = sym_fetched(sy);
		if (!k)
			usleep(10000);
	}
	assert_int_equal(k, 1);
	assert_int_not_equal(sym_names_gen(sy), gen);
	assert_int_equal(sym_resolve_module(sy, mod, "", gs.st_value, true, &si), 0);
	assert_non_null(si.func);
	assert_string_equal(si.func, "symtest_gamma");
	assert_false(si.by_range);
	assert_non_null(si.file); /* and its lines, from the same file */
	assert_string_equal(si.file, "symtest.c");
	assert_int_equal(sym_fetched(sy), 0);
	sym_free(sy);
	dbgfetch_free(f);
	space_module_put(full);
	space_module_put(mod);
}

TEST_MAIN(setup, teardown, TEST(test_fetch), TEST(test_too_big), TEST(test_no_server),
	  TEST(test_sym_renames))
