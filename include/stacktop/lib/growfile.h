/*
 * growfile — a file read as it grows (a JIT's perf map or jitdump): when
 * to look at it again, how far it was parsed, and whether what is there
 * now was appended to what was parsed or written anew. The caller owns the
 * struct (zeroed to start), opens the file and parses; nothing is
 * allocated here.
 */
#ifndef STACKTOP_GROWFILE_H
#define STACKTOP_GROWFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>

/* Bytes before the parsed end compared on each check: when they changed,
 * the file was rewritten in place (a JIT that truncates and writes anew),
 * not appended to. */
#define GROWFILE_TAILCHK 64

/* How often a file is checked and how much one check reads. */
struct growfile_pace {
	uint64_t recheck_ns; /* between checks; a tenth of it while soon */
	size_t chunk;	     /* bytes a read */
	uint64_t budget_ns;  /* reads a check goes on for (0: one read) */
};

/* Once a second, 8 MiB a read for at most 100 ms a check: a 64 MiB file is
 * read in parts a tenth of a second apart, never in one stall. */
#define GROWFILE_PACE_DEFAULT ((struct growfile_pace){1000000000ull, 8u << 20, 100000000ull})

struct growfile {
	uint64_t checked_ns;
	dev_t dev;
	ino_t ino;
	off_t size; /* st_size at the last check */
	struct timespec mtime;
	off_t done;		    /* bytes parsed */
	char chk[GROWFILE_TAILCHK]; /* the bytes before done */
	size_t chk_len;
};

/* Tests: checks recheck_ns apart and chunk bytes a read (0: the default's,
 * as long as a check may go on), one read a check when chunk is given. */
void growfile_pace_tune(struct growfile_pace *p, uint64_t recheck_ns, size_t chunk);

/* Is a check due at now (soon: a lookup missed, or the file is read in
 * part)? When it is, it counts as done at now. */
bool growfile_due(struct growfile *g, uint64_t now, const struct growfile_pace *p, bool soon);

/* Nothing parsed any more: the next read starts at the file's start. */
void growfile_restart(struct growfile *g);

/* Is st the file last seen (growfile_seen), unchanged: same file, size and
 * mtime? */
bool growfile_same(const struct growfile *g, const struct stat *st);

/* Was the file (fd, st) only appended to since it was parsed up to done:
 * the same file, not shorter, the bytes before done unchanged? */
bool growfile_appended(const struct growfile *g, int fd, const struct stat *st);

/* The file is now st: its identity, size and mtime kept. */
void growfile_seen(struct growfile *g, const struct stat *st);

/* done moves on by n bytes; the bytes before it are read again from fd.
 * 0, or -EIO when they cannot be. */
int growfile_advance(struct growfile *g, int fd, size_t n);

#endif
