/* Fuzz entry point: jitdump records (jitdump.c). The input after its first
 * two bytes is a jitdump body, given a valid file header first when data[1]
 * is odd (so the records, not the magic, are what mutations hit); it is
 * fed as a file being written, in pieces of 1 to 256 bytes (data[0]), each
 * either whole or with only part of it in the buffer (the reader's
 * head-only path). Every entry found must hold the pc, and its name and
 * file fit JITDUMP_NAME_MAX. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stacktop/symbols/jitdump.h"

static uint8_t buf[70000];

static void check(const struct jitdump_table *t, uint64_t pc)
{
	struct jitdump_sym s;

	if (jitdump_table_find(t, pc, &s))
		return;
	if (pc < s.start || pc >= s.end || strlen(s.name) >= JITDUMP_NAME_MAX ||
	    (s.file && strlen(s.file) >= JITDUMP_NAME_MAX) || s.line < 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jitdump_table *t;
	size_t n = 0, done = 0, piece;

	if (size < 2)
		return 0;
	if (data[1] & 1) {
		static const uint32_t hdr[10] = {JITDUMP_MAGIC, 1, 40, 62, 0, 1, 0, 0, 0, 0};

		memcpy(buf, hdr, sizeof(hdr));
		n = sizeof(hdr);
	}
	memcpy(buf + n, data + 2, size - 2);
	n += size - 2;
	piece = 1 + data[0];
	if (jitdump_table_new(&t))
		return 0;
	for (size_t end = piece; done < n; end += piece) {
		size_t used, len;

		if (end > n)
			end = n;
		/* odd pieces: only half of what the file has is in the buffer */
		len = (data[0] & 1) ? (end - done + 1) / 2 : end - done;
		if (jitdump_table_feed(t, buf + done, len, end - done, &used))
			break;
		if (done + used > end)
			abort();
		done += used;
		if (end == n && !used)
			break; /* the rest waits for more of the file */
	}
	for (size_t i = 2; i + 8 <= size && i < 256; i += 8) {
		uint64_t pc;

		memcpy(&pc, data + i, 8);
		check(t, pc);
		check(t, pc & 0xffff);
	}
	jitdump_table_free(t);
	return 0;
}
