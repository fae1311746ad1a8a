/*
 * summary — what `record` measured of a run, as the profile files carry it
 * (a pprof comment and a folded comment line, both "stacktop: {wall_s=...
 * cpu_s=... avg_cpu=... peak_cpu=... peak_rss=...}") for `stacktop diff`
 * to set side by side. The session computes it, the writers put it in a
 * file, the readers and diff read it back, the views show it.
 *
 * A plain value: no allocation, nothing to free.
 */
#ifndef STACKTOP_SUMMARY_H
#define STACKTOP_SUMMARY_H

#include <stddef.h>
#include <stdint.h>

struct summary {
	double wall_s;	   /* seconds recorded */
	double cpu_s;	   /* CPU seconds the targets used meanwhile */
	double avg_cpu;	   /* % of one core, cpu_s / wall_s */
	double peak_cpu;   /* % of one core, the busiest second */
	uint64_t peak_rss; /* bytes */
};

/* "wall_s=51.100 cpu_s=34.700 ..." (the text between the braces). */
void summary_text(const struct summary *s, char *buf, size_t size);
/* That text back (len bytes at s; fields in any order, separated by
 * spaces); -EINVAL when a field is missing or not a finite number >= 0. */
int summary_parse(const char *s, size_t len, struct summary *out);

#endif
