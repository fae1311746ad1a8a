/*
 * jitwatch — JIT code without names, and what is done about it: which
 * runtime makes it (runtime/rtkind: the hint then names the remedy that
 * fits), and for a HotSpot JVM, asking it for its perf map
 * (runtime/jvmattach) when its unnamed JIT code is a share of the window
 * worth naming, again when that share grows back (code compiled after the
 * map was written), and reading the map it writes at its exit
 * (-XX:+DumpPerfMapAtExit) before a record writes its file.
 *
 * On each refresh (at most once a second) the window's stacks are walked
 * once: per process, the samples whose stack passes through unnamed JIT
 * code (frames_jit_unnamed). A JVM with such samples (at least
 * JITWATCH_FIRST_PCT) is asked; once it answered, its unnamed frames are
 * named again from the new map (frames_rename_jit). It is asked again
 * while the share is at least JITWATCH_AGAIN_PCT, at most every
 * JITWATCH_AGAIN_S seconds, doubling (to 60 s) after each request that
 * named nothing; after JITWATCH_FAILS_MAX requests without an answer, or
 * one refused (before JDK 17) or unsafe (no SIGQUIT handler), it is not
 * asked again; one that opened no socket (attach disabled: each SIGQUIT
 * would print a thread dump) is asked again only through a socket that
 * came late, never signalled again. A JVM seen is kept with its root
 * directory open (and its namespace pid and uid), so its map can still be
 * read from its file system once it has exited (a zombie's
 * /proc/PID/root is gone).
 *
 * Contract: jitwatch_init, then jitwatch_tick on every tick (reaps a
 * finished request: cheap), jitwatch_refresh on every refresh,
 * jitwatch_header into a view header; jitwatch_free kills a request in
 * flight. At most JITWATCH_MAX processes are watched. Nothing prints.
 */
#ifndef STACKTOP_JITWATCH_H
#define STACKTOP_JITWATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "stacktop/runtime/jvmattach.h"

#define JITWATCH_MAX 16
#define JITWATCH_FIRST_PCT 1.0
#define JITWATCH_AGAIN_PCT 5.0
#define JITWATCH_AGAIN_S 5
#define JITWATCH_FAILS_MAX 3

struct frames;
struct sym;
struct window;
struct view_header;

struct jitwatch_proc {
	pid_t pid;
	int kind; /* enum rtkind, or <0: not read yet */
	int py_minor;
	uint64_t samples, unnamed; /* the last walk's */
	/* a HotSpot JVM */
	struct jvmattach att;
	enum jvmattach_status last; /* of the last request that ended */
	uint64_t asked_ns, done_ns; /* the last request's start and end */
	unsigned fails, fruitless;
	bool judge; /* an answer came: the next refresh says if it named anything */
	bool given_up;
	bool no_signal;	   /* it opened no socket once: not signalled again */
	int rootfd, pidfd; /* kept while watched, -1: none */
	pid_t nspid;
	uid_t uid;
	bool gone; /* exited: its map read one last time */
};

struct jitwatch {
	bool attach; /* --no-runtime-attach: false */
	struct jitwatch_proc p[JITWATCH_MAX];
	int n;
	uint64_t walked_ns;
	uint8_t *memo; /* per window node: 0 unknown, 1 no, 2 unnamed JIT on the path */
	size_t memo_cap;
};

void jitwatch_init(struct jitwatch *jw, bool attach);
void jitwatch_free(struct jitwatch *jw);
/* Reap finished requests (never blocks). */
void jitwatch_tick(struct jitwatch *jw, uint64_t now_ns);
/* Walk the window (once a second), start or repeat requests, rename what
 * a new map names; a watched JVM that exited has its map read once more.
 * Returns how many frames got a name. */
int jitwatch_refresh(struct jitwatch *jw, const struct window *w, struct frames *fr, struct sym *sy,
		     uint64_t now_ns);
/* The header's view of it (h->jit). */
void jitwatch_header(const struct jitwatch *jw, uint64_t now_ns, struct view_header *h);

#endif
