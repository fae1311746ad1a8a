/*
 * Fuzz entry point: export's name escaping (selection_clean in selection.c,
 * reached through export_render) on frame, module, file, thread and
 * command-line names taken from the input, in all three formats.
 *
 * The input: byte 0 options (1 per_thread, 2 hide_kernel, 4 thread names,
 * 8 a zoom path of the first name, 16 a period and a command line; the top
 * three bits pick the formats: 0-2 folded, 3-5 speedscope, 6 both, 7 pprof
 * (its gzip costs ten times the others under ASan)), byte 1
 * which frames are kernel frames, byte 2 which are JIT, byte 3 which are
 * live frames named with frames_preset (else frames_named, as a report
 * does), byte 4 the stack depth (1..8), then NUL-separated fields taken
 * three by three as (function, module, file) of up to 16 frames (an empty
 * field is NULL); the field after them names the threads and the command
 * line. Up to four stacks of those frames go into a fresh window (two
 * threads), which is then rendered.
 *
 * Properties (what export.c's head promises): every format's text is valid
 * UTF-8 with no C0/C1 control, DEL, bidi override or line separator inside
 * a name; folded is one line per distinct stack, "a;b;c COUNT\n" with a
 * decimal count after the last space and exactly as many ';'-separated
 * frames as one of the stacks written has; speedscope is JSON whose
 * strings hold no raw control byte and whose brackets balance; pprof
 * inflates and unpacks, its string table clean, one sample per stack.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "profile.pb-c.h"
#include "stacktop/formats/export.h"
#include "stacktop/symbols/frames.h"
#include "stacktop/model/window.h"

#define MAX_FRAMES 16
#define MAX_STACKS 4

/* The code point at p (n bytes left) into *cp; its length, or abort on
 * invalid UTF-8 (overlong forms and surrogates included). */
static int utf8(const unsigned char *p, size_t n, uint32_t *cp)
{
	static const uint32_t min[5] = {0, 0, 0x80, 0x800, 0x10000};
	int len;

	if (*p < 0x80)
		len = 1, *cp = *p;
	else if ((*p & 0xe0) == 0xc0)
		len = 2, *cp = *p & 0x1f;
	else if ((*p & 0xf0) == 0xe0)
		len = 3, *cp = *p & 0x0f;
	else if ((*p & 0xf8) == 0xf0)
		len = 4, *cp = *p & 0x07;
	else
		abort();
	if (n < (size_t)len)
		abort();
	for (int i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			abort();
		*cp = *cp << 6 | (p[i] & 0x3f);
	}
	if (*cp < min[len] || *cp > 0x10ffff || (*cp >= 0xd800 && *cp <= 0xdfff))
		abort();
	return len;
}

static bool forbidden(uint32_t cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || (cp >= 0x202a && cp <= 0x202e) ||
	       (cp >= 0x2066 && cp <= 0x2069) || cp == 0x2028 || cp == 0x2029;
}

/* Valid UTF-8 without a forbidden code point; '\n' allowed when nl. */
static void check_clean(const char *s, size_t n, bool nl)
{
	const unsigned char *p = (const unsigned char *)s;
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		int len = utf8(p + i, n - i, &cp);
		if (forbidden(cp) && !(nl && cp == '\n'))
			abort();
		i += (size_t)len;
	}
}

static void check_folded(const char *t, size_t n, const int *nfields, int nstacks)
{
	size_t lines = 0;

	check_clean(t, n, true);
	if (n && t[n - 1] != '\n')
		abort();
	for (const char *p = t, *end = t + n; p < end; lines++) {
		const char *eol = memchr(p, '\n', (size_t)(end - p)), *sp = eol;
		int fields = 1;
		bool ok = false;
		while (sp > p && sp[-1] != ' ')
			sp--;
		if (sp == p || sp == eol)
			abort(); /* no count after a last space */
		for (const char *c = sp; c < eol; c++)
			if (*c < '0' || *c > '9')
				abort();
		if (*sp == '0')
			abort(); /* a zero count, or leading zeros */
		for (const char *c = p; c < sp - 1; c++)
			fields += *c == ';';
		for (int i = 0; i < nstacks; i++)
			ok |= fields == nfields[i];
		if (!ok)
			abort(); /* a ';' or a lost separator changed the depth */
		p = eol + 1;
	}
	if (lines > (size_t)nstacks)
		abort();
}

/* JSON: strings hold no raw control byte and valid escapes; brackets
 * balance outside strings; the decoded names are clean. */
static void check_json(const char *t, size_t n)
{
	int depth = 0;
	bool in = false;

	check_clean(t, n, true);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)t[i];
		if (in) {
			if (c < 0x20)
				abort();
			if (c == '\\') {
				if (++i >= n || !strchr("\"\\/bfnrtu", t[i]))
					abort();
				if (t[i] == 'u')
					abort(); /* only controls are \u-escaped: none may be left
						  */
			} else if (c == '"') {
				in = false;
			}
		} else if (c == '"') {
			in = true;
		} else if (c == '{' || c == '[') {
			depth++;
		} else if (c == '}' || c == ']') {
			if (--depth < 0)
				abort();
		} else if (c == '\n' && i != n - 1) {
			abort();
		}
	}
	if (in || depth)
		abort();
}

static void check_pprof(const char *gz, size_t n, int nstacks)
{
	static uint8_t raw[1 << 20];
	z_stream z = {0};
	Perftools__Profiles__Profile *p;

	if (inflateInit2(&z, 15 + 16) != Z_OK)
		return;
	z.next_in = (Bytef *)gz;
	z.avail_in = (uInt)n;
	z.next_out = raw;
	z.avail_out = sizeof(raw);
	if (inflate(&z, Z_FINISH) != Z_STREAM_END)
		abort();
	inflateEnd(&z);
	if (!(p = perftools__profiles__profile__unpack(NULL, z.total_out, raw)))
		abort();
	if (!p->n_string_table || p->string_table[0][0] || p->n_sample > (size_t)nstacks)
		abort();
	for (size_t i = 0; i < p->n_string_table; i++)
		check_clean(p->string_table[i], strlen(p->string_table[i]), false);
	perftools__profiles__profile__free_unpacked(p, NULL);
}

/* Each input allocates a fresh frames table, window and output: with
 * ASan's default 256 MiB quarantine, recycling freed memory costs more than
 * the export itself. A smaller one still catches a use after free within
 * an input (the make's ASAN_OPTIONS come on top of this). */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "quarantine_size_mb=16";
}

static const char *thread_name(void *ctx, int tid)
{
	(void)tid;
	return ctx;
}

/* The next NUL-separated field of the input, NULL when empty. */
static const char *field(char **p, const char *end)
{
	char *f = *p;
	if (f >= end)
		return NULL;
	*p += strlen(f) + 1;
	return *f ? f : NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct frames *fr;
	struct window *w;
	uint32_t ids[MAX_FRAMES], stack[8];
	int nfields[MAX_STACKS], nstacks = 0, nframes = 0, err;
	struct sym_info si[MAX_FRAMES];

	if (size < 5)
		return 0;
	uint8_t opt = data[0], kmask = data[1], jmask = data[2], live = data[3];
	int depth = 1 + data[4] % 8;
	char *in = malloc(size - 5 + 1), *p = in, *end;
	if (!in)
		return 0;
	memcpy(in, data + 5, size - 5);
	in[size - 5] = '\0';
	end = in + size - 5;
	if (frames_new(NULL, &fr))
		abort();
	if (window_new(2, 1000000000ull, fr, &w))
		abort();

	while (nframes < MAX_FRAMES && p < end) {
		int i = nframes;
		int64_t id;
		si[i] = (struct sym_info){
		    .kernel = kmask >> (i % 8) & 1, .jit = jmask >> (i % 8) & 1, .line = i * 7};
		si[i].func = field(&p, end);
		si[i].module = field(&p, end);
		si[i].file = field(&p, end);
		if (live >> (i % 8) & 1)
			id = frames_preset(fr, 42, 0x400000 + (uint64_t)i * 16, si[i].kernel,
					   &si[i], i & 1);
		else
			id = frames_named(fr, &si[i]);
		if (id < 0)
			abort();
		ids[nframes++] = (uint32_t)id;
	}
	const char *tname = field(&p, end);
	if (!nframes)
		goto out;

	int want = (nframes + depth - 1) / depth;
	for (int j = 0; j < MAX_STACKS && j < want; j++) {
		int kept = 0;
		for (int t = 0; t < depth; t++) {
			int f = (j * depth + t) % nframes;
			stack[t] = ids[f];
			kept += !((opt & 2) && frames_get(fr, ids[f])->kernel);
		}
		if (window_add(w, 1000000000ull, 100 + j % 2, stack, (size_t)depth,
			       1 + (uint32_t)j))
			abort();
		if (kept)
			nfields[nstacks++] = kept + (opt & 1);
	}

	static const enum export_format fmts[] = {EXPORT_FOLDED, EXPORT_SPEEDSCOPE, EXPORT_PPROF};
	/* Bit f of the mask: render fmts[f]. */
	static const uint8_t pick[8] = {1, 1, 1, 2, 2, 2, 3, 4};
	const char *zoom[1] = {si[0].func ? si[0].func : ""};
	for (size_t f = 0; f < sizeof(fmts) / sizeof(fmts[0]); f++) {
		if (!(pick[opt >> 5] >> f & 1))
			continue;
		struct export_opts o = {
		    .format = fmts[f],
		    .per_thread = opt & 1,
		    .hide_kernel = opt & 2,
		    .thread_name = opt & 4 ? thread_name : NULL,
		    .ctx = (void *)(tname ? tname : ""),
		    .zoom = opt & 8 ? zoom : NULL,
		    .nzoom = opt & 8 ? 1 : 0,
		    .period_s = opt & 16 ? 0.01 : 0,
		    .cmdline = opt & 16 ? tname : NULL,
		};
		char *buf = NULL, errbuf[256];
		size_t len = 0;
		if ((err = export_render(w, &o, &buf, &len, errbuf, sizeof(errbuf)))) {
			free(buf);
			continue; /* (out of memory, or nothing to write) */
		}
		if (fmts[f] == EXPORT_FOLDED)
			check_folded(buf, len, nfields, nstacks);
		else if (fmts[f] == EXPORT_SPEEDSCOPE)
			check_json(buf, len);
		else
			check_pprof(buf, len, nstacks);
		free(buf);
	}
out:
	window_free(w);
	frames_free(fr);
	free(in);
	return 0;
}
