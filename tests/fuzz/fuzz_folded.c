/* Fuzz entry point: folded stacks for `stacktop report` (report_load_mem on
 * text input). Invariants: a load either fails with a message or fills the
 * window with exactly report_samples() samples, every frame has a symbol,
 * and what was loaded exports back to folded text that loads again with the
 * same total. */
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
	int rc;
	struct export_opts o = {.format = EXPORT_FOLDED, .per_thread = true};
	char err[512], *buf;
	size_t len;

	err[0] = '\0';
	if ((rc = report_window(data, size, "fuzz", &fr, &w, &r, err, sizeof(err))) == 1)
		return 0;
	if (rc) {
		if (r || !err[0])
			abort(); /* a failure says why and returns nothing */
		report_window_free(fr, w, r);
		return 0;
	}
	if (window_total(w) != report_samples(r) || report_samples(r) == 0)
		abort();
	for (size_t i = 0; i < frames_span(fr); i++)
		if (!frames_get(fr, (uint32_t)i)->has_sym || !frames_get(fr, (uint32_t)i)->sym.func)
			abort();
	o.thread_name = report_thread_name;
	o.ctx = r;
	/* (Lines that merge on export may pass 2^32 and be scaled on reload:
	 * compare totals only below that.) */
	if (report_samples(r) < (1ull << 31) && export_render(w, &o, &buf, &len, err, sizeof(err)) == 0) {
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
