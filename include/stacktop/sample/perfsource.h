/*
 * perfsource — the on-CPU sampler (perf.h) behind the sampler interface
 * (sampler.h): cpu mode.
 *
 * perfsource_new makes a perf sampler and owns it; sampler_free frees
 * both. collect drains every ring into the sink. In per-CPU and inherit
 * modes the drain itself keeps perf's thread table (FORK: covered, EXIT:
 * gone); in per-thread mode the threads that FORK and EXIT records
 * announce are queued during the drain and added or closed right after it
 * (a FORK of a process we do not sample, a child process, is ignored).
 * A thread that perf fails to open inside a drain (a pending one) counts
 * as an add_thread failure: its reason is the sampler's last_err.
 */
#ifndef STACKTOP_PERFSOURCE_H
#define STACKTOP_PERFSOURCE_H

#include "stacktop/sample/perf.h"

struct sampler;
int perfsource_new(const struct perf_config *cfg, struct sampler **out);

#endif
