/*
 * perfmap — JIT symbols from perf map files
 * (tools/perf/Documentation/jit-interface.txt): lines "START SIZE name",
 * hex without 0x, the name is the rest of the line.
 *
 * The file is /tmp/perf-N.map where N is the pid in the target's own pid
 * namespace (last value of NSpid: in /proc/PID/status), looked up in the
 * target's mount namespace (/proc/PID/root/tmp/...). As perf does, it is
 * trusted only if it is a regular file owned by the target's uid or root;
 * it is opened through tfile (the last path component must not be a
 * symlink, symlinks on the way resolve inside the root), and a file over
 * TFILE_PERFMAP_MAX (64 MiB) is not read. It is re-checked at most once a
 * second (ten times a second after a lookup found nothing: code the JIT
 * has just announced is named before its pcs are settled). A file that only grew (same inode, the
 * bytes before the parsed end unchanged) has just its new lines parsed and merged in; a file
 * replaced, shrunk or rewritten is read again from its start. Either way a
 * check parses 8 MiB chunks for at most 100 ms, so a big map is read over
 * a few checks a tenth of a second apart (names from its first part
 * meanwhile) and never stalls the caller for long. A
 * line being written (no newline yet) waits for the next check. Bad lines
 * are skipped; a name longer than PERFMAP_NAME_MAX bytes is cut and ends
 * in "...". For overlapping entries the later line wins (JITs reuse
 * addresses).
 *
 * Contract: a struct perfmap_cache (perfmap_cache_new, perfmap_cache_free)
 * holds every map looked up so far, one per (root, pid), and the "JIT
 * without a map" hint; sym keeps one per struct sym. A lookup fills a
 * struct perfmap_sym whose name (raw: not demangled, not sanitized) points
 * into the cache and is valid until the next lookup in it. Not thread
 * safe; nothing prints.
 */
#ifndef STACKTOP_PERFMAP_H
#define STACKTOP_PERFMAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct perfmap_cache;

/* Longest name kept, with its NUL (perf keeps a few KiB; a JIT's name is
 * the target's choice). */
#define PERFMAP_NAME_MAX 1024

/* One entry of a perf map: [start, end) is name. */
struct perfmap_sym {
	const char *name;
	uint64_t start, end;
};

int perfmap_cache_new(struct perfmap_cache **out);
void perfmap_cache_free(struct perfmap_cache *c);
/* For tests and fuzzers: how often a map file is checked again (default
 * 1 s; 0: at every lookup) and how many bytes a check parses at most
 * (0: the default, 8 MiB chunks for up to 100 ms). */
void perfmap_cache_tune(struct perfmap_cache *c, uint64_t recheck_ns, size_t chunk);

/* Look up pc in the perf map of live process pid (its root, namespace pid
 * and uid read from /proc/PID). 0 and out filled, -ENOENT, or -ENOMEM.
 * Remembers whether that process has a trusted map (perfmap_note_unnamed). */
int perfmap_lookup(struct perfmap_cache *c, pid_t pid, uint64_t pc, struct perfmap_sym *out);

/* perfmap_lookup with the pieces given: the map is ROOT/tmp/perf-NSPID.map
 * (root NULL or "": our own file system), trusted when owned by uid or
 * root. For tests (a fake root directory) and callers that know the ids. */
int perfmap_lookup_at(struct perfmap_cache *c, const char *root, pid_t nspid, uid_t uid,
		      uint64_t pc, struct perfmap_sym *out);

/* Anonymous executable code (a JIT's) went unnamed right after a
 * perfmap_lookup: when that process has no trusted map, remember the pid
 * its /tmp/perf-PID.map would carry, for perfmap_jit_nomap. */
void perfmap_note_unnamed(struct perfmap_cache *c);
/* That pid (its namespace pid); 0 when none, or once its map has come. */
pid_t perfmap_jit_nomap(const struct perfmap_cache *c);

/* Parse one perf map line "START SIZE name" (hex, no 0x needed). 0 or
 * -EINVAL; *name points into line. */
int perfmap_parse_line(const char *line, uint64_t *start, uint64_t *size, const char **name);

#endif
