/* Fuzz entry point: the command line (NUL-separated words). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzztext.h"

#include "stacktop/app/opts.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	char *argv[64];
	int argc = 0;
	struct opts o;
	char err[256];

	if (!text)
		return 0;
	argv[argc++] = "stacktop";
	for (size_t i = 0; i < size && argc < 63;) {
		argv[argc++] = text + i;
		i += strlen(text + i) + 1;
	}
	argv[argc] = NULL;
	opts_parse(argc, argv, &o, err, sizeof(err));
	free(text);
	return 0;
}
