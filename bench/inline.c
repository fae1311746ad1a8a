/*
 * bench/inline.c — what inline expansion costs per frame and per sample,
 * the first time a pc is seen and once it is cached. Not a test: prints a
 * table (bench/inline.sh builds and runs it; see bench/README.md).
 *
 * For each module (build/targets/inltest, and this program's own libc,
 * whose DWARF comes from a debug file when one is installed) it takes a set
 * of pcs (every byte of inltest's .text; N pcs spread evenly over libc's,
 * nearly each in another compilation unit: the worst case; N pcs 4 bytes
 * apart from the middle of libc's, a few functions as a hot path's pcs
 * are: "libc-dense") and
 * times, on a fresh module, frames and sym each round:
 *   plain   frames_user: the pc named (binary search), no inline chain;
 *   chain   frames_user_chain: the same plus the inline chain from DWARF.
 * "first" is each pc's first sight (the module's tables and DWARF handle
 * are built before the clock starts: that is a once-per-module cost,
 * reported apart); "cached" is the same pcs again, 10 times. The cost of
 * inline expansion is chain minus plain. A sample of D frames pays D times
 * the per-frame figure (D = 33 in DESIGN.md's measurements).
 */
#include <elfutils/libdw.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "stacktop/symbols/frames.h"
#include "stacktop/unwind/space.h"
#include "stacktop/symbols/sym.h"

#define DEPTH 33
#define ROUNDS 10

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* [lo, hi) of the module's .text. */
static int text_range(Elf *e, uint64_t *lo, uint64_t *hi)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(e, &shstrndx))
		return -1;
	while ((scn = elf_nextscn(e, scn))) {
		const char *n;

		if (gelf_getshdr(scn, &sh) && (n = elf_strptr(e, shstrndx, sh.sh_name)) &&
		    !strcmp(n, ".text")) {
			*lo = sh.sh_addr;
			*hi = sh.sh_addr + sh.sh_size;
			return 0;
		}
	}
	return -1;
}

struct result {
	double setup_ms, first_ns, cached_ns;
	size_t frames; /* frame ids produced per pass */
};

/* One pass kind over pcs on a fresh module, sym and frames. */
static int run(const char *path, const uint64_t *pcs, size_t n, bool chain, struct result *r)
{
	uint32_t ids[SYM_INLINE_MAX + 1];
	struct sym_info si, inl[SYM_INLINE_MAX];
	struct module *mod;
	struct mapping m;
	struct space s;
	struct frames *fr;
	struct sym *sy;
	double t0;
	int k;

	if (space_module_open_path(path, &mod) || sym_new(&sy) || frames_new(sy, &fr))
		return -1;
	m = (struct mapping){.start = 0, .end = 1ull << 47, .mod = mod, .path = (char *)path};
	s = (struct space){.pid = 0, .generation = 1, .maps = &m, .nmaps = 1};
	/* Once per module: the symbol table, the DWARF handle, the CU index. */
	t0 = now_ns();
	sym_resolve_module(sy, mod, "", pcs[0], false, &si);
	if (chain)
		sym_inline_module(sy, mod, "", pcs[0], inl, SYM_INLINE_MAX, &k);
	r->setup_ms = (now_ns() - t0) / 1e6;
	r->frames = 0;
	t0 = now_ns();
	for (size_t i = 1; i < n; i++) {
		if (chain)
			r->frames +=
			    (size_t)frames_user_chain(fr, &s, pcs[i], ids, SYM_INLINE_MAX + 1);
		else
			r->frames += frames_user(fr, &s, pcs[i]) >= 0;
	}
	r->first_ns = (now_ns() - t0) / (double)(n - 1);
	t0 = now_ns();
	for (int round = 0; round < ROUNDS; round++)
		for (size_t i = 1; i < n; i++) {
			if (chain)
				frames_user_chain(fr, &s, pcs[i], ids, SYM_INLINE_MAX + 1);
			else
				frames_user(fr, &s, pcs[i]);
		}
	r->cached_ns = (now_ns() - t0) / (double)(ROUNDS * (n - 1));
	frames_free(fr);
	sym_free(sy);
	space_module_put(mod);
	return 0;
}

/* want pcs of path's .text: spread evenly over all of it (stride 0), or
 * stride bytes apart from its middle (dense: a few functions, as a hot
 * loop's pcs are). */
static void bench_module(const char *label, const char *path, size_t want, uint64_t stride)
{
	struct module *mod;
	struct result plain, chain;
	uint64_t lo, hi, *pcs;
	size_t n = 0;

	if (space_module_open_path(path, &mod) || !mod->elf || text_range(mod->elf, &lo, &hi)) {
		printf("%-10s %s: cannot read it\n", label, path);
		return;
	}
	space_module_put(mod);
	if (!want || want > hi - lo)
		want = hi - lo;
	pcs = malloc(want * sizeof(*pcs));
	for (size_t i = 0; i < want; i++)
		pcs[n++] = stride ? lo + (hi - lo) / 2 + i * stride : lo + (hi - lo) * i / want;
	if (run(path, pcs, n, false, &plain) || run(path, pcs, n, true, &chain)) {
		printf("%-10s %s: failed\n", label, path);
		free(pcs);
		return;
	}
	printf("%-10s %7zu %9.2f %6.1f %10.0f %9.1f %10.0f %9.1f %12.1f %11.2f\n", label, n - 1,
	       (double)chain.frames / (double)plain.frames, chain.setup_ms, plain.first_ns,
	       plain.cached_ns, chain.first_ns, chain.cached_ns,
	       (chain.first_ns - plain.first_ns) * DEPTH / 1000,
	       (chain.cached_ns - plain.cached_ns) * DEPTH / 1000);
	free(pcs);
}

/* The path of the libc this program runs with, from its own maps. */
static int own_libc(char *buf, size_t size)
{
	char line[1024];
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return -1;
	buf[0] = '\0';
	while (fgets(line, sizeof(line), f)) {
		char *p = strchr(line, '/');

		if (p && strstr(p, "/libc.so")) {
			p[strcspn(p, "\n")] = '\0';
			snprintf(buf, size, "%s", p);
			break;
		}
	}
	fclose(f);
	return buf[0] ? 0 : -1;
}

int main(int argc, char **argv)
{
	char libc[1024];
	size_t nlibc = argc > 2 ? strtoul(argv[2], NULL, 10) : 2000;

	if (argc < 2) {
		fprintf(stderr, "usage: %s build/targets/inltest [LIBC_PCS]\n", argv[0]);
		return 2;
	}
	elf_version(EV_CURRENT);
	printf("%-10s %7s %9s %6s %10s %9s %10s %9s %12s %11s\n", "module", "pcs", "frames/pc",
	       "setup", "plain", "plain", "chain", "chain", "inline/smp", "inline/smp");
	printf("%-10s %7s %9s %6s %10s %9s %10s %9s %12s %11s\n", "", "", "", "ms", "first ns",
	       "cached ns", "first ns", "cached ns", "first µs", "cached µs");
	bench_module("inltest", argv[1], 0, 0);
	if (own_libc(libc, sizeof(libc)) == 0) {
		bench_module("libc", libc, nlibc, 0);
		bench_module("libc-dense", libc, nlibc, 4);
	}
	return 0;
}
