/*
 * fdread — the one pread loop: a read at an offset that goes on past short
 * reads and EINTR until len bytes or the end of the file. The caller owns fd
 * and buf; nothing is allocated. A result below len is the end of the file
 * (a file shorter than its caller thought), never an error.
 */
#ifndef STACKTOP_FDREAD_H
#define STACKTOP_FDREAD_H

#include <stddef.h>
#include <sys/types.h>

/* Up to len bytes of fd at off into buf: the bytes read, or -errno. */
ssize_t fdread_at(int fd, void *buf, size_t len, off_t off);

/* fd read from where it stands to its end (a pipe or procfs file too) into
 * a buffer allocated here (*buf, freed by the caller; hint, when not 0,
 * the size expected). 0; -EFBIG when more than max bytes are there (*buf
 * then holds the first max, hint above max fails at once with nothing);
 * or -errno with nothing allocated. */
int fdread_all(int fd, size_t max, size_t hint, char **buf, size_t *len);

#endif
