/*
 * procs — the processes being profiled (see procs.h).
 */
#include "stacktop/procs.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "stacktop/sampler.h"

#define MAX_THREADS 8192

int procs_attach(struct procs *ps, const pid_t *pids, int n, char *err, size_t errsz)
{
	for (int i = 0; i < n && ps->n < PROCS_MAX; i++) {
		if (target_exists(pids[i]) != 0) {
			snprintf(err, errsz, "no process with PID %d (is it still running?).",
				 pids[i]);
			return -ESRCH;
		}
		struct procs_entry *p = &ps->p[ps->n++];
		p->pid = pids[i];
		target_cmdline(p->pid, p->cmdline, sizeof(p->cmdline));
	}
	return 0;
}

int procs_spawn(struct procs *ps, char *const argv[], enum target_stdio io, char *err, size_t errsz)
{
	int e = target_spawn(argv, io, &ps->child);
	if (e) {
		snprintf(err, errsz, "cannot start '%s': %s.", argv[0], strerror(-e));
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
		snprintf(err, errsz, "cannot run '%s': %s.", argv[0], strerror(-e));
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
	if (ps->launched)
		target_child_stop(&ps->child, timeout_ms);
	ps->launched = false;
}

int procs_scan(struct procs *ps, struct sampler *s)
{
	static pid_t tids[MAX_THREADS];
	int first_err = 0, total = 0, unsampled = 0, unsampled_err = 0;
	for (int i = 0; i < ps->n; i++) {
		struct procs_entry *p = &ps->p[i];
		int n = 0;
		if (p->gone || target_threads(p->pid, tids, MAX_THREADS, &n) < 0)
			continue;
		total += n;
		for (int k = 0; k < n; k++) {
			if (sampler_has_thread(s, tids[k]))
				continue;
			int err = sampler_add_thread(s, p->pid, tids[k]);
			if (err && err != -ESRCH && err != -EEXIST) {
				if (!first_err)
					first_err = err;
				unsampled++;
				unsampled_err = err;
			}
		}
	}
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
	if (ps->exited)
		return false;
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
	ps->exited = alive == 0;
	return ps->exited;
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
