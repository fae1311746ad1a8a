/*
 * Fuzz entry point: the wall sampler's procfs parsers, as wall.c's
 * read_wait uses them on what it reads from /proc/PID/task/TID/{stat,
 * syscall,wchan,schedstat}: target_parse_stat_state, waits_parse_syscall,
 * waits_parse_schedstat, then waits_classify with the wchan text, and the
 * names of what came out (waits_name, waits_frame_name,
 * waits_syscall_name). The stat line's comm is the target's choice; the
 * other files are kernel text, fuzzed anyway. (procstat's stat, status and
 * cgroup parsers are fuzz_procstat's.)
 *
 * The input is split at NUL bytes into the four files' texts, read into
 * 256-byte buffers as wall.c does; each parser also sees the whole input.
 *
 * Properties: no crash; the state letter is the character after the last
 * ")" and a space, and one proc(5) knows; a parsed syscall number is -1 or
 * non-negative (a number that does not fit an int is an error); the wait
 * kind is below SAMPLE_WAIT_COUNT, DSTATE exactly for 'D' and NONE for
 * 'R'; every name is a non-empty string.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzztext.h"

#include "stacktop/proc/target.h"
#include "stacktop/proc/waits.h"

enum { F_STAT, F_SYSCALL, F_WCHAN, F_SCHEDSTAT, F_COUNT };

static void check_name(const char *s)
{
	if (!s || !*s)
		abort();
}

static void check_state(const char *text, char st)
{
	const char *close = strrchr(text, ')');
	/* The letter sits after the last ')' and a space, as the parser says. */
	if (!close || close[1] != ' ' || close[2] != st || !st || !strchr("RSDTtZXxIWPK", st))
		abort();
}

/* One thread's texts through what read_wait does with them. */
static void read_wait(char *const text[F_COUNT])
{
	char state = '?', wchan[32];
	int nr = -1, rc;
	unsigned long long sp, pc, run;

	if (target_parse_stat_state(text[F_STAT], &state) == 0)
		check_state(text[F_STAT], state);
	rc = waits_parse_syscall(text[F_SYSCALL], &nr, &sp, &pc);
	if (rc != 0 && rc != -EINVAL)
		abort();
	if (nr < -1)
		abort(); /* a syscall number that is neither -1 nor a real number */
	if (rc == 0 && nr >= 0 && strtol(text[F_SYSCALL], NULL, 10) != nr)
		abort(); /* the number read is not the number in the text */
	if (rc == 0 && nr >= 0)
		check_name(waits_name(waits_classify('S', nr, NULL)));
	if (nr >= 0 && waits_syscall_name(nr))
		check_name(waits_syscall_name(nr));
	/* Without sp/pc, as the tests call it. */
	if (waits_parse_syscall(text[F_SYSCALL], &nr, NULL, NULL) == 0 && nr < -1)
		abort();
	wchan[0] = '\0';
	if (strcmp(text[F_WCHAN], "0") != 0)
		snprintf(wchan, sizeof(wchan), "%.31s", text[F_WCHAN]);
	enum sample_wait w = waits_classify(state, nr, wchan);
	if ((unsigned)w >= SAMPLE_WAIT_COUNT)
		abort();
	if ((state == 'D') != (w == SAMPLE_WAIT_DSTATE))
		abort();
	if (state == 'R' && w != SAMPLE_WAIT_NONE)
		abort();
	if ((unsigned)waits_classify(state, nr, NULL) >= SAMPLE_WAIT_COUNT)
		abort();
	check_name(waits_name(w));
	check_name(waits_frame_name(w));
	rc = waits_parse_schedstat(text[F_SCHEDSTAT], &run);
	if (rc != 0 && rc != -EINVAL)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *whole = fuzz_text(data, size), *text[F_COUNT];
	size_t at = 0;

	if (!whole)
		return 0;
	for (int f = 0; f < F_COUNT; f++) {
		/* pread_text: at most 255 bytes, NUL-terminated. */
		size_t n = at < size ? strnlen(whole + at, size - at) : 0;
		text[f] = malloc(256);
		if (!text[f])
			abort();
		memcpy(text[f], whole + (at < size ? at : size), n < 255 ? n : 255);
		text[f][n < 255 ? n : 255] = '\0';
		at += n + 1;
	}
	read_wait(text);
	char *all[F_COUNT] = {whole, whole, whole, whole};
	read_wait(all);
	for (int f = 0; f < F_COUNT; f++)
		free(text[f]);
	free(whole);
	return 0;
}
