/*
 * speedscope — the JSON file format of the speedscope app
 * (https://www.speedscope.app/file-format-schema.json), "sampled" profiles.
 *
 * Written (speedscope_render): shared frames by (name, file, line), one
 * profile of the selected stacks (per_thread: one per thread, named
 * "name-TID"), samples root first, weights in seconds (count x period), or
 * counts with unit "none" without a period. What the format has no place
 * for goes in a "stacktop" object speedscope ignores: mode, period_s,
 * duration_s, so `report` reads them back.
 *
 * Read (speedscope_load): sampled profiles only; weights in a time unit
 * become counts by stacktop's period, else by the lightest weight; a file
 * with several profiles named "name-TID" gives each its thread. At most
 * 64 MiB of JSON (json-c's tree of it is tens of times bigger).
 *
 * Neither keeps anything: render appends to the caller's buffer, load adds
 * to the caller's stackset.
 */
#ifndef STACKTOP_SPEEDSCOPE_H
#define STACKTOP_SPEEDSCOPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct export_opts;
struct sbuf;
struct selection;
struct stackset;
struct window;

/* The selected stacks of w as speedscope JSON appended to out (the
 * selection's stacks are reordered by thread with per_thread). 0 or
 * -ENOMEM. */
int speedscope_render(struct window *w, const struct export_opts *o, struct selection *s,
		      struct sbuf *out);

/* data[0..len) as speedscope JSON into ss (name for messages). 0, or
 * -EINVAL/-EFBIG/-ENOMEM with one sentence in err (not JSON, not
 * speedscope, an evented profile, a bad frame index, too big). */
int speedscope_load(struct stackset *ss, const char *data, size_t len, const char *name, char *err,
		    size_t errsz);

/* '{' first (after blanks): JSON, which of the formats read is speedscope. */
bool speedscope_sniff(const uint8_t *d, size_t n);

#endif
