/*
 * annotate — one function's instructions with their share of its own
 * samples, source lines interleaved (see annotate.h for the contract).
 *
 * Counting walks the window's live (leaf node, tid) counts once; a leaf's
 * wait pseudo frame and inlined levels share the pc of the physical frame
 * above them, which is the one matched. Code comes from the target's memory
 * rather than the ELF file: it is the code that runs (JIT included), and
 * needs no file offset arithmetic. The disassembly and the source text are
 * built once when the view opens; a refresh only moves counts.
 */
#include "stacktop/model/annotate.h"

#include <capstone/capstone.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "stacktop/lib/array.h"
#include "stacktop/lib/dynload.h"
#include "stacktop/symbols/frames.h"
#include "stacktop/symbols/sym.h"
#include "stacktop/lib/text.h"
#include "stacktop/proc/mountinfo.h"
#include "stacktop/proc/tfile.h"
#include "stacktop/model/window.h"

/* Longest function read (bytes): a bigger one is cut there. */
#define ANNOTATE_CODE_MAX (256u << 10)
/* A source file larger than this is not read. */
#define ANNOTATE_SRC_MAX (16u << 20)
#define ANNOTATE_SRCS_MAX 16

struct annotate_src {
	char base[128];
	char *text; /* the file, lines split in place by NULs */
	char **lines;
	int nlines;
};

/* A sentence into a->note (a long path may cut it). */
#define NOTE(a, ...)                                                                               \
	do {                                                                                       \
		if (snprintf((a)->note, sizeof((a)->note), __VA_ARGS__) < 0)                       \
			(a)->note[0] = '\0';                                                       \
	} while (0)

/* ---- counting ---- */

/* The physical frame of a leaf: wait pseudo frames and inlined levels
 * skipped (they carry the same pc). NULL when there is none. */
static const struct frame *leaf_frame(const struct window *w, uint32_t node)
{
	const struct frames *fr = window_frames(w);

	while (node != WINDOW_ROOT) {
		const struct window_node *wn = window_node(w, node);
		const struct frame *f = wn ? frames_get(fr, wn->frame) : NULL;

		if (!wn || !f)
			return NULL;
		if (!f->wait && !f->sym.inlined)
			return f;
		node = wn->parent;
	}
	return NULL;
}

static bool same_func(const struct frame *f, const char *module, const char *func, bool kernel)
{
	return f->has_sym && f->sym.func && f->kernel == kernel && strcmp(f->sym.func, func) == 0 &&
	       strcmp(f->sym.module ? f->sym.module : "", module) == 0;
}

static int addr_cmp(const void *a, const void *b)
{
	const struct annotate_addr *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

/* Instances of the function (pid, start) and their samples. */
struct inst {
	int pid;
	uint64_t start, size, count;
	bool jit;
};

int annotate_count(const struct window *w, struct annotate_match *m, struct annotate_addr **out,
		   size_t *n)
{
	size_t nc, na = 0, cap = 0, ni = 0, icap = 0;
	const struct window_count *c = window_counts(w, &nc);
	struct annotate_addr *a = NULL;
	struct inst *in = NULL, *best = NULL;

	*out = NULL;
	*n = 0;
	/* Allocated even when nothing matches: *out is never NULL on success. */
	if (array_grow((void **)&a, &cap, 1, sizeof(*a)) ||
	    array_grow((void **)&in, &icap, 1, sizeof(*in)))
		goto enomem;
	m->self = 0;
	for (size_t i = 0; i < nc; i++) {
		const struct frame *f = leaf_frame(w, c[i].node);
		size_t k;

		if (!f || !same_func(f, m->module, m->func, m->kernel) ||
		    (m->only_pid && f->pid != m->only_pid))
			continue;
		m->self += c[i].count;
		/* A saved profile's frame: its ELF address is the key. */
		uint64_t off = f->pid == 0 && f->origin.path ? f->origin.elf_addr : f->sym.offset;

		if (f->pid == 0 && f->origin.path && !m->path[0]) {
			snprintf(m->path, sizeof(m->path), "%s", f->origin.path);
			snprintf(m->build_id, sizeof(m->build_id), "%s",
				 f->origin.build_id ? f->origin.build_id : "");
			m->elf_addr = f->origin.elf_addr;
		}
		for (k = 0; k < na && a[k].off != off; k++)
			;
		if (k == na) {
			if (array_grow((void **)&a, &cap, na + 1, sizeof(*a)))
				goto enomem;
			a[na++] = (struct annotate_addr){.off = off};
		}
		a[k].count += c[i].count;
		for (k = 0; k < ni && !(in[k].pid == f->pid && in[k].start == f->sym.func_start);
		     k++)
			;
		if (k == ni) {
			if (array_grow((void **)&in, &icap, ni + 1, sizeof(*in)))
				goto enomem;
			in[ni++] = (struct inst){.pid = f->pid,
						 .start = f->sym.func_start,
						 .size = f->sym.func_size,
						 .jit = f->sym.jit};
		}
		in[k].count += c[i].count;
	}
	for (size_t k = 0; k < ni; k++)
		if (!best || in[k].count > best->count)
			best = &in[k];
	if (best) {
		m->pid = best->pid;
		m->func_start = best->start;
		m->func_size = best->size;
		m->jit = best->jit;
	}
	free(in);
	if (na)
		qsort(a, na, sizeof(*a), addr_cmp);
	*out = a;
	*n = na;
	return 0;
enomem:
	free(a);
	free(in);
	return -ENOMEM;
}

int annotate_match_frame(const struct frame *f, struct annotate_match *m)
{
	memset(m, 0, sizeof(*m));
	if (!f || f->wait || !f->has_sym || !f->sym.func)
		return -ENOENT;
	snprintf(m->module, sizeof(m->module), "%s", f->sym.module ? f->sym.module : "");
	snprintf(m->func, sizeof(m->func), "%s", f->sym.func);
	m->kernel = f->kernel;
	m->jit = f->sym.jit;
	return 0;
}

/* The leaves' functions with their samples, for a search by name. */
struct cand {
	const struct frame *f;
	uint64_t self;
};

int annotate_find(const struct window *w, const char *name, struct annotate_match *m, int *nmatches,
		  char *others, size_t osize)
{
	size_t nc, ncand = 0;
	const struct window_count *c = window_counts(w, &nc);
	struct cand *cd = calloc(nc ? nc : 1, sizeof(*cd));
	int pass, found = 0;

	*nmatches = 0;
	if (others && osize)
		others[0] = '\0';
	if (!cd)
		return -ENOMEM;
	/* An exact name first; names containing it only when none is exact. */
	for (pass = 0; pass < 2 && !ncand; pass++) {
		for (size_t i = 0; i < nc; i++) {
			const struct frame *f = leaf_frame(w, c[i].node);
			size_t k;

			if (!f || !f->has_sym || !f->sym.func)
				continue;
			if (pass == 0 ? strcmp(f->sym.func, name) != 0 : !strstr(f->sym.func, name))
				continue;
			for (k = 0;
			     k < ncand && !same_func(cd[k].f, f->sym.module ? f->sym.module : "",
						     f->sym.func, f->kernel);
			     k++)
				;
			if (k == ncand)
				cd[ncand++].f = f;
			cd[k].self += c[i].count;
		}
	}
	for (size_t k = 1; k < ncand; k++) {
		/* Hottest first (a few candidates: insertion sort). */
		struct cand x = cd[k];
		size_t j = k;

		for (; j > 0 && cd[j - 1].self < x.self; j--)
			cd[j] = cd[j - 1];
		cd[j] = x;
	}
	if (ncand) {
		annotate_match_frame(cd[0].f, m);
		found = 1;
	}
	for (size_t k = 1; k < ncand && k < 4 && others; k++) {
		char s[160];
		size_t len = strlen(others);

		text_sanitize(cd[k].f->sym.func, s, sizeof(s));
		snprintf(others + len, osize - len, "%s%s (%s)", k > 1 ? ", " : "", s,
			 cd[k].f->sym.module ? cd[k].f->sym.module : "?");
	}
	*nmatches = (int)ncand;
	free(cd);
	return found ? 0 : -ENOENT;
}

int annotate_find_addr(const struct window *w, int pid, uint64_t addr, struct annotate_match *m)
{
	size_t nc;
	const struct window_count *c = window_counts(w, &nc);

	for (size_t i = 0; i < nc; i++) {
		const struct frame *f = leaf_frame(w, c[i].node);

		if (f && f->pid == pid && f->sym.func && f->sym.func_start == addr)
			return annotate_match_frame(f, m);
	}
	return -ENOENT;
}

/* ---- code ---- */

/* The function's bytes from the live target; 0 or -errno. */
static int read_code(int pid, uint64_t start, size_t size, uint8_t *buf)
{
	struct iovec l = {.iov_base = buf, .iov_len = size};
	struct iovec r = {.iov_base = (void *)(uintptr_t)start, .iov_len = size};
	ssize_t got = process_vm_readv(pid, &l, 1, &r, 1, 0);

	if (got < 0)
		return -errno;
	return got == (ssize_t)size ? 0 : -EFAULT;
}

static int push_line(struct annotate *a, size_t *cap, const struct annotate_line *l)
{
	if (a->n == *cap) {
		size_t nc = *cap ? *cap * 2 : 256;
		struct annotate_line *g = realloc(a->lines, nc * sizeof(*g));

		if (!g)
			return -ENOMEM;
		a->lines = g;
		*cap = nc;
	}
	a->lines[a->n++] = *l;
	return 0;
}

/* ---- names, lines: of the live process, or of the binary offline ---- */

static int res_addr(struct annotate *a, struct sym *sy, uint64_t addr, bool want_line,
		    struct sym_info *si)
{
	if (a->mod)
		return sym_resolve_module(sy, a->mod, "", addr, want_line, si);
	return sym_resolve_user(sy, &a->sp, addr, want_line, si);
}

static int res_inline(struct annotate *a, struct sym *sy, uint64_t addr, struct sym_info *out,
		      int *n)
{
	if (a->mod)
		return sym_inline_module(sy, a->mod, "", addr, out, SYM_INLINE_MAX, n);
	return sym_inline_user(sy, &a->sp, addr, out, SYM_INLINE_MAX, n);
}

/* ---- source ---- */

/* Tabs as spaces (text_sanitize would mark them), then sanitized. */
static void clean_source(const char *in, char *out, size_t size)
{
	char buf[512];
	size_t o = 0;

	for (const char *p = in; *p && o + 8 < sizeof(buf); p++) {
		if (*p == '\t') {
			do
				buf[o++] = ' ';
			while (o % 8);
		} else if (*p != '\r') {
			buf[o++] = *p;
		}
	}
	buf[o] = '\0';
	text_sanitize(buf, out, size);
}

static int slurp_fd(int fd, struct annotate_src *s)
{
	size_t len = 0, cap = 4096;
	char *t = malloc(cap);
	ssize_t r;

	if (!t)
		return -ENOMEM;
	while ((r = read(fd, t + len, cap - len - 1)) > 0) {
		len += (size_t)r;
		if (len + 1 == cap) {
			char *g = cap >= ANNOTATE_SRC_MAX ? NULL : realloc(t, cap * 2);
			if (!g) {
				free(t);
				return -EFBIG;
			}
			t = g;
			cap *= 2;
		}
	}
	t[len] = '\0';
	s->text = t;
	for (size_t i = 0; i < len; i++)
		s->nlines += t[i] == '\n';
	s->nlines++;
	s->lines = calloc((size_t)s->nlines, sizeof(*s->lines));
	if (!s->lines)
		return -ENOMEM;
	s->nlines = 0;
	for (char *p = t; p;) {
		char *nl = strchr(p, '\n');

		s->lines[s->nlines++] = p;
		if (nl)
			*nl++ = '\0';
		p = nl;
	}
	return 0;
}

/* Whose eyes a source file is read for. Live: the target's (a line table
 * naming /etc/shadow gets nothing its user could not read). Offline: the
 * user running stacktop, except that root reads only what anyone may (a
 * saved profile and the binary it names may come from anyone). */
static void source_reader(const struct annotate *a, struct tfile_cred *cred)
{
	if (!a->mod && a->m.pid > 0 && tfile_cred_of(a->m.pid, cred) == 0)
		return;
	memset(cred, 0, sizeof(*cred));
	cred->uid = getuid() ? getuid() : (uid_t)-1;
	cred->gid = getuid() ? getgid() : (gid_t)-1;
}

/* The source file base of the function's CU: through the target's root at
 * the path DWARF gives, else base in each --source-path directory. Never a
 * file the reader could not read (source_reader), nor one of procfs or
 * sysfs (tfile refuses those). */
static struct annotate_src *source_file(struct annotate *a, struct sym *sy, uint64_t pc,
					const char *base, const char *const *srcdirs)
{
	char path[4096];
	struct annotate_src *s;
	struct mountinfo own = {0}, theirs = {0};
	struct tfile_cred cred;
	int fd = -1, root;

	for (size_t i = 0; i < a->nsrcs; i++)
		if (strcmp(a->srcs[i].base, base) == 0)
			return a->srcs[i].lines ? &a->srcs[i] : NULL;
	if (a->nsrcs == ANNOTATE_SRCS_MAX)
		return NULL;
	s = &a->srcs[a->nsrcs++];
	memset(s, 0, sizeof(*s));
	snprintf(s->base, sizeof(s->base), "%s", base);
	source_reader(a, &cred);
	/* Never through a FUSE or network mount: the target may answer it
	 * never (ours for our own files, the target's under its root). */
	mountinfo_load(0, &own);
	if (a->mod && sym_source_path_module(sy, a->mod, "", pc, base, path, sizeof(path)) == 0)
		fd = tfile_open_for(TFILE_OWN_ROOT, &own, path, &cred, ANNOTATE_SRC_MAX, NULL);
	else if (!a->mod && sym_source_path_user(sy, &a->sp, pc, base, path, sizeof(path)) == 0 &&
		 (root = tfile_root_open(a->m.pid)) >= 0) {
		mountinfo_load(a->m.pid, &theirs);
		fd = tfile_open_for(root, &theirs, path, &cred, ANNOTATE_SRC_MAX, NULL);
		mountinfo_free(&theirs);
		tfile_root_close(root);
	}
	for (size_t i = 0; fd < 0 && srcdirs && srcdirs[i]; i++) {
		snprintf(path, sizeof(path), "%s/%s", srcdirs[i], base);
		fd = tfile_open_for(TFILE_OWN_ROOT, &own, path, &cred, ANNOTATE_SRC_MAX, NULL);
	}
	mountinfo_free(&own);
	if (fd < 0)
		return NULL;
	if (slurp_fd(fd, s)) {
		free(s->text);
		free(s->lines);
		s->text = NULL;
		s->lines = NULL;
	}
	close(fd);
	return s->lines ? s : NULL;
}

/* ---- disassembly ---- */

/* "name" or "name+0xoff" of a branch target, or "+0xoff" inside. */
static void target_name(struct annotate *a, struct sym *sy, uint64_t t, char *out, size_t size)
{
	struct sym_info si;
	char s[160];

	if (t >= a->m.func_start && t < a->m.func_start + a->m.func_size) {
		snprintf(out, size, "<+0x%" PRIx64 ">", t - a->m.func_start);
		return;
	}
	out[0] = '\0';
	if (a->m.kernel ? sym_resolve_kernel(sy, t, &si) != 0 : res_addr(a, sy, t, false, &si) != 0)
		return;
	if (!si.func)
		return;
	text_sanitize(si.func, s, sizeof(s));
	if (si.offset)
		snprintf(out, size, "<%s+0x%" PRIx64 ">", s, si.offset);
	else
		snprintf(out, size, "<%s>", s);
}

/* Where a source header goes: the pc's own line (innermost inlined level)
 * and the inlined function it is in, if any. */
struct where {
	char file[128];
	int line;
	char inl[128];
};

static void where_of(struct annotate *a, struct sym *sy, uint64_t pc, struct where *w)
{
	struct sym_info si, chain[SYM_INLINE_MAX];
	int n = 0;

	memset(w, 0, sizeof(*w));
	if (a->m.jit || a->m.kernel)
		return;
	/* sym's names live until its next call: each is used before it. */
	if (res_inline(a, sy, pc, chain, &n) == 0 && n > 0) {
		snprintf(w->file, sizeof(w->file), "%s", chain[0].file ? chain[0].file : "");
		w->line = chain[0].line;
		snprintf(w->inl, sizeof(w->inl), "%s", chain[0].func ? chain[0].func : "");
		return;
	}
	if (res_addr(a, sy, pc, true, &si))
		return;
	snprintf(w->file, sizeof(w->file), "%s", si.file ? si.file : "");
	w->line = si.line;
}

static int header_line(struct annotate *a, struct sym *sy, size_t *cap, uint64_t pc,
		       const struct where *w, const char *const *srcdirs)
{
	struct annotate_line l = {.kind = ANNOTATE_MARK, .addr = pc, .line = w->line};
	struct annotate_src *s = source_file(a, sy, pc, w->file, srcdirs);
	char inl[160] = "", txt[192], file[128];

	if (w->inl[0]) {
		char n[128];
		text_sanitize(w->inl, n, sizeof(n));
		snprintf(inl, sizeof(inl), "  [inlined %s]", n);
	}
	if (s && w->line > 0 && w->line <= s->nlines) {
		l.kind = ANNOTATE_SRC;
		a->has_source = true;
		clean_source(s->lines[w->line - 1], txt, sizeof(txt));
		if (snprintf(l.text, sizeof(l.text), "%5d: %s%s", w->line, txt, inl) < 0)
			l.text[0] = '\0'; /* (a long line is cut: fine) */
	} else {
		text_sanitize(w->file, file, sizeof(file));
		if (snprintf(l.text, sizeof(l.text), "%s:%d%s", file, w->line, inl) < 0)
			l.text[0] = '\0';
	}
	return push_line(a, cap, &l);
}

/* capstone, opened on first use (lib/dynload): most runs never annotate.
 * CAPSTONE_SONAME comes from the build (the library it was built against). */
#ifndef CAPSTONE_SONAME
#define CAPSTONE_SONAME "libcapstone.so"
#endif
static struct {
	cs_err (*open)(cs_arch, cs_mode, csh *);
	cs_err (*option)(csh, cs_opt_type, size_t);
	cs_insn *(*malloc)(csh);
	bool (*disasm_iter)(csh, const uint8_t **, size_t *, uint64_t *, cs_insn *);
	bool (*insn_group)(csh, const cs_insn *, unsigned int);
	void (*free)(cs_insn *, size_t);
	cs_err (*close)(csh *);
} cs;

/* 0 once capstone's functions are in cs (tried once a run). */
static int cs_load(void)
{
	static const char *const names[] = {"cs_open",	      "cs_option",     "cs_malloc",
					    "cs_disasm_iter", "cs_insn_group", "cs_free",
					    "cs_close"};
	static int state = 1; /* 1: not tried yet */
	void *fns[sizeof(names) / sizeof(names[0])];

	if (state == 1) {
		state = dynload_open(CAPSTONE_SONAME, names, fns, sizeof(names) / sizeof(names[0]));
		if (!state) {
			/* POSIX: a function pointer converts through void *. */
			*(void **)&cs.open = fns[0];
			*(void **)&cs.option = fns[1];
			*(void **)&cs.malloc = fns[2];
			*(void **)&cs.disasm_iter = fns[3];
			*(void **)&cs.insn_group = fns[4];
			*(void **)&cs.free = fns[5];
			*(void **)&cs.close = fns[6];
		}
	}
	return state;
}

static int disassemble(struct annotate *a, struct sym *sy, const uint8_t *code, size_t size,
		       const char *const *srcdirs)
{
#if defined(__aarch64__)
	cs_arch arch = CS_ARCH_ARM64;
	cs_mode mode = CS_MODE_ARM;
#else
	cs_arch arch = CS_ARCH_X86;
	cs_mode mode = CS_MODE_64;
#endif
	const uint8_t *p = code;
	uint64_t pc = a->m.func_start;
	size_t left = size, cap = 0;
	struct where prev = {.line = -1}, cur;
	csh h;
	cs_insn *insn;
	int err = 0;

	if (cs_load()) {
		snprintf(a->note, sizeof(a->note),
			 "the disassembler (capstone, " CAPSTONE_SONAME ") could not be loaded.");
		return 0;
	}
	if (cs.open(arch, mode, &h) != CS_ERR_OK) {
		snprintf(a->note, sizeof(a->note), "the disassembler (capstone) could not start.");
		return 0;
	}
	cs.option(h, CS_OPT_DETAIL, CS_OPT_ON);
	insn = cs.malloc(h);
	while (insn && left && !err) {
		struct annotate_line l = {.kind = ANNOTATE_INSN};
		char raw[160], tn[200] = "";

		if (!cs.disasm_iter(h, &p, &left, &pc, insn)) {
			/* Data or padding capstone cannot read: one byte on. */
			snprintf(raw, sizeof(raw), "(bad) %02x", *p);
			l.addr = pc;
			p++;
			left--;
			pc++;
		} else {
			if (snprintf(raw, sizeof(raw), "%s %s", insn->mnemonic, insn->op_str) < 0)
				raw[0] = '\0';
			l.addr = insn->address;
			l.call = cs.insn_group(h, insn, CS_GRP_CALL);
#if !defined(__aarch64__)
			if ((l.call || cs.insn_group(h, insn, CS_GRP_JUMP)) &&
			    insn->detail->x86.op_count == 1 &&
			    insn->detail->x86.operands[0].type == X86_OP_IMM)
				l.target = (uint64_t)insn->detail->x86.operands[0].imm;
#endif
		}
		if (l.target)
			target_name(a, sy, l.target, tn, sizeof(tn));
		l.call = l.call && l.target;
		where_of(a, sy, l.addr, &cur);
		if (cur.line > 0 && (cur.line != prev.line || strcmp(cur.file, prev.file) ||
				     strcmp(cur.inl, prev.inl)))
			err = header_line(a, sy, &cap, l.addr, &cur, srcdirs);
		prev = cur;
		text_sanitize(raw, l.text, sizeof(l.text));
		if (tn[0]) {
			size_t len = strlen(l.text);
			snprintf(l.text + len, sizeof(l.text) - len, "  %s", tn);
		}
		if (!err)
			err = push_line(a, &cap, &l);
		a->ninsn++;
	}
	if (insn)
		cs.free(insn, 1);
	cs.close(&h);
	return err;
}

/* A kernel function's bytes from /proc/kcore (an ELF core whose PT_LOAD
 * segments map kernel virtual addresses; root with CAP_SYS_RAWIO only), or
 * the reason in a->note. */
static int kcore_read(struct annotate *a, uint64_t start, size_t size, uint8_t *buf)
{
	int fd = open("/proc/kcore", O_RDONLY | O_CLOEXEC), err = -ENOENT;
	Elf *e = NULL;
	size_t nph = 0;

	if (fd < 0) {
		snprintf(a->note, sizeof(a->note),
			 "kernel code is not annotated: /proc/kcore cannot be read (%s).",
			 strerror(errno));
		return -errno;
	}
	elf_version(EV_CURRENT);
	if ((e = elf_begin(fd, ELF_C_READ, NULL)) && elf_getphdrnum(e, &nph) == 0) {
		for (size_t i = 0; i < nph; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD ||
			    start < ph.p_vaddr || start + size > ph.p_vaddr + ph.p_filesz)
				continue;
			err = pread(fd, buf, size, (off_t)(ph.p_offset + (start - ph.p_vaddr))) ==
				      (ssize_t)size
				  ? 0
				  : -EIO;
			break;
		}
	}
	if (err)
		snprintf(a->note, sizeof(a->note),
			 "kernel code is not annotated: /proc/kcore does not map 0x%" PRIx64 ".",
			 start);
	if (e)
		elf_end(e);
	close(fd);
	return err;
}

/* The bytes at ELF address [start, start + size) of the module's file,
 * from the section that holds them; 0 or -ENOENT. */
static int elf_code(struct module *mod, uint64_t start, size_t size, uint8_t *buf)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(mod->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS || start < sh.sh_addr ||
		    start + size > sh.sh_addr + sh.sh_size)
			continue;
		if (!(d = elf_getdata(scn, NULL)) || !d->d_buf || d->d_size < sh.sh_size)
			return -ENOENT;
		memcpy(buf, (const uint8_t *)d->d_buf + (start - sh.sh_addr), size);
		return 0;
	}
	return -ENOENT;
}

/* A saved profile's function: from its binary, if it is still there and
 * still the same build (a rebuilt binary has other code at the addresses
 * recorded). Addresses are the ELF's own. */
static int open_offline(struct annotate *a, struct sym *sy, const char *const *srcdirs)
{
	char path[160], hex[2 * sizeof(a->mod->build_id) + 1] = "";
	struct sym_info si;
	uint8_t *code;
	size_t size;
	int err;

	text_sanitize(a->m.path, path, sizeof(path));
	if (!sy) {
		if ((err = sym_new(&a->own_sy)))
			return err;
		sy = a->own_sy;
	}
	if ((err = space_module_open_path(a->m.path, &a->mod)) || !a->mod->elf) {
		NOTE(a, "cannot annotate offline: %s cannot be read (%s).", path,
		     strerror(err ? -err : ENOEXEC));
		return 0;
	}
	for (size_t i = 0; i < a->mod->build_id_len && i < sizeof(a->mod->build_id); i++)
		snprintf(hex + 2 * i, 3, "%02x", a->mod->build_id[i]);
	if (a->m.build_id[0] && strcmp(hex, a->m.build_id) != 0) {
		NOTE(a,
		     "cannot annotate offline: %s changed since the recording (build-id %.12s..., "
		     "recorded %.12s...).",
		     path, hex[0] ? hex : "none", a->m.build_id);
		return 0;
	}
	if (sym_resolve_module(sy, a->mod, "", a->m.elf_addr, false, &si) || !si.func ||
	    !si.func_size) {
		NOTE(a, "cannot annotate offline: %s has no function at 0x%" PRIx64 ".", path,
		     a->m.elf_addr);
		return 0;
	}
	a->m.func_start = si.func_start;
	a->m.func_size = si.func_size;
	a->base = 0;
	size = si.func_size > ANNOTATE_CODE_MAX ? ANNOTATE_CODE_MAX : (size_t)si.func_size;
	if (!(code = malloc(size)))
		return -ENOMEM;
	if (elf_code(a->mod, si.func_start, size, code)) {
		NOTE(a, "cannot annotate offline: no code at 0x%" PRIx64 " in %s.", si.func_start,
		     path);
		free(code);
		return 0;
	}
	err = disassemble(a, sy, code, size, srcdirs);
	free(code);
	if (!err)
		NOTE(a, "offline, from %s (same build-id)%s", path,
		     a->has_source ? "." : "; no source readable.");
	return err;
}

int annotate_open(struct annotate *a, struct sym *sy, const struct annotate_match *m,
		  const char *const *srcdirs)
{
	size_t size;
	uint8_t *code;
	int err;

	memset(a, 0, sizeof(*a));
	a->m = *m;
	a->srcs = calloc(ANNOTATE_SRCS_MAX, sizeof(*a->srcs));
	if (!a->srcs)
		return -ENOMEM;
	if (m->pid <= 0 && m->path[0])
		return open_offline(a, sy, srcdirs);
	if (m->pid <= 0 || !sy) {
		snprintf(a->note, sizeof(a->note),
			 "no live process, and the profile kept no addresses: no code to read.");
		return 0;
	}
	a->base = m->func_start;
	if (!m->func_start || !m->func_size) {
		snprintf(a->note, sizeof(a->note),
			 "the function's extent is unknown (no symbol size, no .eh_frame range).");
		return 0;
	}
	if (!m->kernel && (err = space_load(&a->sp, m->pid))) {
		snprintf(a->note, sizeof(a->note), "cannot read the maps of process %d (%s).",
			 m->pid, strerror(-err));
		return 0;
	}
	a->sp_loaded = !m->kernel;
	size = m->func_size > ANNOTATE_CODE_MAX ? ANNOTATE_CODE_MAX : (size_t)m->func_size;
	if (!(code = malloc(size)))
		return -ENOMEM;
	if (m->kernel && kcore_read(a, m->func_start, size, code)) {
		free(code);
		return 0;
	}
	if (!m->kernel && (err = read_code(m->pid, m->func_start, size, code))) {
		snprintf(a->note, sizeof(a->note), "cannot read the code of process %d (%s).",
			 m->pid, strerror(-err));
		free(code);
		return 0;
	}
	err = disassemble(a, sy, code, size, srcdirs);
	free(code);
	if (!err && m->kernel)
		snprintf(a->note, sizeof(a->note),
			 "kernel code, read from /proc/kcore: no source.");
	else if (!err && !a->has_source && !m->jit && !a->note[0])
		snprintf(a->note, sizeof(a->note), "%s",
			 a->n > a->ninsn ? "source not readable: file:line markers only "
					   "(--source-path DIR adds a search path)."
					 : "no line table (built without -g?): instructions only.");
	if (!err && m->jit)
		snprintf(a->note, sizeof(a->note), "JIT code, read from the process: no source.");
	return err;
}

int annotate_update(struct annotate *a, const struct window *w)
{
	struct annotate_addr *c;
	size_t nc, k = 0;
	struct annotate_line *hdr = NULL;
	/* Counted by offset: the lines stay those of the instance read when
	 * opened, even when another process's copy becomes the hottest. */
	struct annotate_match now = a->m;
	int err;

	if ((err = annotate_count(w, &now, &c, &nc)))
		return err;
	a->m.self = a->total = now.self;
	for (size_t i = 0; i < a->n; i++) {
		struct annotate_line *l = &a->lines[i];

		if (l->kind != ANNOTATE_INSN) {
			hdr = l;
			l->count = 0;
			continue;
		}
		/* Lines and counts are both sorted by address. */
		while (k < nc && a->base + c[k].off < l->addr)
			k++;
		l->count = k < nc && a->base + c[k].off == l->addr ? c[k].count : 0;
		if (hdr)
			hdr->count += l->count;
	}
	free(c);
	return 0;
}

void annotate_close(struct annotate *a)
{
	for (size_t i = 0; a->srcs && i < a->nsrcs; i++) {
		free(a->srcs[i].text);
		free(a->srcs[i].lines);
	}
	free(a->srcs);
	free(a->lines);
	if (a->sp_loaded)
		space_release(&a->sp);
	if (a->mod)
		space_module_put(a->mod);
	if (a->own_sy)
		sym_free(a->own_sy);
	memset(a, 0, sizeof(*a));
}
