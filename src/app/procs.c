/*
 * procs — the processes being profiled (see procs.h).
 *
 * Descendants are found by their parents: /proc/PID/task/TID/children
 * (Linux 3.5+, CONFIG_PROC_CHILDREN) lists the children a thread created
 * that are still its children; the kernel documents it as racy (a child
 * that just exited or was reparented may be missing), which a scan a
 * second later repairs. A scan walks the targets, then the descendants
 * table, which grows behind the walk, so a whole tree is found at once.
 * Known pids are looked up in a sorted copy taken at the start of the scan
 * (plus the few found during it): O(n log n) a scan, not O(n^2), for the
 * thousands of processes of a build.
 */
#include "stacktop/app/procs.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "stacktop/lib/array.h"
#include "stacktop/proc/procstat.h"
#include "stacktop/sample/sampler.h"

int procs_check_pids(const pid_t *pids, int n, char *err, size_t errsz)
{
	for (int i = 0; i < n; i++)
		if (target_exists(pids[i]) != 0) {
			snprintf(err, errsz, "no process with PID %d (is it still running?).",
				 pids[i]);
			return -ESRCH;
		}
	return 0;
}

int procs_attach(struct procs *ps, const pid_t *pids, int n, char *err, size_t errsz)
{
	int e = procs_check_pids(pids, n, err, errsz);

	if (e)
		return e;
	for (int i = 0; i < n && ps->n < PROCS_MAX; i++) {
		struct procs_entry *p = &ps->p[ps->n++];
		p->pid = pids[i];
		target_cmdline(p->pid, p->cmdline, sizeof(p->cmdline));
	}
	return 0;
}

/* "cannot run '4501': No such file or directory." — a number that names a
 * running process was most likely meant as -p: say so. */
static void procs_run_error(const char *verb, const char *arg, int e, char *err, size_t errsz)
{
	char *end;
	long pid = strtol(arg, &end, 10);

	if (arg[0] >= '0' && arg[0] <= '9' && !*end && pid > 0 && pid <= INT32_MAX &&
	    target_exists((pid_t)pid) == 0)
		snprintf(err, errsz, "cannot %s '%s': %s; did you mean -p %ld?", verb, arg,
			 strerror(-e), pid);
	else
		snprintf(err, errsz, "cannot %s '%s': %s.", verb, arg, strerror(-e));
}

int procs_spawn(struct procs *ps, char *const argv[], enum target_stdio io, char *err, size_t errsz)
{
	int e = target_spawn(argv, io, &ps->child);
	if (e) {
		procs_run_error("start", argv[0], e, err, errsz);
		return e;
	}
	ps->launched = true;
	ps->p[ps->n++].pid = ps->child.pid;
	return 0;
}

int procs_go(struct procs *ps, char *const argv[], char *err, size_t errsz)
{
	struct procs_entry *p = &ps->p[ps->n - 1];
	int e = target_spawn_go(&ps->child);
	if (e) {
		procs_run_error("run", argv[0], e, err, errsz);
		ps->launched = false;
		return e;
	}
	target_cmdline(p->pid, p->cmdline, sizeof(p->cmdline));
	if (!p->cmdline[0] || p->cmdline[0] == '[') {
		/* Not exec'd yet: show what we ran. */
		size_t off = 0;
		for (char *const *arg = argv; *arg && off < sizeof(p->cmdline) - 1; arg++)
			off += (size_t)snprintf(p->cmdline + off, sizeof(p->cmdline) - off, "%s%s",
						off ? " " : "", *arg);
	}
	return 0;
}

void procs_stop_child(struct procs *ps, int timeout_ms)
{
	/* Following, what the command started is the command too: it gets
	 * the same SIGTERM (no SIGKILL: they are not ours to wait for). */
	if (ps->launched && ps->follow)
		for (int i = 0; i < ps->nkids; i++)
			kill(ps->kids[i].pid, SIGTERM);
	if (ps->launched)
		target_child_stop(&ps->child, timeout_ms);
	ps->launched = false;
}

void procs_follow(struct procs *ps, bool on)
{
	ps->follow = on;
}

void procs_free(struct procs *ps)
{
	free(ps->kids);
	free(ps->ended);
	ps->kids = NULL;
	ps->ended = NULL;
	ps->nkids = ps->nended = 0;
	ps->kids_cap = ps->ended_cap = 0;
}

/* What a scan knows: the pids tracked when it started, sorted, and where
 * the descendants it added itself begin. */
struct procs_known {
	pid_t *sorted;
	int n;
	int kids0; /* kids[kids0..] were found by this scan */
};

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
	return (x > y) - (x < y);
}

static bool procs_known_has(const struct procs *ps, const struct procs_known *k, pid_t pid)
{
	if (k->sorted && bsearch(&pid, k->sorted, (size_t)k->n, sizeof(pid_t), cmp_pid))
		return true;
	for (int i = 0; i < ps->n; i++)
		if (ps->p[i].pid == pid)
			return true;
	for (int i = k->kids0; i < ps->nkids; i++)
		if (ps->kids[i].pid == pid)
			return true;
	return false;
}

/* Follow one child pid found under parent, unless known, a zombie, or past
 * the cap. */
static void procs_add_kid(struct procs *ps, const struct procs_known *k, pid_t pid, pid_t parent)
{
	if (pid <= 0 || procs_known_has(ps, k, pid) || target_exists(pid) != 0)
		return;
	if (ps->nkids >= PROCS_CHILDREN_MAX ||
	    array_grow((void **)&ps->kids, &ps->kids_cap, (size_t)ps->nkids + 1,
		       sizeof(*ps->kids))) {
		ps->unfollowed++;
		return;
	}
	ps->kids[ps->nkids++] = (struct procs_child){.pid = pid, .parent = parent, .fresh = true};
	ps->kids_total++;
}

/* The children of thread tid of pid, from its children file. */
static void procs_children_of(struct procs *ps, const struct procs_known *k, pid_t pid, pid_t tid)
{
	char buf[4096];
	if (target_read_proc(pid, tid, "children", buf, sizeof(buf)) <= 0)
		return;
	/* "4243 4250 " — a list cut short by the buffer loses its last pid,
	 * which the next scan finds once earlier ones have exited. */
	char *s = buf, *end;
	char *cut = strrchr(buf, ' ');
	if (cut && (size_t)(cut - buf) + 1 < strlen(buf))
		cut[1] = '\0'; /* drop a pid the buffer may have cut */
	for (;;) {
		long v = strtol(s, &end, 10);
		if (end == s)
			break;
		procs_add_kid(ps, k, (pid_t)v, pid);
		s = end;
	}
}

/* One process: its threads to the sampler, its children to the table. */
static void procs_scan_one(struct procs *ps, struct sampler *s, const struct procs_known *k,
			   pid_t pid, int *total, int *unsampled, int *unsampled_err,
			   int *first_err)
{
	static pid_t *tids;
	static int cap;
	int n = 0;
	target_threads_all(pid, &tids, &cap, &n);
	if (n == 0)
		return;
	*total += n;
	for (int i = 0; i < n; i++) {
		if (ps->follow)
			procs_children_of(ps, k, pid, tids[i]);
		if (sampler_has_thread(s, tids[i]))
			continue;
		int err = sampler_add_thread(s, pid, tids[i]);
		if (err && err != -ESRCH && err != -EEXIST) {
			if (!*first_err)
				*first_err = err;
			(*unsampled)++;
			*unsampled_err = err;
		}
	}
}

/* Not following: the CPU seconds the direct children of pid used (a few
 * threads and children looked at, enough to tell a master from its
 * workers). */
static double procs_children_cpu(pid_t pid, bool *any)
{
	pid_t tids[64], kids[64];
	int n = 0, nk;
	double sum = 0;
	char buf[1024];

	if (target_threads(pid, tids, 64, &n) < 0)
		return 0;
	for (int i = 0; i < n; i++) {
		if (target_read_proc(pid, tids[i], "children", buf, sizeof(buf)) <= 0)
			continue;
		nk = procstat_parse_children(buf, kids, 64);
		*any |= nk > 0;
		for (int j = 0; j < nk; j++) {
			char state;
			double cpu;
			if (procstat_process(kids[j], &state, &cpu) == 0)
				sum += cpu;
		}
	}
	return sum;
}

/* A sampler that sees every fork (sampler_stats.forks_known) says when
 * there is nothing to look at: no child at the last look and no fork since
 * (a process of thousands of threads is spared 64 children files a
 * second). */
static void procs_watch_children(struct procs *ps, struct sampler *s)
{
	struct sampler_stats st = {0};
	double sum = 0;
	bool any = false;

	sampler_stats(s, &st);
	if (st.forks_known && ps->kids_looked && !ps->kids_any && st.forks == ps->forks_seen)
		return;
	ps->kids_looked = true;
	ps->forks_seen = st.forks;
	for (int i = 0; i < ps->n; i++)
		if (!ps->p[i].gone)
			sum += procs_children_cpu(ps->p[i].pid, &any);
	ps->kids_any = any;
	ps->kids_busy = sum > ps->kids_cpu_s + 0.05 && ps->kids_cpu_s > 0;
	ps->kids_cpu_s = sum;
}

int procs_scan(struct procs *ps, struct sampler *s)
{
	int first_err = 0, total = 0, unsampled = 0, unsampled_err = 0;
	struct procs_known k = {.kids0 = ps->nkids};
	if (ps->follow && ps->nkids > 0 && (k.sorted = malloc((size_t)ps->nkids * sizeof(pid_t)))) {
		for (int i = 0; i < ps->nkids; i++)
			k.sorted[i] = ps->kids[i].pid;
		k.n = ps->nkids;
		qsort(k.sorted, (size_t)k.n, sizeof(pid_t), cmp_pid);
	} else {
		k.kids0 = 0; /* no copy: look in the whole table */
	}
	ps->unfollowed = 0;
	for (int i = 0; i < ps->n; i++)
		if (!ps->p[i].gone)
			procs_scan_one(ps, s, &k, ps->p[i].pid, &total, &unsampled, &unsampled_err,
				       &first_err);
	/* The table grows behind this walk: children of new ones too. */
	for (int i = 0; i < ps->nkids; i++)
		procs_scan_one(ps, s, &k, ps->kids[i].pid, &total, &unsampled, &unsampled_err,
			       &first_err);
	free(k.sorted);
	if (!ps->follow)
		procs_watch_children(ps, s);
	ps->nthreads = total;
	/* Failed threads are tried again on every scan: this is the count now. */
	ps->unsampled = unsampled;
	ps->unsampled_err = unsampled_err;
	return first_err;
}

static void describe_status(int status, char *buf, size_t size)
{
	if (WIFEXITED(status))
		snprintf(buf, size, "target exited with status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, size, "target killed by SIG%s",
			 sigabbrev_np(WTERMSIG(status)) ?: "(unknown)");
	else
		snprintf(buf, size, "target exited");
}

bool procs_check_exit(struct procs *ps)
{
	int alive = 0;
	bool targets_gone = true; /* before this check: descendants outlived them */
	if (ps->exited)
		return false;
	for (int i = 0; i < ps->n; i++)
		targets_gone &= ps->p[i].gone;
	for (int i = 0; i < ps->n; i++) {
		struct procs_entry *p = &ps->p[i];
		int st;
		if (p->gone)
			continue;
		if (ps->launched && p->pid == ps->child.pid) {
			if (target_child_reap(&ps->child, &st) == 1) {
				p->gone = true;
				describe_status(st, ps->exit_text, sizeof(ps->exit_text));
			}
		} else if (target_exists(p->pid) != 0) {
			p->gone = true;
			snprintf(ps->exit_text, sizeof(ps->exit_text), "target %d exited", p->pid);
		}
		alive += !p->gone;
	}
	for (int i = 0; i < ps->nkids; i++) {
		if (target_exists(ps->kids[i].pid) == 0) {
			alive++;
			continue;
		}
		/* A pid that cannot be remembered as ended is forgotten all the
		 * same: whoever keeps state for it finds it gone by itself. */
		if (!array_grow((void **)&ps->ended, &ps->ended_cap, (size_t)ps->nended + 1,
				sizeof(*ps->ended)))
			ps->ended[ps->nended++] = ps->kids[i].pid;
		ps->kids[i--] = ps->kids[--ps->nkids];
		if (ps->nkids == 0 && alive == 0 && targets_gone && ps->exit_text[0] &&
		    strlen(ps->exit_text) + 32 < sizeof(ps->exit_text))
			strcat(ps->exit_text, " (and its child processes)");
	}
	ps->exited = alive == 0;
	return ps->exited;
}

int procs_take_new(struct procs *ps, pid_t *out, int max)
{
	int n = 0;
	for (int i = 0; i < ps->nkids && n < max; i++) {
		if (ps->kids[i].fresh) {
			ps->kids[i].fresh = false;
			out[n++] = ps->kids[i].pid;
		}
	}
	return n;
}

int procs_take_ended(struct procs *ps, pid_t *out, int max)
{
	int n = ps->nended < max ? ps->nended : max;
	memcpy(out, ps->ended, (size_t)n * sizeof(*out));
	memmove(ps->ended, ps->ended + n, (size_t)(ps->nended - n) * sizeof(*out));
	ps->nended -= n;
	return n;
}

void procs_reread_cmdlines(struct procs *ps)
{
	for (int i = 0; i < ps->n; i++)
		if (!ps->p[i].gone)
			target_cmdline(ps->p[i].pid, ps->p[i].cmdline, sizeof(ps->p[i].cmdline));
}

pid_t procs_tracer(const struct procs *ps)
{
	pid_t tracer = 0;
	if (ps->exited || !ps->n || target_tracer(ps->p[0].pid, &tracer) < 0)
		return 0;
	return tracer == getpid() ? 0 : tracer; /* wall mode: that is us */
}
