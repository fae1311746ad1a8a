/*
 * dynload — a shared library opened on first use rather than linked:
 * capstone (annotate) and libdebuginfod (--debuginfod) are needed by few
 * runs, and linked they are mapped, relocated and their dependencies (an
 * HTTP and TLS stack) loaded at every start-up.
 *
 * dynload_open opens soname (RTLD_NOW | RTLD_LOCAL) and resolves every
 * name into fns[i], all or nothing; the library stays loaded for the
 * process's life (never dlclosed: pointers into it may be kept). Call it
 * once per library and remember the result: it is not locked, so call it
 * from one thread (or before a worker starts). 0, -ENOENT when the
 * library is missing, -ENOSYS when a name is missing from it.
 */
#ifndef STACKTOP_DYNLOAD_H
#define STACKTOP_DYNLOAD_H

#include <stddef.h>

int dynload_open(const char *soname, const char *const *names, void **fns, size_t n);

#endif
