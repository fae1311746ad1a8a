/* Fuzz entry point: pprof input for `stacktop report` (gzip-compressed or
 * plain protobuf through report_load_mem). Invariants: a failure says why
 * and returns nothing; a success fills the window with exactly
 * report_samples() samples of named frames, and exports back to pprof. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stacktop/export.h"
#include "stacktop/report.h"
#include "stacktop/window.h"
#include "report_window.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct window *w;
	struct report *r;
	struct frames *fr;
	struct export_opts o = {.format = EXPORT_PPROF, .period_s = 0.01};
	char err[512], *buf;
	size_t len;

	if (report_window_checked(data, size, &fr, &w, &r))
		return 0;
	o.thread_name = report_thread_name;
	o.ctx = r;
	if (export_render(w, &o, &buf, &len, err, sizeof(err)) == 0)
		free(buf);
	report_window_free(fr, w, r);
	return 0;
}
