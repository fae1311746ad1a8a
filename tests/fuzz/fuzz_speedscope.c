/* Fuzz entry point: speedscope JSON for `stacktop report` (report_load_mem
 * on input that starts with '{'). Invariants: a load either fails with a
 * message or fills the window with exactly stackset_samples() samples, every
 * frame has a symbol, and what was loaded exports back to speedscope that
 * loads again with the same total. */
#include <stdint.h>

#include "stacktop/formats/export.h"
#include "stacktop/formats/report.h"
#include "stacktop/model/window.h"
#include "report_window.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return report_window_fuzz_roundtrip(data, size, EXPORT_SPEEDSCOPE);
}
