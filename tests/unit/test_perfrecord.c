/* Unit tests for perfrecord: decoding crafted ring records — a sample with
 * and without a callchain, user registers and a stack copy; truncations at
 * every length; the side-band records a sampler acts on (FORK, EXIT, COMM
 * with and without exec, MMAP2, LOST, THROTTLE) and their short forms. */
#include <errno.h>
#include <linux/perf_event.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "runner.h"

#include "stacktop/sample/perfevent.h"
#include "stacktop/sample/perfrecord.h"

/* Build a sample record: ip, pid/tid, time, callchain, regs, stack. */
static size_t build_record(uint64_t *buf, bool callchain, uint64_t stack_size, uint64_t dyn)
{
	size_t n = 1;		       /* header */
	buf[n++] = 0x401000;	       /* ip */
	buf[n++] = (77ull << 32) | 42; /* tid 77, pid 42 */
	buf[n++] = 123456789;	       /* time */
	if (callchain) {
		buf[n++] = 6;
		buf[n++] = PERF_CONTEXT_KERNEL;
		buf[n++] = 0xffffffff81000010ull;
		buf[n++] = 0xffffffff81000020ull;
		buf[n++] = PERF_CONTEXT_USER;
		buf[n++] = 0x401000; /* the user's frame-pointer walk */
		buf[n++] = 0x402345;
	}
	buf[n++] = PERF_SAMPLE_REGS_ABI_64;
	for (int i = 0; i < PERFEVENT_NREGS; i++)
		buf[n++] = 1000 + i; /* AX BX CX DX SI DI BP SP IP R8..R15 */
	buf[n++] = stack_size;
	for (uint64_t i = 0; i < stack_size / 8; i++)
		buf[n++] = 0xabcdef00 + i;
	if (stack_size)
		buf[n++] = dyn;
	struct perf_event_header h = {PERF_RECORD_SAMPLE, 0, (uint16_t)(n * 8)};
	memcpy(buf, &h, sizeof(h));
	return n * 8;
}

/* A side-band record of type and misc with payload words (u64 each),
 * built in buf and decoded (no callchain) into *r: decode's rc. */
static int decode_sideband(uint64_t *buf, uint32_t type, uint16_t misc, const void *payload,
			   size_t len, struct perfrecord *r)
{
	struct perf_event_header h = {type, misc, (uint16_t)(sizeof(h) + len)};
	memcpy(buf, &h, sizeof(h));
	memcpy((uint8_t *)buf + sizeof(h), payload, len);
	return perfrecord_decode((const void *)buf, false, r);
}

/* build_record's record, parsed (with the callchain it was built with)
 * into *s; returns its size. */
static size_t parse_built(uint64_t *buf, bool callchain, uint64_t stack_size, uint64_t dyn,
			  struct sample *s)
{
	size_t size = build_record(buf, callchain, stack_size, dyn);

	assert_int_equal(perfrecord_parse_sample(buf, size, callchain, s), 0);
	return size;
}

static void test_parse_sample(void **state)
{
	uint64_t buf[256];
	struct sample s;

	parse_built(buf, true, 64, 40, &s);
	assert_int_equal(s.pid, 42);
	assert_int_equal(s.tid, 77);
	assert_int_equal(s.time_ns, 123456789);
	assert_int_equal(s.weight, 1);
	assert_int_equal(s.state, SAMPLE_ONCPU);
	assert_int_equal(s.nkpcs, 2);
	assert_int_equal(s.kpcs[0], 0xffffffff81000010ull);
	assert_int_equal(s.kpcs[1], 0xffffffff81000020ull);
	assert_int_equal(s.nfpcs, 2);
	assert_int_equal(s.fpcs[0], 0x401000);
	assert_int_equal(s.fpcs[1], 0x402345);
	/* perf order AX BX CX DX SI DI BP SP IP → DWARF order. */
	assert_int_equal(s.regs[0], 1000); /* rax */
	assert_int_equal(s.regs[3], 1001); /* rbx */
	assert_int_equal(s.regs[2], 1002); /* rcx */
	assert_int_equal(s.regs[1], 1003); /* rdx */
	assert_int_equal(s.regs[SAMPLE_REG_RBP], 1006);
	assert_int_equal(s.regs[SAMPLE_REG_RSP], 1007);
	assert_int_equal(s.regs[SAMPLE_REG_RIP], 1008);
	assert_int_equal(s.regs[8], 1009);  /* r8 */
	assert_int_equal(s.regs[15], 1016); /* r15 */
	assert_int_equal(s.regs_mask, (1u << SAMPLE_NREGS) - 1);
	/* Only dyn_size bytes of the copy are valid. */
	assert_int_equal(s.stack_size, 40);
	uint64_t first;
	memcpy(&first, s.stack, 8);
	assert_int_equal(first, 0xabcdef00);
}

/* No callchain, no stack copy: what memtrace's munmap events give. */
static void test_parse_sample_plain(void **state)
{
	uint64_t buf[256];
	struct sample s;
	size_t size = parse_built(buf, false, 0, 0, &s);

	assert_int_equal(s.nkpcs, 0);
	assert_null(s.kpcs);
	assert_int_equal(s.nfpcs, 0);
	assert_null(s.fpcs);
	assert_null(s.stack);
	assert_int_equal(s.stack_size, 0);
	assert_int_equal(s.regs[SAMPLE_REG_RIP], 1008);
	/* Read as if it had a callchain, the layout no longer fits. */
	assert_int_equal(perfrecord_parse_sample(buf, size, true, &s), -EBADMSG);
}

/* A sample with no user context (ABI_NONE, no stack): the ip is kept. */
static void test_parse_sample_no_user(void **state)
{
	uint64_t buf[16];
	size_t n = 1;
	buf[n++] = 0xffffffff81234567ull; /* ip */
	buf[n++] = (5ull << 32) | 5;
	buf[n++] = 99;
	buf[n++] = PERF_SAMPLE_REGS_ABI_NONE;
	buf[n++] = 0; /* stack size */
	struct perf_event_header h = {PERF_RECORD_SAMPLE, 0, (uint16_t)(n * 8)};
	memcpy(buf, &h, sizeof(h));
	struct perfrecord r;
	assert_int_equal(perfrecord_decode((const void *)buf, false, &r), 0);
	assert_int_equal(r.kind, PERFRECORD_SAMPLE);
	assert_int_equal(r.pid, 5);
	assert_int_equal(r.sample.regs_mask, 0);
	assert_int_equal(r.sample.regs[SAMPLE_REG_RIP], 0xffffffff81234567ull);
	assert_null(r.sample.stack);
}

static void test_parse_truncated(void **state)
{
	uint64_t buf[256];
	struct sample s;
	size_t size = build_record(buf, true, 64, 64);
	for (size_t cut = 0; cut < size; cut += 8)
		assert_int_equal(perfrecord_parse_sample(buf, cut, true, &s), -EBADMSG);
	/* A callchain length that points past the end. */
	size = build_record(buf, true, 0, 0);
	buf[4] = 1000;
	assert_int_equal(perfrecord_parse_sample(buf, size, true, &s), -EBADMSG);
	/* A stack size that points past the end. */
	size = build_record(buf, false, 64, 64);
	buf[1 + 3 + 1 + PERFEVENT_NREGS] = 1 << 20;
	assert_int_equal(perfrecord_parse_sample(buf, size, false, &s), -EBADMSG);
}

static void test_decode_sample(void **state)
{
	uint64_t buf[256];
	struct perfrecord r;
	build_record(buf, true, 64, 40);
	assert_int_equal(perfrecord_decode((const void *)buf, true, &r), 0);
	assert_int_equal(r.kind, PERFRECORD_SAMPLE);
	assert_int_equal(r.pid, 42);
	assert_int_equal(r.tid, 77);
	assert_int_equal(r.sample.nkpcs, 2);
	assert_false(perfrecord_is_sideband(r.kind));
	/* The header's size is what bounds the record. */
	struct perf_event_header *h = (void *)buf;
	h->size -= 8;
	assert_int_equal(perfrecord_decode(h, true, &r), -EBADMSG);
	assert_int_equal(r.kind, PERFRECORD_SAMPLE);
}

static void test_decode_task(void **state)
{
	uint64_t buf[16];
	struct perfrecord r;
	/* pid, ppid, tid, ptid, time, then sample_id_all's ids. */
	uint32_t f[10] = {100, 1, 101, 100};
	uint64_t t = 5555;
	memcpy(&f[4], &t, 8);
	assert_int_equal(decode_sideband(buf, PERF_RECORD_FORK, 0, f, sizeof(f), &r), 0);
	assert_int_equal(r.kind, PERFRECORD_FORK);
	assert_int_equal(r.pid, 100);
	assert_int_equal(r.ppid, 1);
	assert_int_equal(r.tid, 101);
	assert_int_equal(r.ptid, 100);
	assert_int_equal(r.time, 5555);
	assert_true(perfrecord_is_sideband(r.kind));
	assert_int_equal(decode_sideband(buf, PERF_RECORD_EXIT, 0, f, sizeof(f), &r), 0);
	assert_int_equal(r.kind, PERFRECORD_EXIT);
	assert_int_equal(r.tid, 101);
	/* Without its time: too short. */
	assert_int_equal(decode_sideband(buf, PERF_RECORD_FORK, 0, f, 20, &r), -EBADMSG);
}

static void test_decode_comm(void **state)
{
	uint64_t buf[16];
	struct perfrecord r;
	uint8_t p[8 + 24] = {0};
	uint32_t ids[2] = {300, 301};
	memcpy(p, ids, 8);
	memcpy(p + 8, "a-name-longer-than-16", 21);
	assert_int_equal(
	    decode_sideband(buf, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC, p, sizeof(p), &r),
	    0);
	assert_int_equal(r.kind, PERFRECORD_EXEC);
	assert_int_equal(r.pid, 300);
	assert_int_equal(r.tid, 301);
	assert_string_equal(r.comm, "a-name-longer-th"); /* 16 bytes at most */
	/* A thread renaming itself is no exec. */
	assert_int_equal(decode_sideband(buf, PERF_RECORD_COMM, 0, p, sizeof(p), &r), 0);
	assert_int_equal(r.kind, PERFRECORD_OTHER);
	assert_false(perfrecord_is_sideband(r.kind));
	/* ids but no name at all. */
	assert_int_equal(
	    decode_sideband(buf, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC, p, 8, &r), -EBADMSG);
}

static void test_decode_mmap_lost_throttle(void **state)
{
	uint64_t buf[16];
	struct perfrecord r;
	uint32_t ids[6] = {400, 402};
	assert_int_equal(decode_sideband(buf, PERF_RECORD_MMAP2, 0, ids, sizeof(ids), &r), 0);
	assert_int_equal(r.kind, PERFRECORD_MMAP);
	assert_int_equal(r.pid, 400);
	assert_int_equal(r.tid, 402);
	assert_int_equal(decode_sideband(buf, PERF_RECORD_MMAP, 0, ids, 4, &r), -EBADMSG);

	uint64_t lost[2] = {1, 37};
	assert_int_equal(decode_sideband(buf, PERF_RECORD_LOST, 0, lost, sizeof(lost), &r), 0);
	assert_int_equal(r.kind, PERFRECORD_LOST);
	assert_int_equal(r.lost, 37);
	assert_int_equal(decode_sideband(buf, PERF_RECORD_LOST, 0, lost, 8, &r), -EBADMSG);

	assert_int_equal(decode_sideband(buf, PERF_RECORD_THROTTLE, 0, lost, 0, &r), 0);
	assert_int_equal(r.kind, PERFRECORD_THROTTLE);
	assert_int_equal(decode_sideband(buf, PERF_RECORD_UNTHROTTLE, 0, lost, sizeof(lost), &r),
			 0);
	assert_int_equal(r.kind, PERFRECORD_OTHER);
}

/* A stack copy cut at dyn_size (rounded up to 8) parses as the whole one
 * did; nothing to cut (dyn = size, no stack, not a sample) keeps the size. */
static void test_cut_stack(void **state)
{
	uint64_t buf[256], cut[256];
	struct sample a, b;
	for (int cc = 0; cc <= 1; cc++) {
		size_t size = parse_built(buf, cc, 128, 20, &a);
		size_t n = perfrecord_cut_stack((const void *)buf, cc, NULL);
		assert_int_equal(n, size - 128 + 24);
		memset(cut, 0xee, sizeof(cut));
		assert_int_equal(perfrecord_cut_stack((const void *)buf, cc, cut), n);
		struct perf_event_header ch;
		memcpy(&ch, cut, sizeof(ch));
		assert_int_equal(ch.size, n);
		assert_int_equal(perfrecord_parse_sample(cut, n, cc, &b), 0);
		assert_int_equal(b.tid, a.tid);
		assert_int_equal(b.nkpcs, a.nkpcs);
		assert_memory_equal(b.regs, a.regs, sizeof(a.regs));
		assert_int_equal(b.stack_size, 20);
		assert_memory_equal(b.stack, a.stack, 20);
	}
	size_t size = build_record(buf, false, 64, 64);
	assert_int_equal(perfrecord_cut_stack((const void *)buf, false, NULL), size);
	size = build_record(buf, false, 0, 0);
	assert_int_equal(perfrecord_cut_stack((const void *)buf, false, NULL), size);
	struct perf_event_header h = {PERF_RECORD_LOST, 0, 24};
	memcpy(buf, &h, sizeof(h));
	assert_int_equal(perfrecord_cut_stack((const void *)buf, false, NULL), 24);
}

TEST_MAIN(NULL, NULL, TEST(test_cut_stack), TEST(test_parse_sample), TEST(test_parse_sample_plain),
	  TEST(test_parse_sample_no_user), TEST(test_parse_truncated), TEST(test_decode_sample),
	  TEST(test_decode_task), TEST(test_decode_comm), TEST(test_decode_mmap_lost_throttle))
