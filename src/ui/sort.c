/*
 * sort — the names of the top table's sort keys (see sort.h). One table of
 * names serves the parser and its inverse, so --sort and the help text
 * cannot drift apart.
 */
#include "stacktop/ui/sort.h"

#include <errno.h>
#include <strings.h>

static const char *const names[SORT_COUNT] = {"own", "total", "owntime", "totaltime"};

int sort_parse(const char *s, enum sort_key *out)
{
	if (!s)
		return -EINVAL;
	for (int i = 0; i < SORT_COUNT; i++) {
		if (strcasecmp(s, names[i]) == 0) {
			*out = (enum sort_key)i;
			return 0;
		}
	}
	return -EINVAL;
}
