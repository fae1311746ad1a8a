/*
 * Fuzz entry point: what locks.c makes of a thread blocked in futex, as the
 * session and dump use it: locks_parse_syscall on the syscall file's text
 * (kernel text, fuzzed anyway), then locks_decode on the bytes read from
 * the target's memory around the futex word (the target's choice: any
 * bytes), with each stack hint; and the wait-for graph built from waits
 * whose owners the input picks.
 *
 * Input: the syscall text up to the first NUL; after it, one hint byte and
 * LOCKS_MEM_SIZE bytes of memory (zero-padded), then pairs of bytes (waiter,
 * owner) for the graph.
 *
 * Properties: no crash; parse returns 0, -ENOENT or -EINVAL; the kind is a
 * known one; an owner is never the waiter and only one the alive callback
 * accepted (TIDs 1..64 here); a condition-variable hint never gets an owner,
 * nor does FUTEX_WAIT_BITSET without a stack; every cycle's threads wait on
 * the next one's lock and are marked with their cycle.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzztext.h"

#include "stacktop/proc/locks.h"

static bool alive_small(void *ctx, pid_t pid, pid_t tid)
{
	return tid >= 1 && tid <= 64;
}

static void check_graph(const uint8_t *p, size_t n)
{
	struct locks g = {0};

	for (size_t i = 0; i + 1 < n && i < 512; i += 2) {
		struct locks_wait w = {.pid = 1,
				       .tid = p[i] % 32 + 1,
				       .kind = LOCKS_KIND_MUTEX,
				       .owner = p[i + 1] % 33};
		if (locks_find(&g, w.tid))
			continue; /* a thread waits on one lock at a time */
		if (locks_add(&g, &w))
			abort();
	}
	if (locks_build(&g) || locks_tally(&g, 0.5))
		abort();
	for (int c = 0; c < g.ncycles; c++) {
		const struct locks_cycle *cy = &g.cycles[c];
		for (int k = 0; k < cy->n; k++) {
			const struct locks_wait *w = locks_find(&g, g.tids[cy->first + k]);
			if (!w || w->cycle != c + 1 ||
			    w->owner != g.tids[cy->first + (k + 1) % cy->n])
				abort();
		}
	}
	locks_free(&g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	uint8_t mem[LOCKS_MEM_SIZE] = {0};
	struct locks_futex f = {0};
	size_t tl, rest;
	pid_t owner;
	int rc;

	if (!text)
		return 0;
	tl = strlen(text);
	rc = locks_parse_syscall(text, &f);
	if (rc != 0 && rc != -ENOENT && rc != -EINVAL)
		abort();
	rest = tl + 1 < size ? size - tl - 1 : 0;
	enum locks_hint hint = rest ? (enum locks_hint)(data[tl + 1] % 5) : LOCKS_HINT_NONE;
	if (rest > 1)
		memcpy(mem, data + tl + 2, rest - 1 < sizeof(mem) ? rest - 1 : sizeof(mem));
	for (int before = 0; before < 2; before++) {
		for (int h = 0; h < 5; h++) {
			enum locks_hint hh = h ? (enum locks_hint)h : hint;
			enum locks_kind k =
			    locks_decode(&f, mem, before, hh, 1, 7, alive_small, NULL, &owner);
			if (k < LOCKS_KIND_NONE || k > LOCKS_KIND_NOOWNER || owner == 7 ||
			    (owner && !alive_small(NULL, 1, owner)))
				abort();
			if (hh == LOCKS_HINT_NOOWNER && (owner || k != LOCKS_KIND_NOOWNER))
				abort();
			if (hh == LOCKS_HINT_NONE && (f.op & ~(128 | 256)) == 9 && owner)
				abort(); /* WAIT_BITSET without a stack: a cond var, maybe */
			locks_decode(&f, NULL, before, hh, 1, 7, alive_small, NULL, &owner);
			if (owner && !alive_small(NULL, 1, owner))
				abort();
		}
	}
	if (rest > 1 + sizeof(mem))
		check_graph(data + tl + 2 + sizeof(mem), rest - 1 - sizeof(mem));
	free(text);
	return 0;
}
