/*
 * dirstream — a directory read entry by entry with getdents64 into a
 * buffer the caller keeps: nothing allocated, no DIR (the whole-machine
 * mode lists /proc and task directories every tick).
 *
 *   set fd (an open directory), buf and size; dirstream_next* (again from
 *   the start after an lseek to 0 and dirstream_rewind);
 *   dirstream_close (the fd; buf stays the caller's)
 *
 * dirstream_pid reads an entry's name as a pid: digits only, no leading
 * zero, within int32; 0 otherwise (".", "self", "0", "007", too long).
 */
#ifndef STACKTOP_DIRSTREAM_H
#define STACKTOP_DIRSTREAM_H

#include <dirent.h>
#include <stddef.h>
#include <sys/types.h>

struct dirstream {
	int fd; /* -1: none */
	size_t pos, len, size;
	char *buf;
};

/* No fd, nothing buffered. */
void dirstream_init(struct dirstream *ds);
/* Forget what is buffered (the fd was rewound or replaced). */
void dirstream_rewind(struct dirstream *ds);
/* Close the fd, then as dirstream_init. */
void dirstream_close(struct dirstream *ds);
/* The next entry, or NULL at the end (or an error). */
const struct dirent64 *dirstream_next(struct dirstream *ds);
pid_t dirstream_pid(const char *name);

#endif
