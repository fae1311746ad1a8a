/*
 * kallsyms — kernel function names from /proc/kallsyms.
 *
 * Lines "ADDR TYPE NAME [module]"; only text symbols (t, T, w, W) are
 * kept. kallsyms has no sizes: each symbol ends where the next one starts,
 * the last one KALLSYMS_LAST_SPAN further. With perf_event_paranoid >= 2
 * (or kptr_restrict) an unprivileged reader sees all-zero addresses; then
 * the table is empty and every lookup finds nothing (and so without a
 * /proc/kallsyms at all).
 *
 * Contract: a struct kallsyms (kallsyms_new, kallsyms_free) holds one
 * table, read from /proc/kallsyms on the first kallsyms_lookup unless
 * kallsyms_parse gave it text before. Names returned live until the next
 * kallsyms_parse or kallsyms_free. Not thread safe; nothing prints.
 */
#ifndef STACKTOP_KALLSYMS_H
#define STACKTOP_KALLSYMS_H

#include <stdint.h>

/* kallsyms has no sizes; the last text symbol gets this much. */
#define KALLSYMS_LAST_SPAN 0x10000ull

struct kallsyms;

/* A kernel function: [start, end) is name. */
struct kallsyms_sym {
	const char *name;
	uint64_t start, end;
};

int kallsyms_new(struct kallsyms **out);
void kallsyms_free(struct kallsyms *k);

/* Replace the table with kallsyms text (instead of reading /proc/kallsyms
 * on the first lookup): tests and fuzzing. Bad lines are skipped; 0 or
 * -ENOMEM (the table then empty). */
int kallsyms_parse(struct kallsyms *k, const char *text);

/* The function holding pc: 0 and out filled, -ENOENT (none, or addresses
 * hidden), or -ENOMEM loading the table. */
int kallsyms_lookup(struct kallsyms *k, uint64_t pc, struct kallsyms_sym *out);

#endif
