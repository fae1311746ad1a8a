/* Fuzz entry point: folded stacks for `stacktop report` (report_load_mem on
 * text input). Invariants: a load either fails with a message or fills the
 * window with exactly stackset_samples() samples, every frame has a symbol,
 * and what was loaded exports back to folded text that loads again with the
 * same total. */
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

	if (report_window_checked(data, size, &fr, &w, &r))
		return 0;
	report_window_roundtrip(w, r, EXPORT_FOLDED);
	report_window_free(fr, w, r);
	return 0;
}
