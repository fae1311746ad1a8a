/*
 * jitwatch — unnamed JIT code, its runtime, a JVM asked for its map (see
 * jitwatch.h).
 */
#include "stacktop/app/jitwatch.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "stacktop/model/window.h"
#include "stacktop/proc/tfile.h"
#include "stacktop/runtime/rtkind.h"
#include "stacktop/symbols/frames.h"
#include "stacktop/symbols/sym.h"
#include "stacktop/ui/view.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

#define SEC_NS 1000000000ull
#define AGAIN_MAX_S 60

void jitwatch_init(struct jitwatch *jw, bool attach)
{
	memset(jw, 0, sizeof(*jw));
	jw->attach = attach;
}

static void proc_close(struct jitwatch_proc *p)
{
	jvmattach_cancel(&p->att);
	if (p->rootfd >= 0)
		close(p->rootfd);
	if (p->pidfd >= 0)
		close(p->pidfd);
	p->rootfd = p->pidfd = -1;
}

void jitwatch_free(struct jitwatch *jw)
{
	for (int i = 0; i < jw->n; i++)
		proc_close(&jw->p[i]);
	free(jw->memo);
	memset(jw, 0, sizeof(*jw));
}

void jitwatch_tick(struct jitwatch *jw, uint64_t now_ns)
{
	for (int i = 0; i < jw->n; i++) {
		struct jitwatch_proc *p = &jw->p[i];
		enum jvmattach_status st;

		if (p->att.child <= 0 ||
		    (st = jvmattach_poll(&p->att, now_ns)) == JVMATTACH_RUNNING)
			continue;
		p->last = st;
		p->done_ns = now_ns;
		if (st == JVMATTACH_OK) {
			p->fails = 0;
			p->judge = true;
		} else if (++p->fails >= JITWATCH_FAILS_MAX || st == JVMATTACH_UNSAFE ||
			   st == JVMATTACH_REFUSED) {
			/* refused: a JDK without Compiler.perfmap says so
			 * every time */
			p->given_up = true;
		}
		/* no socket: a SIGQUIT without the attach file's effect prints a
		 * thread dump; asked again only through a socket come late */
		if (st == JVMATTACH_NO_SOCKET)
			p->no_signal = true;
	}
}

static struct jitwatch_proc *proc_get(struct jitwatch *jw, pid_t pid)
{
	for (int i = 0; i < jw->n; i++)
		if (jw->p[i].pid == pid)
			return &jw->p[i];
	if (jw->n == JITWATCH_MAX)
		return NULL;
	struct jitwatch_proc *p = &jw->p[jw->n++];
	*p = (struct jitwatch_proc){.pid = pid, .kind = -1, .rootfd = -1, .pidfd = -1};
	return p;
}

/* Does the stack ending at node pass through unnamed JIT code? Memoised
 * per node for one walk. */
static bool path_unnamed(struct jitwatch *jw, const struct window *w, const struct frames *fr,
			 uint32_t node)
{
	uint32_t path[256];
	int np = 0;
	uint8_t v = 1;

	for (uint32_t n = node; n != WINDOW_ROOT && window_node(w, n);
	     n = window_node(w, n)->parent) {
		if (jw->memo[n]) {
			v = jw->memo[n];
			break;
		}
		if (frames_jit_unnamed(fr, window_node(w, n)->frame)) {
			v = 2;
			jw->memo[n] = 2;
			break;
		}
		if (np < (int)(sizeof(path) / sizeof(path[0])))
			path[np++] = n;
	}
	/* the nodes below the one that decided share its answer (a path cut
	 * at 256 is left unknown: walked again, never wrong) */
	for (int i = 0; i < np; i++)
		jw->memo[path[i]] = v;
	return v == 2;
}

/* The pid of the stack ending at node: its first frame of a process. */
static int path_pid(const struct window *w, const struct frames *fr, uint32_t node)
{
	for (uint32_t n = node; n != WINDOW_ROOT && window_node(w, n);
	     n = window_node(w, n)->parent) {
		const struct frame *f = frames_get(fr, window_node(w, n)->frame);
		if (f && f->pid > 0)
			return f->pid;
	}
	return 0;
}

/* Per process: samples in the window, and those through unnamed JIT code. */
static void walk(struct jitwatch *jw, const struct window *w, const struct frames *fr)
{
	size_t nn = window_nnodes(w), nc = 0;
	const struct window_count *wc = window_counts(w, &nc);

	for (int i = 0; i < jw->n; i++)
		jw->p[i].samples = jw->p[i].unnamed = 0;
	if (nn > jw->memo_cap) {
		uint8_t *m = realloc(jw->memo, nn);
		if (!m)
			return;
		jw->memo = m;
		jw->memo_cap = nn;
	}
	memset(jw->memo, 0, nn);
	for (size_t k = 0; k < nc; k++) {
		if (!window_node(w, wc[k].node))
			continue;
		bool un = path_unnamed(jw, w, fr, wc[k].node);
		int pid = path_pid(w, fr, wc[k].node);
		struct jitwatch_proc *p = NULL;

		for (int i = 0; i < jw->n && !p; i++)
			if (jw->p[i].pid == pid)
				p = &jw->p[i];
		if (!p && un && pid > 0)
			p = proc_get(jw, pid);
		if (!p)
			continue;
		p->samples += wc[k].count;
		p->unnamed += un ? wc[k].count : 0;
	}
}

static double unnamed_pct(const struct jitwatch_proc *p)
{
	return p->samples ? 100.0 * (double)p->unnamed / (double)p->samples : 0;
}

/* A JVM seen: keep what reading its map needs once it is gone. */
static void keep_jvm(struct jitwatch_proc *p)
{
	char path[64], buf[4096];
	struct jvmattach_ids ids;

	p->pidfd = (int)syscall(SYS_pidfd_open, p->pid, 0);
	snprintf(path, sizeof(path), "/proc/%d/root", (int)p->pid);
	p->rootfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (tfile_read_status(p->pid, buf, sizeof(buf)) >= 0 &&
	    jvmattach_parse_status(buf, &ids) == 0) {
		p->nspid = ids.nspid;
		p->uid = ids.euid;
	} else if (p->rootfd >= 0) {
		close(p->rootfd);
		p->rootfd = -1;
	}
}

static bool exited(const struct jitwatch_proc *p)
{
	struct pollfd pf = {p->pidfd, POLLIN, 0};

	return p->pidfd >= 0 && poll(&pf, 1, 0) == 1;
}

struct lookup_ctx {
	struct sym *sy;
	const struct jitwatch_proc *p;
	char root[40];
};

static int lookup_live(void *ctx, uint64_t pc, struct sym_info *out)
{
	struct lookup_ctx *c = ctx;

	return sym_perfmap_lookup(c->sy, c->p->pid, pc, out);
}

static int lookup_kept(void *ctx, uint64_t pc, struct sym_info *out)
{
	struct lookup_ctx *c = ctx;

	return sym_perfmap_lookup_at(c->sy, c->root, c->p->nspid, c->p->uid, pc, out);
}

/* Should a JVM be asked (again) now? */
static bool due(const struct jitwatch *jw, const struct jitwatch_proc *p, uint64_t now)
{
	double pct = unnamed_pct(p);
	unsigned again = JITWATCH_AGAIN_S << (p->fruitless < 4 ? p->fruitless : 4);

	if (!jw->attach || p->given_up || p->att.child > 0 || p->gone)
		return false;
	if (again > AGAIN_MAX_S)
		again = AGAIN_MAX_S;
	if (!p->asked_ns)
		return pct >= JITWATCH_FIRST_PCT;
	return pct >= JITWATCH_AGAIN_PCT && now - p->done_ns >= again * SEC_NS;
}

/* A watched JVM that exited: its last map (-XX:+DumpPerfMapAtExit), read
 * from the root kept open. */
static int read_at_exit(struct jitwatch_proc *p, struct frames *fr, struct sym *sy)
{
	struct lookup_ctx c = {.sy = sy, .p = p};
	int named = 0;

	p->gone = true;
	jvmattach_cancel(&p->att);
	if (p->rootfd >= 0) {
		snprintf(c.root, sizeof(c.root), "/proc/self/fd/%d", p->rootfd);
		named = frames_rename_jit(fr, p->pid, lookup_kept, &c);
		close(p->rootfd);
		p->rootfd = -1;
	}
	return named;
}

int jitwatch_refresh(struct jitwatch *jw, const struct window *w, struct frames *fr, struct sym *sy,
		     uint64_t now_ns)
{
	int named = 0;

	/* first, and on every refresh: a record ends at the one that sees
	 * its command exit */
	for (int i = 0; i < jw->n; i++)
		if (jw->p[i].kind == RTKIND_HOTSPOT && !jw->p[i].gone && exited(&jw->p[i]))
			named += read_at_exit(&jw->p[i], fr, sy);
	if (jw->walked_ns && now_ns - jw->walked_ns < SEC_NS)
		return named;
	jw->walked_ns = now_ns;
	walk(jw, w, window_frames(w));
	for (int i = 0; i < jw->n; i++) {
		struct jitwatch_proc *p = &jw->p[i];
		struct lookup_ctx c = {.sy = sy, .p = p};

		if (p->kind < 0 && p->unnamed) {
			p->kind = rtkind_of(p->pid, &p->py_minor);
			if (p->kind == RTKIND_HOTSPOT)
				keep_jvm(p);
		}
		if (p->kind != RTKIND_HOTSPOT || p->gone)
			continue;
		/* whatever named them since (a map that came, our request) */
		int k = p->unnamed ? frames_rename_jit(fr, p->pid, lookup_live, &c) : 0;
		named += k;
		if (p->judge) { /* the first refresh after an answer: did it name? */
			p->fruitless = k ? 0 : p->fruitless + 1;
			p->judge = false;
		}
		if (due(jw, p, now_ns) &&
		    jvmattach_start(&p->att, p->pid, !p->no_signal, now_ns) == 0)
			p->asked_ns = now_ns;
	}
	if (named) /* the header's share: what is still unnamed */
		walk(jw, w, window_frames(w));
	return named;
}

static enum view_jvm_attach attach_view(const struct jitwatch_proc *p)
{
	if (p->att.child > 0)
		return VIEW_JVM_ASKING;
	switch (p->last) {
	case JVMATTACH_OK:
		return VIEW_JVM_DONE;
	case JVMATTACH_NO_SOCKET:
		return VIEW_JVM_NO_SOCKET;
	case JVMATTACH_NO_REPLY:
		return VIEW_JVM_NO_REPLY;
	case JVMATTACH_REFUSED:
		return VIEW_JVM_REFUSED;
	case JVMATTACH_UNSAFE:
		return VIEW_JVM_UNSAFE;
	case JVMATTACH_FAILED:
		return VIEW_JVM_FAILED;
	default:
		return VIEW_JVM_NONE;
	}
}

void jitwatch_header(const struct jitwatch *jw, uint64_t now_ns, struct view_header *h)
{
	const struct jitwatch_proc *best = NULL;

	/* the process with the most unnamed JIT samples; else a JVM asked */
	for (int i = 0; i < jw->n; i++) {
		const struct jitwatch_proc *p = &jw->p[i];
		if (p->gone || p->kind < 0)
			continue;
		if (!best || p->unnamed > best->unnamed ||
		    (p->unnamed == best->unnamed && p->asked_ns && !best->asked_ns))
			best = p;
	}
	memset(&h->jit, 0, sizeof(h->jit));
	if (!best)
		return;
	static const enum view_jit_runtime rt[] = {
	    [RTKIND_NONE] = VIEW_JIT_UNKNOWN,
	    [RTKIND_HOTSPOT] = VIEW_JIT_JVM,
	    [RTKIND_NODE] = VIEW_JIT_NODE,
	    [RTKIND_PYTHON] = VIEW_JIT_PYTHON,
	};
	h->jit.runtime = best->kind < (int)(sizeof(rt) / sizeof(rt[0])) ? rt[best->kind] : 0;
	h->jit.pid = best->pid;
	h->jit.py_minor = best->py_minor;
	h->jit.unnamed_pct = (int)(unnamed_pct(best) + 0.5);
	if (best->kind == RTKIND_HOTSPOT && best->asked_ns) {
		h->jit.attach = attach_view(best);
		uint64_t t = best->done_ns ? best->done_ns : best->asked_ns;
		h->jit.ago_s = now_ns > t ? (double)(now_ns - t) / 1e9 : 0;
	}
}
