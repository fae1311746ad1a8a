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

/* The per-second CPU a recorded file carries beside its summary, so that
 * `report` shows the rhythm (proc/rhythm) offline: "stacktop:
 * {cpu_1s=V,V,...}", % of one core with one decimal, one a second, oldest
 * first, ending at the run's last second; the newest SUMMARY_CPU_MAX
 * seconds (the rhythm's 30 minutes, ~11 KiB of text at most). */
#define SUMMARY_CPU_KEY "cpu_1s="
#define SUMMARY_CPU_MAX 1800
struct sbuf;
/* "cpu_1s=..." of the newest SUMMARY_CPU_MAX of the n values, appended. */
void summary_cpu_text(const double *v, size_t n, struct sbuf *b);
/* That text back (len bytes at s) into v (room for SUMMARY_CPU_MAX): the
 * count, or -EINVAL (no key, a value not a number in [0, 1e6], too many). */
int summary_cpu_parse(const char *s, size_t len, double *v);

/* Where that CPU sits among the stacks' seconds (pprof label "second",
 * folded "{second=N}" blocks: seconds since the first bucket), a comment
 * of its own after it: "stacktop: {cpu_1s_at=K}", K the second whose CPU
 * cpu_1s's first value is (negative when the CPU was measured before the
 * first sample), |K| <= SUMMARY_CPU_AT_MAX. With it `report` also names
 * what rises in the spikes (formats/diffload); a file without it (older,
 * or written by hand) shows the rhythm alone. */
#define SUMMARY_CPU_AT_KEY "cpu_1s_at="
#define SUMMARY_CPU_AT_MAX 100000000
/* "cpu_1s_at=K". */
void summary_cpu_at_text(int64_t at, char *buf, size_t size);
/* That text back (len bytes at s): 0 and *at, or -EINVAL. */
int summary_cpu_at_parse(const char *s, size_t len, int64_t *at);

#endif
