/*
 * fde — function ranges from .eh_frame and .debug_frame (see fde.h).
 *
 * The format (LSB "Exception Frames", DWARF 5 §6.4.1): entries of
 * length (4 bytes, or 0xffffffff and 8), a CIE id or CIE pointer, then the
 * body. A CIE's augmentation "zR" gives the FDE pointer encoding
 * (DW_EH_PE_*); an FDE starts with its pc_begin in that encoding and its
 * pc_range in the same format. Only the encodings compilers emit for
 * pc_begin are read (absolute or pc-relative, fixed or LEB128); an FDE in
 * any other is skipped. Little-endian, 64-bit (x86-64 only, as unwind.c).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stacktop/elf/elfsec.h"
#include "stacktop/elf/fde.h"
#include "stacktop/lib/array.h"

#define EH_PE_OMIT 0xff
#define EH_PE_PCREL 0x10

struct rd {
	const uint8_t *p, *end;
};

static bool rd_u(struct rd *r, unsigned bytes, uint64_t *v)
{
	if ((size_t)(r->end - r->p) < bytes)
		return false;
	*v = 0;
	for (unsigned i = 0; i < bytes; i++)
		*v |= (uint64_t)r->p[i] << (8 * i);
	r->p += bytes;
	return true;
}

static bool rd_uleb(struct rd *r, uint64_t *v)
{
	unsigned shift = 0;

	*v = 0;
	while (r->p < r->end) {
		uint8_t b = *r->p++;

		if (shift < 64)
			*v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			return true;
	}
	return false;
}

static bool rd_sleb(struct rd *r, int64_t *v)
{
	unsigned shift = 0;
	uint64_t u = 0;
	uint8_t b = 0;

	while (r->p < r->end) {
		b = *r->p++;
		if (shift < 64)
			u |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80)) {
			if (shift < 64 && (b & 0x40))
				u |= ~0ull << shift;
			*v = (int64_t)u;
			return true;
		}
	}
	return false;
}

/* A value in the format (low 4 bits) of a DW_EH_PE encoding. */
static bool rd_format(struct rd *r, uint8_t enc, uint64_t *v)
{
	static const unsigned size[16] = {
	    [0] = 8, [2] = 2, [3] = 4, [4] = 8, [0xa] = 2, [0xb] = 4, [0xc] = 8};
	unsigned f = enc & 0x0f;
	int64_t sv;

	if (f == 0x01)
		return rd_uleb(r, v);
	if (f == 0x09) {
		if (!rd_sleb(r, &sv))
			return false;
		*v = (uint64_t)sv;
		return true;
	}
	if (!size[f] || !rd_u(r, size[f], v))
		return false;
	if (f >= 0xa && size[f] < 8 && (*v >> (size[f] * 8 - 1) & 1)) /* sign-extend */
		*v |= ~0ull << (size[f] * 8);
	return true;
}

/* A pointer in encoding enc whose field is at address here. */
static bool rd_pointer(struct rd *r, uint8_t enc, uint64_t here, uint64_t *v)
{
	if (enc == EH_PE_OMIT || (enc & 0x80) || !rd_format(r, enc, v))
		return false;
	switch (enc & 0x70) {
	case 0:
		return true;
	case EH_PE_PCREL:
		*v += here;
		return true;
	default: /* textrel, datarel, funcrel, aligned: not used for pc_begin */
		return false;
	}
}

/* Entry header at off: its body [*body, *next) and the id field. */
static bool entry_header(const uint8_t *data, size_t size, size_t off, struct rd *body,
			 size_t *next, uint64_t *id, size_t *id_off, bool *is64)
{
	struct rd r = {data + off, data + size};
	uint64_t len;

	if (!rd_u(&r, 4, &len))
		return false;
	*is64 = len == 0xffffffffull;
	if (*is64 && !rd_u(&r, 8, &len))
		return false;
	if (len == 0 || len > (uint64_t)(r.end - r.p))
		return false;
	*next = (size_t)(r.p - data) + (size_t)len;
	r.end = r.p + len;
	*id_off = (size_t)(r.p - data);
	if (!rd_u(&r, *is64 ? 8 : 4, id))
		return false;
	*body = r;
	return true;
}

/* The FDE pointer encoding of the CIE at off. */
static bool cie_encoding(const uint8_t *data, size_t size, size_t off, bool debug_frame,
			 uint8_t *enc)
{
	struct rd r;
	size_t next, id_off;
	uint64_t id, u, len;
	int64_t sv;
	bool is64;
	uint8_t version;
	const char *aug;
	size_t auglen;

	if (off >= size || !entry_header(data, size, off, &r, &next, &id, &id_off, &is64))
		return false;
	if (debug_frame ? id != (is64 ? ~0ull : 0xffffffffull) : id != 0)
		return false; /* not a CIE */
	if (!rd_u(&r, 1, &u))
		return false;
	version = (uint8_t)u;
	aug = (const char *)r.p;
	auglen = strnlen(aug, (size_t)(r.end - r.p));
	if (auglen == (size_t)(r.end - r.p))
		return false;
	r.p += auglen + 1;
	*enc = 0;		  /* absptr */
	if (!strcmp(aug, "eh")) { /* an old GCC's pointer to its EH data */
		if (r.end - r.p < 8)
			return false;
		r.p += 8;
	}
	if (version >= 4 && !rd_u(&r, 2, &u)) /* address_size, segment_selector_size */
		return false;
	if (!rd_uleb(&r, &u) || !rd_sleb(&r, &sv))
		return false;
	if (version == 1 ? !rd_u(&r, 1, &u) : !rd_uleb(&r, &u))
		return false;
	if (aug[0] != 'z')
		return aug[0] == '\0' || !strcmp(aug, "eh");
	if (!rd_uleb(&r, &len) || len > (uint64_t)(r.end - r.p))
		return false;
	r.end = r.p + len;
	for (const char *a = aug + 1; *a; a++) {
		switch (*a) {
		case 'R':
			if (!rd_u(&r, 1, &u))
				return false;
			*enc = (uint8_t)u;
			return true;
		case 'L':
			if (!rd_u(&r, 1, &u))
				return false;
			break;
		case 'P':
			if (!rd_u(&r, 1, &u) || !rd_format(&r, (uint8_t)u, &u))
				return false;
			break;
		case 'S':
		case 'B':
		case 'G':
			break;
		default:
			return false; /* unknown: the rest cannot be read */
		}
	}
	return true;
}

static int range_cmp(const void *a, const void *b)
{
	const struct fde_range *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

int fde_parse(const uint8_t *data, size_t size, uint64_t addr, bool debug_frame,
	      struct fde_range **out, size_t *n)
{
	struct fde_range *v = NULL;
	size_t cap = 0, cnt = 0, off = 0, next, id_off, last_cie = SIZE_MAX;
	uint8_t enc = 0;

	*out = NULL;
	*n = 0;
	while (off + 4 <= size) {
		struct rd r;
		uint64_t id, start, len;
		size_t cie;
		bool is64;

		if (!entry_header(data, size, off, &r, &next, &id, &id_off, &is64))
			break; /* a zero terminator or a broken length: nothing more to trust */
		if (debug_frame ? id == (is64 ? ~0ull : 0xffffffffull) : id == 0)
			goto skip; /* a CIE */
		if (debug_frame)
			cie = id < size ? (size_t)id : SIZE_MAX;
		else
			cie = id <= id_off ? id_off - (size_t)id : SIZE_MAX;
		if (cie != last_cie) {
			last_cie = SIZE_MAX;
			if (!cie_encoding(data, size, cie, debug_frame, &enc))
				goto skip;
			last_cie = cie;
		}
		if (!rd_pointer(&r, enc, addr + (uint64_t)(r.p - data), &start) ||
		    !rd_format(&r, enc, &len) || !len || start + len < start)
			goto skip;
		if (array_grow((void **)&v, &cap, cnt + 1, sizeof(*v))) {
			free(v);
			return -ENOMEM;
		}
		v[cnt++] = (struct fde_range){start, start + len};
	skip:
		off = next;
	}
	if (cnt)
		qsort(v, cnt, sizeof(*v), range_cmp);
	*out = v;
	*n = cnt;
	return 0;
}

/* Append the FDE ranges of section name of elf to *all (*n of them). */
static int fde_add_section(Elf *elf, const char *name, bool debug_frame, struct fde_range **all,
			   size_t *n)
{
	GElf_Shdr sh;
	Elf_Scn *scn = elfsec_find(elf, name, &sh);
	struct fde_range *v, *grown;
	Elf_Data *d;
	size_t k;
	int err;

	if (!scn || sh.sh_type == SHT_NOBITS || !(d = elf_rawdata(scn, NULL)) || !d->d_buf)
		return 0;
	err = fde_parse(d->d_buf, d->d_size, sh.sh_addr, debug_frame, &v, &k);
	if (err || !k)
		return err;
	if (!*n) {
		*all = v;
		*n = k;
		return 0;
	}
	grown = realloc(*all, (*n + k) * sizeof(*grown));
	if (!grown) {
		free(v);
		return -ENOMEM;
	}
	memcpy(grown + *n, v, k * sizeof(*v));
	free(v);
	*all = grown;
	*n += k;
	qsort(*all, *n, sizeof(**all), range_cmp);
	return 0;
}

int fde_read(Elf *elf, struct fde_range **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	if (fde_add_section(elf, ".eh_frame", false, out, n) ||
	    fde_add_section(elf, ".debug_frame", true, out, n)) {
		free(*out);
		*out = NULL;
		*n = 0;
		return -ENOMEM;
	}
	return 0;
}

const struct fde_range *fde_find(const struct fde_range *r, size_t n, uint64_t addr)
{
	size_t lo = ARRAY_STARTS_AT_OR_BELOW(r, n, addr);

	/* Ranges do not nest: the last start at or below addr is the one. */
	if (lo == 0 || addr >= r[lo - 1].end)
		return NULL;
	return &r[lo - 1];
}
