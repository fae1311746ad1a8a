/*
 * jitdump — JIT symbols from perf's jitdump files (see jitdump.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "stacktop/lib/array.h"
#include "stacktop/lib/fdread.h"
#include "stacktop/lib/growfile.h"
#include "stacktop/lib/mono.h"
#include "stacktop/lib/text.h"
#include "stacktop/proc/tfile.h"
#include "stacktop/symbols/jitdump.h"

#define JD_CHUNK_MIN 4096u
#define JD_HDR 40u /* file header as version 1 writes it */
#define JD_HDR_MAX 4096u
#define JD_REC 16u   /* record header: id, total_size, timestamp */
#define JD_LOAD 40u  /* pid, tid, vma, code_addr, code_size, code_index */
#define JD_MOVE 48u  /* pid, tid, vma, old, new, code_size, code_index */
#define JD_DEBUG 16u /* code_addr, nr_entry */
#define JD_ENTRY 16u /* code_addr, line, discrim; then a file name */
#define JD_NOFILE UINT32_MAX

struct jd_ent {
	uint64_t start, end;
	uint32_t name;
	uint32_t seq;		/* record order: later code wins on overlap */
	uint32_t line0, nlines; /* its lines in the table's lines */
};

/* A line entry: code from off bytes into its code on is file:line. */
struct jd_line {
	uint64_t off;
	uint32_t file, line;
};

struct jitdump_table {
	bool header, bad, closed;
	uint32_t seq;
	/* sorted by (start, seq); a feed's new entries are merged in */
	struct jd_ent *e;
	size_t n, cap;
	struct jd_line *lines;
	size_t nlines, lcap;
	char *names;
	size_t nlen, ncap;
	/* the debug info read last, for the code loaded next at dbg_addr */
	uint64_t dbg_addr;
	uint32_t dbg_line0, dbg_n;
	bool dbg;
	char lastfile[JITDUMP_NAME_MAX];
	uint32_t lastfile_off;
	bool has_lastfile;
};

int jitdump_table_new(struct jitdump_table **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void jitdump_table_free(struct jitdump_table *t)
{
	if (!t)
		return;
	ARRAY_FREE_ALL(t->e, t->lines, t->names);
	free(t);
}

size_t jitdump_table_count(const struct jitdump_table *t)
{
	return t->n;
}

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

/* A NUL-terminated name of at most max bytes at p: kept whole up to
 * JITDUMP_NAME_MAX, cut with "..." beyond (not inside a UTF-8 sequence). */
static int jd_name(struct jitdump_table *t, const uint8_t *p, size_t max, uint32_t *off)
{
	char buf[JITDUMP_NAME_MAX];
	size_t len = strnlen((const char *)p, max < JITDUMP_NAME_MAX ? max : JITDUMP_NAME_MAX);

	if (len >= JITDUMP_NAME_MAX || (len == max && max == JITDUMP_NAME_MAX)) {
		len = JITDUMP_NAME_MAX - 4;
		while (len > 0 && (p[len] & 0xc0) == 0x80)
			len--;
		memcpy(buf, p, len);
		memcpy(buf + len, "...", 4);
	} else {
		memcpy(buf, p, len);
		buf[len] = '\0';
	}
	return array_push_name(&t->names, &t->nlen, &t->ncap, buf, off);
}

static int ent_cmp(const void *a, const void *b)
{
	const struct jd_ent *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The latest entry starting exactly at addr, among the sorted ones and the
 * new ones (unsorted) of this feed. */
static const struct jd_ent *find_start(const struct jitdump_table *t, size_t sorted, uint64_t addr)
{
	const struct jd_ent *best = NULL;
	size_t i = sorted ? ARRAY_STARTS_AT_OR_BELOW(t->e, sorted, addr) : 0;

	if (i > 0 && t->e[i - 1].start == addr)
		best = &t->e[i - 1];
	/* a move names recent code: the last 1024 new entries, so a file of
	 * moves costs no square */
	for (size_t k = t->n; k > sorted && t->n - k < 1024; k--) {
		if (t->e[k - 1].start == addr && (!best || t->e[k - 1].seq > best->seq))
			return &t->e[k - 1];
	}
	return best;
}

static int add_ent(struct jitdump_table *t, uint64_t start, uint64_t size, uint32_t name,
		   uint32_t line0, uint32_t nlines)
{
	if (!size || start + size < start)
		return 0;
	if (array_grow((void **)&t->e, &t->cap, t->n + 1, sizeof(*t->e)))
		return -ENOMEM;
	t->e[t->n++] = (struct jd_ent){start, start + size, name, ++t->seq, line0, nlines};
	return 0;
}

static int rec_load(struct jitdump_table *t, const uint8_t *p, size_t have)
{
	uint64_t addr, size;
	uint32_t name, line0 = 0, nlines = 0;
	int err;

	if (have < JD_LOAD + 1)
		return 0;
	addr = rd64(p + 16);
	size = rd64(p + 24);
	if ((err = jd_name(t, p + JD_LOAD, have - JD_LOAD, &name)))
		return err;
	if (t->dbg && t->dbg_addr == addr) {
		line0 = t->dbg_line0;
		nlines = t->dbg_n;
	}
	t->dbg = false;
	return add_ent(t, addr, size, name, line0, nlines);
}

static int rec_move(struct jitdump_table *t, const uint8_t *p, size_t have, size_t sorted)
{
	const struct jd_ent *old;

	if (have < JD_MOVE)
		return 0;
	old = find_start(t, sorted, rd64(p + 16));
	if (!old)
		return 0;
	/* the code keeps its name and lines (kept as offsets into it) */
	return add_ent(t, rd64(p + 24), rd64(p + 32), old->name, old->line0, old->nlines);
}

static int line_cmp(const void *a, const void *b)
{
	const struct jd_line *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

/* Is s (NUL-terminated) valid UTF-8 without control characters? */
static bool clean_text(const char *s)
{
	uint32_t cp;
	int n;

	while ((n = text_utf8_decode(s, &cp)) > 0) {
		if (text_is_control(cp))
			return false;
		s += n;
	}
	return n == 0;
}

/* A file name as kept: the same as the entry before ("\xff\0", or equal)
 * costs nothing more. */
static int line_file(struct jitdump_table *t, const uint8_t *p, size_t max, uint32_t *off)
{
	size_t len = strnlen((const char *)p, max);
	int err;

	if (len == 1 && p[0] == 0xff && t->has_lastfile) {
		*off = t->lastfile_off;
		return 0;
	}
	if (t->has_lastfile && len < sizeof(t->lastfile) && !memcmp(p, t->lastfile, len) &&
	    !t->lastfile[len]) {
		*off = t->lastfile_off;
		return 0;
	}
	if (!clean_text((const char *)p)) {
		/* node 20 writes some script names with 16 bytes of garbage
		 * first: no file rather than a wrong one (the line stands) */
		*off = JD_NOFILE;
		return 0;
	}
	if ((err = jd_name(t, p, max, off)))
		return err;
	snprintf(t->lastfile, sizeof(t->lastfile), "%s", t->names + *off);
	t->lastfile_off = *off;
	t->has_lastfile = true;
	return 0;
}

/* Debug info: its entries join the lines, for the code loaded next at its
 * address. p holds the whole record (rsize bytes). */
static int rec_debug(struct jitdump_table *t, const uint8_t *p, size_t rsize)
{
	uint64_t addr, nr;
	size_t off = JD_REC + JD_DEBUG;
	uint32_t line0;
	int err;

	t->dbg = false;
	if (rsize < off)
		return 0;
	addr = rd64(p + 16);
	nr = rd64(p + 24);
	if (t->nlines >= UINT32_MAX / 2)
		return 0;
	line0 = (uint32_t)t->nlines;
	/* each entry is at least 17 bytes: nr is bounded by the record */
	for (uint64_t i = 0; i < nr && off + JD_ENTRY < rsize; i++) {
		uint64_t a = rd64(p + off);
		uint32_t line = rd32(p + off + 8), file;
		size_t flen = strnlen((const char *)p + off + JD_ENTRY, rsize - off - JD_ENTRY);

		if (off + JD_ENTRY + flen >= rsize)
			break; /* no NUL: not an entry */
		if ((err = line_file(t, p + off + JD_ENTRY, flen + 1, &file)))
			return err;
		off += JD_ENTRY + flen + 1;
		if (a < addr || line > INT32_MAX)
			continue;
		if (array_grow((void **)&t->lines, &t->lcap, t->nlines + 1, sizeof(*t->lines)))
			return -ENOMEM;
		t->lines[t->nlines++] = (struct jd_line){a - addr, file, line};
	}
	t->dbg = t->nlines > line0;
	if (t->dbg)
		qsort(t->lines + line0, t->nlines - line0, sizeof(*t->lines), line_cmp);
	t->dbg_addr = addr;
	t->dbg_line0 = line0;
	t->dbg_n = (uint32_t)(t->nlines - line0);
	return 0;
}

static int header(struct jitdump_table *t, const uint8_t *buf, size_t len, uint64_t avail,
		  size_t *used)
{
	uint32_t hsize;

	if (len < JD_HDR)
		return 0;
	hsize = rd32(buf + 8);
	if (rd32(buf) != JITDUMP_MAGIC || hsize < JD_HDR || hsize > JD_HDR_MAX) {
		t->bad = true;
		return -EINVAL;
	}
	if (hsize > avail)
		return 0; /* being written */
	t->header = true;
	*used = hsize;
	return 0;
}

/* Merge the entries after sorted into the sorted run, in place from the
 * back (no second copy of the table). */
static void merge_new(struct jitdump_table *t, size_t sorted)
{
	size_t nb = t->n - sorted, i = sorted, j, k = t->n;
	struct jd_ent *b;

	if (!nb)
		return;
	qsort(t->e + sorted, nb, sizeof(*t->e), ent_cmp);
	if (!sorted || ent_cmp(&t->e[sorted - 1], &t->e[sorted]) <= 0)
		return;
	b = malloc(nb * sizeof(*b));
	if (!b) {
		qsort(t->e, t->n, sizeof(*t->e), ent_cmp);
		return;
	}
	memcpy(b, t->e + sorted, nb * sizeof(*b));
	j = nb;
	while (j > 0) {
		if (i > 0 && ent_cmp(&t->e[i - 1], &b[j - 1]) > 0)
			t->e[--k] = t->e[--i];
		else
			t->e[--k] = b[--j];
	}
	free(b);
}

/* One record at buf[off] (in the file: avail - off bytes from there):
 * parsed, skipped, or waited for. *next is where the next record starts,
 * or off to stop here. */
static int record(struct jitdump_table *t, const uint8_t *buf, size_t len, uint64_t avail,
		  size_t off, size_t sorted, size_t *next)
{
	uint32_t id, rsize;
	size_t have = len - off, head;

	*next = off;
	if (have < JD_REC)
		return 0;
	id = rd32(buf + off);
	rsize = rd32(buf + off + 4);
	if (rsize < JD_REC) {
		t->bad = true; /* cannot be framed: nothing after it is read */
		return 0;
	}
	if (off + (uint64_t)rsize > avail)
		return 0; /* being written */
	if (id == JITDUMP_CODE_CLOSE) {
		t->closed = true;
		*next = off + rsize;
		return 0;
	}
	head = id == JITDUMP_CODE_LOAD	 ? JD_REC + JD_LOAD + JITDUMP_NAME_MAX
	       : id == JITDUMP_CODE_MOVE ? JD_REC + JD_MOVE
					 : rsize;
	if (head > rsize)
		head = rsize;
	if (head > have) {
		/* its head is not in buf: read from here, unless buf starts
		 * here already (a debug record larger than a read: skipped) */
		if (off > 0 || id == JITDUMP_CODE_LOAD || id == JITDUMP_CODE_MOVE)
			return 0;
		*next = off + rsize;
		return 0;
	}
	*next = off + rsize;
	if (id == JITDUMP_CODE_LOAD)
		return rec_load(t, buf + off + JD_REC, head - JD_REC);
	if (id == JITDUMP_CODE_MOVE)
		return rec_move(t, buf + off + JD_REC, head - JD_REC, sorted);
	if (id == JITDUMP_CODE_DEBUG_INFO)
		return rec_debug(t, buf + off, rsize);
	return 0; /* unwinding info and ids to come */
}

int jitdump_table_feed(struct jitdump_table *t, const uint8_t *buf, size_t len, uint64_t avail,
		       size_t *used)
{
	size_t off = 0, sorted = t->n;
	int err = 0;

	*used = 0;
	if (avail < len)
		avail = len;
	if (t->bad)
		return -EINVAL;
	if (!t->header && (err = header(t, buf, len, avail, &off)))
		return err;
	if (!t->header)
		return 0;
	while (!t->bad && !t->closed && off < len) {
		size_t next;

		if ((err = record(t, buf, len, avail, off, sorted, &next)))
			break;
		if (next == off)
			break;
		off = next;
	}
	merge_new(t, sorted);
	*used = off;
	return err;
}

/* The file:line of pc in e, from its line entries. */
static void find_line(const struct jitdump_table *t, const struct jd_ent *e, uint64_t pc,
		      struct jitdump_sym *out)
{
	const struct jd_line *l = t->lines + e->line0;
	size_t lo = 0, hi = e->nlines;
	uint64_t off = pc - e->start;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (l[mid].off <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* before the first entry: the function's first line */
	l += lo ? lo - 1 : 0;
	out->file = l->file == JD_NOFILE ? NULL : t->names + l->file;
	out->line = (int)l->line;
}

int jitdump_table_find(const struct jitdump_table *t, uint64_t pc, struct jitdump_sym *out)
{
	size_t lo = t->n ? ARRAY_STARTS_AT_OR_BELOW(t->e, t->n, pc) : 0;
	const struct jd_ent *best = NULL;

	/* entries may overlap (addresses reused): the latest of the last 16
	 * starting at or below pc */
	for (size_t i = lo; i > 0 && lo - i < 16; i--) {
		const struct jd_ent *e = &t->e[i - 1];

		if (pc < e->end && (!best || e->seq > best->seq))
			best = e;
	}
	if (!best)
		return -ENOENT;
	memset(out, 0, sizeof(*out));
	out->name = t->names + best->name;
	out->start = best->start;
	out->end = best->end;
	if (best->nlines)
		find_line(t, best, pc, out);
	return 0;
}

/* ---- files ------------------------------------------------------------- */

struct jdfile {
	struct jdfile *next;
	char *root, *path;
	pid_t pid; /* > 0: uid is re-read from /proc/PID at each check */
	uid_t uid;
	bool missed;
	struct jitdump_table *t;
	struct growfile g;
};

struct jitdump_cache {
	struct jdfile *files;
	struct growfile_pace pace;
};

int jitdump_cache_new(struct jitdump_cache **out)
{
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	(*out)->pace = GROWFILE_PACE_DEFAULT;
	return 0;
}

void jitdump_cache_tune(struct jitdump_cache *c, uint64_t recheck_ns, size_t chunk)
{
	growfile_pace_tune(&c->pace, recheck_ns,
			   chunk && chunk < JD_CHUNK_MIN ? JD_CHUNK_MIN : chunk);
}

static void file_clear(struct jdfile *f)
{
	jitdump_table_free(f->t);
	f->t = NULL;
	growfile_restart(&f->g);
}

void jitdump_cache_free(struct jitdump_cache *c)
{
	struct jdfile *f, *next;

	if (!c)
		return;
	for (f = c->files; f; f = next) {
		next = f->next;
		file_clear(f);
		ARRAY_FREE_ALL(f->root, f->path, f);
	}
	free(c);
}

bool jitdump_is_path(const char *path)
{
	const char *base = path ? strrchr(path, '/') : NULL;
	size_t n;

	if (!base || strncmp(++base, "jit-", 4))
		return false;
	base += 4;
	n = strspn(base, "0123456789");
	return n > 0 && n < 12 && !strcmp(base + n, ".dump");
}

/* Parse one more chunk from done. 0 (done moved or not), or -errno. */
static int read_more(struct jdfile *f, int fd, off_t size, size_t chunk)
{
	uint64_t avail = (uint64_t)(size - f->g.done);
	size_t want = avail < chunk ? (size_t)avail : chunk, used;
	uint8_t *buf;
	ssize_t r;
	int err;

	if (!want)
		return 0;
	if (!(buf = malloc(want)))
		return -ENOMEM;
	r = fdread_at(fd, buf, want, f->g.done);
	if (r <= 0) {
		free(buf);
		return r < 0 ? (int)r : 0;
	}
	err = jitdump_table_feed(f->t, buf, (size_t)r, avail, &used);
	free(buf);
	if (err)
		return err;
	return used ? growfile_advance(&f->g, fd, used) : 0;
}

static void file_refresh(struct jdfile *f, const struct jitdump_cache *c)
{
	uint64_t now = mono_ns();
	bool soon = f->missed || (f->t && f->g.done < f->g.size);
	struct stat st;
	int fd;

	if (!growfile_due(&f->g, now, &c->pace, soon))
		return;
	f->missed = false;
	if (f->pid > 0) {
		struct tfile_cred cred;

		if (tfile_cred_of(f->pid, &cred)) {
			file_clear(f);
			return;
		}
		f->uid = cred.uid;
	}
	fd = tfile_open_owned(f->root, f->path, f->uid, TFILE_PERFMAP_MAX, &st);
	if (fd < 0) {
		file_clear(f);
		return;
	}
	if (f->t && growfile_same(&f->g, &st) && f->g.done >= st.st_size) {
		close(fd);
		return;
	}
	if (!f->t || !growfile_appended(&f->g, fd, &st))
		file_clear(f);
	if (!f->t && jitdump_table_new(&f->t)) {
		close(fd);
		return;
	}
	growfile_seen(&f->g, &st);
	for (;;) {
		off_t before = f->g.done;

		if (read_more(f, fd, st.st_size, c->pace.chunk) == -ENOMEM) {
			file_clear(f);
			break;
		}
		if (f->g.done >= f->g.size || f->g.done == before ||
		    mono_ns() - now >= c->pace.budget_ns)
			break;
	}
	close(fd);
}

static struct jdfile *file_get(struct jitdump_cache *c, const char *root, const char *path)
{
	struct jdfile *f;

	for (f = c->files; f; f = f->next) {
		if (!strcmp(f->root, root) && !strcmp(f->path, path))
			return f;
	}
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->root = strdup(root);
	f->path = strdup(path);
	if (!f->root || !f->path) {
		ARRAY_FREE_ALL(f->root, f->path, f);
		return NULL;
	}
	f->next = c->files;
	c->files = f;
	return f;
}

/* The file at path under root, checked and read as needed; pid > 0: a
 * live process whose uid is the trusted owner, else uid. */
static int lookup(struct jitdump_cache *c, const char *root, const char *path, pid_t pid, uid_t uid,
		  uint64_t pc, struct jitdump_sym *out)
{
	struct jdfile *f;

	if (!jitdump_is_path(path) || path[0] != '/')
		return -ENOENT;
	f = file_get(c, root ? root : "", path);
	if (!f)
		return -ENOMEM;
	f->pid = pid;
	f->uid = uid;
	file_refresh(f, c);
	if (!f->t || jitdump_table_find(f->t, pc, out)) {
		f->missed = true;
		return -ENOENT;
	}
	return 0;
}

int jitdump_lookup_at(struct jitdump_cache *c, const char *root, const char *path, uid_t uid,
		      uint64_t pc, struct jitdump_sym *out)
{
	return lookup(c, root, path, 0, uid, pc, out);
}

int jitdump_lookup(struct jitdump_cache *c, pid_t pid, const char *path, uint64_t pc,
		   struct jitdump_sym *out)
{
	char root[64];

	snprintf(root, sizeof(root), "/proc/%d/root", (int)pid);
	return lookup(c, root, path, pid, 0, pc, out);
}
