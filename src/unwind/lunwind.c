/*
 * lunwind — libunwind's remote API over a sample (see lunwind.h).
 *
 * Contract: one struct lunwind per struct space, which must outlive it.
 * lunwind_sample reads the sample's registers and stack copy and the ELF
 * images of the space's modules: no syscall, no target memory. Per-module
 * .eh_frame_hdr facts hang off module->ext[SPACE_EXT_LUNWIND].
 *
 * How libunwind finds a frame's rule (learned from perf's
 * tools/perf/util/unwind-libunwind-local.c, written anew): find_proc_info
 * locates the module of the ip, hands libunwind the runtime address of its
 * .eh_frame_hdr search table as a UNW_INFO_FORMAT_REMOTE_TABLE, and lets
 * dwarf_search_unwind_table (exported by libunwind, not declared in its
 * public headers) binary-search it and decode the FDE. The table and the
 * FDEs are then read through access_mem at runtime addresses, which we
 * translate back to the module's image (runtime - bias → ELF address → the
 * section holding it; the image is elfimage's copy, which has the CFI
 * sections' bytes and no code). Only tables with the encodings every linker
 * writes (fde_count udata4, table datarel|sdata4) are used; a module
 * without them has no fallback (unwind.c's .debug_frame path still
 * applies to the fast path).
 *
 * put_unwind_info does nothing, as in perf: with a remote table libunwind
 * keeps the decoded CIE/FDE in its own pools.
 */
#include "stacktop/unwind/lunwind.h"

#include <errno.h>
#include <libunwind.h>
#include <stdlib.h>
#include <string.h>

/* Exported by libunwind (_Ux86_64_dwarf_search_unwind_table), not declared
 * in its installed headers. */
extern int UNW_OBJ(dwarf_search_unwind_table)(unw_addr_space_t as, unw_word_t ip,
					      unw_dyn_info_t *di, unw_proc_info_t *pi,
					      int need_unwind_info, void *arg);

#define EH_PE_udata4 0x03
#define EH_PE_datarel_sdata4 0x3b

/* A module's .eh_frame_hdr, in ELF virtual addresses. */
struct lunwind_mod {
	bool ok;
	uint64_t hdr_vaddr, fde_count;
};

struct lunwind {
	struct space *space;
	unw_addr_space_t as;
	unsigned gen;
	/* The sample being walked (valid during lunwind_sample only). */
	const struct sample *smp;
	const struct mapping *last; /* the mapping memory was last found in */
};

static void lunwind_mod_free(void *p)
{
	free(p);
}

/* A module image's bytes at an ELF virtual address: from the section
 * that holds them, when the image has its bytes (elfimage keeps the CFI
 * sections; code and data are SHT_NOBITS there). */
static const uint8_t *image_at(Elf *elf, uint64_t vaddr, size_t len)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC) ||
		    sh.sh_type == SHT_NOBITS || vaddr < sh.sh_addr ||
		    vaddr - sh.sh_addr >= sh.sh_size || sh.sh_size - (vaddr - sh.sh_addr) < len)
			continue;
		d = elf_rawdata(scn, NULL);
		if (!d || !d->d_buf || d->d_size < sh.sh_size)
			return NULL;
		return (const uint8_t *)d->d_buf + (vaddr - sh.sh_addr);
	}
	return NULL;
}

/* A word of the image at an ELF virtual address. libunwind reads 8 bytes
 * where the last 4-byte entry of the .eh_frame_hdr table ends its
 * section: the bytes past a section's end are taken from the next
 * section, or as 0 where no section has them (the file's padding, which
 * the copy does not keep). */
static bool image_word(Elf *elf, uint64_t vaddr, uint64_t *v)
{
	uint8_t b[8] = {0};
	const uint8_t *p = image_at(elf, vaddr, 8);

	if (p) {
		memcpy(v, p, 8);
		return true;
	}
	for (size_t k = 7; k > 0; k--) {
		if (!(p = image_at(elf, vaddr, k)))
			continue;
		memcpy(b, p, k);
		for (size_t j = 8 - k; j > 0; j--) {
			if ((p = image_at(elf, vaddr + k, j))) {
				memcpy(b + k, p, j);
				break;
			}
		}
		memcpy(v, b, 8);
		return true;
	}
	return false;
}

/* Parse the module's .eh_frame_hdr once: where its table is, how long. */
static struct lunwind_mod *mod_info(struct module *m)
{
	struct lunwind_mod *lm = m->ext[SPACE_EXT_LUNWIND];
	size_t nph;
	const uint8_t *h;
	uint32_t count;

	if (lm)
		return lm;
	lm = calloc(1, sizeof(*lm));
	if (!lm)
		return NULL;
	m->ext[SPACE_EXT_LUNWIND] = lm;
	m->ext_free[SPACE_EXT_LUNWIND] = lunwind_mod_free;
	space_module_fill(m);
	if (!m->elf || elf_getphdrnum(m->elf, &nph) != 0)
		return lm;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(m->elf, (int)i, &ph) || ph.p_type != PT_GNU_EH_FRAME)
			continue;
		/* version, eh_frame_ptr enc, fde_count enc, table enc,
		 * eh_frame_ptr (4 bytes for every encoding linkers use), count */
		h = image_at(m->elf, ph.p_vaddr, 12);
		if (!h || h[0] != 1 || h[2] != EH_PE_udata4 || h[3] != EH_PE_datarel_sdata4)
			break;
		memcpy(&count, h + 8, sizeof(count));
		lm->hdr_vaddr = ph.p_vaddr;
		lm->fde_count = count;
		lm->ok = image_at(m->elf, ph.p_vaddr + 12, (size_t)count * 8) != NULL;
		break;
	}
	return lm;
}

/* ---- accessors ---------------------------------------------------------- */

static int find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi,
			  int need_unwind_info, void *arg)
{
	struct lunwind *l = arg;
	const struct mapping *mp = space_find(l->space, ip);
	struct lunwind_mod *lm;
	unw_dyn_info_t di;

	if (!mp || !mp->mod || !mp->mod->elf)
		return -UNW_ENOINFO;
	lm = mod_info(mp->mod);
	if (!lm || !lm->ok)
		return -UNW_ENOINFO;
	memset(&di, 0, sizeof(di));
	di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
	di.start_ip = mp->start;
	di.end_ip = mp->end;
	di.u.rti.segbase = lm->hdr_vaddr + mp->bias;
	di.u.rti.table_data = lm->hdr_vaddr + 12 + mp->bias;
	/* in unw_word_t units: each entry is two 4-byte fields */
	di.u.rti.table_len = lm->fde_count * 8 / sizeof(unw_word_t);
	l->last = mp;
	return UNW_OBJ(dwarf_search_unwind_table)(as, ip, &di, pi, need_unwind_info, arg);
}

static void put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg)
{
}

static int get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *addr, void *arg)
{
	return -UNW_ENOINFO;
}

/* A word of a module's image at a runtime address, trying the mapping
 * used last first (the FDEs of the frame being decoded). */
static bool module_word(struct lunwind *l, uint64_t addr, uint64_t *v)
{
	const struct mapping *mp = l->last;

	if (mp && mp->mod && mp->mod->elf && image_word(mp->mod->elf, addr - mp->bias, v))
		return true;
	for (size_t i = 0; i < l->space->nmaps; i++) {
		mp = &l->space->maps[i];
		if (!mp->mod || !mp->mod->elf || mp == l->last)
			continue;
		if (image_word(mp->mod->elf, addr - mp->bias, v)) {
			l->last = mp;
			return true;
		}
	}
	return false;
}

static int access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *valp, int write, void *arg)
{
	struct lunwind *l = arg;
	const struct sample *s = l->smp;
	uint64_t off = addr - s->regs[SAMPLE_REG_RSP]; /* huge when below */
	uint64_t v;

	if (write)
		return -UNW_EINVAL;
	if (s->stack && off < s->stack_size && s->stack_size - off >= 8) {
		memcpy(&v, s->stack + off, 8);
		*valp = v;
		return 0;
	}
	off = addr - s->stack2_base; /* the interrupted stack's copy */
	if (s->stack2 && off < s->stack2_size && s->stack2_size - off >= 8) {
		memcpy(&v, s->stack2 + off, 8);
		*valp = v;
		return 0;
	}
	if (!module_word(l, addr, &v))
		return -UNW_EINVAL;
	*valp = v;
	return 0;
}

/* libunwind's x86-64 register numbers are DWARF's, as in struct sample. */
static int access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *valp, int write, void *arg)
{
	const struct sample *s = ((struct lunwind *)arg)->smp;

	if (write || reg < 0 || reg >= SAMPLE_NREGS || !(s->regs_mask >> reg & 1))
		return -UNW_EBADREG;
	*valp = s->regs[reg];
	return 0;
}

static int access_fpreg(unw_addr_space_t as, unw_regnum_t reg, unw_fpreg_t *val, int write,
			void *arg)
{
	return -UNW_EBADREG;
}

static int resume(unw_addr_space_t as, unw_cursor_t *c, void *arg)
{
	return -UNW_EINVAL;
}

static int get_proc_name(unw_addr_space_t as, unw_word_t addr, char *buf, size_t len,
			 unw_word_t *offp, void *arg)
{
	return -UNW_EINVAL;
}

static unw_accessors_t accessors = {
    .find_proc_info = find_proc_info,
    .put_unwind_info = put_unwind_info,
    .get_dyn_info_list_addr = get_dyn_info_list_addr,
    .access_mem = access_mem,
    .access_reg = access_reg,
    .access_fpreg = access_fpreg,
    .resume = resume,
    .get_proc_name = get_proc_name,
};

/* ---- the walk ----------------------------------------------------------- */

int lunwind_new(struct space *s, struct lunwind **out)
{
	struct lunwind *l;

	if (!s || !out)
		return -EINVAL;
	l = calloc(1, sizeof(*l));
	if (!l || !(l->as = unw_create_addr_space(&accessors, 0))) {
		free(l);
		return -ENOMEM;
	}
	unw_set_caching_policy(l->as, UNW_CACHE_GLOBAL);
	l->space = s;
	l->gen = s->generation;
	*out = l;
	return 0;
}

void lunwind_free(struct lunwind *l)
{
	if (!l)
		return;
	unw_destroy_addr_space(l->as);
	free(l);
}

int lunwind_sample(struct lunwind *l, const struct sample *smp, uint64_t *pcs, int max, int *n,
		   bool *complete)
{
	const uint32_t need = 1u << SAMPLE_REG_RSP | 1u << SAMPLE_REG_RIP;
	unw_cursor_t c;
	unw_word_t ip;
	bool after_signal = false;
	int k = 0, rc;

	*n = 0;
	*complete = false;
	if (!l || !smp || !pcs || max <= 0 || (smp->regs_mask & need) != need)
		return -EINVAL;
	if (l->gen != l->space->generation) {
		unw_flush_cache(l->as, 0, 0);
		l->gen = l->space->generation;
	}
	l->smp = smp;
	l->last = NULL;
	if (unw_init_remote(&c, l->as, l) != 0)
		goto out;
	do {
		if (unw_get_reg(&c, UNW_REG_IP, &ip) != 0 || ip == 0) {
			*complete = k > 0;
			break;
		}
		pcs[k] = k == 0 || after_signal ? ip : ip - 1;
		k++;
		after_signal = unw_is_signal_frame(&c) > 0;
		rc = unw_step(&c);
		if (rc == 0)
			*complete = true;
	} while (rc > 0 && k < max);
out:
	l->smp = NULL;
	*n = k;
	return 0;
}
