/*
 * Fuzz entry point: the Python reader (runtime/python.c) on memory that is
 * any bytes, as a hostile or torn target's would be: threads, state and
 * every thread's stack read through the read callback.
 *
 * Input: byte 0 picks the version (3.8 + its low bits mod 6), whether
 * every address wraps into the image (bit 6: pointers always lead
 * somewhere, so the reader goes deep) and whether object types are
 * checked (bit 7); the rest is the memory at BASE, where _PyRuntime is
 * (3.13: its _Py_DebugOffsets too).
 *
 * Properties: no crash; at most max frames; every name and file a
 * NUL-terminated valid UTF-8 string; lines not negative.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stacktop/runtime/pylayout.h"
#include "stacktop/runtime/python.h"

#define BASE 0x10000ull

struct image {
	const uint8_t *p;
	size_t n;
	bool wrap;
};

static int image_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct image *im = ctx;
	uint64_t off = addr - BASE;

	if (!im->n)
		return -EFAULT;
	if (im->wrap)
		off = addr % im->n;
	if (addr < BASE && !im->wrap)
		return -EFAULT;
	if (off > im->n || len > im->n - off)
		return -EFAULT;
	memcpy(buf, im->p + off, len);
	return 0;
}

/* Valid UTF-8, no NUL inside (the reader's strings). */
static bool utf8_ok(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		int n = *p < 0x80	      ? 0
			: (*p & 0xe0) == 0xc0 ? 1
			: (*p & 0xf0) == 0xe0 ? 2
			: (*p & 0xf8) == 0xf0 ? 3
					      : -1;
		if (n < 0)
			return false;
		p++;
		for (int i = 0; i < n; i++, p++)
			if ((*p & 0xc0) != 0x80)
				return false;
	}
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	int minor = 8 + (data[0] & 63) % 6;
	const struct pylayout *l = pylayout_find(3, minor);
	struct image im = {.p = data + 1, .n = size - 1, .wrap = data[0] & 64};
	bool typed = data[0] & 128;
	struct python_where w = {.major = 3,
				 .minor = minor,
				 .runtime = BASE,
				 .code_type = typed ? BASE + 8 : 0,
				 .str_type = typed ? BASE + 16 : 0,
				 .bytes_type = typed ? BASE + 24 : 0};
	struct python_mem m = {image_read, &im, NULL};
	struct python_thread t[8];
	struct python_frame f[32];
	struct python_state st;
	struct python *py;
	int n = 0, k;
	unsigned flags;

	if (!l || python_open_mem(l, &w, &m, 1, &py))
		abort();
	python_state(py, &st);
	python_threads(py, t, 8, &n);
	for (int i = 0; i <= n && i < 8; i++) {
		pid_t tid = i < n ? t[i].tid : 1;
		for (int round = 0; round < 2; round++) { /* the second from the cache */
			if (python_stack(py, tid, f, 32, &k, &flags) == 0) {
				if (k < 0 || k > 32)
					abort();
				for (int j = 0; j < k; j++)
					if (!f[j].func || !f[j].file || !utf8_ok(f[j].func) ||
					    !utf8_ok(f[j].file) || f[j].line < 0)
						abort();
			}
		}
	}
	python_free(py);
	return 0;
}
