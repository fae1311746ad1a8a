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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct window *w, *w2;
	struct report *r, *r2;
	struct export_opts o = {.format = EXPORT_FOLDED, .per_thread = true};
	char err[512], *buf;
	size_t len;

	if (window_new(60, 1000000000ull, &w))
		return 0;
	err[0] = '\0';
	if (report_load_mem(data, size, "fuzz", w, &r, err, sizeof(err)) != 0) {
		if (r || !err[0])
			abort(); /* a failure says why and returns nothing */
		window_free(w);
		return 0;
	}
	if (window_total(w) != report_samples(r) || report_samples(r) == 0)
		abort();
	for (size_t i = 0; i < window_nframes(w); i++)
		if (!window_frame(w, (uint32_t)i)->has_sym || !window_frame(w, (uint32_t)i)->sym.func)
			abort();
	o.thread_name = report_thread_name;
	o.ctx = r;
	/* (Lines that merge on export may pass 2^32 and be scaled on reload:
	 * compare totals only below that.) */
	if (report_samples(r) < (1ull << 31) && export_render(w, &o, &buf, &len, err, sizeof(err)) == 0) {
		if (window_new(60, 1000000000ull, &w2) == 0) {
			if (report_load_mem(buf, len, "again", w2, &r2, err, sizeof(err)) != 0 ||
			    window_total(w2) != window_total(w))
				abort(); /* our own output must read back whole */
			window_free(w2);
			report_free(r2);
		}
		free(buf);
	}
	window_free(w);
	report_free(r);
	return 0;
}
