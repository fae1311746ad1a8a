/* goheap — a Go program's heap figures from its memory (see goheap.h). */
#include "stacktop/runtime/goheap.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "stacktop/elf/elfimage.h"
#include "stacktop/elf/elfsec.h"
#include "stacktop/proc/tfile.h"

/* A committed heap larger than this is a torn or wrong read. */
#define GOHEAP_SANE (1ull << 50)

struct goheap {
	pid_t pid;
	struct goheap_where w;
};

/* A global of the runtime: its address (bias added) and size. */
struct gvar {
	uint64_t addr, size;
	Dwarf_Die type; /* its struct's DIE */
	bool typed;
};

/* A top-level DIE of any unit: DW_TAG_structure_type called name. */
static bool find_struct(Dwarf *dw, const char *name, Dwarf_Die *out)
{
	Dwarf_Off off = 0, next;
	size_t hsize;

	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu, d;
		const char *n;

		if (dwarf_offdie(dw, off + hsize, &cu) && dwarf_child(&cu, &d) == 0) {
			do {
				if (dwarf_tag(&d) == DW_TAG_structure_type &&
				    (n = dwarf_diename(&d)) && !strcmp(n, name)) {
					*out = d;
					return true;
				}
			} while (dwarf_siblingof(&d, &d) == 0);
		}
		off = next;
	}
	return false;
}

/* Member name of v's struct: its address if it lies whole inside the
 * struct and the variable and is width bytes wide; 0 otherwise. */
static uint64_t member_addr(const struct gvar *v, const char *name, int width)
{
	Dwarf_Die st = v->type, m, t;
	Dwarf_Attribute a;
	Dwarf_Word off, ssize;
	const char *n;

	if (!v->typed || !v->addr || dwarf_aggregate_size(&st, &ssize) || ssize > v->size ||
	    dwarf_child(&st, &m))
		return 0;
	do {
		Dwarf_Word msize;

		if (dwarf_tag(&m) != DW_TAG_member || !(n = dwarf_diename(&m)) || strcmp(n, name))
			continue;
		if (!dwarf_attr(&m, DW_AT_data_member_location, &a) || dwarf_formudata(&a, &off) ||
		    !dwarf_attr(&m, DW_AT_type, &a) || !dwarf_formref_die(&a, &t) ||
		    dwarf_aggregate_size(&t, &msize) || msize != (Dwarf_Word)width || off > ssize ||
		    ssize - off < msize)
			return 0;
		return v->addr + off;
	} while (dwarf_siblingof(&m, &m) == 0);
	return 0;
}

/* A member in whichever of the two structs has it (versions move them). */
static uint64_t either(const struct gvar *a, const struct gvar *b, const char *name, int width)
{
	uint64_t r = member_addr(a, name, width);

	return r ? r : member_addr(b, name, width);
}

static int gvar_find(Elf *e, uint64_t bias, const char *sym, struct gvar *v)
{
	if (elfsec_symbol(e, sym, &v->addr, &v->size) || !v->addr)
		return -ENODATA;
	v->addr += bias;
	return 0;
}

int goheap_find(Elf *e, uint64_t bias, struct goheap_where *out)
{
	struct gvar gc = {0}, ms = {0};
	GElf_Shdr sh;
	Dwarf *dw;

	memset(out, 0, sizeof(*out));
	if (!elfsec_find(e, ".gopclntab", &sh))
		return -ENOENT;
	if (gvar_find(e, bias, "runtime.gcController", &gc) ||
	    gvar_find(e, bias, "runtime.memstats", &ms) || !elfsec_has_dwarf(e))
		return -ENODATA;
	if (!(dw = dwarf_begin_elf(e, DWARF_C_READ, NULL)))
		return -ENODATA;
	gc.typed = find_struct(dw, "runtime.gcControllerState", &gc.type);
	ms.typed = find_struct(dw, "runtime.mstats", &ms.type);
	out->live = member_addr(&gc, "heapLive", 8);
	out->inuse = either(&gc, &ms, "heapInUse", 8);
	out->free = either(&gc, &ms, "heapFree", 8);
	out->numgc = member_addr(&ms, "numgc", 4);
	out->pause_ns = member_addr(&ms, "pause_total_ns", 8);
	dwarf_end(dw);
	if (!out->live || !out->inuse || !out->free || !out->numgc || !out->pause_ns) {
		memset(out, 0, sizeof(*out));
		return -EINVAL;
	}
	return 0;
}

/* A PIE's bias: where the executable's first mapping (file offset 0, same
 * inode) starts, less the page of its first PT_LOAD. */
static int pie_bias(pid_t pid, Elf *e, const struct stat *st, uint64_t *bias)
{
	char path[64], line[512];
	GElf_Phdr ph;
	size_t n = 0;
	uint64_t vaddr = UINT64_MAX;
	FILE *f;
	int rc = -ENOENT;

	if (elf_getphdrnum(e, &n))
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD && ph.p_offset == 0)
			vaddr = ph.p_vaddr;
	if (vaddr == UINT64_MAX)
		return -EINVAL;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if (!(f = fopen(path, "re")))
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end, off, ino;
		unsigned maj, mnr;

		if (sscanf(line, "%llx-%llx %*s %llx %x:%x %llu", &start, &end, &off, &maj, &mnr,
			   &ino) == 6 &&
		    off == 0 && ino == (unsigned long long)st->st_ino && start >= vaddr) {
			*bias = start - vaddr;
			rc = 0;
			break;
		}
	}
	fclose(f);
	return rc;
}

int goheap_open(pid_t pid, struct goheap **out)
{
	char path[64];
	struct goheap_where w;
	struct stat st;
	GElf_Ehdr eh;
	uint64_t bias = 0;
	Elf *e = NULL;
	int fd, rc;

	*out = NULL;
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	if ((fd = tfile_open_magic(path, TFILE_ELF_MAX, &st)) < 0)
		return fd;
	elf_version(EV_CURRENT);
	/* headers and section names first: a program that is not Go costs
	 * them only (the caller asks again while a child has not exec'd) */
	if (!(rc = elfimage_open(fd, 0, ELFIMAGE_MAX, &e))) {
		GElf_Shdr sh;

		if (!elfsec_find(e, ".gopclntab", &sh))
			rc = -ENOENT;
		elfimage_close(e);
		e = NULL;
	}
	if (!rc)
		rc = elfimage_open(fd, ELFIMAGE_NAMES | ELFIMAGE_DWARF, ELFIMAGE_MAX, &e);
	close(fd);
	if (rc)
		return rc;
	if (!gelf_getehdr(e, &eh))
		rc = -EINVAL;
	else if (eh.e_type == ET_DYN)
		rc = pie_bias(pid, e, &st, &bias);
	if (!rc)
		rc = goheap_find(e, bias, &w);
	elfimage_close(e);
	if (rc)
		return rc;
	if (!(*out = calloc(1, sizeof(**out))))
		return -ENOMEM;
	(*out)->pid = pid;
	(*out)->w = w;
	return 0;
}

int goheap_read(struct goheap *g, struct goheap_figures *out)
{
	uint64_t live, inuse, fr, pause;
	uint32_t numgc;
	struct iovec local[] = {{&live, 8}, {&inuse, 8}, {&fr, 8}, {&numgc, 4}, {&pause, 8}};
	const uint64_t at[] = {g->w.live, g->w.inuse, g->w.free, g->w.numgc, g->w.pause_ns};
	struct iovec remote[5];
	ssize_t got;

	for (int i = 0; i < 5; i++)
		remote[i] = (struct iovec){(void *)(uintptr_t)at[i], local[i].iov_len};
	got = process_vm_readv(g->pid, local, 5, remote, 5, 0);
	if (got < 0)
		return -errno;
	if (got != 36)
		return -EFAULT;
	if (inuse >= GOHEAP_SANE || fr >= GOHEAP_SANE || !inuse || live > inuse + fr)
		return -EAGAIN;
	out->heap_used = live;
	out->heap_committed = inuse + fr;
	out->gc_count = numgc;
	out->gc_pause_s = pause / 1e9;
	return 0;
}

void goheap_free(struct goheap *g)
{
	free(g);
}
