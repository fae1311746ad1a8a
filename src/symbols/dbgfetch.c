/*
 * dbgfetch — debuginfod fetches in a worker thread (see dbgfetch.h).
 *
 * One table of build-ids under one mutex: the caller adds entries
 * (QUEUED), the worker takes them one at a time (BUSY), runs
 * debuginfod_find_debuginfo without the lock, and files the result (FOUND
 * with the cached file's path, or MISSING); dbgfetch_poll hands FOUND ones
 * over (DELIVERED). The worker is the only thread that touches
 * libdebuginfod, and the only extra thread of the program.
 *
 * Not blocking, at either end: the progress callback libdebuginfod calls in
 * its transfer loop (about once a second while waiting, more often while
 * data flows) aborts the fetch past its deadline or when the owner is
 * leaving. dbgfetch_free never waits for a transfer: when the worker is
 * inside one, it is detached and frees the table itself once the call
 * returns (the process is normally exiting by then).
 */
#include "stacktop/symbols/dbgfetch.h"

#include <elfutils/debuginfod.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stacktop/lib/dynload.h"
#include "stacktop/lib/mono.h"

enum { ST_QUEUED, ST_BUSY, ST_FOUND, ST_MISSING, ST_DELIVERED };

struct entry {
	uint8_t id[20];
	uint8_t len;
	uint8_t state;
	char *path; /* ST_FOUND */
};

struct dbgfetch {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t thread;
	bool stop, orphaned, busy;
	uint64_t timeout_ns;
	uint64_t max_bytes;
	uint64_t deadline_ns; /* of the fetch in flight */
	struct entry *e;
	size_t n, cap;
};

static void table_free(struct dbgfetch *f)
{
	for (size_t i = 0; i < f->n; i++)
		free(f->e[i].path);
	free(f->e);
	pthread_mutex_destroy(&f->mu);
	pthread_cond_destroy(&f->cv);
	free(f);
}

/* libdebuginfod, opened by the first dbgfetch_new (lib/dynload): linked,
 * it and its HTTP and TLS stack were mapped in every run. */
static struct {
	debuginfod_client *(*begin)(void);
	void (*end)(debuginfod_client *);
	int (*find_debuginfo)(debuginfod_client *, const unsigned char *, int, char **);
	void (*set_user_data)(debuginfod_client *, void *);
	void *(*get_user_data)(debuginfod_client *);
	void (*set_progressfn)(debuginfod_client *, debuginfod_progressfn_t);
} dl;

/* 0 once dl holds the client's functions (tried once a run, before any
 * worker starts). */
static int dl_load(void)
{
	static const char *const names[] = {
	    "debuginfod_begin",		"debuginfod_end",	    "debuginfod_find_debuginfo",
	    "debuginfod_set_user_data", "debuginfod_get_user_data", "debuginfod_set_progressfn"};
	static int state = 1; /* 1: not tried yet */
	void *fns[sizeof(names) / sizeof(names[0])];

	if (state == 1) {
		state = dynload_open("libdebuginfod.so.1", names, fns,
				     sizeof(names) / sizeof(names[0]));
		if (!state) {
			/* POSIX: a function pointer converts through void *. */
			*(void **)&dl.begin = fns[0];
			*(void **)&dl.end = fns[1];
			*(void **)&dl.find_debuginfo = fns[2];
			*(void **)&dl.set_user_data = fns[3];
			*(void **)&dl.get_user_data = fns[4];
			*(void **)&dl.set_progressfn = fns[5];
		}
	}
	return state;
}

/* Called by libdebuginfod during a transfer with the bytes received (a)
 * and expected (b, when known): nonzero aborts it. */
static int progress(debuginfod_client *c, long a, long b)
{
	struct dbgfetch *f = dl.get_user_data(c);
	bool quit;

	pthread_mutex_lock(&f->mu);
	quit = f->stop || mono_ns() > f->deadline_ns || (a > 0 && (uint64_t)a > f->max_bytes) ||
	       (b > 0 && (uint64_t)b > f->max_bytes);
	pthread_mutex_unlock(&f->mu);
	return quit;
}

/* Closes fd. true when the file is over the cap after all (a transfer
 * the progress callback never saw: a file:// server, or one whose size
 * came only at the end): then the cached copy is removed. */
static bool over_cap(const struct dbgfetch *f, int fd, const char *path)
{
	struct stat sb;
	bool over = fstat(fd, &sb) == 0 && (uint64_t)sb.st_size > f->max_bytes;

	close(fd);
	if (over && path)
		unlink(path);
	return over;
}

static struct entry *next_queued(struct dbgfetch *f)
{
	for (size_t i = 0; i < f->n; i++)
		if (f->e[i].state == ST_QUEUED)
			return &f->e[i];
	return NULL;
}

static void *worker(void *arg)
{
	struct dbgfetch *f = arg;
	debuginfod_client *c = dl.begin();
	bool orphaned;

	if (c) {
		dl.set_user_data(c, f);
		dl.set_progressfn(c, progress);
	}
	pthread_mutex_lock(&f->mu);
	for (;;) {
		struct entry *e = NULL;
		uint8_t id[20], len;
		char *path = NULL;
		int fd;

		while (!f->stop && !(e = next_queued(f)))
			pthread_cond_wait(&f->cv, &f->mu);
		if (f->stop)
			break;
		e->state = ST_BUSY;
		memcpy(id, e->id, sizeof(id));
		len = e->len;
		f->busy = true;
		f->deadline_ns = mono_ns() + f->timeout_ns;
		pthread_mutex_unlock(&f->mu);
		fd = c ? dl.find_debuginfo(c, id, len, &path) : -ENOSYS;
		if (fd >= 0)
			fd = over_cap(f, fd, path) ? -EFBIG : 0;
		pthread_mutex_lock(&f->mu);
		f->busy = false;
		/* e may have moved: the table grows under the caller */
		for (size_t i = 0; i < f->n; i++) {
			if (f->e[i].state != ST_BUSY)
				continue;
			f->e[i].state = fd >= 0 && path ? ST_FOUND : ST_MISSING;
			f->e[i].path = fd >= 0 ? path : NULL;
			path = NULL;
		}
		free(path);
	}
	orphaned = f->orphaned;
	pthread_mutex_unlock(&f->mu);
	if (c)
		dl.end(c);
	if (orphaned)
		table_free(f);
	return NULL;
}

int dbgfetch_new(const char *urls, double timeout_s, uint64_t max_bytes, struct dbgfetch **out)
{
	struct dbgfetch *f;
	const char *env = getenv("DEBUGINFOD_URLS");
	char size[32];
	int e;

	if (urls && *urls) {
		/* libdebuginfod reads its servers from the environment only,
		 * at each query: set before the worker exists. */
		if (setenv("DEBUGINFOD_URLS", urls, 1) != 0)
			return -errno;
	} else if (!env || !*env) {
		return -EINVAL;
	}
	if (dl_load())
		return -ELIBACC; /* "Can not access a needed shared library" */
	if (!max_bytes)
		max_bytes = DBGFETCH_MAX_BYTES;
	/* Read by libdebuginfod at each query, like the URLs: a server that
	 * sends the size first is refused before any byte is written. */
	snprintf(size, sizeof(size), "%llu", (unsigned long long)max_bytes);
	if (setenv("DEBUGINFOD_MAXSIZE", size, 1) != 0)
		return -errno;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->max_bytes = max_bytes;
	f->timeout_ns = (uint64_t)((timeout_s > 0 ? timeout_s : DBGFETCH_TIMEOUT_S) * 1e9);
	pthread_mutex_init(&f->mu, NULL);
	pthread_cond_init(&f->cv, NULL);
	e = pthread_create(&f->thread, NULL, worker, f);
	if (e) {
		table_free(f);
		return -e;
	}
	*out = f;
	return 0;
}

void dbgfetch_free(struct dbgfetch *f)
{
	bool busy;

	if (!f)
		return;
	pthread_mutex_lock(&f->mu);
	f->stop = true;
	busy = f->busy;
	f->orphaned = busy;
	pthread_cond_signal(&f->cv);
	pthread_mutex_unlock(&f->mu);
	if (busy) {
		pthread_detach(f->thread); /* it frees the table when its fetch returns */
		return;
	}
	pthread_join(f->thread, NULL);
	table_free(f);
}

int dbgfetch_want(struct dbgfetch *f, const uint8_t *id, size_t len)
{
	int rc = 0;

	if (!f || !id || len == 0 || len > sizeof(f->e[0].id))
		return -EINVAL;
	pthread_mutex_lock(&f->mu);
	for (size_t i = 0; i < f->n; i++)
		if (f->e[i].len == len && !memcmp(f->e[i].id, id, len))
			goto out;
	if (f->n == DBGFETCH_MAX) {
		rc = -ENOSPC;
		goto out;
	}
	if (f->n == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 16;
		struct entry *ne = realloc(f->e, cap * sizeof(*ne));

		if (!ne) {
			rc = -ENOMEM;
			goto out;
		}
		f->e = ne;
		f->cap = cap;
	}
	memset(&f->e[f->n], 0, sizeof(f->e[0]));
	memcpy(f->e[f->n].id, id, len);
	f->e[f->n].len = (uint8_t)len;
	f->e[f->n].state = ST_QUEUED;
	f->n++;
	pthread_cond_signal(&f->cv);
out:
	pthread_mutex_unlock(&f->mu);
	return rc;
}

int dbgfetch_poll(struct dbgfetch *f,
		  void (*got)(void *ctx, const uint8_t *id, size_t len, const char *path),
		  void *ctx)
{
	int k = 0;

	if (!f)
		return 0;
	for (;;) {
		struct entry e = {0};
		size_t i;

		/* One at a time, the callback outside the lock: it may ask
		 * for more build-ids. */
		pthread_mutex_lock(&f->mu);
		for (i = 0; i < f->n && f->e[i].state != ST_FOUND; i++)
			;
		if (i < f->n) {
			e = f->e[i];
			f->e[i].state = ST_DELIVERED;
			f->e[i].path = NULL;
		}
		pthread_mutex_unlock(&f->mu);
		if (!e.path)
			return k;
		got(ctx, e.id, e.len, e.path);
		free(e.path);
		k++;
	}
}

void dbgfetch_stats(struct dbgfetch *f, struct dbgfetch_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (!f)
		return;
	pthread_mutex_lock(&f->mu);
	for (size_t i = 0; i < f->n; i++) {
		uint8_t s = f->e[i].state;

		if (s == ST_QUEUED || s == ST_BUSY)
			out->pending++;
		else if (s == ST_MISSING)
			out->missing++;
		else
			out->found++;
	}
	pthread_mutex_unlock(&f->mu);
}
