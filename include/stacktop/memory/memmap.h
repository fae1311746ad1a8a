/*
 * memmap — which mappings of a process grow: /proc/PID/smaps read now and
 * then, folded into rows (one per kind and name) with a short history of
 * each row's resident size, so a view can say what grew over the window.
 *
 * Rows: [heap], [stack], one row "anonymous" for every unnamed private
 * mapping (with their count: a leak through mmap shows as many of them),
 * one per file path, one per shared-memory object (/dev/shm, memfd, SysV,
 * shared anonymous), one per other pseudo name ([vdso], [anon:name]).
 * Names are raw target text: the views sanitize them.
 *
 * Cost: the kernel walks every page table of every mapping to fill smaps
 * (bench/memtrace.sh: ~0.15 ms for 100 mappings, 20-35 ms for 10,000 of
 * 64 KiB; smaps_rollup is 4x cheaper but has no per-mapping rows). memmap_tick measures each read
 * and spaces the next one at least MEMMAP_COST_FACTOR times its cost apart (never under the
 * configured interval), so reading it costs the target's kernel time at
 * most 1/MEMMAP_COST_FACTOR of a core; memmap->interval_ns says the
 * interval in force.
 *
 * Contract: memmap_init → (memmap_tick | memmap_parse)* → memmap_free.
 * memmap_parse is the parser alone (tests, the fuzzer): one snapshot taken
 * at now_ns from the text. Rows live until memmap_free (a row whose
 * mappings went away shows 0 and stays, so its drop is seen).
 */
#ifndef STACKTOP_MEMMAP_H
#define STACKTOP_MEMMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define MEMMAP_HIST 128		      /* snapshots kept per row */
#define MEMMAP_ROWS_MAX 4096	      /* rows past it are folded into "other" */
#define MEMMAP_COST_FACTOR 50	      /* interval >= 50 x the read's cost: <= 2% of a core */
#define MEMMAP_MAX_BYTES (256u << 20) /* smaps text read at most */

enum memmap_kind {
	MEMMAP_HEAP = 0, /* [heap]: brk, what malloc's main arena grows */
	MEMMAP_ANON,	 /* private anonymous: mmap'd chunks, thread arenas, stacks of threads */
	MEMMAP_STACK,	 /* [stack] of the main thread */
	MEMMAP_FILE,	 /* a mapped file */
	MEMMAP_SHMEM,	 /* /dev/shm, memfd, SysV, shared anonymous */
	MEMMAP_OTHER,	 /* [vdso], [vvar], [anon:name], ... */
	MEMMAP_KIND_COUNT
};

struct memmap_row {
	char *name; /* raw: a path, "[heap]", "anonymous" */
	enum memmap_kind kind;
	uint32_t nmaps;		      /* mappings in the last snapshot */
	uint64_t rss_kb[MEMMAP_HIST]; /* resident, per snapshot (ring, like memmap.times) */
	uint64_t anon_kb; /* Anonymous: in the last snapshot (private dirty of files too) */
};

struct memmap {
	pid_t pid;
	struct memmap_row *rows;
	int n, cap;
	uint64_t times_ns[MEMMAP_HIST]; /* time of each snapshot */
	int head;			/* next snapshot's slot */
	int nsnap;			/* snapshots taken (<= MEMMAP_HIST kept) */
	uint32_t nmappings;		/* mappings in the last snapshot */
	uint32_t nanon;			/* of which private anonymous */
	uint64_t min_interval_ns;	/* configured */
	uint64_t interval_ns;		/* in force: max(configured, cost x factor) */
	uint64_t cost_ns;		/* the last read's time */
	uint64_t next_ns;		/* when the next read is due */
	uint64_t parse_errors;		/* lines not understood (skipped) */
	int last_err;			/* the last read's -errno, 0 when it worked */
	uint64_t (*ranges)[2];		/* the last snapshot's mappings, [start, end), sorted */
	size_t nranges, rcap;
	uint64_t read_ns; /* when the last snapshot's read began */
	char *buf;	  /* read buffer, reused */
	size_t bufcap;
};

void memmap_init(struct memmap *m, pid_t pid, uint64_t min_interval_ns);
void memmap_free(struct memmap *m);
/* When due: read /proc/PID/smaps and take a snapshot. Returns 1 when a
 * snapshot was taken, 0 when not due, -errno when the read failed (the
 * process is gone: -ESRCH/-ENOENT). */
int memmap_tick(struct memmap *m, uint64_t now_ns);
/* One snapshot at now_ns from smaps text (need not be NUL-terminated).
 * 0 or -ENOMEM. Lines that are not smaps are counted and skipped. */
int memmap_parse(struct memmap *m, const char *text, size_t len, uint64_t now_ns);

/* Row r's resident size now and its change since the oldest snapshot at or
 * after since_ns (kB; *span_s the seconds between the two, 0 with one
 * snapshot). */
void memmap_change(const struct memmap *m, int r, uint64_t since_ns, uint64_t *now_kb,
		   int64_t *delta_kb, double *span_s);
/* "heap", "anon", "stack", "file", "shmem", "other". */
const char *memmap_kind_name(enum memmap_kind k);
/* Whether the kind is anonymous memory (heap, anon, stack): the on-heap
 * side of the split; file and shmem are the off-heap side. */
bool memmap_kind_anon(enum memmap_kind k);

#endif
