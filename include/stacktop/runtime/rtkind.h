/*
 * rtkind — which managed runtime a process is, from the files it maps
 * (/proc/PID/maps): a HotSpot JVM (libjvm.so), node (libnode.so or a
 * binary named node), CPython (libpython3.N or a binary python3.N). Used
 * to name the right remedy for JIT code without a perf map, and to know
 * a JVM can be asked for one (jvmattach). The maps text is the target's:
 * only whole path components are matched, and at most RTKIND_MAPS_MAX
 * bytes of it are read. Nothing prints; thread safe.
 */
#ifndef STACKTOP_RTKIND_H
#define STACKTOP_RTKIND_H

#include <stddef.h>
#include <sys/types.h>

#define RTKIND_MAPS_MAX (16u << 20)

enum rtkind {
	RTKIND_NONE = 0, /* none recognised */
	RTKIND_HOTSPOT,
	RTKIND_NODE,
	RTKIND_PYTHON,
};

/* The runtime of a maps text; *py_minor the N of python3.N (0 unknown). */
enum rtkind rtkind_of_maps(const char *maps, size_t len, int *py_minor);
/* The same for a live process: its kind (>= 0) or -errno (-ESRCH gone). */
int rtkind_of(pid_t pid, int *py_minor);

#endif
