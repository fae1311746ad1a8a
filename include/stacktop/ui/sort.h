/*
 * sort — the columns the top table sorts by, and the one parser of their
 * names (--sort on the command line; s/S keys cycle through them).
 *
 * Kept apart from view_top so that opts can name a sort key without
 * knowing any view. Pure: no allocation, no I/O.
 */
#ifndef STACKTOP_SORT_H
#define STACKTOP_SORT_H

enum sort_key {
	SORT_OWN = 0,	/* %Own (wall mode: where threads wait) */
	SORT_TOTAL,	/* %Total */
	SORT_OWNTIME,	/* OwnTime (wall mode: OnCPU) */
	SORT_TOTALTIME, /* TotalTime (wall mode: OffCPU) */
	SORT_COUNT
};

/* "own", "total", "owntime", "totaltime" (any case) into *out; -EINVAL
 * for anything else (out untouched). */
int sort_parse(const char *s, enum sort_key *out);

#endif
