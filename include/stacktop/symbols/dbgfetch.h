/*
 * dbgfetch — missing debug files fetched by build-id from debuginfod
 * servers (libdebuginfod), in a background thread, never blocking the
 * caller: --debuginfod. Opt-in only: nothing here runs, and no socket is
 * opened, unless dbgfetch_new was called.
 *
 * Contract: dbgfetch_new starts one worker thread; dbgfetch_want queues a
 * build-id (each one once; later calls for it are no-ops) and returns at
 * once; dbgfetch_poll hands the caller, on its own thread, the build-ids
 * whose files arrived since the last poll (paths into libdebuginfod's
 * standard client cache, $DEBUGINFOD_CACHE_PATH or ~/.cache/debuginfod_client);
 * dbgfetch_free stops the worker (a transfer in flight is abandoned, not
 * waited for). Each fetch gives up after timeout_s seconds, and a file
 * over max_bytes is not fetched: refused by the server where it says the
 * size first (DEBUGINFOD_MAXSIZE), else abandoned once that much arrived,
 * so a hostile server cannot fill the disk with one answer.
 *
 * Servers: the URLs given (set as DEBUGINFOD_URLS for libdebuginfod, which
 * reads only that variable, before the worker starts), or NULL for the
 * DEBUGINFOD_URLS already set.
 */
#ifndef STACKTOP_DBGFETCH_H
#define STACKTOP_DBGFETCH_H

#include <stddef.h>
#include <stdint.h>

#define DBGFETCH_TIMEOUT_S 30
#define DBGFETCH_MAX_BYTES (2048ULL << 20) /* one debug file, at most (2 GiB) */
#define DBGFETCH_MAX 4096		   /* build-ids asked for over a run, at most */

struct dbgfetch;

struct dbgfetch_stats {
	unsigned pending;	 /* queued or in flight */
	unsigned found, missing; /* fetched; not on any server, failed, or timed out */
};

/* max_bytes 0: DBGFETCH_MAX_BYTES. 0, -EINVAL when no server is given
 * and DEBUGINFOD_URLS is empty, or -errno. */
int dbgfetch_new(const char *urls, double timeout_s, uint64_t max_bytes, struct dbgfetch **out);
void dbgfetch_free(struct dbgfetch *f);

/* Queue the debug file of build-id id (len bytes). 0, or -ENOSPC past
 * DBGFETCH_MAX, -ENOMEM. */
int dbgfetch_want(struct dbgfetch *f, const uint8_t *id, size_t len);

/* Call got(ctx, id, len, path) for every file that arrived since the last
 * poll; path lives during the call. Returns how many. */
int dbgfetch_poll(struct dbgfetch *f,
		  void (*got)(void *ctx, const uint8_t *id, size_t len, const char *path),
		  void *ctx);

void dbgfetch_stats(struct dbgfetch *f, struct dbgfetch_stats *out);

#endif
