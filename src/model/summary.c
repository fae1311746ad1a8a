/*
 * summary — a run's figures and their one-line text form (see summary.h).
 */
#include "stacktop/model/summary.h"

#include "stacktop/lib/sbuf.h"

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

void summary_cpu_text(const double *v, size_t n, struct sbuf *b)
{
	size_t from = n > SUMMARY_CPU_MAX ? n - SUMMARY_CPU_MAX : 0;

	sbuf_str(b, SUMMARY_CPU_KEY);
	for (size_t i = from; i < n; i++)
		sbuf_printf(b, "%s%.1f", i > from ? "," : "", v[i] >= 0 ? v[i] : 0);
}

int summary_cpu_parse(const char *s, size_t len, double *v)
{
	size_t kl = sizeof(SUMMARY_CPU_KEY) - 1, n = 0, i;

	if (len <= kl || strncmp(s, SUMMARY_CPU_KEY, kl))
		return -EINVAL;
	for (i = kl; i < len;) {
		char num[32], *end;
		size_t j = i;

		while (j < len && s[j] != ',')
			j++;
		if (j - i == 0 || j - i >= sizeof(num) || n >= SUMMARY_CPU_MAX)
			return -EINVAL;
		memcpy(num, s + i, j - i);
		num[j - i] = 0;
		errno = 0;
		v[n] = strtod(num, &end);
		if (*end || errno || !isfinite(v[n]) || v[n] < 0 || v[n] > 1e6)
			return -EINVAL;
		n++;
		i = j + 1;
	}
	return s[len - 1] == ',' ? -EINVAL : (int)n;
}

void summary_cpu_at_text(int64_t at, char *buf, size_t size)
{
	snprintf(buf, size, "%s%lld", SUMMARY_CPU_AT_KEY, (long long)at);
}

int summary_cpu_at_parse(const char *s, size_t len, int64_t *at)
{
	size_t kl = sizeof(SUMMARY_CPU_AT_KEY) - 1;
	char num[16], *end;
	long long v;

	if (len <= kl || len - kl >= sizeof(num) || strncmp(s, SUMMARY_CPU_AT_KEY, kl))
		return -EINVAL;
	memcpy(num, s + kl, len - kl);
	num[len - kl] = 0;
	errno = 0;
	v = strtoll(num, &end, 10);
	if (!(num[0] == '-' || (num[0] >= '0' && num[0] <= '9')) || *end || errno ||
	    v > SUMMARY_CPU_AT_MAX || v < -SUMMARY_CPU_AT_MAX)
		return -EINVAL;
	*at = v;
	return 0;
}
