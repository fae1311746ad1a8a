/*
 * report — a saved profile as a source of samples, for `stacktop report
 * FILE` (see report.h): the file read whole, its format sniffed, the
 * format's reader filling a stackset, which a sampler then replays.
 *
 * Input is outside data (a file from another machine), so every reader is
 * a fuzz entry point (tests/fuzz/fuzz_folded.c, fuzz_pprof.c,
 * fuzz_speedscope.c) and every bad input ends in one sentence, never a
 * crash. Sniffing, in order:
 *  - gzip (magic 1f 8b) is inflated (gzip.c), at most REPORT_INFLATE_RATIO
 *    times the compressed size plus 1 MiB and never more than
 *    REPORT_MAX_INFLATE (a small file must not inflate into all of
 *    memory); what comes out is pprof;
 *  - '{' first: speedscope JSON;
 *  - control bytes in the first 512 (protobuf tags and lengths): pprof;
 *  - any other text: folded stacks.
 * The frame ids a file may make are capped by the size of its profile
 * data (the inflated size for gzip): stackset_ids_limit.
 */
#include "stacktop/formats/report.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stacktop/formats/folded.h"
#include "stacktop/formats/gzip.h"
#include "stacktop/formats/pprof.h"
#include "stacktop/formats/speedscope.h"
#include "stacktop/formats/stackset.h"
#include "stacktop/lib/fdread.h"
#include "stacktop/lib/text.h"
#include "stacktop/model/window.h"
#include "stacktop/sample/sampler.h"

#define REPORT_MAX_FILE (1ull << 30)
#define REPORT_MAX_INFLATE (512ull << 20)
#define REPORT_INFLATE_RATIO 64
#define REPORT_INFLATE_BASE (1ull << 20)

/* The formats a file is sniffed as, in this order: folded takes any text,
 * so it comes last. */
static const struct format_ops *const sniffed[] = {&speedscope_format, &pprof_format,
						   &folded_format};

/* The format of d[0..len): the first of sniffed that claims it. */
static const struct format_ops *sniff_format(const uint8_t *d, size_t len)
{
	size_t i = 0;

	while (sniffed[i]->sniff && !sniffed[i]->sniff(d, len))
		i++;
	return sniffed[i];
}

/* in[0..n) inflated under the cap; one sentence in err. */
static int inflate_capped(const uint8_t *in, size_t n, uint8_t **out, size_t *outlen,
			  const char *name, char *err, size_t errsz)
{
	size_t limit = n > (REPORT_MAX_INFLATE - REPORT_INFLATE_BASE) / REPORT_INFLATE_RATIO
			   ? REPORT_MAX_INFLATE
			   : n * REPORT_INFLATE_RATIO + REPORT_INFLATE_BASE;
	int rc = gzip_inflate(in, n, limit, out, outlen);

	if (rc == -EFBIG)
		text_errf(err, errsz,
			  "%s: inflates to more than %zu KiB (%d times its size plus "
			  "1 MiB, at most %llu MiB); not loading it.",
			  name, limit >> 10, REPORT_INFLATE_RATIO, REPORT_MAX_INFLATE >> 20);
	else if (rc == -ENODATA)
		text_errf(err, errsz, "%s: truncated gzip data (the file ends early).", name);
	else if (rc == -EINVAL)
		text_errf(err, errsz, "%s: corrupt gzip data.", name);
	else if (rc)
		text_errf(err, errsz, "%s: out of memory.", name);
	return rc == -ENODATA ? -EINVAL : rc;
}

int report_load_mem(const void *data, size_t len, const char *name, struct frames *fr,
		    struct stackset **out, char *err, size_t errsz)
{
	const uint8_t *d = data;
	uint8_t *raw = NULL;
	struct stackset *ss;
	size_t rawlen;
	int rc;

	*out = NULL;
	if (!name)
		name = "profile";
	if (len == 0) {
		text_errf(err, errsz, "%s is empty.", name);
		return -EINVAL;
	}
	if (stackset_new(fr, stackset_ids_limit(len), &ss)) {
		text_errf(err, errsz, "%s: out of memory.", name);
		return -ENOMEM;
	}
	if (gzip_magic(d, len)) {
		if (!(rc = inflate_capped(d, len, &raw, &rawlen, name, err, errsz))) {
			stackset_set_max_ids(ss, stackset_ids_limit(rawlen));
			rc = pprof_format.load(ss, raw, rawlen, name, err, errsz);
		}
		free(raw);
	} else {
		rc = sniff_format(d, len)->load(ss, d, len, name, err, errsz);
	}
	if (!rc && stackset_samples(ss) == 0) {
		text_errf(err, errsz, "%s holds no samples.", name);
		rc = -EINVAL;
	}
	if (rc) {
		stackset_free(ss);
		return rc;
	}
	*out = ss;
	return 0;
}

static int read_file(const char *path, uint8_t **buf, size_t *len, char *err, size_t errsz)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	size_t hint = 0, n = 0;
	char *b = NULL;
	struct stat st;
	int rc = 0;

	if (fd < 0) {
		rc = -errno;
		text_errf(err, errsz, "cannot open %s: %s.", path, strerror(-rc));
		return rc;
	}
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		close(fd);
		text_errf(err, errsz, "%s is a directory, not a profile.", path);
		return -EISDIR;
	}
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
		hint = (size_t)st.st_size;
	rc = fdread_all(fd, REPORT_MAX_FILE, hint, &b, &n);
	close(fd);
	if (rc) {
		free(b);
		text_errf(err, errsz, "cannot read %s: %s.", path, strerror(-rc));
		return rc;
	}
	*buf = (uint8_t *)b;
	*len = n;
	return 0;
}

int report_load(const char *path, struct frames *fr, struct stackset **out, char *err, size_t errsz)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	int rc;

	*out = NULL;
	if ((rc = read_file(path, &buf, &len, err, errsz)))
		return rc;
	rc = report_load_mem(buf, len, path, fr, out, err, errsz);
	free(buf);
	return rc;
}

uint64_t report_now_ns(const struct stackset *ss, const struct window *w)
{
	uint64_t span = (uint64_t)window_seconds(w) * 1000000000ull;
	double dur = stackset_duration_s(ss);
	uint64_t d = dur > 0 ? (uint64_t)(dur * 1e9) : 1000000000ull;

	/* Samples sit in bucket 0 (time 0): any now below the window's span
	 * keeps them live. */
	if (span && d >= span)
		d = span - 1;
	return REPORT_TIME_NS + (d ? d : 1);
}

/* ---- the report as a sampler ---- */

struct report_sampler {
	struct sampler base; /* first: the sampler wrappers cast */
	struct stackset *ss;
	bool delivered;
	uint64_t samples;
};

static bool rs_has_thread(const struct sampler *s, pid_t tid)
{
	return stackset_has_thread(((const struct report_sampler *)s)->ss, tid);
}

static int rs_add_thread(struct sampler *s, pid_t pid, pid_t tid)
{
	return 0; /* the file says which threads there are */
}

static int rs_nthreads(const struct sampler *s)
{
	return (int)stackset_nthreads(((const struct report_sampler *)s)->ss);
}

/* Everything at once, on the first call: the profile is all there is. */
static int rs_collect(struct sampler *s, uint64_t now_ns, const struct sampler_sink *sink)
{
	struct report_sampler *rs = (struct report_sampler *)s;
	int n = 0;

	if (rs->delivered)
		return 0;
	rs->delivered = true;
	for (size_t i = 0; i < stackset_nstacks(rs->ss); i++) {
		struct stackset_stack st;
		stackset_stack(rs->ss, i, &st);
		struct sample smp = {
		    .pid = 0,
		    .tid = st.tid,
		    .time_ns = REPORT_TIME_NS,
		    .weight = st.weight,
		    .state = SAMPLE_ONCPU,
		    .syscall_nr = -1,
		    .frame_ids = st.ids,
		    .nframe_ids = (int)st.n,
		};

		if (sink && sink->sample)
			sink->sample(sink->ctx, &smp);
		rs->samples += st.weight;
		if (n < INT32_MAX)
			n++;
	}
	return n;
}

static void rs_stats(const struct sampler *s, struct sampler_stats *out)
{
	out->samples = ((const struct report_sampler *)s)->samples;
}

static void rs_stop(struct sampler *s)
{
}

static void rs_free(struct sampler *s)
{
	free(s);
}

static const struct sampler_ops report_sampler_ops = {
    .mode = NULL,
    .add_thread = rs_add_thread,
    .has_thread = rs_has_thread,
    .nthreads = rs_nthreads,
    .collect = rs_collect,
    .stats = rs_stats,
    .stop = rs_stop,
    .free = rs_free,
};

int report_sampler_new(struct stackset *ss, struct sampler **out)
{
	struct report_sampler *rs = calloc(1, sizeof(*rs));

	if (!rs)
		return -ENOMEM;
	rs->base.ops = &report_sampler_ops;
	rs->ss = ss;
	*out = &rs->base;
	return 0;
}
