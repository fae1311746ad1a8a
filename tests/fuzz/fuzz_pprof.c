/* Fuzz entry point: pprof input for `stacktop report` (gzip-compressed or
 * plain protobuf through report_load_mem). Invariants: a failure says why
 * and returns nothing; a success fills the window with exactly
 * stackset_samples() samples of named frames, and exports back to pprof. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stacktop/formats/export.h"
#include "stacktop/formats/report.h"
#include "stacktop/model/window.h"
#include "report_window.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct window *w;
	struct stackset *r;
	struct frames *fr;
	char *buf;
	size_t len;

	if (report_window_checked(data, size, &fr, &w, &r))
		return 0;
	if (report_window_export(w, r,
				 (struct export_opts){.format = EXPORT_PPROF, .period_s = 0.01},
				 &buf, &len) == 0)
		free(buf);
	report_window_free(fr, w, r);
	return 0;
}
