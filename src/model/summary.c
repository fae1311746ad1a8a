/*
 * summary — a run's figures and their one-line text form (see summary.h).
 */
#include "stacktop/model/summary.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void summary_text(const struct summary *s, char *buf, size_t size)
{
	snprintf(buf, size, "wall_s=%.3f cpu_s=%.3f avg_cpu=%.1f peak_cpu=%.1f peak_rss=%llu",
		 s->wall_s, s->cpu_s, s->avg_cpu, s->peak_cpu, (unsigned long long)s->peak_rss);
}

/* One "key=number" of the summary; false when s does not start with it. */
static bool summary_field(const char *s, const char *key, double *v)
{
	size_t n = strlen(key);
	char *end;

	if (strncmp(s, key, n) || s[n] != '=')
		return false;
	errno = 0;
	*v = strtod(s + n + 1, &end);
	return end != s + n + 1 && !errno && isfinite(*v) && *v >= 0 && *v < 1e15;
}

int summary_parse(const char *s, size_t len, struct summary *out)
{
	char buf[256];
	double v[5];
	static const char *const keys[5] = {"wall_s", "cpu_s", "avg_cpu", "peak_cpu", "peak_rss"};
	char *save = NULL, *tok;
	unsigned seen = 0;

	if (len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = 0;
	for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
		for (int k = 0; k < 5; k++)
			if (summary_field(tok, keys[k], &v[k]))
				seen |= 1u << k;
	if (seen != 0x1f)
		return -EINVAL;
	*out = (struct summary){.wall_s = v[0],
				.cpu_s = v[1],
				.avg_cpu = v[2],
				.peak_cpu = v[3],
				.peak_rss = (uint64_t)v[4]};
	return 0;
}
