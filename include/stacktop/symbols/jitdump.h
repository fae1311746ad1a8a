/*
 * jitdump — JIT symbols from perf's jitdump files
 * (tools/perf/Documentation/jitdump-specification.txt): a 40-byte header
 * (magic "JiTD" 0x4A695444 in the writer's byte order, version, its size),
 * then records of {id, total_size, timestamp}: JIT_CODE_LOAD (code address,
 * size and a NUL-terminated name, then the code), JIT_CODE_MOVE (code moved
 * to a new address), JIT_CODE_DEBUG_INFO (file:line entries for the code
 * loaded next at its address), JIT_CODE_CLOSE (end), others skipped.
 *
 * A JIT (node --perf-prof, python3.12+ -X perf_jit, JVM agents) writes
 * jit-PID.dump and maps it executable so perf finds it in its mmap records;
 * the caller finds it the same way, in the target's maps, and passes its
 * path (as the target sees it). The file is read like a perf map (perfmap.h):
 * through tfile_open_local under the target's root (never on its FUSE or
 * network mounts, not a symlink itself, regular, at most TFILE_PERFMAP_MAX),
 * trusted only when owned by the target's uid or root, re-checked at most
 * once a second (a tenth of that after a miss), a grown file has only its
 * new records parsed (a record being written waits), a replaced or rewritten
 * one is read again; a check parses 8 MiB chunks for at most 100 ms. Only
 * the byte order of this machine is read. A record shorter than its header
 * ends the file's reading (what follows cannot be framed) until it is
 * rewritten. Names longer than JITDUMP_NAME_MAX are cut and end in "...";
 * memory follows the file's size (at most one entry a record, one line an
 * entry of 17 bytes or more).
 *
 * Contract: a struct jitdump_cache (jitdump_cache_new, jitdump_cache_free)
 * holds every file looked up, one per (root, path); sym keeps one. A lookup
 * fills a struct jitdump_sym whose strings (raw: not demangled, not
 * sanitized) point into the cache and stay valid until its next lookup. The
 * parser of records (jitdump_table_*) is exposed for tests and fuzzers. Not
 * thread safe; nothing prints.
 */
#ifndef STACKTOP_JITDUMP_H
#define STACKTOP_JITDUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define JITDUMP_MAGIC 0x4A695444u
#define JITDUMP_NAME_MAX 1024

enum jitdump_record {
	JITDUMP_CODE_LOAD = 0,
	JITDUMP_CODE_MOVE = 1,
	JITDUMP_CODE_DEBUG_INFO = 2,
	JITDUMP_CODE_CLOSE = 3,
};

/* One piece of JIT code: [start, end) is name; file:line of the pc when the
 * JIT gave debug info for it (file NULL, line 0 otherwise). */
struct jitdump_sym {
	const char *name;
	uint64_t start, end;
	const char *file;
	int line;
};

/* The records of one file, parsed so far. */
struct jitdump_table;

int jitdump_table_new(struct jitdump_table **out);
void jitdump_table_free(struct jitdump_table *t);
/* Parse what buf (len bytes, read at the table's parse offset: 0 for a new
 * table) holds; avail >= len is how many bytes the file has from there.
 * Whole records are parsed; one that runs past len but not past avail has
 * its head parsed when the head is in buf (the code after a name is not
 * needed) and is skipped; a record not yet whole in the file waits. *used
 * is how far parsing went (may pass len: the next read starts there).
 * 0, -EINVAL (not a jitdump of this byte order: nothing more will be
 * parsed), or -ENOMEM. */
int jitdump_table_feed(struct jitdump_table *t, const uint8_t *buf, size_t len, uint64_t avail,
		       size_t *used);
/* The latest code holding pc. 0 or -ENOENT. */
int jitdump_table_find(const struct jitdump_table *t, uint64_t pc, struct jitdump_sym *out);
/* Code entries parsed (for tests). */
size_t jitdump_table_count(const struct jitdump_table *t);

struct jitdump_cache;

int jitdump_cache_new(struct jitdump_cache **out);
void jitdump_cache_free(struct jitdump_cache *c);
/* For tests and fuzzers: how often a file is checked again (default 1 s;
 * 0: every lookup) and how many bytes a check parses at most (0: the
 * default 8 MiB for up to 100 ms; at least 4 KiB). */
void jitdump_cache_tune(struct jitdump_cache *c, uint64_t recheck_ns, size_t chunk);

/* Is path (from a target's maps) the name of a jitdump file:
 * a basename "jit-N.dump", N decimal? */
bool jitdump_is_path(const char *path);

/* Look pc up in the jitdump file at path as live process pid sees it
 * (/proc/PID/root, its effective uid the trusted owner). 0 and out
 * filled, -ENOENT, or -ENOMEM. */
int jitdump_lookup(struct jitdump_cache *c, pid_t pid, const char *path, uint64_t pc,
		   struct jitdump_sym *out);
/* jitdump_lookup with the pieces given (root NULL or "": our own). */
int jitdump_lookup_at(struct jitdump_cache *c, const char *root, const char *path, uid_t uid,
		      uint64_t pc, struct jitdump_sym *out);

#endif
