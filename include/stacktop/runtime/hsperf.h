/*
 * hsperf — a HotSpot JVM's own heap figures from its performance data file
 * (hsperfdata_USER/NSPID in the JVM's /tmp, what jstat reads): no attach,
 * no code in the target. The JVM maps that file shared, so it is found in
 * the target's maps (a path ".../hsperfdata_X/N"); it is opened through
 * tfile under the target's root (never on its FUSE or network mounts, not
 * a symlink itself, regular, at most HSPERF_MAX bytes) and trusted only
 * when owned by the target's uid or root.
 *
 * Format (HotSpot perfMemory.hpp): a 32-byte prologue (magic 0xcafec0c0
 * stored big-endian, byte order 0 big / 1 little for what follows, major
 * version 2, accessible, used, overflow, a time stamp, the first entry's
 * offset, the entry count), then entries {length, name offset, vector
 * length, type, flags, units, variability, data offset} with a
 * NUL-terminated name and the data inside the entry. Every offset and
 * length is checked against the entry and the file; a file not ready
 * (accessible 0) or torn is -EAGAIN / -EINVAL, never a wrong figure.
 *
 * What is read (jstat -gc's sums): heap used = every
 * sun.gc.generation.N.space.M.used, committed = every
 * sun.gc.generation.N.capacity (G1 gives each generation the whole heap
 * as its maxCapacity, so no maximum is summed); collections =
 * sun.gc.collector.0 and .1 invocations (young and full: jstat's YGC and
 * FGC) and their time (ticks of sun.os.hrt.frequency).
 *
 * Pure parser plus one reader; nothing kept, nothing printed.
 */
#ifndef STACKTOP_HSPERF_H
#define STACKTOP_HSPERF_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define HSPERF_MAGIC 0xcafec0c0u
/* The JVM's default is 32 KiB (-XX:PerfDataMemorySize); a larger file is
 * not read. */
#define HSPERF_MAX (1u << 20)

struct hsperf {
	uint64_t heap_used, heap_committed; /* bytes */
	uint64_t gc_count;		    /* young + full collections */
	double gc_time_s;		    /* their time */
};

/* Parse a performance data file's bytes. 0, -EINVAL (not one, or torn),
 * -EAGAIN (not accessible yet), -ENOENT (no heap counters in it). */
int hsperf_parse(const void *buf, size_t len, struct hsperf *out);

/* The path a maps text names as a JVM's performance data file (the last
 * one), copied into path; 0 or -ENOENT. */
int hsperf_path_in_maps(const char *maps, char *path, size_t size);

/* Read live process pid's file: found in /proc/PID/maps, opened under
 * /proc/PID/root, owned by the process's uid or root. 0 or -errno
 * (-ENOENT: not a JVM, or one run with -XX:-UsePerfData). */
int hsperf_read(pid_t pid, struct hsperf *out);
/* The same with the pieces given (root "" or NULL: ours). */
int hsperf_read_at(const char *root, const char *path, uid_t uid, struct hsperf *out);

#endif
