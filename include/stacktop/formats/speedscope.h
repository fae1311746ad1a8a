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
 * 64 MiB of JSON (json-c's tree of it is tens of times bigger). A render
 * reorders the selection's stacks by thread with per_thread. A load fails
 * (-EINVAL/-EFBIG/-ENOMEM, one sentence) on what is not JSON, not
 * speedscope, an evented profile, a bad frame index, too big.
 *
 * Both go through speedscope_format (format.h); it sniffs '{' first (after
 * blanks): JSON, which of the formats read is speedscope.
 */
#ifndef STACKTOP_SPEEDSCOPE_H
#define STACKTOP_SPEEDSCOPE_H

#include "stacktop/formats/format.h"

extern const struct format_ops speedscope_format;

#endif
