/*
 * python — CPython's threads and frames read from its memory (see
 * python.h for the contract).
 *
 * Every structure is read as one byte run (its head up to the last field
 * used, sizes fixed at open from the layout) through py_read, then fields
 * are taken out of the copy with bounds the layout guarantees; pointers
 * read are only ever passed back to py_read, which the kernel checks.
 * Chains (interpreters, threads, frames) are walked at most a fixed count,
 * so a cycle in torn memory ends. Strings are CPython's compact str
 * objects only (what code objects hold), cut at NAME_CHARS characters;
 * anything else ends the stack.
 *
 * The code cache is direct-mapped by address (CODE_SLOTS entries): an
 * entry holds the pointers it was read from (type, names, file, line
 * table, first line) and is used only when a fresh read of the object's
 * head shows the same. Line tables are copied (at most LINETABLE_MAX
 * bytes each; the cache is emptied past CACHE_BYTES in all), so a sample
 * costs a read per frame and one (a process_vm_readv of many ranges) for
 * the heads of all its code objects.
 */
#include "stacktop/runtime/python.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "stacktop/elf/elfsec.h"

#define CODE_SLOTS 4096u
#define CACHE_BYTES (16u << 20)
#define LINETABLE_MAX 65536u
#define NAME_CHARS 512
#define CHAIN_MAX 4096	  /* frames or thread states walked at most */
#define INTERPS_MAX 64	  /* interpreters walked at most */
#define READ_MAX 65536u	  /* one read at most */
#define TMAP_SLOTS 64	  /* remembered (tid, thread state) pairs */
#define CODE_HEAD_MAX 256 /* bytes of a code object's head read at most */
#define TRAMP_MAX 64	  /* bytes of a -X perf trampoline at most */
#define TRAMP_SLOTS 64	  /* remembered trampoline answers (a power of 2) */
#define PTHREAD_SCAN 2304 /* bytes of glibc's struct pthread searched for the tid */
/* glibc x86-64: struct pthread's tid follows the 0x2c0-byte tcbhead_t
 * and a list head; looked for elsewhere when not there. */
#define PTHREAD_TID_GUESS 0x2d0

struct code_entry {
	uint64_t addr; /* 0: free */
	uint64_t type, name, file, table;
	int32_t firstline;
	char *func, *filename;
	uint8_t *lt;
	uint32_t ltlen;
};

struct python {
	struct pylayout l;
	struct python_where w;
	char module[256];
	struct python_mem mem;
	pid_t pid;
	int tid_off; /* in struct pthread; -1 not looked for, -2 not found */
	size_t ts_len, fr_len, co_len;
	struct code_entry *cache;
	size_t cache_bytes;
	struct {
		pid_t tid;
		uint64_t ts;
	} tmap[TMAP_SLOTS];
	uint8_t *heads; /* PYTHON_SEGS_MAX code heads of CODE_HEAD_MAX bytes */
	char *arena;	/* this call's strings */
	size_t arena_len, arena_cap;
	struct python_stats st;
	struct {
		int state; /* 0 not read, 1 parsed, -1 none */
		uint8_t code[TRAMP_MAX];
		int len, call_end;
		int32_t cfa_off, bp_off;
		struct {
			uint64_t pc;
			bool yes;
		} seen[TRAMP_SLOTS];
	} tramp;
};

/* ---- reading ---- */

static int vm_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	pid_t pid = *(const pid_t *)ctx;
	struct iovec local = {.iov_base = buf, .iov_len = len};
	struct iovec remote = {.iov_base = (void *)(uintptr_t)addr, .iov_len = len};
	ssize_t got = process_vm_readv(pid, &local, 1, &remote, 1, 0);

	if (got < 0)
		return -errno;
	return (size_t)got == len ? 0 : -EFAULT;
}

static int vm_readv(void *ctx, const struct python_seg *seg, int n)
{
	pid_t pid = *(const pid_t *)ctx;
	struct iovec local[PYTHON_SEGS_MAX], remote[PYTHON_SEGS_MAX];
	ssize_t got;
	int whole = 0;

	if (n <= 0 || n > PYTHON_SEGS_MAX)
		return 0;
	for (int i = 0; i < n; i++) {
		local[i] = (struct iovec){.iov_base = seg[i].buf, .iov_len = seg[i].len};
		remote[i] = (struct iovec){.iov_base = (void *)(uintptr_t)seg[i].addr,
					   .iov_len = seg[i].len};
	}
	if ((got = process_vm_readv(pid, local, (unsigned long)n, remote, (unsigned long)n, 0)) < 0)
		return -errno;
	/* It stops at the first remote range it cannot read. */
	while (whole < n && (size_t)got >= seg[whole].len)
		got -= (ssize_t)seg[whole++].len;
	return whole;
}

/* One read: len checked, address not NULL nor wrapping. */
static bool seg_ok(uint64_t addr, size_t len)
{
	return addr && len > 0 && len <= READ_MAX && addr + len >= addr;
}

static int py_read(struct python *py, uint64_t addr, void *buf, size_t len)
{
	if (!seg_ok(addr, len))
		return -EFAULT;
	py->st.reads++;
	return py->mem.read(py->mem.ctx, addr, buf, len);
}

/* n reads at once (one process_vm_readv for a live process): how many of
 * them, from the first, were read whole. */
static int py_readv(struct python *py, const struct python_seg *seg, int n)
{
	int ok = 0;

	for (ok = 0; ok < n; ok++)
		if (!seg_ok(seg[ok].addr, seg[ok].len))
			break;
	if (ok == 0)
		return 0;
	if (py->mem.readv) {
		int got;

		py->st.reads++;
		got = py->mem.readv(py->mem.ctx, seg, ok);
		return got < 0 ? 0 : got > ok ? ok : got;
	}
	for (int i = 0; i < ok; i++)
		if (py_read(py, seg[i].addr, seg[i].buf, seg[i].len))
			return i;
	return ok;
}

static uint64_t get_u64(const uint8_t *b, int off)
{
	uint64_t v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

static int32_t get_i32(const uint8_t *b, int off)
{
	int32_t v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

static int read_u64(struct python *py, uint64_t addr, uint64_t *v)
{
	return py_read(py, addr, v, sizeof(*v));
}

/* One past the last byte of the fields at offs (each width bytes). */
static size_t span(const int *offs, size_t n, size_t width)
{
	size_t end = 0;

	for (size_t i = 0; i < n; i++)
		if (offs[i] >= 0 && (size_t)offs[i] + width > end)
			end = (size_t)offs[i] + width;
	return end;
}

/* ---- strings and bytes ---- */

/* Append c as UTF-8 to out (room for 4 bytes is the caller's). */
static size_t utf8_put(char *out, uint32_t c)
{
	if (c >= 0xd800 && c < 0xe000)
		c = '?'; /* a lone surrogate */
	if (c < 0x80) {
		out[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		out[0] = (char)(0xc0 | c >> 6);
		out[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		out[0] = (char)(0xe0 | c >> 12);
		out[1] = (char)(0x80 | (c >> 6 & 0x3f));
		out[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | c >> 18);
	out[1] = (char)(0x80 | (c >> 12 & 0x3f));
	out[2] = (char)(0x80 | (c >> 6 & 0x3f));
	out[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

/* A compact str object at addr as a new UTF-8 string (cut at NAME_CHARS
 * characters, then "..."), or NULL when it is not one. */
static char *read_str(struct python *py, uint64_t addr)
{
	const struct pylayout *l = &py->l;
	uint8_t head[256], raw[NAME_CHARS * 4];
	size_t hlen = (size_t)l->u_ascii_size;
	char *out, *p;

	if (hlen > sizeof(head) || (size_t)l->u_compact_size > sizeof(head) ||
	    py_read(py, addr, head, hlen))
		return NULL;
	if (py->w.str_type && get_u64(head, l->ob_type) != py->w.str_type)
		return NULL;
	int64_t len = (int64_t)get_u64(head, l->u_length);
	uint32_t state = (uint32_t)get_i32(head, l->u_state);
	unsigned kind = state >> 2 & 7, compact = state >> 5 & 1, ascii = state >> 6 & 1;
	bool cut = len > NAME_CHARS;

	if (len < 0 || !compact || (kind != 1 && kind != 2 && kind != 4) || (ascii && kind != 1))
		return NULL;
	if (cut)
		len = NAME_CHARS;
	if (len && py_read(py, addr + (uint64_t)(ascii ? l->u_ascii_size : l->u_compact_size), raw,
			   (size_t)len * kind))
		return NULL;
	if (!(out = malloc((size_t)len * 4 + 4)))
		return NULL;
	p = out;
	for (int64_t i = 0; i < len; i++) {
		uint32_t c = kind == 1	 ? raw[i]
			     : kind == 2 ? (uint32_t)(raw[2 * i] | raw[2 * i + 1] << 8)
					 : (uint32_t)get_i32(raw, (int)(4 * i));
		if (c == 0 || c > 0x10ffff || (ascii && c >= 0x80)) {
			free(out);
			return NULL;
		}
		p += utf8_put(p, c);
	}
	if (cut)
		p += sprintf(p, "...");
	*p = '\0';
	return out;
}

/* A bytes object's content (at most LINETABLE_MAX bytes) as a new buffer. */
static int read_bytes(struct python *py, uint64_t addr, uint8_t **out, uint32_t *n)
{
	const struct pylayout *l = &py->l;
	uint8_t head[64];
	size_t hlen = (size_t)l->b_sval;

	*out = NULL;
	*n = 0;
	if (hlen > sizeof(head) || hlen < (size_t)l->b_size + 8 || py_read(py, addr, head, hlen))
		return -EFAULT;
	if (py->w.bytes_type && get_u64(head, l->ob_type) != py->w.bytes_type)
		return -EFAULT;
	int64_t len = (int64_t)get_u64(head, l->b_size);
	if (len < 0)
		return -EFAULT;
	if (len > LINETABLE_MAX)
		len = LINETABLE_MAX; /* lines past it are unknown */
	if (len == 0)
		return 0;
	if (!(*out = malloc((size_t)len)))
		return -ENOMEM;
	if (py_read(py, addr + hlen, *out, (size_t)len)) {
		free(*out);
		*out = NULL;
		return -EFAULT;
	}
	*n = (uint32_t)len;
	return 0;
}

/* ---- line tables ---- */

/* 3.8–3.9 co_lnotab: (byte offset delta, signed line delta) pairs. */
static int line_lnotab(const uint8_t *t, size_t n, int line, long addr)
{
	long a = 0;

	for (size_t i = 0; i + 1 < n; i += 2) {
		a += t[i];
		if (a > addr)
			break;
		line += (int8_t)t[i + 1];
	}
	return line;
}

/* 3.10 co_linetable: (byte length, signed line delta; -128 no line). */
static int line_310(const uint8_t *t, size_t n, int line, long addr)
{
	long end = 0;

	for (size_t i = 0; i + 1 < n; i += 2) {
		long start = end;
		int8_t d = (int8_t)t[i + 1];

		end += t[i];
		if (d != -128)
			line += d;
		if (addr >= start && addr < end)
			return d == -128 ? 0 : line;
	}
	return 0;
}

/* 3.11+ location table (Objects/locations.md): entries start with a byte
 * of bit 7 set, code (bits 3–6) and length in code units (bits 0–2, +1);
 * codes 13 and 14 carry a signed varint line delta, 10–12 a delta of
 * code - 10, 15 no location. Every other byte has bit 7 clear. */
static int line_311(const uint8_t *t, size_t n, int line, long unit)
{
	long start = 0;
	size_t i = 0;

	while (i < n) {
		uint8_t b = t[i++];
		int code = b >> 3 & 15, len = (b & 7) + 1, delta = 0;

		if (!(b & 0x80))
			continue;
		if (code == 13 || code == 14) {
			uint32_t v = 0;
			int shift = 0;
			uint8_t c;

			do {
				if (i >= n || shift > 24)
					return 0;
				c = t[i++];
				v |= (uint32_t)(c & 63) << shift;
				shift += 6;
			} while (c & 64);
			delta = (v & 1) ? -(int)(v >> 1) : (int)(v >> 1);
		} else if (code >= 10 && code <= 12) {
			delta = code - 10;
		}
		line += delta;
		if (unit >= start && unit < start + len)
			return code == 15 ? 0 : line;
		start += len;
	}
	return 0;
}

static int code_line(const struct python *py, const struct code_entry *e, long lasti)
{
	if (lasti < 0 || !e->lt)
		return e->firstline > 0 ? e->firstline : 0;
	int line = py->l.minor <= 9    ? line_lnotab(e->lt, e->ltlen, e->firstline, lasti)
		   : py->l.minor == 10 ? line_310(e->lt, e->ltlen, e->firstline, lasti * 2)
				       : line_311(e->lt, e->ltlen, e->firstline, lasti);
	return line > 0 ? line : 0;
}

/* ---- code objects ---- */

static void entry_clear(struct python *py, struct code_entry *e)
{
	if (e->addr)
		py->cache_bytes -= e->ltlen + sizeof(*e);
	free(e->func);
	free(e->filename);
	free(e->lt);
	memset(e, 0, sizeof(*e));
}

static void cache_clear(struct python *py)
{
	for (size_t i = 0; py->cache && i < CODE_SLOTS; i++)
		entry_clear(py, &py->cache[i]);
}

/* The code object at addr whose head (py->co_len bytes) was just read:
 * the cached entry when the head shows what it was read from, else read
 * anew; NULL when it is not a code object. */
static struct code_entry *code_from_head(struct python *py, uint64_t addr, const uint8_t *head)
{
	const struct pylayout *l = &py->l;
	struct code_entry *e;
	uint64_t type, name, file, table;
	int32_t first;

	/* Made on first use: a process never sampled in Python costs none. */
	if (!py->cache && !(py->cache = calloc(CODE_SLOTS, sizeof(*py->cache))))
		return NULL;
	e = &py->cache[(addr >> 4) * 0x9e3779b97f4a7c15ull >> 52 & (CODE_SLOTS - 1)];

	type = get_u64(head, l->ob_type);
	name = get_u64(head, l->co_qualname >= 0 ? l->co_qualname : l->co_name);
	file = get_u64(head, l->co_filename);
	table = get_u64(head, l->co_linetable);
	first = get_i32(head, l->co_firstlineno);
	if (py->w.code_type && type != py->w.code_type)
		return NULL;
	if (e->addr == addr && e->type == type && e->name == name && e->file == file &&
	    e->table == table && e->firstline == first) {
		py->st.code_hits++;
		return e;
	}
	if (e->addr == addr)
		py->st.code_stale++;
	py->st.code_misses++;
	entry_clear(py, e);
	if (py->cache_bytes > CACHE_BYTES)
		cache_clear(py);
	e->func = read_str(py, name);
	e->filename = read_str(py, file);
	if (!e->func || !e->filename || read_bytes(py, table, &e->lt, &e->ltlen)) {
		entry_clear(py, e);
		return NULL;
	}
	e->addr = addr;
	e->type = type;
	e->name = name;
	e->file = file;
	e->table = table;
	e->firstline = first;
	py->cache_bytes += e->ltlen + sizeof(*e);
	return e;
}

/* ---- opening ---- */

/* The minor version in a module name: "python3.11", "libpython3.8.so.1.0",
 * "python3.13t"; -1 for any other name. */
static int name_minor(const char *name)
{
	const char *p = strstr(name, "python3.");
	char *end;
	long minor;

	if (!p || (p != name && strncmp(name, "lib", 3)) || (p != name && p != name + 3))
		return -1;
	minor = strtol(p + 8, &end, 10);
	if (end == p + 8 || minor < 0 || minor > 99)
		return -1;
	return (int)minor;
}

/* An offset of the layout is sane: inside what one read may cover. */
static bool off_ok(uint64_t v)
{
	return v < 16384;
}

/* 3.13's _Py_DebugOffsets (Include/internal/pycore_runtime.h), as far as
 * the reader uses it: every member is a uint64_t, so its layout is the
 * order of the members. */
struct py313_debug {
	char cookie[8];
	uint64_t version, free_threaded;
	uint64_t rt_size, rt_finalizing, rt_interpreters_head;
	uint64_t is_size, is_id, is_next, is_threads_head, is_gc, is_imports_modules, is_sysdict,
	    is_builtins, is_ceval_gil, is_gil_runtime_state, is_gil_enabled, is_gil_locked,
	    is_gil_holder;
	uint64_t ts_size, ts_prev, ts_next, ts_interp, ts_current_frame, ts_thread_id,
	    ts_native_thread_id, ts_datastack_chunk, ts_status;
	uint64_t fr_size, fr_previous, fr_executable, fr_instr_ptr, fr_localsplus, fr_owner;
	uint64_t co_size, co_filename, co_name, co_qualname, co_linetable, co_firstlineno,
	    co_argcount, co_localsplusnames, co_localspluskinds, co_code_adaptive;
	uint64_t ob_size, ob_type;
	uint64_t type_size, type_tp_name, type_tp_repr, type_tp_flags;
	uint64_t tuple_size, tuple_ob_item, tuple_ob_size;
	uint64_t list_size, list_ob_item, list_ob_size;
	uint64_t dict_size, dict_ma_keys, dict_ma_values;
	uint64_t float_size, float_ob_fval;
	uint64_t long_size, long_lv_tag, long_ob_digit;
	uint64_t bytes_size, bytes_ob_size, bytes_ob_sval;
	uint64_t str_size, str_state, str_length, str_asciiobject_size;
	uint64_t gc_size, gc_collecting;
};

/* On 3.13, the interpreter's own offsets replace the table's. */
static void apply_debug_offsets(struct python *py)
{
	struct py313_debug d;
	struct pylayout *l = &py->l;

	if (py_read(py, py->w.runtime, &d, sizeof(d)) || memcmp(d.cookie, "xdebugpy", 8) ||
	    (d.version >> 16) != 0x030d || d.free_threaded)
		return;
	uint64_t v[] = {d.rt_interpreters_head,
			d.is_next,
			d.is_threads_head,
			d.is_gc + d.gc_collecting,
			d.is_gil_locked,
			d.is_gil_holder,
			d.ts_next,
			d.ts_interp,
			d.ts_current_frame,
			d.ts_thread_id,
			d.ts_native_thread_id,
			d.fr_previous,
			d.fr_executable,
			d.fr_instr_ptr,
			d.fr_owner,
			d.co_filename,
			d.co_name,
			d.co_qualname,
			d.co_linetable,
			d.co_firstlineno,
			d.co_code_adaptive,
			d.ob_type,
			d.bytes_ob_size,
			d.bytes_ob_sval,
			d.str_state,
			d.str_length,
			d.str_asciiobject_size};
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		if (!off_ok(v[i]))
			return;
	/* A code object's head is read whole into CODE_HEAD_MAX bytes. */
	if (d.co_filename >= CODE_HEAD_MAX - 8 || d.co_name >= CODE_HEAD_MAX - 8 ||
	    d.co_qualname >= CODE_HEAD_MAX - 8 || d.co_linetable >= CODE_HEAD_MAX - 8 ||
	    d.co_firstlineno >= CODE_HEAD_MAX - 8 || d.ob_type >= CODE_HEAD_MAX - 8)
		return;
	l->rt_interp_head = (int)d.rt_interpreters_head;
	l->is_next = (int)d.is_next;
	l->is_tstate_head = (int)d.is_threads_head;
	l->is_gc_collecting = (int)(d.is_gc + d.gc_collecting);
	l->is_gil_locked = (int)d.is_gil_locked;
	l->is_gil_holder = (int)d.is_gil_holder;
	l->ts_next = (int)d.ts_next;
	l->ts_interp = (int)d.ts_interp;
	l->ts_frame = (int)d.ts_current_frame;
	l->ts_thread_id = (int)d.ts_thread_id;
	l->ts_native_thread_id = (int)d.ts_native_thread_id;
	l->fr_previous = (int)d.fr_previous;
	l->fr_code = (int)d.fr_executable;
	l->fr_instr = (int)d.fr_instr_ptr;
	l->fr_owner = (int)d.fr_owner;
	l->co_filename = (int)d.co_filename;
	l->co_name = (int)d.co_name;
	l->co_qualname = (int)d.co_qualname;
	l->co_linetable = (int)d.co_linetable;
	l->co_firstlineno = (int)d.co_firstlineno;
	l->co_code_adaptive = (int)d.co_code_adaptive;
	l->ob_type = (int)d.ob_type;
	l->b_size = (int)d.bytes_ob_size;
	l->b_sval = (int)d.bytes_ob_sval;
	l->u_state = (int)d.str_state;
	l->u_length = (int)d.str_length;
	l->u_ascii_size = (int)d.str_asciiobject_size;
	py->w.debug_offsets = true;
}

/* The read sizes of the structures, from the layout. */
static void layout_sizes(struct python *py)
{
	const struct pylayout *l = &py->l;
	int ts[] = {l->ts_next,	  l->ts_interp,		  l->ts_frame,
		    l->ts_cframe, l->ts_native_thread_id, l->ts_thread_id};
	int fr[] = {l->fr_previous, l->fr_code, l->fr_instr};
	int fr1[] = {l->fr_is_entry, l->fr_owner};
	int co[] = {l->ob_type,	    l->co_name,	     l->co_qualname,
		    l->co_filename, l->co_linetable, l->co_firstlineno};
	size_t a, b;

	py->ts_len = span(ts, sizeof(ts) / sizeof(ts[0]), 8);
	a = span(fr, sizeof(fr) / sizeof(fr[0]), 8);
	b = span(fr1, sizeof(fr1) / sizeof(fr1[0]), 1);
	py->fr_len = a > b ? a : b;
	py->co_len = span(co, sizeof(co) / sizeof(co[0]), 8);
}

int python_open_mem(const struct pylayout *l, const struct python_where *w,
		    const struct python_mem *m, pid_t pid, struct python **out)
{
	struct python *py = calloc(1, sizeof(*py));

	*out = NULL;
	if (!py)
		return -ENOMEM;
	py->l = *l;
	py->w = *w;
	snprintf(py->module, sizeof(py->module), "%s", w->module ? w->module : "");
	py->w.module = py->module;
	py->mem = *m;
	py->pid = pid;
	if (py->mem.read == vm_read) {
		py->mem.ctx = &py->pid; /* the live reader's: this process */
		py->mem.readv = vm_readv;
	}
	py->tid_off = -1;
	if (py->l.minor >= 13)
		apply_debug_offsets(py);
	layout_sizes(py);
	*out = py;
	return 0;
}

/* The runtime address of symbol name in mod (mapped with bias), 0 if none. */
static uint64_t sym_addr(struct module *mod, uint64_t bias, const char *name, uint64_t *size)
{
	uint64_t v, sz;

	if (elfsec_symbol(mod->elf, name, &v, &sz))
		return 0;
	if (size)
		*size = sz;
	return v + bias;
}

/* Py_Version (3.11+): the running interpreter's PY_VERSION_HEX. */
static void check_version(struct python *py, uint64_t addr, int *minor)
{
	uint32_t hex;

	if (addr && !py_read(py, addr, &hex, sizeof(hex)) && (hex >> 24) == 3)
		*minor = (int)(hex >> 16 & 0xff);
}

int python_open(struct space *sp, struct python **out)
{
	*out = NULL;
	for (size_t i = 0; i < sp->nmaps; i++) {
		const struct mapping *mp = &sp->maps[i];
		struct module *mod = mp->mod;
		struct python_where w = {0};
		struct python probe = {.pid = sp->pid, .mem = {vm_read, NULL}};
		const struct pylayout *l;
		uint64_t size = 0;
		int minor;

		if (!mod || !mod->elf || (minor = name_minor(mod->name)) < 0)
			continue;
		space_module_fill(mod);
		if (!(w.runtime = sym_addr(mod, mp->bias, "_PyRuntime", NULL)))
			continue;
		probe.mem.ctx = &probe.pid;
		if (minor >= 11)
			check_version(&probe, sym_addr(mod, mp->bias, "Py_Version", NULL), &minor);
		if (!(l = pylayout_find(3, minor)))
			return -ENOENT;
		w.major = 3;
		w.minor = minor;
		w.eval_start = sym_addr(mod, mp->bias, "_PyEval_EvalFrameDefault", &size);
		w.eval_end = w.eval_start ? w.eval_start + size : 0;
		w.cold_start = sym_addr(mod, mp->bias, "_PyEval_EvalFrameDefault.cold", &size);
		w.cold_end = w.cold_start ? w.cold_start + size : 0;
		w.code_type = sym_addr(mod, mp->bias, "PyCode_Type", NULL);
		w.str_type = sym_addr(mod, mp->bias, "PyUnicode_Type", NULL);
		w.bytes_type = sym_addr(mod, mp->bias, "PyBytes_Type", NULL);
		w.tramp_start = sym_addr(mod, mp->bias, "_Py_trampoline_func_start", NULL);
		w.tramp_end = sym_addr(mod, mp->bias, "_Py_trampoline_func_end", NULL);
		w.module = mod->name;
		struct python_mem m = {vm_read, NULL, NULL};
		return python_open_mem(l, &w, &m, sp->pid, out);
	}
	return -ENOENT;
}

void python_free(struct python *py)
{
	if (!py)
		return;
	cache_clear(py);
	free(py->cache);
	free(py->heads);
	free(py->arena);
	free(py);
}

const struct python_where *python_where(const struct python *py)
{
	return &py->w;
}

bool python_in_eval(const struct python *py, uint64_t pc)
{
	/* <= end: a caller's return address may follow a last call. */
	return (py->w.eval_start && pc >= py->w.eval_start && pc <= py->w.eval_end) ||
	       (py->w.cold_start && pc >= py->w.cold_start && pc <= py->w.cold_end);
}

/* ---- -X perf trampolines ---- */

/* The template read once and parsed: [endbr64] then `sub $N,%rsp` (3.12,
 * 3.13) or `push %rbp; mov %rsp,%rbp`, then `call *%rcx`. Anything else
 * is not a shape this knows: no trampoline is unwound through. */
static bool tramp_template(struct python *py)
{
	uint8_t *c = py->tramp.code;
	uint64_t len = py->w.tramp_end - py->w.tramp_start;
	int i = 0;

	if (py->tramp.state)
		return py->tramp.state > 0;
	py->tramp.state = -1;
	if (!py->w.tramp_start || py->w.tramp_end <= py->w.tramp_start || len < 6 ||
	    len > TRAMP_MAX || py_read(py, py->w.tramp_start, c, len))
		return false;
	if (len >= 10 && !memcmp(c, "\xf3\x0f\x1e\xfa", 4))
		i = 4;
	if ((uint64_t)i + 6 > len)
		return false;
	if (!memcmp(c + i, "\x48\x83\xec", 3) && c[i + 3] < 0x80 && c[i + 3] % 8 == 0) {
		py->tramp.cfa_off = 8 + c[i + 3];
		py->tramp.bp_off = 0;
	} else if (!memcmp(c + i, "\x55\x48\x89\xe5", 4)) {
		py->tramp.cfa_off = 16;
		py->tramp.bp_off = -16;
	} else {
		return false;
	}
	if (c[i + 4] != 0xff || c[i + 5] != 0xd1)
		return false;
	py->tramp.len = (int)len;
	py->tramp.call_end = i + 6;
	py->tramp.state = 1;
	return true;
}

bool python_trampoline(struct python *py, uint64_t pc, int32_t *cfa_off, int32_t *bp_off)
{
	uint8_t buf[TRAMP_MAX];
	unsigned slot = (unsigned)((pc * 0x9e3779b97f4a7c15ULL) >> 58) & (TRAMP_SLOTS - 1);
	uint64_t start;
	bool yes;

	if (!py || !pc || !tramp_template(py))
		return false;
	start = pc + 1 - (uint64_t)py->tramp.call_end;
	if (py->tramp.seen[slot].pc == pc) {
		yes = py->tramp.seen[slot].yes;
	} else {
		yes = start < pc && !py_read(py, start, buf, (size_t)py->tramp.len) &&
		      !memcmp(buf, py->tramp.code, (size_t)py->tramp.len);
		py->tramp.seen[slot].pc = pc;
		py->tramp.seen[slot].yes = yes;
	}
	if (yes && cfa_off)
		*cfa_off = py->tramp.cfa_off;
	if (yes && bp_off)
		*bp_off = py->tramp.bp_off;
	return yes;
}

const struct python_stats *python_get_stats(const struct python *py)
{
	return &py->st;
}

/* ---- threads ---- */

/* glibc's tid field in struct pthread: where the main thread's holds the
 * pid (3.8–3.10, whose thread states know only pthread_self()). */
static void find_tid_off(struct python *py)
{
	uint8_t buf[PTHREAD_SCAN];
	uint64_t pt;

	py->tid_off = -2;
	if (py->l.rt_main_thread < 0 ||
	    read_u64(py, py->w.runtime + (uint64_t)py->l.rt_main_thread, &pt) ||
	    py_read(py, pt, buf, sizeof(buf)) || get_u64(buf, 16) != pt)
		return; /* tcbhead_t.self: it is a struct pthread */
	if (get_i32(buf, PTHREAD_TID_GUESS) == py->pid) {
		py->tid_off = PTHREAD_TID_GUESS;
		return;
	}
	for (int off = 24; off + 4 <= (int)sizeof(buf); off += 4)
		if (get_i32(buf, off) == py->pid) {
			py->tid_off = off;
			return;
		}
}

/* The OS thread id of a thread state (its head read into ts). */
static pid_t ts_tid(struct python *py, const uint8_t *ts)
{
	int32_t tid;

	if (py->l.ts_native_thread_id >= 0)
		return (pid_t)get_u64(ts, py->l.ts_native_thread_id);
	if (py->tid_off == -1)
		find_tid_off(py);
	if (py->tid_off < 0 ||
	    py_read(py, get_u64(ts, py->l.ts_thread_id) + (uint64_t)py->tid_off, &tid, sizeof(tid)))
		return 0;
	return tid;
}

/* The first interpreter (the main one unless subinterpreters were made
 * since). */
static uint64_t interp_head(struct python *py)
{
	uint64_t a = 0;

	read_u64(py, py->w.runtime + (uint64_t)py->l.rt_interp_head, &a);
	return a;
}

typedef bool (*ts_visit)(struct python *py, uint64_t ts, const uint8_t *head, pid_t tid, void *ctx);

/* Every thread state of every interpreter until visit says stop: 0, or
 * -EFAULT when a chain broke on the way. */
static int walk_threads(struct python *py, ts_visit visit, void *ctx)
{
	uint8_t head[1024];
	uint64_t interp = interp_head(py);
	int err = interp ? 0 : -EFAULT;

	if (py->ts_len > sizeof(head))
		return -EINVAL;
	for (int i = 0; interp && i < INTERPS_MAX; i++) {
		uint64_t ts = 0;

		if (read_u64(py, interp + (uint64_t)py->l.is_tstate_head, &ts))
			return -EFAULT;
		for (int j = 0; ts && j < CHAIN_MAX; j++) {
			if (py_read(py, ts, head, py->ts_len) ||
			    get_u64(head, py->l.ts_interp) != interp)
				return -EFAULT;
			if (visit(py, ts, head, ts_tid(py, head), ctx))
				return 0;
			ts = get_u64(head, py->l.ts_next);
		}
		if (read_u64(py, interp + (uint64_t)py->l.is_next, &interp))
			return -EFAULT;
	}
	return err;
}

/* The GIL: locked and its last holder (a thread state). */
static void gil_holder(struct python *py, uint64_t *holder)
{
	const struct pylayout *l = &py->l;
	uint64_t base = l->rt_gil_locked >= 0 ? py->w.runtime : interp_head(py);
	int lo = l->rt_gil_locked >= 0 ? l->rt_gil_locked : l->is_gil_locked;
	int ho = l->rt_gil_locked >= 0 ? l->rt_gil_holder : l->is_gil_holder;
	int32_t locked = 0;

	*holder = 0;
	if (!base || lo < 0 || ho < 0 ||
	    py_read(py, base + (uint64_t)lo, &locked, sizeof(locked)) || !locked ||
	    read_u64(py, base + (uint64_t)ho, holder))
		*holder = 0;
}

struct collect {
	struct python_thread *out;
	int max, n;
	uint64_t holder;
};

static bool collect_one(struct python *py, uint64_t ts, const uint8_t *head, pid_t tid, void *ctx)
{
	struct collect *c = ctx;

	if (c->n < c->max)
		c->out[c->n++] =
		    (struct python_thread){.tid = tid, .tstate = ts, .gil = ts == c->holder};
	return c->n >= c->max;
}

int python_threads(struct python *py, struct python_thread *out, int max, int *n)
{
	struct collect c = {.out = out, .max = max};
	int err;

	gil_holder(py, &c.holder);
	err = walk_threads(py, collect_one, &c);
	*n = c.n;
	return c.n ? 0 : err;
}

int python_state(struct python *py, struct python_state *st)
{
	struct python_thread t[256];
	const struct pylayout *l = &py->l;
	uint64_t base = l->rt_gc_collecting >= 0 ? py->w.runtime : interp_head(py);
	int off = l->rt_gc_collecting >= 0 ? l->rt_gc_collecting : l->is_gc_collecting;
	int32_t gc;
	int n = 0;

	*st = (struct python_state){.gc = -1};
	if (base && off >= 0 && !py_read(py, base + (uint64_t)off, &gc, sizeof(gc)))
		st->gc = gc != 0;
	python_threads(py, t, 256, &n);
	st->nthreads = n;
	for (int i = 0; i < n; i++)
		if (t[i].gil)
			st->gil_tid = t[i].tid;
	return 0;
}

/* ---- stacks ---- */

struct find {
	pid_t tid;
	uint64_t ts;
};

static bool find_one(struct python *py, uint64_t ts, const uint8_t *head, pid_t tid, void *ctx)
{
	struct find *f = ctx;

	if (tid > 0)
		py->tmap[(unsigned)tid % TMAP_SLOTS].tid = tid,
					 py->tmap[(unsigned)tid % TMAP_SLOTS].ts = ts;
	if (tid != f->tid)
		return false;
	f->ts = ts;
	return true;
}

/* The thread state of tid read into head: remembered, checked, else
 * looked for. 0 or -ENOENT. */
static int thread_state(struct python *py, pid_t tid, uint8_t *head)
{
	unsigned slot = (unsigned)tid % TMAP_SLOTS;
	struct find f = {.tid = tid};

	if (py->tmap[slot].tid == tid && !py_read(py, py->tmap[slot].ts, head, py->ts_len) &&
	    ts_tid(py, head) == tid)
		return 0;
	py->tmap[slot].tid = 0;
	if (walk_threads(py, find_one, &f) || !f.ts || py_read(py, f.ts, head, py->ts_len))
		return -ENOENT;
	return 0;
}

/* s copied into this call's arena; its offset, or -1. */
static long arena_put(struct python *py, const char *s)
{
	size_t n = strlen(s) + 1;
	long at = (long)py->arena_len;

	if (py->arena_len + n > py->arena_cap) {
		size_t cap = (py->arena_cap ? py->arena_cap * 2 : 4096) + n;
		char *a = realloc(py->arena, cap);
		if (!a)
			return -1;
		py->arena = a;
		py->arena_cap = cap;
	}
	memcpy(py->arena + py->arena_len, s, n);
	py->arena_len += n;
	return at;
}

/* The first frame of a thread state (head): 0 when it runs none. */
static uint64_t first_frame(struct python *py, const uint8_t *head)
{
	uint64_t cf, f = 0;

	if (py->l.ts_cframe < 0)
		return get_u64(head, py->l.ts_frame);
	cf = get_u64(head, py->l.ts_cframe);
	if (!cf || read_u64(py, cf + (uint64_t)py->l.cf_current_frame, &f))
		return 0;
	return f;
}

/* One frame as read in the first pass of python_stack. */
struct raw_frame {
	uint64_t code, instr;
	bool entry;
};

/* The frames of thread state head (innermost first) into raw: the
 * chain's pointers only; 3.12+ shims mark the frame before them as an
 * entry. Returns how many; *flags as python_stack's. */
static int walk_frames(struct python *py, const uint8_t *head, struct raw_frame *raw, int max,
		       unsigned *flags)
{
	const struct pylayout *l = &py->l;
	uint8_t fr[1024];
	uint64_t f = first_frame(py, head);
	int k = 0;

	for (int walked = 0; f; walked++) {
		if (walked >= CHAIN_MAX || k >= max) {
			*flags |= PYTHON_TRUNCATED;
			return k;
		}
		if (py_read(py, f, fr, py->fr_len)) {
			*flags |= PYTHON_TORN;
			return k;
		}
		f = get_u64(fr, l->fr_previous);
		/* 3.12+: the shim an evaluation call starts with ends the
		 * frames it runs. */
		if (l->owned_by_cstack >= 0 && fr[l->fr_owner] == l->owned_by_cstack) {
			if (k > 0)
				raw[k - 1].entry = true;
			continue;
		}
		raw[k++] = (struct raw_frame){
		    .code = get_u64(fr, l->fr_code),
		    .instr = l->minor <= 10 ? (uint64_t)(int64_t)get_i32(fr, l->fr_instr)
					    : get_u64(fr, l->fr_instr),
		    .entry = l->minor <= 10 || (l->fr_is_entry >= 0 && fr[l->fr_is_entry]),
		};
	}
	/* The outermost frame read starts its evaluation call (3.12+: its
	 * shim was not read, or the chain was cut). */
	if (k > 0)
		raw[k - 1].entry = true;
	return k;
}

int python_stack(struct python *py, pid_t tid, struct python_frame *out, int max, int *n,
		 unsigned *flags)
{
	const struct pylayout *l = &py->l;
	uint8_t head[1024];
	struct raw_frame raw[PYTHON_SEGS_MAX];
	struct python_seg seg[PYTHON_SEGS_MAX];
	long offs[2 * PYTHON_SEGS_MAX];
	int k, whole;

	*n = 0;
	*flags = 0;
	if (max > PYTHON_SEGS_MAX)
		max = PYTHON_SEGS_MAX;
	if (py->fr_len > 1024 || py->co_len > CODE_HEAD_MAX || thread_state(py, tid, head))
		return -ENOENT;
	if (!py->heads && !(py->heads = malloc((size_t)PYTHON_SEGS_MAX * CODE_HEAD_MAX)))
		return -ENOMEM;
	py->arena_len = 0;
	k = walk_frames(py, head, raw, max, flags);
	/* Every code object's head in one read, then each checked against
	 * the cache (the hit path reads nothing more). */
	for (int i = 0; i < k; i++)
		seg[i] = (struct python_seg){raw[i].code, py->heads + (size_t)i * CODE_HEAD_MAX,
					     py->co_len};
	whole = py_readv(py, seg, k);
	for (int i = 0; i < k; i++) {
		struct code_entry *e =
		    i < whole ? code_from_head(py, raw[i].code, seg[i].buf) : NULL;
		long lasti;

		if (!e || (offs[2 * i] = arena_put(py, e->func)) < 0 ||
		    (offs[2 * i + 1] = arena_put(py, e->filename)) < 0) {
			*flags |= PYTHON_TORN;
			k = i;
			break;
		}
		if (l->minor <= 10)
			lasti = (long)(int64_t)raw[i].instr;
		else
			lasti = (long)(int64_t)(raw[i].instr -
						(raw[i].code + (uint64_t)l->co_code_adaptive)) /
				2;
		out[i] =
		    (struct python_frame){.line = code_line(py, e, lasti), .entry = raw[i].entry};
	}
	for (int i = 0; i < k; i++) {
		out[i].func = py->arena + offs[2 * i];
		out[i].file = py->arena + offs[2 * i + 1];
	}
	*n = k;
	return 0;
}
