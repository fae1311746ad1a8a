/* Fuzz entry point: speedscope JSON for `stacktop report` (report_load_mem
 * on input that starts with '{'). Invariants: a load either fails with a
 * message or fills the window with exactly report_samples() samples, every
 * frame has a symbol, and what was loaded exports back to speedscope that
 * loads again with the same total. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stacktop/export.h"
#include "stacktop/report.h"
#include "stacktop/window.h"
#include "report_window.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct window *w, *w2;
	struct report *r, *r2;
	struct frames *fr, *fr2;
	char err[512], *buf;
	size_t len;
	int rc;

	if (report_window_checked(data, size, &fr, &w, &r))
		return 0;
	/* Counts only (no period): the export's weights are the counts, so
	 * the reload must give the same total below 2^31. */
	if (report_samples(r) < (1ull << 31) &&
	    report_window_export(
		w, r, (struct export_opts){.format = EXPORT_SPEEDSCOPE, .per_thread = true}, &buf,
		&len) == 0) {
		if ((rc = report_window(buf, len, "again", &fr2, &w2, &r2, err, sizeof(err))) !=
		    1) {
			if (rc != 0 || window_total(w2) != window_total(w))
				abort(); /* our own output must read back whole */
			report_window_free(fr2, w2, r2);
		}
		free(buf);
	}
	report_window_free(fr, w, r);
	return 0;
}
