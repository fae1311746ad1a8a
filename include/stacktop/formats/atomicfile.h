/*
 * atomicfile — a file written whole or not at all, for the profiles
 * stacktop writes (export's three formats, memexport's pprof).
 *
 * The bytes go to a fresh temporary file next to the target
 * (".stacktop-XXXXXX" in its directory, mkostemp: O_CREAT|O_EXCL, which
 * never follows a symbolic link), which is then put in place: without
 * force with renameat2(RENAME_NOREPLACE) (or link(2) where the file system
 * lacks it: both fail with EEXIST), with force by rename(2) over the old
 * file, atomically. A failed write (disk full, read-only directory) leaves
 * nothing behind and never truncates the file being replaced.
 *
 * Call order: atomicfile_check before building the bytes (so an existing
 * file is refused before any work), then atomicfile_write. Errors are one
 * sentence in err; 0 or -errno. Nothing is kept between calls.
 */
#ifndef STACKTOP_ATOMICFILE_H
#define STACKTOP_ATOMICFILE_H

#include <stdbool.h>
#include <stddef.h>

/* May path be written? No path is -EINVAL; a symbolic link there is
 * -ELOOP; an existing file without force -EEXIST ("... exists; use --force
 * to overwrite it"); with force, something other than a regular file is
 * -EINVAL. A missing file is fine. */
int atomicfile_check(const char *path, bool force, char *err, size_t errsz);

/* buf[0..len) to path as described above, with file mode mode exactly (no
 * umask; 0 means 0600: a profile holds command lines and paths). */
int atomicfile_write(const char *path, const char *buf, size_t len, bool force, unsigned mode,
		     char *err, size_t errsz);

/* All of buf[0..len) to an open fd (retried on EINTR; a write of 0 bytes
 * is -EIO). 0 or -errno; err is the caller's to fill. */
int atomicfile_write_all(int fd, const char *buf, size_t len);

#endif
