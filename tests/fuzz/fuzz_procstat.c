/* Fuzz entry point: procfs texts (stat, status, cgroup) — a thread's comm
 * in stat is chosen by the target. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzztext.h"

#include "stacktop/proc/procstat.h"
#include "stacktop/proc/target.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	char st, comm[32], path[256];
	double cpu;
	int v2;
	struct procstat_mem m;
	struct procstat_stat full;

	if (!text)
		return 0;
	procstat_parse_stat(text, &st, &cpu, comm, sizeof(comm));
	if (procstat_parse_stat_full(text, &full) == 0 && (full.pid <= 0 || strlen(full.comm) > 31))
		abort();
	target_parse_stat_state(text, &st);
	procstat_parse_status_mem(text, &m);
	procstat_parse_cgroup(text, path, sizeof(path), &v2);
	free(text);
	return 0;
}
