/*
 * dynload — a shared library opened on first use (see dynload.h).
 */
#include "stacktop/lib/dynload.h"

#include <dlfcn.h>
#include <errno.h>

int dynload_open(const char *soname, const char *const *names, void **fns, size_t n)
{
	void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);

	if (!h)
		return -ENOENT;
	for (size_t i = 0; i < n; i++)
		if (!(fns[i] = dlsym(h, names[i]))) {
			dlclose(h);
			for (size_t j = 0; j < n; j++)
				fns[j] = NULL;
			return -ENOSYS;
		}
	return 0;
}
