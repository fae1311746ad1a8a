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

#include "stacktop/dump.h"
#include "stacktop/mono.h"
#include "stacktop/frames.h"
#include "stacktop/ingest.h"
#include "stacktop/sym.h"
#include "stacktop/target.h"
#include "stacktop/text.h"
#include "stacktop/unwind.h"
#include "stacktop/waits.h"
#include "stacktop/wall.h"

#define MAX_THREADS 8192

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
};

struct dump_ctx {
	struct dump_thread *th;
	int n;
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
		t->s.kpcs = NULL;
		t->s.nkpcs = 0;
		t->s.upcs = NULL;
		t->s.nupcs = 0;
		if (s->stack_size && (t->stack = malloc(s->stack_size))) {
			memcpy(t->stack, s->stack, s->stack_size);
			t->s.stack = t->stack;
		} else {
			t->s.stack_size = 0;
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

/* Seize, sample and detach every thread. */
static int take_samples(const struct dump_opts *o, struct dump_ctx *d, char *err, size_t errsz)
{
	struct wall_sampler *ws;
	struct wall_config cfg = {.rate_hz = 1, .stack_size = o->stack_size};
	int rc = wall_new(&cfg, &ws), added = 0;
	if (rc)
		return fail(err, errsz, rc, "out of memory dumping process %d.", o->pid);
	for (int i = 0; i < d->n; i++) {
		int e = wall_add_thread(ws, o->pid, d->th[i].tid);
		if (e == 0) {
			added++;
			continue;
		}
		if (e == -ESRCH || e == -EEXIST)
			continue; /* ended meanwhile */
		wall_free(ws);
		if (e == -EBUSY)
			return fail(
			    err, errsz, e,
			    "process %d is already traced by pid %ld (a debugger or strace?): "
			    "detach it first, then run stacktop dump again.",
			    o->pid, (long)wall_tracer_of(d->th[i].tid));
		if (e == -EPERM)
			return fail(err, errsz, e,
				    "not permitted to trace process %d: run as root (sudo stacktop "
				    "dump -p %d) or give stacktop CAP_SYS_PTRACE.",
				    o->pid, o->pid);
		return fail(err, errsz, e, "cannot trace process %d: %s.", o->pid, strerror(-e));
	}
	if (!added) {
		wall_free(ws);
		return fail(err, errsz, -ESRCH, "process %d exited before it could be dumped.",
			    o->pid);
	}
	wall_sample_all(ws, mono_ns(), on_sample, d);
	wall_free(ws); /* detach everything before the slow part */
	return 0;
}

/* Every copy through ingest: the process's maps, the unwind, the frames. */
static void ingest_all(pid_t pid, struct dump_ctx *d, struct ingest *in, struct frames *fr)
{
	ingest_add_process(in, pid);
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

static void print_text(const struct dump_opts *o, const char *cmdline, struct dump_ctx *d,
		       struct frames *fr, FILE *out)
{
	char a[1024], b[512], c[256], how[160];
	text_sanitize(cmdline, a, sizeof(a));
	fprintf(out, "Process %d: %s\n", o->pid, a);
	for (int i = 0; i < d->n; i++) {
		struct dump_thread *t = &d->th[i];
		if (!t->sampled)
			continue;
		text_sanitize(t->name, b, sizeof(b));
		describe_wait(t, how, sizeof(how));
		fprintf(out, "\nThread %d \"%s\" (%c, %s)\n", t->tid, b, t->state ? t->state : '?',
			how);
		for (int k = 0; k < t->nframes; k++) {
			const struct frame *f = frames_line(fr, t->frames[t->nframes - 1 - k]);
			bool ok = f && f->has_sym;
			struct sym_info si = f ? f->sym : (struct sym_info){0};
			fprintf(out, "    #%-2d 0x%016llx ", k, (unsigned long long)(f ? f->pc : 0));
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
		if (!t->nframes)
			fprintf(out, "    (no user stack)\n");
		else if (t->truncated)
			fprintf(out, "    ... (stack truncated)\n");
	}
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
		fprintf(out, ",\"truncated\":%s,\"frames\":[",
			t->truncated ? "true" : "false");
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
			fprintf(out, ",\"inline\":%s}", ok && si.inlined ? "true" : "false");
		}
		fputs("]}", out);
	}
	fputs("]}\n", out);
}

int dump_run(const struct dump_opts *o, FILE *out, char *err, size_t errsz)
{
	static pid_t tids[MAX_THREADS];
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
	if ((rc = target_threads(o->pid, tids, MAX_THREADS, &n)) < 0)
		return fail(err, errsz, rc == -EACCES ? -EPERM : rc,
			    "cannot list the threads of process %d: %s.", o->pid, strerror(-rc));
	d.th = calloc((size_t)n + 1, sizeof(*d.th));
	if (!d.th)
		return fail(err, errsz, -ENOMEM, "out of memory dumping process %d.", o->pid);
	d.n = n;
	target_cmdline(o->pid, cmdline, sizeof(cmdline));
	for (int i = 0; i < n; i++) {
		d.th[i].tid = tids[i];
		target_comm(o->pid, tids[i], d.th[i].name, sizeof(d.th[i].name));
		target_state(o->pid, tids[i], &d.th[i].state);
		d.th[i].name[strcspn(d.th[i].name, "\n")] = '\0';
	}
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
	if (o->json)
		print_json(o, cmdline, &d, fr, out);
	else
		print_text(o, cmdline, &d, fr, out);
	fflush(out);
out:
	for (int i = 0; i < d.n; i++)
		free(d.th[i].stack);
	free(d.th);
	ingest_free(in);
	frames_free(fr);
	sym_free(sy);
	return rc;
}
