/*
 * dump — one sample of every thread, printed (see dump.h).
 *
 * Order of work, chosen so the target is stopped as little as possible:
 *   1. names: thread list and comm of each thread, before any ptrace;
 *   2. wall sampler: seize every thread, then stop each once (one at a
 *      time), copy its registers and stack, resume it; detach all;
 *   3. only then: hand the copies to ingest (which loads the address
 *      space, unwinds and interns frames), look up file:line, print.
 * The copies are ours (the sampler's sample buffers live only during its
 * callback), freed at the end. Everything from the target (names, command
 * line, symbols, paths) is sanitized in text output and escaped in JSON.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "stacktop/app/dump.h"
#include "stacktop/lib/mono.h"
#include "stacktop/symbols/frames.h"
#include "stacktop/model/ingest.h"
#include "stacktop/proc/locks.h"
#include "stacktop/symbols/sym.h"
#include "stacktop/proc/target.h"
#include "stacktop/lib/text.h"
#include "stacktop/unwind/unwind.h"
#include "stacktop/proc/waits.h"
#include "stacktop/sample/sampler.h"
#include "stacktop/sample/wall.h"

#define DUMP_RETRY_NS 1000000000ull

struct dump_thread {
	pid_t tid;
	char name[64];
	bool sampled;
	char state;
	struct sample s; /* stack points to stack below */
	uint8_t *stack;
	uint32_t frames[INGEST_MAX_FRAMES]; /* outermost first */
	int nframes;
	bool truncated;
	struct locks_raw lock; /* the futex it waits on, read before any stop */
	int lock_rc;	       /* locks_read_raw's: 0 when lock was read */
};

struct dump_ctx {
	struct dump_thread *th;
	int n;
	struct locks graph; /* who waits on whom, from the waits that are locks */
};

/* Keep a copy of each thread's sample: the sampler's buffers are reused. */
static void on_sample(void *ctx, const struct sample *s)
{
	struct dump_ctx *d = ctx;
	for (int i = 0; i < d->n; i++) {
		struct dump_thread *t = &d->th[i];
		if (t->tid != s->tid || t->sampled)
			continue;
		t->s = *s;
		t->s.stack = NULL;
		t->s.stack2 = NULL;
		t->s.kpcs = NULL;
		t->s.nkpcs = 0;
		t->s.upcs = NULL;
		t->s.nupcs = 0;
		/* Both copies in one block: the stack, then the interrupted one. */
		if (s->stack_size && (t->stack = malloc(s->stack_size + s->stack2_size))) {
			memcpy(t->stack, s->stack, s->stack_size);
			t->s.stack = t->stack;
			if (s->stack2_size) {
				memcpy(t->stack + s->stack_size, s->stack2, s->stack2_size);
				t->s.stack2 = t->stack + s->stack_size;
			}
		} else {
			t->s.stack_size = 0;
			t->s.stack2_size = 0;
		}
		t->sampled = true;
		return;
	}
}

/* Put one sentence in err; return code. */
__attribute__((format(printf, 4, 5))) static int fail(char *err, size_t errsz, int code,
						      const char *fmt, ...)
{
	va_list ap;
	if (err && errsz) {
		va_start(ap, fmt);
		vsnprintf(err, errsz, fmt, ap);
		va_end(ap);
	}
	return code;
}

/* A thread that must wait for a CPU before it reaches its stop (a loaded
 * machine) misses the pass's deadline: it is tried again for up to a
 * second rather than left out of the dump. */
static void retry_missing(struct wall_sampler *ws, struct dump_ctx *d)
{
	uint64_t end = mono_ns() + DUMP_RETRY_NS;
	for (;;) {
		int missing = 0;
		wall_reap(ws);
		for (int i = 0; i < d->n; i++)
			if (!d->th[i].sampled &&
			    wall_sample_thread(ws, d->th[i].tid, mono_ns(), on_sample, d) == 0)
				missing += wall_has_thread(ws, d->th[i].tid);
		if (!missing || mono_ns() > end)
			return;
		usleep(10000);
	}
}

/* Why thread t could not be seized, as dump's error. */
static int add_failed(const struct dump_opts *o, const struct dump_thread *t, int e, char *err,
		      size_t errsz)
{
	if (e == -EBUSY)
		return fail(err, errsz, e,
			    "process %d is already traced by pid %ld (a debugger or strace?): "
			    "detach it first, then run stacktop dump again.",
			    o->pid, (long)wall_tracer_of(t->tid));
	if (e == -EPERM && geteuid() == 0)
		return fail(err, errsz, e,
			    "not permitted to trace process %d even as root: see "
			    "kernel.yama.ptrace_scope or a security module (SELinux, AppArmor).",
			    o->pid);
	if (e == -EPERM)
		return fail(err, errsz, e,
			    "not permitted to trace process %d: run as root (sudo stacktop "
			    "dump -p %d) or give stacktop CAP_SYS_PTRACE.",
			    o->pid, o->pid);
	return fail(err, errsz, e, "cannot trace process %d: %s.", o->pid, strerror(-e));
}

/* Seize, sample and detach the threads from *from on, as many as the
 * descriptors left allow (the wall sampler keeps a few open per thread);
 * *from: the first thread left for the next batch. *added counts the
 * threads seized. */
static int take_batch(const struct dump_opts *o, struct dump_ctx *d, int *from, int *added,
		      char *err, size_t errsz)
{
	struct wall_sampler *ws;
	struct wall_config cfg = {.rate_hz = 1, .stack_size = o->stack_size};
	int rc = wall_new(&cfg, &ws), here = 0, i;
	if (rc)
		return fail(err, errsz, rc, "out of memory dumping process %d.", o->pid);
	for (i = *from; i < d->n; i++) {
		if (here && sampler_fds_low())
			break; /* the rest in the next batch */
		int e = wall_add_thread(ws, o->pid, d->th[i].tid);
		if (e == 0) {
			here++;
			continue;
		}
		if (e == -ESRCH || e == -EEXIST)
			continue; /* ended meanwhile */
		wall_free(ws);
		return add_failed(o, &d->th[i], e, err, errsz);
	}
	*from = i;
	*added += here;
	if (here) {
		wall_sample_all(ws, mono_ns(), on_sample, d);
		retry_missing(ws, d);
	}
	wall_free(ws); /* detach everything before the next batch and the slow part */
	return 0;
}

/* Seize, sample and detach every thread: all at once unless the
 * descriptors run short (thousands of threads), then in batches. */
static int take_samples(const struct dump_opts *o, struct dump_ctx *d, char *err, size_t errsz)
{
	int from = 0, added = 0, rc;
	while (from < d->n)
		if ((rc = take_batch(o, d, &from, &added, err, errsz)))
			return rc;
	if (!added)
		return fail(err, errsz, -ESRCH, "process %d exited before it could be dumped.",
			    o->pid);
	return 0;
}

/* Every copy through ingest: the process's maps, the unwind, the frames. */
static void ingest_all(pid_t pid, struct dump_ctx *d, struct ingest *in, struct frames *fr)
{
	ingest_add_process(in, pid);
	/* The copies are named after all were taken: a thread's Python
	 * frames are read then (a sleeper's and a waiter's have not moved). */
	ingest_python_any_age(in, true);
	for (int i = 0; i < d->n; i++) {
		struct dump_thread *t = &d->th[i];
		if (!t->sampled)
			continue;
		uint64_t before = ingest_get_stats(in)->truncated;
		ingest_stack(in, &t->s, t->frames, INGEST_MAX_FRAMES, &t->nframes);
		t->truncated = ingest_get_stats(in)->truncated != before;
		/* The wait is told in words, not as a frame. */
		const struct frame *leaf =
		    t->nframes ? frames_get(fr, t->frames[t->nframes - 1]) : NULL;
		if (leaf && leaf->wait) {
			t->s.wait = (enum sample_wait)leaf->wait; /* as the stack refined it */
			t->nframes--;
		}
	}
}

/* What the stack says about the futex: the innermost frame that names a
 * pthread or semaphore call decides. */
static enum locks_hint stack_hint(const struct dump_thread *t, struct frames *fr)
{
	for (int k = t->nframes - 1; k >= 0; k--) {
		const struct frame *f = frames_get(fr, t->frames[k]);
		enum locks_hint h =
		    f && f->has_sym ? locks_hint_of_function(f->sym.func) : LOCKS_HINT_NONE;
		if (h != LOCKS_HINT_NONE)
			return h;
	}
	return LOCKS_HINT_NONE;
}

/* The wait-for graph of the threads that wait on a futex, read before the
 * stops and decoded with their stacks. */
static void build_graph(pid_t pid, struct dump_ctx *d, struct frames *fr)
{
	struct locks_wait w;

	locks_reset(&d->graph);
	for (int i = 0; i < d->n; i++) {
		struct dump_thread *t = &d->th[i];
		/* A futex wait, whether the stack made it lock or idle (a
		 * condition variable: said to have no owner). */
		if (!t->sampled || t->lock_rc || t->s.state == SAMPLE_ONCPU ||
		    (t->s.wait != SAMPLE_WAIT_LOCK && t->s.wait != SAMPLE_WAIT_IDLE))
			continue;
		locks_resolve(&t->lock, pid, t->tid, stack_hint(t, fr), &w);
		locks_add(&d->graph, &w);
	}
	locks_build(&d->graph);
}

static const char *name_of(const struct dump_ctx *d, pid_t tid, char *buf, size_t size)
{
	buf[0] = '\0';
	for (int i = 0; i < d->n; i++)
		if (d->th[i].tid == tid)
			text_sanitize(d->th[i].name, buf, size);
	return buf[0] ? buf : "?";
}

/* The last line of a waiting thread's block: the lock and its holder. */
static void print_lock(const struct dump_ctx *d, const struct dump_thread *t, FILE *out)
{
	const struct locks_wait *w = locks_find(&d->graph, t->tid);
	char n[64];

	if (!w)
		return;
	if (w->kind == LOCKS_KIND_NOOWNER) {
		fprintf(out, "    futex 0x%llx: condition variable, semaphore or other, no owner\n",
			(unsigned long long)w->addr);
		return;
	}
	fprintf(out, "    %s 0x%llx ", w->kind == LOCKS_KIND_RWLOCK ? "rwlock" : "lock",
		(unsigned long long)w->addr);
	if (w->owner)
		fprintf(out, "held by %s (%d)%s\n", name_of(d, w->owner, n, sizeof(n)),
			(int)w->owner, w->cycle ? "  DEADLOCK" : "");
	else if (t->lock.mem_err)
		fprintf(out, "owner unknown (cannot read the target's memory: %s)\n",
			strerror(-t->lock.mem_err));
	else
		fprintf(out, "owner unknown\n");
}

/* One "deadlock:" line per cycle. */
static void print_deadlocks(const struct dump_ctx *d, FILE *out)
{
	char n[64];

	for (int c = 0; c < d->graph.ncycles; c++) {
		const struct locks_cycle *cy = &d->graph.cycles[c];
		fputs(c ? "" : "\n", out);
		fputs("deadlock:", out);
		for (int k = 0; k <= cy->n; k++) {
			pid_t tid = d->graph.tids[cy->first + k % cy->n];
			fprintf(out, "%s %s (%d)", k ? " ->" : "", name_of(d, tid, n, sizeof(n)),
				(int)tid);
		}
		fputc('\n', out);
	}
}

/* "waiting: lock in futex_wait_queue", "running", "D-state in
 * wait_for_vfork_done". */
static void describe_wait(const struct dump_thread *t, char *buf, size_t size)
{
	const struct sample *s = &t->s;
	const char *sc = waits_syscall_name(s->syscall_nr);
	char w[64];
	if (s->state == SAMPLE_ONCPU || s->wait == SAMPLE_WAIT_NONE) {
		snprintf(buf, size, "running");
		return;
	}
	text_sanitize(s->wchan, w, sizeof(w));
	const char *where = s->wait != SAMPLE_WAIT_OTHER && w[0] ? w : sc ? sc : w;
	if (where && where[0])
		snprintf(buf, size, "waiting: %s in %s", waits_name(s->wait), where);
	else
		snprintf(buf, size, "waiting: %s", waits_name(s->wait));
}

/* A thread's Python frames (runtime/python, merged by ingest) as Python
 * prints a traceback: the most recent call last. */
static void print_python(const struct dump_thread *t, struct frames *fr, FILE *out)
{
	char a[1024], c[256];
	bool any = false;

	for (int k = 0; k < t->nframes; k++) {
		const struct frame *f = frames_get(fr, t->frames[k]);

		if (!f || f->lang != FRAME_LANG_PYTHON)
			continue;
		if (!any)
			fputs("    Python traceback (most recent call last):\n", out);
		any = true;
		text_sanitize(f->sym.file ? f->sym.file : "?", c, sizeof(c));
		text_sanitize(f->sym.func ? f->sym.func : "?", a, sizeof(a));
		if (f->sym.line > 0)
			fprintf(out, "      File \"%s\", line %d, in %s\n", c, f->sym.line, a);
		else
			fprintf(out, "      File \"%s\", in %s\n", c, a);
	}
}

static bool has_python(const struct dump_thread *t, struct frames *fr)
{
	for (int k = 0; k < t->nframes; k++) {
		const struct frame *f = frames_get(fr, t->frames[k]);

		if (f && f->lang == FRAME_LANG_PYTHON)
			return true;
	}
	return false;
}

static void print_text(const struct dump_opts *o, const char *cmdline, struct dump_ctx *d,
		       struct frames *fr, FILE *out)
{
	char a[1024], b[512], c[256], how[160];
	text_sanitize(cmdline, a, sizeof(a));
	fprintf(out, "Process %d: %s\n", o->pid, a);
	for (int i = 0; i < d->n; i++) {
		struct dump_thread *t = &d->th[i];
		char state_now;
		if (!t->sampled && target_state(o->pid, t->tid, &state_now) == 0) {
			/* Never left out in silence: it is there, without a stack. */
			text_sanitize(t->name, b, sizeof(b));
			fprintf(
			    out,
			    "\nThread %d \"%s\" (%c): no stack, it did not stop within %.0f s\n",
			    t->tid, b, state_now, DUMP_RETRY_NS / 1e9);
			continue;
		}
		if (!t->sampled)
			continue;
		text_sanitize(t->name, b, sizeof(b));
		describe_wait(t, how, sizeof(how));
		fprintf(out, "\nThread %d \"%s\" (%c, %s)\n", t->tid, b, t->state ? t->state : '?',
			how);
		/* A Python thread is its traceback; its native frames (the
		 * interpreter's, mostly) only when asked. */
		for (int k = 0; k < t->nframes && (o->native || !has_python(t, fr)); k++) {
			const struct frame *f = frames_line(fr, t->frames[t->nframes - 1 - k]);
			bool ok = f && f->has_sym;
			struct sym_info si = f ? f->sym : (struct sym_info){0};
			if (f && f->lang == FRAME_LANG_PYTHON)
				fprintf(out, "    #%-2d %-18s ", k, "(python)"); /* no address */
			else
				fprintf(out, "    #%-2d 0x%016llx ", k,
					(unsigned long long)(f ? f->pc : 0));
			if (ok && si.func) {
				text_sanitize(si.func, a, sizeof(a));
				fputs(a, out);
				if (si.inlined)
					fputs(" (inline)", out);
				if (si.file) {
					text_sanitize(text_basename(si.file), c, sizeof(c));
					if (si.line > 0)
						fprintf(out, " (%s:%d)", c, si.line);
					else
						fprintf(out, " (%s)", c);
				}
			} else {
				text_sanitize(ok && si.module ? si.module : "[unknown]", c,
					      sizeof(c));
				fprintf(out, "%s+0x%llx", c,
					(unsigned long long)(ok ? si.offset : 0));
			}
			text_sanitize(ok && si.module ? text_basename(si.module) : "?", c,
				      sizeof(c));
			fprintf(out, " [%s]\n", c);
		}
		print_python(t, fr, out);
		if (!t->nframes)
			fprintf(out, "    (no user stack)\n");
		else if (t->truncated)
			fprintf(out, "    ... (stack truncated)\n");
		print_lock(d, t, out);
	}
	print_deadlocks(d, out);
}

void dump_json_string(FILE *out, const char *s)
{
	if (!s) {
		fputs("null", out);
		return;
	}
	fputc('"', out);
	while (*s) {
		uint32_t cp;
		int len = text_utf8_decode(s, &cp);
		if (len < 0) {
			fputs("\\ufffd", out); /* invalid byte */
			s++;
			continue;
		}
		if (cp == '"' || cp == '\\')
			fprintf(out, "\\%c", (char)cp);
		else if (cp == '\n')
			fputs("\\n", out);
		else if (cp == '\t')
			fputs("\\t", out);
		else if (cp < 0x20 || (text_is_control(cp) && cp <= 0xffff))
			fprintf(out, "\\u%04x", (unsigned)cp);
		else
			fwrite(s, 1, (size_t)len, out);
		s += len;
	}
	fputc('"', out);
}

/* ,"lock":{"addr":"0x..","kind":"mutex","owner":1234,"deadlock":false}, or
 * ,"lock":null: the graph's edge from this thread. */
static void print_json_lock(const struct locks_wait *w, FILE *out)
{
	if (!w) {
		fputs(",\"lock\":null", out);
		return;
	}
	fprintf(out, ",\"lock\":{\"addr\":\"0x%llx\",\"kind\":", (unsigned long long)w->addr);
	dump_json_string(out, w->kind == LOCKS_KIND_NOOWNER ? "none" : locks_kind_name(w->kind));
	if (w->owner)
		fprintf(out, ",\"owner\":%d", (int)w->owner);
	else
		fputs(",\"owner\":null", out);
	fprintf(out, ",\"deadlock\":%s}", w->cycle ? "true" : "false");
}

static void print_json(const struct dump_opts *o, const char *cmdline, struct dump_ctx *d,
		       struct frames *fr, FILE *out)
{
	char st[2] = {0, 0};
	bool first = true;
	fprintf(out, "{\"pid\":%d,\"cmdline\":", o->pid);
	dump_json_string(out, cmdline);
	fputs(",\"threads\":[", out);
	for (int i = 0; i < d->n; i++) {
		struct dump_thread *t = &d->th[i];
		if (!t->sampled)
			continue;
		const struct sample *s = &t->s;
		st[0] = t->state ? t->state : '?';
		fprintf(out, "%s{\"tid\":%d,\"name\":", first ? "" : ",", t->tid);
		first = false;
		dump_json_string(out, t->name);
		fputs(",\"state\":", out);
		dump_json_string(out, st);
		fputs(",\"wait\":", out);
		dump_json_string(out,
				 waits_name(s->state == SAMPLE_ONCPU ? SAMPLE_WAIT_NONE : s->wait));
		fputs(",\"syscall\":", out);
		dump_json_string(out, waits_syscall_name(s->syscall_nr));
		fputs(",\"wchan\":", out);
		dump_json_string(out, s->wchan[0] ? s->wchan : NULL);
		fprintf(out, ",\"truncated\":%s,\"frames\":[", t->truncated ? "true" : "false");
		for (int k = 0; k < t->nframes; k++) {
			const struct frame *f = frames_line(fr, t->frames[t->nframes - 1 - k]);
			bool ok = f && f->has_sym;
			struct sym_info si = f ? f->sym : (struct sym_info){0};
			fprintf(out, "%s{\"pc\":\"0x%llx\",\"function\":", k ? "," : "",
				(unsigned long long)(f ? f->pc : 0));
			dump_json_string(out, ok ? si.func : NULL);
			fputs(",\"file\":", out);
			dump_json_string(out, ok ? si.file : NULL);
			if (ok && si.line > 0)
				fprintf(out, ",\"line\":%d", si.line);
			else
				fputs(",\"line\":null", out);
			fputs(",\"module\":", out);
			dump_json_string(out, ok ? si.module : NULL);
			fprintf(out, ",\"inline\":%s", ok && si.inlined ? "true" : "false");
			fprintf(out, ",\"python\":%s}",
				f && f->lang == FRAME_LANG_PYTHON ? "true" : "false");
		}
		fputs("]", out);
		print_json_lock(locks_find(&d->graph, t->tid), out);
		fputs("}", out);
	}
	fputs("],\"deadlocks\":[", out);
	for (int c = 0; c < d->graph.ncycles; c++) {
		const struct locks_cycle *cy = &d->graph.cycles[c];
		fputs(c ? ",[" : "[", out);
		for (int k = 0; k < cy->n; k++)
			fprintf(out, "%s%d", k ? "," : "", (int)d->graph.tids[cy->first + k]);
		fputs("]", out);
	}
	fputs("]}\n", out);
}

int dump_run(const struct dump_opts *o, FILE *out, char *err, size_t errsz)
{
	pid_t *tids = NULL;
	int cap = 0;
	struct dump_ctx d = {0};
	struct ingest *in = NULL;
	struct frames *fr = NULL;
	struct sym *sy = NULL;
	char cmdline[4096] = "";
	int n = 0, rc;

	if (err && errsz)
		err[0] = '\0';
	if (o->pid <= 0 || target_exists(o->pid) != 0)
		return fail(err, errsz, -ESRCH, "no process with PID %d (is it still running?).",
			    o->pid);
	/* ptrace refuses kernel threads whoever asks: say so, not "run as root". */
	if (target_is_kthread(o->pid))
		return fail(
		    err, errsz, -EPERM,
		    "process %d is a kernel thread: it has no user stack to dump (its kernel "
		    "stack is in /proc/%d/stack, readable by root).",
		    o->pid, o->pid);
	if ((rc = target_threads_all(o->pid, &tids, &cap, &n)) < 0) {
		free(tids);
		return fail(err, errsz, rc == -EACCES ? -EPERM : rc,
			    "cannot list the threads of process %d: %s.", o->pid, strerror(-rc));
	}
	d.th = calloc((size_t)n + 1, sizeof(*d.th));
	if (!d.th) {
		free(tids);
		return fail(err, errsz, -ENOMEM, "out of memory dumping process %d.", o->pid);
	}
	d.n = n;
	target_cmdline(o->pid, cmdline, sizeof(cmdline));
	for (int i = 0; i < n; i++) {
		d.th[i].tid = tids[i];
		target_comm(o->pid, tids[i], d.th[i].name, sizeof(d.th[i].name));
		target_state(o->pid, tids[i], &d.th[i].state);
		d.th[i].name[strcspn(d.th[i].name, "\n")] = '\0';
		/* Before any stop: a stopped thread's syscall file shows the stop. */
		d.th[i].lock_rc = locks_read_raw(o->pid, tids[i], &d.th[i].lock);
	}
	free(tids);
	rc = take_samples(o, &d, err, errsz);
	if (rc)
		goto out;
	/* The letter read before seizing, unless the sample (read just before
	 * its stop) saw it running or in D. */
	for (int i = 0; i < n; i++) {
		struct dump_thread *t = &d.th[i];
		if (t->s.state == SAMPLE_ONCPU)
			t->state = 'R';
		else if (t->s.wait == SAMPLE_WAIT_DSTATE)
			t->state = 'D';
		else if (t->state == 'R' || !t->state)
			t->state = 'S';
	}
	if ((rc = sym_new(&sy)) || (rc = frames_new(sy, &fr)) || (rc = ingest_new(fr, NULL, &in))) {
		fail(err, errsz, rc, "out of memory dumping process %d.", o->pid);
		goto out;
	}
	ingest_all(o->pid, &d, in, fr);
	build_graph(o->pid, &d, fr);
	if (o->json)
		print_json(o, cmdline, &d, fr, out);
	else
		print_text(o, cmdline, &d, fr, out);
	fflush(out);
out:
	for (int i = 0; i < d.n; i++)
		free(d.th[i].stack);
	free(d.th);
	locks_free(&d.graph);
	ingest_free(in);
	frames_free(fr);
	sym_free(sy);
	return rc;
}
