/*
 * status — the header's numbers, gathered from every stage into a struct
 * view_header: a pure function from counters to the header (whose words
 * the views then build). The session fills struct status_in once per draw.
 */
#ifndef STACKTOP_STATUS_H
#define STACKTOP_STATUS_H

#include <stdint.h>

#include "stacktop/symbols/dbgfetch.h"
#include "stacktop/app/health.h"
#include "stacktop/model/ingest.h"
#include "stacktop/app/procs.h"
#include "stacktop/sample/sampler.h"
#include "stacktop/ui/view.h"

struct status_in {
	const struct procs *procs;
	struct sampler_stats sampler;
	int sampled_threads; /* threads the sampler holds */
	const struct ingest_stats *ingest;
	const char *mode; /* "cpu" or "wall" */
	unsigned rate_hz, window_s;
	double cpu_now; /* % of a core the process burned last second; <0: unknown */
	uint64_t window_samples;
	double span_s;			  /* seconds of data in the window */
	const char *source;		  /* report: the profile file, else NULL */
	uint64_t source_samples;	  /* report: samples in the file */
	uint64_t files_refused;		  /* target files refused (tfile) */
	const struct health *health;	  /* rates and the warning; NULL: none measured */
	const struct dbgfetch_stats *dbg; /* --debuginfod, else NULL */
	int jit_nomap_pid; /* JIT code unnamed: no /tmp/perf-PID.map (sym_jit_nomap) */
	/* samples on the CPU in the window that are GC, and all on the CPU
	 * (window_gc_counts) */
	uint64_t gc_samples, gc_running;
};

/* Fill h (cleared first) from in. pids is room for PROCS_MAX pids that h
 * points to. */
void status_header(const struct status_in *in, int *pids, struct view_header *h);

#endif
