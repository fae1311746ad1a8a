/* Unit tests for export: folded text exactly (merging, per-thread roots,
 * [k] marks, hidden kernel, thread filter, zoom, name cleaning), pprof
 * decoded back with zlib + protobuf-c, speedscope JSON parsed by python3's
 * json module, and the file rules (no overwrite without force, symlinks
 * refused, disk full and unwritable directories as one sentence, nothing
 * left behind on failure). */
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <cmocka.h>

#include "runner.h"

#include "profile.pb-c.h"
#include "stacktop/formats/diffload.h"
#include "stacktop/formats/export.h"
#include "stacktop/symbols/frames.h"
#include "stacktop/formats/report.h"
#include "stacktop/formats/stackset.h"
#include "stacktop/model/spikes.h"
#include "stacktop/model/summary.h"
#include "stacktop/proc/metrics.h"
#include "stacktop/model/window.h"
#include "gunzip.h"
#include "window_fixture.h"

static uint32_t fr(struct window *w, uint64_t pc, bool kernel, const char *mod, const char *func,
		   const char *file, int line)
{
	return window_fx_row(w, &(struct window_fx_row){pc, kernel, mod, func, file, line}, 0x1a2b);
}

/*
 * tid 100: main;work@0x1010;leaf_a ×6 and main;work@0x1020;leaf_a ×4
 * tid 101: main;work@0x1010;leaf_b ×3 and main;libx.so+0x1a2b;do_syscall_64[k] ×1
 */
static struct window *known_window(void)
{
	enum { MN, W1, W2, LA, LB, LX, K };
	static const struct window_fx_row rows[] = {
	    [MN] = {0x1000, false, "prog", "main", "main.c", 10},
	    [W1] = {0x1010, false, "prog", "work", "work.c", 21},
	    [W2] = {0x1020, false, "prog", "work", "work.c", 22},
	    [LA] = {0x1100, false, "prog", "leaf_a", "leaf.c", 5},
	    [LB] = {0x1200, false, "prog", "leaf_b", "leaf.c", 9},
	    [LX] = {0x7000, false, "libx.so", NULL, NULL, 0},
	    [K] = {0xffffffff81000000ull, true, "[kernel]", "do_syscall_64", NULL, 0},
	};
	static const struct window_fx_stack stacks[] = {
	    {5, 100, 6, 3, {MN, W1, LA}},
	    {5, 100, 4, 3, {MN, W2, LA}},
	    {5, 101, 3, 3, {MN, W1, LB}},
	    {5, 101, 1, 3, {MN, LX, K}},
	};

	return WINDOW_FX_TABLE(rows, 0x1a2b, stacks);
}

static const char *names(void *ctx, int tid)
{
	return tid == 100 ? "worker" : NULL;
}

static char *render(struct window *w, const struct export_opts *o, size_t *len)
{
	char *buf, err[256];
	size_t n;

	assert_int_equal(export_render(w, o, &buf, &n, err, sizeof(err)), 0);
	if (len)
		*len = n;
	return buf;
}

static void test_formats(void **state)
{
	/* by name (parse) or by file name (from_path); f checked on success */
	static const struct {
		bool path;
		const char *s;
		int ret;
		enum export_format f;
	} cases[] = {
	    {false, "pprof", 0, EXPORT_PPROF},
	    {false, "speedscope", 0, EXPORT_SPEEDSCOPE},
	    {false, "folded", 0, EXPORT_FOLDED},
	    {false, "svg", -EINVAL, 0},
	    {true, "/tmp/x.pb.gz", 0, EXPORT_PPROF},
	    {true, "a.pprof", 0, EXPORT_PPROF},
	    {true, "a.speedscope.json", 0, EXPORT_SPEEDSCOPE},
	    {true, "a.folded", 0, EXPORT_FOLDED},
	    {true, "a.txt", 0, EXPORT_FOLDED},
	    {true, "a.svg", -EINVAL, 0},
	    {true, ".folded", -EINVAL, 0},
	};
	enum export_format f;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = cases[i].path ? export_format_from_path(cases[i].s, &f)
				       : export_format_parse(cases[i].s, &f);

		assert_int_equal(rc, cases[i].ret);
		if (rc == 0)
			assert_int_equal(f, cases[i].f);
	}
	assert_string_equal(export_format_ext(EXPORT_PPROF), ".pb.gz");
}

/* w rendered as o says is exactly want. */
static void assert_renders(struct window *w, const struct export_opts *o, const char *want)
{
	char *s = render(w, o, NULL);

	assert_string_equal(s, want);
	free(s);
}

static void test_folded(void **state)
{
	static const char *const zoom_work[] = {"main", "work"}, *const zoom_nope[] = {"main",
										       "nope"};
	const struct {
		struct export_opts o;
		const char *want;
	} cases[] = {
	    /* the two pcs of work merge; kernel frame marked; unknown function
	     * named module+offset; lines sorted */
	    {{.format = EXPORT_FOLDED},
	     "main;libx.so+0x1a2b;do_syscall_64_[k] 1\nmain;work;leaf_a 10\nmain;work;leaf_b 3\n"},
	    {{.format = EXPORT_FOLDED, .per_thread = true, .thread_name = names},
	     "thread-101;main;libx.so+0x1a2b;do_syscall_64_[k] 1\nthread-101;main;work;leaf_b 3\n"
	     "worker-100;main;work;leaf_a 10\n"},
	    {{.format = EXPORT_FOLDED, .thread_name = names, .hide_kernel = true},
	     "main;libx.so+0x1a2b 1\nmain;work;leaf_a 10\nmain;work;leaf_b 3\n"},
	    {{.format = EXPORT_FOLDED, .thread_name = names, .tid = 101},
	     "main;libx.so+0x1a2b;do_syscall_64_[k] 1\nmain;work;leaf_b 3\n"},
	    {{.format = EXPORT_FOLDED, .thread_name = names, .zoom = zoom_work, .nzoom = 2},
	     "main;work;leaf_a 10\nmain;work;leaf_b 3\n"},
	    {{.format = EXPORT_FOLDED, .thread_name = names, .zoom = zoom_nope, .nzoom = 2}, ""},
	};
	struct window *w = known_window();

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_renders(w, &cases[i].o, cases[i].want);
	window_free_fx(w);
}

static void test_folded_names_cleaned(void **state)
{
	struct window *w;
	struct export_opts o = {.format = EXPORT_FOLDED};
	uint32_t a, b;

	assert_int_equal(window_new_fx(60, 1000000000ull, &w), 0);
	a = fr(w, 1, false, "m", "op;er\x01\n", NULL, 0);
	b = fr(w, 2, false, "m", "caf\xc3\xa9 bad\xff", NULL, 0);
	assert_int_equal(window_add(w, 0, 1, (uint32_t[]){a, b}, 2, 2), 0);
	/* ';' and control characters would break the line format; invalid
	 * UTF-8 becomes '?', valid UTF-8 and spaces stay */
	assert_renders(w, &o, "op?er??;caf\xc3\xa9 bad? 2\n");
	window_free_fx(w);
}

/* gunzip + protobuf-c unpack, as a reader would. */
static Perftools__Profiles__Profile *decode_pprof(const char *gz, size_t n)
{
	size_t rawn;
	const uint8_t *raw;

	assert_true(n > 2 && (uint8_t)gz[0] == 0x1f && (uint8_t)gz[1] == 0x8b);
	raw = gunzip(gz, n, &rawn);
	Perftools__Profiles__Profile *p = perftools__profiles__profile__unpack(NULL, rawn, raw);
	assert_non_null(p);
	return p;
}

/* w rendered as pprof (*gz) and decoded back; free both with pprof_free. */
static Perftools__Profiles__Profile *render_pprof(struct window *w, const struct export_opts *o,
						  char **gz)
{
	size_t n;

	*gz = render(w, o, &n);
	return decode_pprof(*gz, n);
}

static void pprof_free(Perftools__Profiles__Profile *p, char *gz)
{
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(gz);
}

static const char *pstr(const Perftools__Profiles__Profile *p, int64_t i)
{
	assert_true(i >= 0 && (size_t)i < p->n_string_table);
	return p->string_table[i];
}

static const Perftools__Profiles__Function *pfn(const Perftools__Profiles__Profile *p,
						uint64_t loc_id)
{
	for (size_t i = 0; i < p->n_location; i++)
		if (p->location[i]->id == loc_id) {
			assert_int_equal(p->location[i]->n_line, 1);
			for (size_t k = 0; k < p->n_function; k++)
				if (p->function[k]->id == p->location[i]->line[0]->function_id)
					return p->function[k];
		}
	fail_msg("location %llu or its function missing", (unsigned long long)loc_id);
	return NULL;
}

static void test_pprof(void **state)
{
	struct window *w = known_window();
	struct export_opts o = {.format = EXPORT_PPROF,
				.period_s = 0.01,
				.duration_s = 5,
				.mode = "cpu",
				.thread_name = names,
				.cmdline = "prog --x"};
	char *gz;
	Perftools__Profiles__Profile *p = render_pprof(w, &o, &gz);
	int64_t sum0 = 0, sum1 = 0;
	bool seen_a = false, seen_k = false;

	assert_string_equal(pstr(p, 0), "");
	assert_int_equal(p->n_sample_type, 2);
	assert_string_equal(pstr(p, p->sample_type[0]->type), "samples");
	assert_string_equal(pstr(p, p->sample_type[0]->unit), "count");
	assert_string_equal(pstr(p, p->sample_type[1]->type), "cpu");
	assert_string_equal(pstr(p, p->sample_type[1]->unit), "nanoseconds");
	assert_non_null(p->period_type);
	assert_string_equal(pstr(p, p->period_type->type), "cpu");
	assert_int_equal(p->period, 10000000);
	assert_int_equal(p->duration_nanos, 5000000000ll);
	assert_string_equal(pstr(p, p->default_sample_type), "cpu");
	assert_true(p->n_comment >= 1);
	assert_non_null(strstr(pstr(p, p->comment[0]), "prog --x"));
	/* one location per pc (7), one function per (name, file) (6),
	 * one mapping per module (prog, libx.so, [kernel]) */
	assert_int_equal(p->n_location, 7);
	assert_int_equal(p->n_function, 6);
	assert_int_equal(p->n_mapping, 3);
	assert_int_equal(p->n_sample, 4);
	for (size_t i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];
		const Perftools__Profiles__Function *leaf = pfn(p, s->location_id[0]);
		const Perftools__Profiles__Function *root =
		    pfn(p, s->location_id[s->n_location_id - 1]);
		int64_t tid = 0;

		assert_int_equal(s->n_value, 2);
		assert_int_equal(s->value[1], s->value[0] * 10000000);
		sum0 += s->value[0];
		sum1 += s->value[1];
		assert_int_equal(s->n_location_id, 3);
		assert_string_equal(pstr(p, root->name), "main");
		assert_string_equal(pstr(p, root->filename), "main.c");
		for (size_t k = 0; k < s->n_label; k++)
			if (!strcmp(pstr(p, s->label[k]->key), "tid"))
				tid = s->label[k]->num;
		if (!strcmp(pstr(p, leaf->name), "leaf_a")) {
			seen_a = true;
			assert_int_equal(tid, 100);
			assert_true(s->value[0] == 6 || s->value[0] == 4);
			assert_string_equal(pstr(p, leaf->filename), "leaf.c");
		}
		if (!strcmp(pstr(p, leaf->name), "do_syscall_64")) {
			seen_k = true;
			assert_int_equal(tid, 101);
			assert_int_equal(s->value[0], 1);
			assert_string_equal(pstr(p, pfn(p, s->location_id[1])->name),
					    "libx.so+0x1a2b");
		}
	}
	assert_true(seen_a && seen_k);
	assert_int_equal(sum0, 14);
	assert_int_equal(sum1, 140000000);
	for (size_t i = 0; i < p->n_location; i++) {
		const Perftools__Profiles__Location *l = p->location[i];
		const Perftools__Profiles__Mapping *m = NULL;
		for (size_t k = 0; k < p->n_mapping; k++)
			if (p->mapping[k]->id == l->mapping_id)
				m = p->mapping[k];
		assert_non_null(m);
		assert_true(l->address >= m->memory_start && l->address < m->memory_limit);
		if (l->address == 0x1010)
			assert_int_equal(l->line[0]->line, 21);
		if (l->address == 0x1020)
			assert_int_equal(l->line[0]->line, 22);
		if (l->address == 0xffffffff81000000ull)
			assert_string_equal(pstr(p, m->filename), "[kernel]");
	}
	pprof_free(p, gz);

	/* wall mode, no period: only the count */
	o.mode = "wall";
	o.period_s = 0;
	p = render_pprof(w, &o, &gz);
	assert_int_equal(p->n_sample_type, 1);
	assert_null(p->period_type);
	pprof_free(p, gz);
	o.period_s = 0.5;
	p = render_pprof(w, &o, &gz);
	assert_string_equal(pstr(p, p->sample_type[1]->type), "wall");
	assert_int_equal(p->period, 500000000);
	pprof_free(p, gz);
	window_free_fx(w);
}

/* Run python3 on the JSON and return its one-line summary. */
static void py_summary(const char *path, char *out, size_t size)
{
	char cmd[1024];
	FILE *f;

	snprintf(
	    cmd, sizeof(cmd),
	    "python3 -c 'import json,sys\n"
	    "d=json.load(open(sys.argv[1],encoding=\"utf-8\"))\n"
	    "assert d[\"$schema\"]==\"https://www.speedscope.app/file-format-schema.json\"\n"
	    "fr=d[\"shared\"][\"frames\"]\n"
	    "out=[]\n"
	    "for p in d[\"profiles\"]:\n"
	    "  assert p[\"type\"]==\"sampled\" and len(p[\"samples\"])==len(p[\"weights\"])\n"
	    "  assert abs(sum(p[\"weights\"])-p[\"endValue\"])<1e-9 and p[\"startValue\"]==0\n"
	    "  leaves=sorted(set(fr[s[-1]][\"name\"] for s in p[\"samples\"]))\n"
	    "  out.append(\"%%s:%%s:%%d:%%g:%%s\"%%(p[\"name\"],p[\"unit\"],len(p[\"samples\"]),"
	    "round(sum(p[\"weights\"]),9),\",\".join(leaves)))\n"
	    "print(len(fr),\" \".join(out))' %s",
	    path);
	assert_non_null(f = popen(cmd, "r"));
	out[0] = '\0';
	if (!fgets(out, (int)size, f))
		out[0] = '\0';
	out[strcspn(out, "\n")] = '\0';
	assert_int_equal(pclose(f), 0);
}

static void test_speedscope(void **state)
{
	struct window *w = known_window();
	struct export_opts o = {
	    .format = EXPORT_SPEEDSCOPE, .period_s = 0.01, .cmdline = "prog \"q\""};
	char dir[] = "/tmp/test_export.XXXXXX", path[256], err[256], sum[1024];
	char *s;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/p.speedscope.json", dir);
	assert_int_equal(export_write(w, &o, path, err, sizeof(err)), 0);
	py_summary(path, sum, sizeof(sum));
	/* frames by (name, file): main work leaf_a leaf_b libx kernel = 6 */
	assert_string_equal(sum, "6 prog \"q\":seconds:4:0.14:do_syscall_64,leaf_a,leaf_b");
	unlink(path);

	o.per_thread = true;
	o.thread_name = names;
	o.period_s = 0;
	assert_int_equal(export_write(w, &o, path, err, sizeof(err)), 0);
	py_summary(path, sum, sizeof(sum));
	assert_string_equal(
	    sum, "6 worker-100:none:2:10:leaf_a thread-101:none:2:4:do_syscall_64,leaf_b");
	unlink(path);
	rmdir(dir);

	/* the file line of a frame is there */
	o.per_thread = false;
	s = render(w, &o, NULL);
	assert_non_null(strstr(s, "{\"name\":\"work\",\"file\":\"work.c\",\"line\":21}"));
	free(s);
	window_free_fx(w);
}

static size_t count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static char *slurp(const char *path)
{
	static char buf[65536];
	int fd = open(path, O_RDONLY);
	ssize_t n;

	assert_true(fd >= 0);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	assert_true(n >= 0);
	buf[n] = '\0';
	return buf;
}

static void test_file_rules(void **state)
{
	struct window *w = known_window();
	struct export_opts o = {.format = EXPORT_FOLDED};
	char dir[] = "/tmp/test_export.XXXXXX", path[256], link_path[256], victim[256], err[256];
	struct stat st;
	int fd;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/out.folded", dir);
	snprintf(link_path, sizeof(link_path), "%s/link.folded", dir);
	snprintf(victim, sizeof(victim), "%s/victim", dir);

	assert_int_equal(export_write(w, &o, path, err, sizeof(err)), 0);
	assert_string_equal(slurp(path), "main;libx.so+0x1a2b;do_syscall_64_[k] 1\n"
					 "main;work;leaf_a 10\nmain;work;leaf_b 3\n");
	assert_int_equal(stat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	/* A profile holds command lines: 0600 whatever the umask says. */
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(count_entries(dir), 1); /* no temporary left */

	/* exists, no force: refused, file untouched */
	o.tid = 101;
	err[0] = '\0';
	assert_int_equal(export_write(w, &o, path, err, sizeof(err)), -EEXIST);
	assert_non_null(strstr(err, "exists; use --force"));
	assert_non_null(strstr(err, path));
	assert_non_null(strstr(slurp(path), "leaf_a 10"));
	assert_int_equal(count_entries(dir), 1);

	/* force: replaced */
	o.force = true;
	assert_int_equal(export_write(w, &o, path, err, sizeof(err)), 0);
	assert_string_equal(slurp(path), "main;libx.so+0x1a2b;do_syscall_64_[k] 1\n"
					 "main;work;leaf_b 3\n");
	assert_int_equal(count_entries(dir), 1);

	/* a symbolic link at the path is refused, with or without force,
	 * dangling or not; what it points to is never written */
	fd = open(victim, O_CREAT | O_WRONLY, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "keep\n", 5), 5);
	close(fd);
	assert_int_equal(symlink(victim, link_path), 0);
	for (int force = 0; force < 2; force++) {
		o.force = force;
		err[0] = '\0';
		assert_int_equal(export_write(w, &o, link_path, err, sizeof(err)), -ELOOP);
		assert_non_null(strstr(err, "symbolic link"));
		assert_string_equal(slurp(victim), "keep\n");
	}
	unlink(link_path);
	assert_int_equal(symlink("/tmp/nonexistent-stacktop-target", link_path), 0);
	assert_int_equal(export_write(w, &o, link_path, err, sizeof(err)), -ELOOP);
	assert_int_equal(access("/tmp/nonexistent-stacktop-target", F_OK), -1);
	unlink(link_path);

	/* a directory is not replaced even with force */
	o.force = true;
	assert_int_equal(export_write(w, &o, dir, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not a regular file"));

	/* disk full: one sentence with the reason */
	fd = open("/dev/full", O_WRONLY);
	assert_true(fd >= 0);
	err[0] = '\0';
	assert_int_equal(export_write_fd(w, &o, fd, err, sizeof(err)), -ENOSPC);
	close(fd);
	assert_string_equal(err, "cannot write the profile: No space left on device.");

	/* a directory nobody (not even root) can create files in */
	err[0] = '\0';
	assert_true(export_write(w, &o, "/proc/self/stacktop-test.folded", err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "cannot create /proc/self/stacktop-test.folded: "));
	err[0] = '\0';
	assert_int_equal(export_write(w, &o, "/nonexistent-dir/x.folded", err, sizeof(err)),
			 -ENOENT);
	assert_string_equal(err,
			    "cannot create /nonexistent-dir/x.folded: No such file or directory.");
	assert_int_equal(export_write(w, &o, "", err, sizeof(err)), -EINVAL);

	/* the window is untouched by all this */
	assert_int_equal(window_total(w), 14);
	unlink(victim);
	unlink(path);
	assert_int_equal(count_entries(dir), 0);
	rmdir(dir);
	window_free_fx(w);
}

/* file_mode (--output-mode) is the written file's mode, exactly. */
static void test_file_mode(void **state)
{
	struct window *w = known_window();
	struct export_opts o = {.format = EXPORT_FOLDED, .force = true};
	char dir[] = "/tmp/test_export.XXXXXX", path[256], err[256];
	struct stat st;
	mode_t old = umask(022);

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/out.folded", dir);
	assert_int_equal(export_write(w, &o, path, err, sizeof(err)), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	o.file_mode = 0644;
	assert_int_equal(export_write(w, &o, path, err, sizeof(err)), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	o.file_mode = 0640;
	umask(077);
	assert_int_equal(export_write(w, &o, path, err, sizeof(err)), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0640);
	umask(old);
	unlink(path);
	rmdir(dir);
	window_free_fx(w);
}

static void test_relative_path(void **state)
{
	struct window *w = known_window();
	struct export_opts o = {.format = EXPORT_FOLDED};
	char dir[] = "/tmp/test_export.XXXXXX", cwd[4096], err[256];

	assert_non_null(mkdtemp(dir));
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(dir), 0);
	assert_int_equal(export_write(w, &o, "rel.folded", err, sizeof(err)), 0);
	assert_int_equal(access("rel.folded", R_OK), 0);
	assert_int_equal(count_entries("."), 1);
	unlink("rel.folded");
	assert_int_equal(chdir(cwd), 0);
	rmdir(dir);
	window_free_fx(w);
}

static void test_empty_window(void **state)
{
	struct window *w;
	struct export_opts o = {.format = EXPORT_PPROF, .period_s = 0.01};
	char *s;
	size_t n;

	assert_int_equal(window_new_fx(60, 1000000000ull, &w), 0);
	Perftools__Profiles__Profile *p = render_pprof(w, &o, &s);
	assert_int_equal(p->n_sample, 0);
	pprof_free(p, s);
	o.format = EXPORT_FOLDED;
	s = render(w, &o, &n);
	assert_int_equal(n, 0);
	free(s);
	window_free_fx(w);
}

/* The run's per-second CPU (record's cpu_1s) comes back from folded and
 * pprof alike, so report can look for a rhythm offline. */
static void test_cpu_roundtrip(void **state)
{
	static const double cpu[] = {12.5, 97, 0, 40.25};
	struct window *w;
	uint32_t mn;

	assert_int_equal(window_new_fx(60, 1000000000ull, &w), 0);
	mn = fr(w, 0x1000, false, "prog", "main", "main.c", 10);
	assert_int_equal(window_add(w, 10500000000ull, 1, (uint32_t[]){mn}, 1, 3), 0);
	for (int f = 0; f < 2; f++) {
		struct export_opts o = {
		    .format = f ? EXPORT_PPROF : EXPORT_FOLDED, .cpu = cpu, .ncpu = 4};
		struct frames *frs;
		struct stackset *r;
		char err[256];
		size_t len, n = 0;
		char *text = render(w, &o, &len);

		assert_int_equal(frames_new(NULL, &frs), 0);
		assert_int_equal(report_load_mem(text, len, "t", frs, &r, err, sizeof(err)), 0);
		const double *back = stackset_cpu(r, &n);
		assert_int_equal(n, 4);
		for (size_t i = 0; i < n; i++)
			assert_float_equal(back[i], cpu[i], 0.05);
		stackset_free(r);
		frames_free(frs);
		free(text);
	}
	window_free_fx(w);
}

/* A run that spikes 2 s every 5 s in spike_burn, as record keeps it:
 * stacks per second from second 100 to 139 (monotonic), the CPU of 45
 * seconds from 95 (the newest point at 140.2 covers (139.2, 140.2], most
 * of second 139), so cpu_1s_at is -5: its first value is 5 s before the
 * first sample's second. Spike seconds: main;spike_burn 90 and steady
 * work; calm ones: steady work only (counts varying a little). */
static struct window *spiky_run(double *cpu, size_t *ncpu)
{
	struct window *w;
	uint32_t mn, sb, st, ot;
	unsigned seed = 3;

	assert_int_equal(window_new_fx(60, 1000000000ull, &w), 0);
	mn = fr(w, 0x1000, false, "prog", "main", "main.c", 10);
	sb = fr(w, 0x1100, false, "prog", "spike_burn", "s.c", 5);
	st = fr(w, 0x1200, false, "prog", "steady_burn", "s.c", 9);
	ot = fr(w, 0x1300, false, "prog", "other", "s.c", 12);
	*ncpu = 45;
	for (unsigned i = 0; i < 45; i++) {
		uint64_t t = (95ull + i) * 1000000000ull + 300000000ull;
		bool spike = i >= 8 && i % 5 < 2;

		seed = seed * 1103515245u + 12345u;
		cpu[i] = spike ? 100 : 5;
		if (i < 5)
			continue;
		if (spike)
			assert_int_equal(
			    window_add(w, t, 1, (uint32_t[]){mn, sb}, 2, 90 + (seed >> 16) % 5), 0);
		assert_int_equal(window_add(w, t, 1, (uint32_t[]){mn, st}, 2, 5 + (seed >> 20) % 3),
				 0);
		assert_int_equal(window_add(w, t, 1, (uint32_t[]){mn, ot}, 2, 2 + (seed >> 24) % 2),
				 0);
	}
	return w;
}

/* What record writes of that run, read back as report does: the CPU, where
 * it sits among the seconds (cpu_1s_at), and from them the rhythm and its
 * riser (diffload_risers: spike seconds against calm ones). A file without
 * cpu_1s_at has the rhythm but no riser. Folded and pprof alike. */
static void test_risers_roundtrip(void **state)
{
	double cpu[64];
	size_t ncpu;
	struct window *w = spiky_run(cpu, &ncpu);

	for (int f = 0; f < 3; f++) {
		struct export_opts o = {.format = f == 1 ? EXPORT_PPROF : EXPORT_FOLDED,
					.per_second = true,
					.cpu = cpu,
					.ncpu = ncpu,
					.cpu_t = f == 2 ? 0 : 140.2};
		struct metrics_config mc;
		struct metrics m;
		struct frames *frs;
		struct stackset *r;
		char err[256];
		size_t len, n;
		int64_t at = 0;
		char *text = render(w, &o, &len);

		if (f == 0)
			assert_non_null(strstr(text, "# stacktop: {cpu_1s_at=-5}\n"));
		assert_int_equal(frames_new(NULL, &frs), 0);
		assert_int_equal(report_load_mem(text, len, "t", frs, &r, err, sizeof(err)), 0);
		assert_int_equal(stackset_cpu_at(r, &at), f < 2);
		if (f < 2)
			assert_int_equal(at, -5);
		const double *back = stackset_cpu(r, &n);
		metrics_config_default(&mc);
		assert_int_equal(metrics_init(&m, 0, &mc), 0);
		for (size_t i = 0; i < n; i++)
			metrics_push_cpu(&m, (double)(i + 1), back[i]);
		metrics_eval(&m, (double)n);
		assert_true(m.alert_rhythm);
		assert_int_equal(diffload_risers(r, frs, &m), 0);
		if (f < 2) {
			assert_true(m.nrisers >= 1);
			assert_string_equal(m.risers[0].func, "spike_burn");
			assert_true(m.risers[0].pts > 60);
		} else {
			assert_int_equal(m.nrisers, 0);
		}
		metrics_free(&m);
		stackset_free(r);
		frames_free(frs);
		free(text);
	}
	window_free_fx(w);
}

/* per_second and a summary (what record writes): folded gets the summary
 * comment and a block per second, pprof a "second" label and the summary
 * comment; report reads both back (seconds from the first bucket). */
static void test_per_second_roundtrip(void **state)
{
	struct window *w;
	uint32_t mn, la, lb;
	const struct summary sum = {
	    .wall_s = 3.5, .cpu_s = 1.25, .avg_cpu = 35.7, .peak_cpu = 98, .peak_rss = 123456};
	struct export_opts o = {.format = EXPORT_FOLDED, .per_second = true, .summary = &sum};
	char *text;
	size_t len;

	assert_int_equal(window_new_fx(60, 1000000000ull, &w), 0);
	mn = fr(w, 0x1000, false, "prog", "main", "main.c", 10);
	la = fr(w, 0x1100, false, "prog", "leaf_a", "leaf.c", 5);
	lb = fr(w, 0x1200, false, "prog", "leaf_b", "leaf.c", 9);
	assert_int_equal(window_add(w, 10500000000ull, 1, (uint32_t[]){mn, la}, 2, 6), 0);
	assert_int_equal(window_add(w, 11200000000ull, 1, (uint32_t[]){mn, la}, 2, 4), 0);
	assert_int_equal(window_add(w, 11300000000ull, 1, (uint32_t[]){mn, lb}, 2, 3), 0);
	assert_int_equal(window_add(w, 13000000000ull, 1, (uint32_t[]){mn, lb}, 2, 2), 0);
	text = render(w, &o, &len);
	assert_string_equal(text,
			    "# stacktop: {wall_s=3.500 cpu_s=1.250 avg_cpu=35.7 peak_cpu=98.0 "
			    "peak_rss=123456}\n"
			    "# stacktop: {second=0}\n"
			    "main;leaf_a 6\n"
			    "# stacktop: {second=1}\n"
			    "main;leaf_a 4\n"
			    "main;leaf_b 3\n"
			    "# stacktop: {second=3}\n"
			    "main;leaf_b 2\n");
	for (int pass = 0; pass < 2; pass++) {
		struct frames *frs;
		struct stackset *r;
		struct stackset_stack st;
		char err[256];
		int32_t secs[8] = {0};
		uint64_t by_sec[4] = {0};

		assert_int_equal(frames_new(NULL, &frs), 0);
		assert_int_equal(report_load_mem(text, len, "t", frs, &r, err, sizeof(err)), 0);
		assert_true(stackset_timed(r));
		assert_non_null(stackset_summary(r));
		assert_true(stackset_summary(r)->wall_s == 3.5);
		assert_true(stackset_summary(r)->peak_rss == 123456);
		assert_true(stackset_summary(r)->avg_cpu == 35.7);
		for (size_t i = 0; i < stackset_nstacks(r) && i < 8; i++) {
			stackset_stack(r, i, &st);
			secs[i] = st.second;
			assert_in_range(st.second, 0, 3);
			by_sec[st.second] += st.weight;
		}
		assert_int_equal(stackset_samples(r), 15);
		assert_int_equal(by_sec[0], 6);
		assert_int_equal(by_sec[1], 7);
		assert_int_equal(by_sec[2], 0);
		assert_int_equal(by_sec[3], 2);
		(void)secs;
		stackset_free(r);
		frames_free(frs);
		free(text);
		if (pass == 0) {
			o.format = EXPORT_PPROF;
			text = render(w, &o, &len);
		}
	}
	/* Without per_second: one line per stack, no blocks, not timed. */
	o = (struct export_opts){.format = EXPORT_FOLDED};
	text = render(w, &o, &len);
	assert_string_equal(text, "main;leaf_a 10\nmain;leaf_b 5\n");
	free(text);
	window_free_fx(w);
}

/* The whole machine: each stack's root is its process (frames_process):
 * folded keeps it as the root frame, pprof adds pid and process labels. */
static void test_whole_machine(void **state)
{
	struct window *w;
	struct export_opts o = {.format = EXPORT_FOLDED};
	char *gz;

	assert_int_equal(window_new_fx(60, 1000000000ull, &w), 0);
	struct frames *f = window_frames_mut(w);
	uint32_t pa = (uint32_t)frames_process(f, 100, "alpha"),
		 pb = (uint32_t)frames_process(f, 200, "be ta");
	uint32_t work = fr(w, 0x1010, false, "prog", "work", NULL, 0);
	uint32_t sa[] = {pa, work}, sb[] = {pb, work};
	assert_int_equal(window_add(w, 5, 101, sa, 2, 3), 0);
	assert_int_equal(window_add(w, 5, 201, sb, 2, 2), 0);
	assert_renders(w, &o, "alpha (100);work 3\nbe ta (200);work 2\n");
	/* Narrowed to one process (the w key after Enter): its stacks only,
	 * without the root frame, as `-p 200` would have written them. */
	o.pid = 200;
	assert_renders(w, &o, "work 2\n");
	o.pid = 300;
	assert_renders(w, &o, "");

	o = (struct export_opts){.format = EXPORT_PPROF, .period_s = 0.01, .mode = "cpu"};
	Perftools__Profiles__Profile *p = render_pprof(w, &o, &gz);
	assert_int_equal(p->n_sample, 2);
	for (size_t i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];
		int64_t pid = 0;
		const char *proc = NULL;
		for (size_t k = 0; k < s->n_label; k++) {
			if (!strcmp(pstr(p, s->label[k]->key), "pid"))
				pid = s->label[k]->num;
			if (!strcmp(pstr(p, s->label[k]->key), "process"))
				proc = pstr(p, s->label[k]->str);
		}
		assert_non_null(proc);
		assert_string_equal(proc, pid == 100 ? "alpha" : "be ta");
		assert_int_equal(s->value[0], pid == 100 ? 3 : 2);
	}
	pprof_free(p, gz);

	/* Loaded again (report), the roots are processes, not functions. */
	struct frames *frs;
	struct stackset *r;
	char err[256];
	size_t len;
	int procs = 0;
	char *text = render(w, &o, &len);
	assert_int_equal(frames_new(NULL, &frs), 0);
	assert_int_equal(report_load_mem(text, len, "t", frs, &r, err, sizeof(err)), 0);
	for (uint32_t id = 0; id < frames_span(frs); id++) {
		const struct frame *f = frames_get(frs, id);
		if (frame_is_process(f)) {
			procs++;
			assert_true(f->pid == 100 || f->pid == 200);
			assert_string_equal(f->sym.func,
					    f->pid == 100 ? "alpha (100)" : "be ta (200)");
		}
	}
	assert_int_equal(procs, 2);
	stackset_free(r);
	frames_free(frs);
	free(text);
	window_free_fx(w);
}

TEST_MAIN(NULL, NULL, TEST(test_whole_machine), TEST(test_per_second_roundtrip),
	  TEST(test_risers_roundtrip), TEST(test_cpu_roundtrip), TEST(test_formats),
	  TEST(test_folded), TEST(test_folded_names_cleaned), TEST(test_pprof),
	  TEST(test_speedscope), TEST(test_file_rules), TEST(test_file_mode),
	  TEST(test_relative_path), TEST(test_empty_window))
