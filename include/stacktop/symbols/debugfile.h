/*
 * debugfile — the separate debug file of a module: found by build-id,
 * then by .gnu_debuglink, and checked to be that module's.
 *
 * Where it looks (as gdb and perf do), every path under a root prefix:
 * "/proc/PID/root" for a live process, so the target's mount namespace
 * decides which file we get (proc(5)), "" for our own file system:
 *  0. the module's own file, when it has DWARF its image left out (a live
 *     module is copied with names and CFI only, elfimage.h): reopened
 *     through the /proc/PID/map_files link it was read through
 *     (module->reopen; a deleted binary too, while that process lives),
 *     else by its path; taken when device, inode and build-id are the
 *     module's, and only its DWARF copied;
 *  1. /usr/lib/debug/.build-id/xx/yyyy.debug, taken when its build-id
 *     equals the module's;
 *  2. the .gnu_debuglink name next to the binary, in its .debug/, then
 *     under /usr/lib/debug/DIR/. A candidate whose build-id equals the
 *     module's is taken without a CRC (the build-id is the stronger
 *     identity, and such a file may be large); otherwise its CRC32 must
 *     match the link's, and it is computed only when the file is at most
 *     TFILE_CRC_MAX (256 MiB) long: a 4 GiB sparse file planted at the
 *     path would otherwise freeze us for many seconds. A link naming the
 *     binary itself is passed over.
 * Every path is opened through tfile (openat2 RESOLVE_IN_ROOT, so absolute
 * symlinks such as .build-id links resolve inside that root; regular files
 * only, checked on an O_PATH fd before any real open; TFILE_ELF_MAX).
 * A path under a FUSE or network mount of the target (its mountinfo, by
 * the path's text; proc/mountinfo.h) is not looked up: the lookup would
 * wait on a daemon the target may run. A symlink planted on the way into
 * such a mount is not caught by this (only the text is checked).
 *
 * Contract: each call returns a new Elf that holds no fd and no mapping
 * (a compact copy, elf/elfimage.h); the caller ends it with
 * elfimage_close. Nothing is cached here: sym asks once per module table.
 * Nothing prints.
 */
#ifndef STACKTOP_DEBUGFILE_H
#define STACKTOP_DEBUGFILE_H

#include <stddef.h>
#include <stdint.h>

#include "stacktop/unwind/space.h"

/* mod's separate debug file under root (NULL or "": our own file system),
 * or NULL when there is none. Only a file module (an absolute path) with
 * an open ELF has one. */
Elf *debugfile_find(const struct module *mod, const char *root);

/* The file at path in our own file system (a debuginfod cache entry) when
 * it is an ELF whose build-id is id (len bytes), else NULL. */
Elf *debugfile_open_checked(const char *path, const uint8_t *id, size_t len);

#endif
