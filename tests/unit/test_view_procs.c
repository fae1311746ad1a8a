/*
 * test_view_procs — the process table of the whole machine over a box of
 * 28 hand-built processes (struct machine_proc as machine.h fills them)
 * and a window whose stacks start at a process root frame: the rendered
 * grid at 80x24 and 200x60 read as text (order by CPU, the verdict words,
 * the hottest function of each process, a hostile name escaped, kernel
 * threads in brackets), the other sort keys, grouping by cgroup (sums,
 * Enter opening a group, Enter on a process asking for it), the selection,
 * the box's alerts line with "+N more", and where a busy floor is spent
 * (its hottest function in the seconds it sat at its floor, or, decided on
 * fine steps, in the threads that hold it).
 *
 * VIEW_PROCS_DUMP=1 prints the grids.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "runner.h"

#include "fixture.h"

#include "stacktop/lib/text.h"
#include "stacktop/proc/machine.h"
#include "stacktop/symbols/frames.h"
#include "stacktop/ui/keys.h"
#include "stacktop/ui/view_procs.h"
#include "stacktop/ui/procwords.h"

#define MIB (1024.0 * 1024.0)
#define NPROC 32

struct fixture {
	struct window *w;
	struct grid g;
	struct view_procs_state st;
	struct view_header h;
	struct machine_proc p[NPROC];
	size_t n;
};

/* One process of the box: cpu now, its floor, rss; the rest set after. */
static struct machine_proc *add(struct fixture *fx, pid_t pid, pid_t ppid, uid_t uid,
				const char *comm, const char *cmd, const char *cgroup, double cpu,
				double floor, double rss_mib)
{
	struct machine_proc *p = &fx->p[fx->n++];

	assert_true(fx->n <= NPROC);
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->ppid = ppid;
	p->uid = uid;
	p->state = cpu > 1 ? 'R' : 'S';
	snprintf(p->comm, sizeof(p->comm), "%s", comm);
	snprintf(p->cmdline, sizeof(p->cmdline), "%s", cmd);
	snprintf(p->cgroup, sizeof(p->cgroup), "%s", cgroup);
	p->nthreads = 1;
	p->cpu_pct = cpu;
	p->floor_pct = floor;
	p->p90_pct = p->peak_pct = cpu;
	p->rss = (uint64_t)(rss_mib * MIB);
	assert_int_equal(series_init(&p->cpu, 60), 0);
	assert_int_equal(series_init(&p->rss_series, 60), 0);
	/* 30 s of CPU: a floor process bursts every third second */
	for (int s = 0; s < 30; s++)
		series_push(&p->cpu, s, floor > 5 && s % 3 == 0 ? 95 : cpu > floor ? floor : cpu);
	return p;
}

/* count samples of pid in function func (under main), its root frame first. */
static void stack(struct fixture *fx, pid_t pid, const char *comm, const char *func, uint64_t pc,
		  unsigned count)
{
	struct frames *fr = window_frames_mut(fx->w);
	struct sym_info sm = {.func = "main", .module = comm}, sf = {.func = func, .module = comm};
	int64_t root = frames_process(fr, pid, comm);
	int64_t m = frames_preset(fr, pid, 0x1000, false, &sm, false);
	int64_t f = frames_preset(fr, pid, pc, false, &sf, false);

	assert_true(root >= 0 && m >= 0 && f >= 0);
	fixture_add(fx->w, 30, pid, count, 3, (uint32_t)root, (uint32_t)m, (uint32_t)f);
}

/* The box: a CPU burner, a busy floor, a leak, a zombie and its parent, a
 * process stuck in D, a hostile name, services in cgroups, kernel threads. */
static void box(struct fixture *fx)
{
	struct machine_proc *p;
	const char *sys = "/system.slice/", *user = "/user.slice/user-1000.slice/session-3.scope";

	p = add(fx, 4250, 1, 54321, "cpuburn", "./cpuburn --seconds 600", user, 99.0, 97, 1.2);
	stack(fx, 4250, "cpuburn", "burn_loop", 0x2000, 500);
	p = add(fx, 4242, 1, 54321, "floors", "./floors --threads 4 --floor 30", user, 63.0, 31,
		12);
	p->busy_floor = true;
	p->nthreads = 5;
	stack(fx, 4242, "floors", "busy_poll", 0x2100, 300);
	p = add(fx, 4251, 1, 54321, "leak", "./leak --rate 2M", user, 4.0, 3, 412);
	p->stairs = true;
	p->rss_kind = SERIES_STAIRS;
	p->rss_slope = 2.1 * MIB / 60;
	stack(fx, 4251, "leak", "cache_put", 0x2200, 20);
	p = add(fx, 4259, 1, 54321, "zpar", "./zpar", user, 0.0, 0, 0.8);
	p->zombie_children = 1;
	p = add(fx, 4260, 4259, 54321, "zchild", "", user, 0.0, 0, 0);
	p->state = 'Z';
	p->zombie = true;
	p->nthreads = 1;
	p = add(fx, 3100, 1, 0, "rsync", "rsync -a /mnt/nfs/ /backup/",
		"/system.slice/backup.service", 0.0, 0, 6);
	p->stuck = true;
	p->stuck_threads = 1;
	p->stuck_for_s = 12;
	p->state = 'D';
	p = add(fx, 6666, 1, 54321, "ev\x1b[2Jil", "ev\x1b]0;pwned\x07il --x", user, 2.0, 0, 3);
	stack(fx, 6666, "ev\x1b[2Jil", "do_\x1b[31mevil", 0x2300, 10);
	for (int i = 0; i < 4; i++) {
		char name[32];
		snprintf(name, sizeof(name), "nginx: worker process");
		p = add(fx, 2001 + i, 2000, 33, "nginx", name, "/system.slice/nginx.service",
			8.0 - i, 1, 24 + i);
		stack(fx, 2001 + i, "nginx", "ngx_http_process_request", 0x3000, 40 - 5 * i);
	}
	add(fx, 2000, 1, 0, "nginx", "nginx: master process /usr/sbin/nginx",
	    "/system.slice/nginx.service", 0.0, 0, 8);
	for (int i = 0; i < 3; i++) {
		p = add(fx, 3001 + i, 3000, 54321, "postgres", "postgres: writer",
			"/system.slice/postgresql.service", 3.0 - i, 0, 150 + 10 * i);
		stack(fx, 3001 + i, "postgres", "XLogInsertRecord", 0x4000, 15);
	}
	add(fx, 3000, 1, 54321, "postgres", "/usr/lib/postgresql/15/bin/postgres -D /var/lib/pg",
	    "/system.slice/postgresql.service", 0.1, 0, 210);
	add(fx, 1, 0, 0, "systemd", "/sbin/init", "/init.scope", 0.3, 0, 11);
	add(fx, 700, 1, 0, "sshd", "sshd: /usr/sbin/sshd -D", "/system.slice/ssh.service", 0.0, 0,
	    7);
	add(fx, 4100, 700, 54321, "bash", "-bash", user, 0.0, 0, 5);
	p = add(fx, 5000, 1, 0, "dockerd", "/usr/bin/dockerd -H fd://",
		"/system.slice/docker.service", 1.5, 0.5, 96);
	p->nthreads = 23;
	p = add(fx, 5100, 5050, 0, "redis-server", "redis-server *:6379",
		"/system.slice/docker-4f1c2a9e8b7d.scope", 2.5, 1, 64);
	p->nthreads = 5;
	stack(fx, 5100, "redis-server", "dictFind", 0x5000, 12);
	(void)sys;
	const char *kt[] = {"kthreadd", "kworker/0:1", "ksoftirqd/0", "rcu_sched",
			    "kswapd0",	"jbd2/sda1-8", "kworker/1:2"};
	for (int i = 0; i < 7; i++) {
		p = add(fx, 2 + i, i ? 2 : 0, 0, kt[i], "", "/", i == 1 ? 0.4 : 0.0, 0, 0);
		p->kernel = true;
		p->state = i == 1 ? 'R' : 'I';
	}
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	if (fixture_open(fx, 60, &fx->w))
		return -1;
	box(fx);
	fx->st.utf8 = true;
	fx->h = (struct view_header){.mode = "cpu",
				     .rate_hz = 99,
				     .nthreads = 262,
				     .window_s = 60,
				     .span_s = 30,
				     .samples_window = 1000,
				     .machine = {.on = true, .ncpu = 2, .nprocs = (int)fx->n}};
	return fixture_ready(state, fx, &fx->g);
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	for (size_t i = 0; i < fx->n; i++) {
		series_free(&fx->p[i].cpu);
		series_free(&fx->p[i].rss_series);
	}
	view_procs_state_free(&fx->st);
	return fixture_close(fx, fx->w, &fx->g);
}

static void draw(struct fixture *fx, int w, int h)
{
	fixture_render(fx, w, h, view_procs_update(&fx->st, &fx->h, fx->p, fx->n, fx->w, w, h),
		       view_procs_render(&fx->g, &fx->h, &fx->st), "VIEW_PROCS_DUMP");
}

static int find_row(struct fixture *fx, const char *text)
{
	for (int y = 0; y < fx->g.h; y++)
		if (strstr(row(fx, y), text))
			return y;
	return -1;
}

/* 80x24: the busiest first, the verdicts and the hottest function on the
 * rows, the hostile name escaped, the alerts line with what is off screen. */
static void test_80x24(void **state)
{
	struct fixture *fx = *state;

	draw(fx, 80, 24);
	assert_rows(
	    fx, 0,
	    "stacktop  whole machine \xc2\xb7 2 CPUs \xc2\xb7 28 processes            cpu 99 Hz  "
	    "window 60s",
	    ANY_ROW, "! stuck: rsync (3100) D 12s   ! busy floor: floors (4242) 31%   +2 more",
	    "  PID USER       CPU% FLOOR    RSS  THR  HOTTEST NOW    VERDICT         COMMAND",
	    " 4250 54321     99.0%   97%   1.2M    1  burn_loop                      cpuburn",
	    " 4242 54321     63.0%   31%    12M    5  busy_poll      busy floor 31%  floors",
	    " 2001 www-data   8.0%    1%    24M    1  ngx_http_pro\xe2\x80\xa6                  "
	    "nginx");
	assert_string_equal(row(fx, 10), " 4251 54321      4.0%    3%   412M    1  cache_put      "
					 "stairs          leak");
	assert_string_equal(row(fx, 14), " 6666 54321      2.0%    0%   3.0M    1  do_?[31mevil   "
					 "                ev?[2Jil");
	assert_string_equal(row(fx, 17),
			    "    3 root       0.4%    0%     0B    1                    "
			    "             [kworke\xe2\x80\xa6");
	/* 0%: the processes with a verdict before the idle ones, in brief */
	assert_rows(
	    fx, 20, " 3100 root       0.0%    0%   6.0M    1                 stuck D 12s     rsync",
	    " 4259 54321      0.0%    0%   819K    1                 1 zombie        zpar",
	    " 4260 54321      0.0%    0%     0B    1                 zombie of 4259  [zchild]");
	assert_true(strstr(row(fx, 23), "Enter: this process"));
	assert_true(row_has_attr(fx, 4, GRID_REVERSE)); /* the selection */
	assert_int_equal(fx->st.selected_pid, 4250);
}

/* 200x60: every column, the command lines, the trend, Z/D, every row. */
static void test_200x60(void **state)
{
	struct fixture *fx = *state;

	draw(fx, 200, 60);
	assert_string_equal(
	    row(fx, 2),
	    "! stuck: rsync (3100) 1 thread in D 12s   ! busy floor: floors (4242) 31%   "
	    "! memory climbs: leak (4251) +2.1 MiB/min   ! zombie: 4260 defunct, "
	    "parent zpar (4259) has not reaped it");
	assert_true(strstr(row(fx, 3), "CPU last 30s"));
	assert_true(strstr(row(fx, 3), "TREND"));
	assert_true(strstr(row(fx, 3), "Z/D"));
	assert_true(strstr(row(fx, 5), "\xe2\x96\x88\xe2\x96\x83\xe2\x96\x83")); /* floor bursts */
	assert_true(
	    strstr(row(fx, 5), "busy floor 31%             ./floors --threads 4 --floor 30"));
	assert_true(strstr(row(fx, 10), "412M \xe2\x86\x91"
					"2.1M/min"));
	assert_true(strstr(row(fx, 14), "ev?]0;pwned?il --x"));
	assert_int_equal(find_row(fx, "D1"), find_row(fx, "stuck D 12s"));
	assert_int_equal(find_row(fx, "Z1"), find_row(fx, "1 zombie child"));
	assert_true(strstr(row(fx, find_row(fx, "[zchild]")), "zombie (parent 4259 zpar)"));
	assert_true(find_row(fx, "[kthreadd]") > 0);
	assert_true(find_row(fx, "ngx_http_process_request") > 0); /* whole */
	assert_int_equal(find_row(fx, "waiting"), -1);
	for (int y = 4; y < 4 + (int)fx->n; y++) /* every process, no more */
		assert_string_not_equal(row(fx, y), "");
	assert_string_equal(row(fx, 4 + (int)fx->n), "");
	/* Wider still: each process's container or service, its cgroup's
	 * last part, before the command. */
	draw(fx, 260, 60);
	assert_true(strstr(row(fx, 3), "CGROUP"));
	assert_true(strstr(row(fx, find_row(fx, "ngx_http_process_request")), "nginx.service"));
	assert_true(strstr(row(fx, find_row(fx, "rsync -a")), "backup.service"));
}

/* Without UTF-8: the trend's arrow is a sign, the sparkline ". : | #". */
static void test_ascii(void **state)
{
	struct fixture *fx = *state;

	fx->st.utf8 = false;
	draw(fx, 200, 60);
	assert_true(strstr(row(fx, 10), "412M +2.1M/min"));
	assert_true(strstr(row(fx, 5), "#::#::#::#"));
	for (int y = 3; y < 60; y++)
		for (const char *c = row(fx, y); *c; c++)
			assert_true((unsigned char)*c < 0x80);
}

/* s: floor, rss, pid, name; the selection follows its process once a key
 * moved it, and stays on the busiest row until then. */
static void test_sort(void **state)
{
	struct fixture *fx = *state;

	draw(fx, 120, 40);
	assert_int_equal(fx->st.selected_pid, 4250);
	view_procs_key(&fx->st, 's');
	view_procs_key(&fx->st, 's'); /* rss */
	draw(fx, 120, 40);
	assert_int_equal(fx->st.selected_pid, 4251);
	assert_true(row_has_attr(fx, 4, GRID_REVERSE));
	for (int k = 0; k < VIEW_PROCS_SORT_COUNT - 2; k++)
		view_procs_key(&fx->st, 's');
	draw(fx, 120, 40);
	view_procs_key(&fx->st, KEYS_DOWN); /* floors */
	draw(fx, 120, 40);
	assert_int_equal(fx->st.selected_pid, 4242);
	view_procs_key(&fx->st, 's');
	draw(fx, 120, 40);
	assert_true(strstr(row(fx, 4), " 4250 ")); /* floor 97% */
	assert_true(strstr(row(fx, 5), " 4242 ")); /* 31% */
	assert_int_equal(fx->st.selected_pid, 4242);
	assert_true(row_has_attr(fx, 5, GRID_REVERSE));
	view_procs_key(&fx->st, 's');
	draw(fx, 120, 40);
	assert_true(strstr(row(fx, 4), " 4251 ")); /* 412 MiB */
	view_procs_key(&fx->st, 's');
	draw(fx, 120, 40);
	assert_true(strstr(row(fx, 4), "    1 root"));
	view_procs_key(&fx->st, 's');
	draw(fx, 120, 40);
	assert_true(strstr(row(fx, 4), "bash")); /* by name */
	assert_true(strstr(row(fx, 39), "sort (name)"));
}

/* c: a row per cgroup, summed; Enter opens a group, Enter on a member asks
 * for that process; Esc closes the group; c again ungroups. */
static void test_grouped(void **state)
{
	struct fixture *fx = *state;
	struct view_action a;
	int y;

	assert_int_equal(view_procs_key(&fx->st, 'c').kind, VIEW_ACTION_USED);
	draw(fx, 200, 40);
	assert_true(strstr(row(fx, 3), "PROCS"));
	assert_true(strstr(row(fx, 3), "CGROUP / COMMAND"));
	/* the session: 7 processes, 99+63+4+2 % CPU, RSS summed, 11 threads */
	assert_true(strstr(row(fx, 4), "    7            168%"));
	assert_true(strstr(row(fx, 4), "434M"));
	assert_true(strstr(row(fx, 4), "burn_loop"));
	assert_true(strstr(row(fx, 4), "busy floor  stairs  1 zombie \xe2\x80\xa6"));
	assert_true(strstr(row(fx, 4), "/user.slice/user-1000.slice/session-3.scope"));
	y = find_row(fx, "/system.slice/nginx.service");
	assert_true(strstr(row(fx, y), "    5           26.0%")); /* 8+7+6+5+0 */
	assert_true(strstr(row(fx, y), "110M"));		  /* 24+25+26+27+8 */
	assert_true(strstr(row(fx, find_row(fx, "/ (root)")), "    7 "));
	assert_int_equal(fx->st.selected_pid, 0); /* a group */

	a = view_procs_key(&fx->st, KEYS_ENTER); /* opens it */
	assert_int_equal(a.kind, VIEW_ACTION_USED);
	draw(fx, 200, 40);
	assert_true(strstr(row(fx, 5), " 4250 54321     99.0%"));
	assert_true(strstr(row(fx, 10), "[zchild]")); /* 0%: a verdict first */
	assert_true(strstr(row(fx, 11), "-bash"));
	assert_true(strstr(row(fx, 12), "/system.slice/nginx.service"));
	view_procs_key(&fx->st, KEYS_DOWN);
	view_procs_key(&fx->st, KEYS_DOWN);
	draw(fx, 200, 40);
	a = view_procs_key(&fx->st, KEYS_ENTER);
	assert_int_equal(a.kind, VIEW_ACTION_NARROW_PROCESS);
	assert_int_equal(a.pid, 4242);

	assert_int_equal(view_procs_key(&fx->st, KEYS_ESC).kind, VIEW_ACTION_USED);
	draw(fx, 200, 40);
	assert_int_equal(find_row(fx, "[zchild]"), -1);
	assert_true(row_has_attr(fx, 4, GRID_REVERSE)); /* back on its group */
	assert_int_equal(view_procs_key(&fx->st, KEYS_ESC).kind, VIEW_ACTION_NONE);
	view_procs_key(&fx->st, 'c');
	draw(fx, 200, 40);
	assert_true(strstr(row(fx, 3), "  PID USER"));
}

/* Enter on a process: that process for every view; End, Home. */
static void test_enter(void **state)
{
	struct fixture *fx = *state;
	struct view_action a;

	draw(fx, 80, 24);
	view_procs_key(&fx->st, KEYS_END);
	draw(fx, 80, 24);
	a = view_procs_key(&fx->st, KEYS_ENTER);
	assert_int_equal(a.kind, VIEW_ACTION_NARROW_PROCESS);
	assert_int_equal(a.pid, 8); /* the last row: the last kernel thread */
	view_procs_key(&fx->st, KEYS_HOME);
	view_procs_key(&fx->st, KEYS_DOWN);
	draw(fx, 80, 24);
	a = view_procs_key(&fx->st, KEYS_ENTER);
	assert_int_equal(a.pid, 4242);
	assert_int_equal(view_procs_key(&fx->st, 'x').kind, VIEW_ACTION_NONE);
}

/* The alerts line alone: most important first, whole parts (in brief
 * words when the long ones do not all fit), "+N more"; none on a quiet
 * box. */
static void test_alerts(void **state)
{
	struct fixture *fx = *state;
	char buf[1024];

	procwords_alerts(fx->p, fx->n, NULL, 0, buf, sizeof(buf));
	assert_true(strstr(buf, "! stuck:") < strstr(buf, "! busy floor:"));
	assert_true(strstr(buf, "! busy floor:") < strstr(buf, "! memory climbs:"));
	assert_true(strstr(buf, "! memory climbs:") < strstr(buf, "! zombie:"));
	procwords_alerts(fx->p, fx->n, NULL, 120, buf, sizeof(buf)); /* brief words */
	assert_string_equal(buf, "! stuck: rsync (3100) D 12s   ! busy floor: floors (4242) 31%   "
				 "! memory: leak (4251) +2.1 MiB/min   +1 more");
	assert_true(text_width(buf) <= 120);
	procwords_alerts(fx->p + 7, 4, NULL, 80, buf, sizeof(buf)); /* nginx workers only */
	assert_string_equal(buf, "");
	/* stacktop itself climbing: its row only, not the box's alerts */
	struct machine_proc self = fx->p[0];
	self.pid = getpid();
	self.stairs = true;
	self.rss_slope = 1 << 20;
	procwords_alerts(&self, 1, NULL, 0, buf, sizeof(buf));
	assert_null(strstr(buf, "memory climbs"));
}

/* Batch: every alert, whole, wrapped onto the rows it needs (a log keeps
 * them all); the table under them, its limit's rows and then the rows
 * with a verdict past them. */
static void test_batch_alerts(void **state)
{
	struct fixture *fx = *state;

	fx->st.batch = true;
	fx->st.limit = 20;
	draw(fx, 120, 60);
	assert_string_equal(row(fx, 2),
			    "! stuck: rsync (3100) 1 thread in D 12s   ! busy floor: "
			    "floors (4242) 31%   ! memory climbs: leak (4251) +2.1 MiB/min");
	assert_string_equal(row(fx, 3),
			    "! zombie: 4260 defunct, parent zpar (4259) has not reaped it");
	assert_true(strstr(row(fx, 4), "  PID USER"));
	assert_true(strstr(row(fx, 5), " 4250 "));
	assert_string_equal(row(fx, 25), ""); /* 20 rows, the verdicts among them */
	assert_int_equal(fx->st.extra, 0);

	/* 5 rows: then the 4 with a verdict past them, the busiest first */
	fx->st.limit = 5;
	draw(fx, 120, 60);
	assert_true(strstr(row(fx, 9), " 2003 ")); /* the 5th busiest, 6.0% */
	assert_true(strstr(row(fx, 10), " 4251 ") && strstr(row(fx, 10), "stairs"));
	assert_true(strstr(row(fx, 11), " 3100 ") && strstr(row(fx, 11), "stuck D 12s"));
	assert_true(strstr(row(fx, 12), " 4259 ") && strstr(row(fx, 12), "1 zombie"));
	assert_true(strstr(row(fx, 13), " 4260 ") && strstr(row(fx, 13), "zombie (parent 4259"));
	assert_string_equal(row(fx, 14), "");
	assert_int_equal(fx->st.extra, 4);
}

static void type(struct fixture *fx, const char *text)
{
	for (const char *c = text; *c; c++)
		assert_int_equal(view_procs_key(&fx->st, (unsigned char)*c).kind, VIEW_ACTION_USED);
}

/* Rows of the table (from y0) that are not empty. */
static int table_len(struct fixture *fx, int y0)
{
	int y = y0;

	while (y < fx->g.h && row(fx, y)[0])
		y++;
	return y - y0;
}

/* '/': the rows follow each key typed (comm, command line or pid, any
 * case), the column header's line says the filter; Esc while typing goes
 * back to the filter before; Enter keeps it and selects the first row,
 * Enter again asks for that process; Esc clears it, the selection kept;
 * while typing, q, 0 and s are text. */
static void test_filter(void **state)
{
	struct fixture *fx = *state;

	draw(fx, 200, 60);
	type(fx, "/NGI");
	assert_true(fx->st.editing);
	draw(fx, 200, 60);
	assert_true(strstr(row(fx, 3), "COMMAND"));
	assert_true(strstr(row(fx, 3), " filter: NGI\xe2\x96\x88  5 of 28"));
	assert_int_equal(table_len(fx, 4), 5); /* 4 workers and the master */
	for (int y = 4; y < 9; y++)
		assert_true(strstr(row(fx, y), "nginx"));
	assert_true(strstr(row(fx, 59), "Enter: keep"));

	view_procs_key(&fx->st, KEYS_BACKSPACE);
	view_procs_key(&fx->st, KEYS_BACKSPACE);
	view_procs_key(&fx->st, KEYS_BACKSPACE);
	type(fx, "425"); /* pids 4250 4251 4259 */
	draw(fx, 200, 60);
	assert_int_equal(table_len(fx, 4), 3);
	assert_true(strstr(row(fx, 3), "3 of 28"));
	assert_int_equal(find_row(fx, "[zchild]"), -1); /* 4260 */
	type(fx, "x");
	draw(fx, 200, 60);
	assert_true(strstr(row(fx, 4), "no process matches the filter"));
	assert_int_equal(fx->st.selected_pid, 0);
	assert_int_equal(view_procs_key(&fx->st, KEYS_ESC).kind, VIEW_ACTION_USED);
	assert_false(fx->st.editing);
	draw(fx, 200, 60);
	assert_int_equal(table_len(fx, 4), 28); /* no filter before */
	assert_false(strstr(row(fx, 3), "filter:"));

	type(fx, "/q0s"); /* text while typing, not quit, view, sort */
	assert_string_equal(fx->st.edit, "q0s");
	assert_int_equal(fx->st.sort, VIEW_PROCS_SORT_CPU);
	for (int i = 0; i < 3; i++)
		view_procs_key(&fx->st, KEYS_BACKSPACE);
	type(fx, "WRITER"); /* the command line "postgres: writer" */
	assert_int_equal(view_procs_key(&fx->st, KEYS_ENTER).kind, VIEW_ACTION_USED);
	assert_false(fx->st.editing);
	draw(fx, 200, 60);
	assert_true(strstr(row(fx, 3), " filter: WRITER  3 of 28"));
	assert_false(strstr(row(fx, 3), "\xe2\x96\x88"));
	assert_int_equal(table_len(fx, 4), 3);
	assert_true(row_has_attr(fx, 4, GRID_REVERSE));
	assert_int_equal(fx->st.selected_pid, 3001);
	assert_true(strstr(row(fx, 59), "Esc: clear"));
	struct view_action a = view_procs_key(&fx->st, KEYS_ENTER);
	assert_int_equal(a.kind, VIEW_ACTION_NARROW_PROCESS);
	assert_int_equal(a.pid, 3001);

	view_procs_key(&fx->st, KEYS_DOWN);
	assert_int_equal(view_procs_key(&fx->st, KEYS_ESC).kind, VIEW_ACTION_USED);
	draw(fx, 200, 60);
	assert_int_equal(table_len(fx, 4), 28);
	assert_int_equal(fx->st.selected_pid, 3002); /* kept */
	assert_false(strstr(row(fx, 3), "filter:"));
	assert_int_equal(view_procs_key(&fx->st, KEYS_ESC).kind, VIEW_ACTION_NONE);

	/* 80 columns: the filter over the column names it must cover */
	type(fx, "/leak");
	view_procs_key(&fx->st, KEYS_ENTER);
	draw(fx, 80, 24);
	assert_true(strstr(row(fx, 3), "  PID USER "));
	assert_true(strstr(row(fx, 3), " filter: leak  1 of 28"));
	assert_true(strstr(row(fx, 4), " 4251 "));
	assert_true(text_width(row(fx, 3)) <= 80);
}

/* count samples of pid at second sec, its stack frames f[0..n). */
static void stack_at(struct fixture *fx, uint64_t sec, pid_t pid, const uint32_t *f, size_t n,
		     unsigned count)
{
	assert_int_equal(window_add(fx->w, sec * FIXTURE_SEC, pid, f, n, count), 0);
}

/* Where a busy floor is spent: floor (4300) holds 30 % and bursts to 95 %
 * every third second (the fixture's CPU: the point at t = s is the second
 * before it, bucket s - 1); busy_poll runs in its floor seconds (under a
 * kernel frame in one, whose samples are busy_poll's with kernel frames
 * hidden), main_work, hotter, in its bursts: the verdict and the alerts
 * line name busy_poll, HOTTEST NOW main_work. */
static void test_floor_function(void **state)
{
	struct fixture *fx = *state;
	struct frames *fr = window_frames_mut(fx->w);
	const char *user = "/user.slice/user-1000.slice/session-3.scope";
	struct machine_proc *p = add(fx, 4300, 1, 54321, "floor", "./floor 600", user, 40, 30, 1.3);
	struct sym_info sm = {.func = "main", .module = "floor"};
	struct sym_info sp = {.func = "busy_poll", .module = "floor"};
	struct sym_info sw = {.func = "main_work", .module = "floor"};
	struct sym_info sk = {.func = "do_syscall_64", .module = "[kernel]", .kernel = true};
	char buf[1024];
	int y;

	p->busy_floor = true;
	p->nthreads = 3;
	int64_t root = frames_process(fr, 4300, "floor");
	int64_t m = frames_preset(fr, 4300, 0x1000, false, &sm, false);
	int64_t poll = frames_preset(fr, 4300, 0x2000, false, &sp, false);
	int64_t work = frames_preset(fr, 4300, 0x3000, false, &sw, false);
	int64_t k = frames_preset(fr, 4300, 0xffffffff81000000ull, true, &sk, false);
	assert_true(root >= 0 && m >= 0 && poll >= 0 && work >= 0 && k >= 0);
	uint32_t at_floor[] = {(uint32_t)root, (uint32_t)m, (uint32_t)poll, (uint32_t)k};
	uint32_t burst[] = {(uint32_t)root, (uint32_t)m, (uint32_t)work};
	stack_at(fx, 3, 4301, at_floor, 3, 20); /* t = 4: 30 % */
	stack_at(fx, 4, 4301, at_floor, 3, 20); /* t = 5: 30 % */
	stack_at(fx, 7, 4301, at_floor, 4, 30); /* t = 8: 30 %, in the kernel */
	for (uint64_t b = 2; b < 12; b += 3)	/* t = 3, 6, 9, 12: 95 % */
		stack_at(fx, b, 4300, burst, 3, 100);

	draw(fx, 200, 60);
	y = find_row(fx, "./floor 600");
	assert_true(y > 0);
	assert_non_null(strstr(row(fx, y), "busy floor 30% in busy_poll"));
	assert_non_null(strstr(row(fx, y), "main_work")); /* hottest now */
	assert_non_null(strstr(row(fx, 2), "! busy floor: floor (4300) 30% in busy_poll"));
	/* floors (4242) has no samples in its floor seconds: no function */
	assert_non_null(strstr(row(fx, 2), "! busy floor: floors (4242) 31%   "));
	procwords_alerts(fx->p, fx->n, &fx->st, 0, buf, sizeof(buf));
	assert_non_null(strstr(buf, "! busy floor: floor (4300) 30% in busy_poll"));
	procwords_alerts(fx->p, fx->n, NULL, 0, buf, sizeof(buf));
	assert_non_null(strstr(buf, "! busy floor: floor (4300) 30%   "));
	/* 80 columns: the brief verdict; HOTTEST and the alerts line say it */
	draw(fx, 80, 24);
	assert_null(strstr(row(fx, find_row(fx, "floor   ")), " in "));
}

/* A floor decided on fine steps (two seconds of history, both above the
 * floor: no second at it): where it is spent is what the threads that
 * hold it ran, the first with samples (4312 has none, 4311 ran busy_poll),
 * though main_work (4310) is hotter. */
static void test_floor_holder(void **state)
{
	struct fixture *fx = *state;
	struct frames *fr = window_frames_mut(fx->w);
	struct machine_proc *p = add(fx, 4310, 1, 0, "floor", "./floor", "/", 130, 30, 1.3);
	struct sym_info sm = {.func = "main", .module = "floor"};
	struct sym_info sp = {.func = "busy_poll", .module = "floor"};
	struct sym_info sw = {.func = "main_work", .module = "floor"};
	int y;

	series_clear(&p->cpu);
	series_push(&p->cpu, 1, 130);
	series_push(&p->cpu, 2, 120);
	p->busy_floor = p->floor_fine = true;
	p->nthreads = 3;
	p->nfloor_tids = 2;
	p->floor_tids[0] = 4312;
	p->floor_tids[1] = 4311;
	int64_t root = frames_process(fr, 4310, "floor");
	int64_t m = frames_preset(fr, 4310, 0x1000, false, &sm, false);
	int64_t poll = frames_preset(fr, 4310, 0x2000, false, &sp, false);
	int64_t work = frames_preset(fr, 4310, 0x3000, false, &sw, false);
	assert_true(root >= 0 && m >= 0 && poll >= 0 && work >= 0);
	uint32_t polls[] = {(uint32_t)root, (uint32_t)m, (uint32_t)poll};
	uint32_t works[] = {(uint32_t)root, (uint32_t)m, (uint32_t)work};
	for (uint64_t b = 0; b < 2; b++) {
		stack_at(fx, b, 4311, polls, 3, 30);
		stack_at(fx, b, 4310, works, 3, 100);
	}
	draw(fx, 200, 60);
	y = find_row(fx, "./floor");
	assert_true(y > 0);
	assert_non_null(strstr(row(fx, y), "busy floor 30% in busy_poll"));
	assert_non_null(strstr(row(fx, 2), "! busy floor: floor (4310) 30% in busy_poll"));
	/* decided on the seconds instead: none at its floor, no function */
	p->nfloor_tids = 0;
	p->floor_fine = false;
	draw(fx, 200, 60);
	assert_non_null(strstr(row(fx, find_row(fx, "./floor")), "busy floor 30%  "));
}

TEST_MAIN(NULL, NULL, TEST_FX(test_80x24), TEST_FX(test_200x60), TEST_FX(test_ascii),
	  TEST_FX(test_sort), TEST_FX(test_grouped), TEST_FX(test_enter), TEST_FX(test_filter),
	  TEST_FX(test_alerts), TEST_FX(test_batch_alerts), TEST_FX(test_floor_function),
	  TEST_FX(test_floor_holder))
