/*
 * perfrecord — decoding perf ring records (see perfrecord.h).
 *
 * A sample's payload is read in the order perf_output_sample writes the
 * fields of our sample_type: ip, pid/tid, time, [callchain: nr, ips: the
 * kernel's run after PERF_CONTEXT_KERNEL, the user's after _USER],
 * regs_user (abi, then one u64 per bit of the mask, lowest bit first),
 * stack_user (size, bytes, dyn_size; size 0 when there was no user
 * context). A cursor over the payload refuses every read past its end.
 *
 * Side-band records have their fields at the start of the payload (pid and
 * tid in COMM and MMAP/MMAP2; pid, ppid, tid, ptid, time in FORK and EXIT;
 * id, lost in LOST); sample_id_all appends ids that are not needed here.
 */
#include "stacktop/sample/perfrecord.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>

#include "stacktop/sample/perfevent.h"

/* DWARF register number of the i-th sampled register (PERFEVENT_REGS_MASK
 * from its lowest bit: AX BX CX DX SI DI BP SP IP R8..R15). */
static const int dwarf_of_sampled[PERFEVENT_NREGS] = {
    0 /* ax */, 3 /* bx */, 2 /* cx */,	 1 /* dx */, 4 /* si */, 5 /* di */,
    6 /* bp */, 7 /* sp */, 16 /* ip */, 8,	     9,		 10,
    11,		12,	    13,		 14,	     15,
};

/* A cursor over a record's payload that never reads past its end. */
struct perfrecord_cursor {
	const uint8_t *p, *end;
};

static int cur_u64(struct perfrecord_cursor *c, uint64_t *v)
{
	if (c->end - c->p < 8)
		return -EBADMSG;
	memcpy(v, c->p, 8);
	c->p += 8;
	return 0;
}

static int cur_skip(struct perfrecord_cursor *c, uint64_t n, const uint8_t **start)
{
	if ((uint64_t)(c->end - c->p) < n)
		return -EBADMSG;
	*start = c->p;
	c->p += n;
	return 0;
}

/* The run of a callchain after the context mark ctx (PERF_CONTEXT_KERNEL
 * or _USER): *pcs and *n, none when it has no such mark. */
static void context_frames(const uint64_t *ips, uint64_t nr, uint64_t ctx, const uint64_t **pcs,
			   int *n)
{
	*pcs = NULL;
	*n = 0;
	for (uint64_t i = 0; i < nr; i++) {
		if (ips[i] != ctx)
			continue;
		uint64_t j = i + 1;
		while (j < nr && ips[j] < PERF_CONTEXT_MAX)
			j++;
		*pcs = &ips[i + 1];
		*n = (int)(j - i - 1);
		return;
	}
}

int perfrecord_parse_sample(const void *rec, size_t size, bool callchain, struct sample *out)
{
	struct perfrecord_cursor c = {(const uint8_t *)rec + sizeof(struct perf_event_header),
				      (const uint8_t *)rec + size};
	uint64_t ip, pidtid, time, v;
	const uint8_t *ptr;

	memset(out, 0, sizeof(*out));
	if (size < sizeof(struct perf_event_header))
		return -EBADMSG;
	if (cur_u64(&c, &ip) || cur_u64(&c, &pidtid) || cur_u64(&c, &time))
		return -EBADMSG;
	out->pid = (int)(uint32_t)pidtid;
	out->tid = (int)(uint32_t)(pidtid >> 32);
	out->time_ns = time;
	out->weight = 1;
	out->state = SAMPLE_ONCPU;
	out->syscall_nr = -1;

	if (callchain) {
		uint64_t nr;
		if (cur_u64(&c, &nr) || nr > 4096 || cur_skip(&c, nr * 8, &ptr))
			return -EBADMSG;
		/* ptr is 8-byte aligned inside the record. */
		const uint64_t *ips = (const uint64_t *)(const void *)ptr;
		context_frames(ips, nr, PERF_CONTEXT_KERNEL, &out->kpcs, &out->nkpcs);
		context_frames(ips, nr, PERF_CONTEXT_USER, &out->fpcs, &out->nfpcs);
	}

	uint64_t abi;
	if (cur_u64(&c, &abi))
		return -EBADMSG;
	if (abi != PERF_SAMPLE_REGS_ABI_NONE) {
		for (int i = 0; i < PERFEVENT_NREGS; i++) {
			if (cur_u64(&c, &v))
				return -EBADMSG;
			out->regs[dwarf_of_sampled[i]] = v;
		}
		out->regs_mask = (1u << SAMPLE_NREGS) - 1;
	}

	uint64_t stack_size;
	if (cur_u64(&c, &stack_size))
		return -EBADMSG;
	if (stack_size) {
		uint64_t dyn;
		if (cur_skip(&c, stack_size, &ptr) || cur_u64(&c, &dyn))
			return -EBADMSG;
		out->stack = ptr;
		out->stack_size = dyn < stack_size ? dyn : stack_size;
	}
	if (!out->regs_mask) {
		/* A kernel thread or a sample with no user context: keep the ip. */
		out->regs[SAMPLE_REG_RIP] = ip;
	}
	return 0;
}

size_t perfrecord_cut_stack(const struct perf_event_header *rec, bool callchain, void *dst)
{
	const uint8_t *base = (const uint8_t *)rec;
	struct sample smp;
	uint64_t full, keep;

	if (rec->type != PERF_RECORD_SAMPLE ||
	    perfrecord_parse_sample(rec, rec->size, callchain, &smp) || !smp.stack)
		return rec->size;
	/* the stack bytes follow their u64 size; dyn_size follows them */
	size_t at = (size_t)(smp.stack - base);
	memcpy(&full, base + at - 8, 8);
	keep = ((uint64_t)smp.stack_size + 7) & ~(uint64_t)7;
	if (keep >= full || full % 8)
		return rec->size;
	size_t tail = rec->size - at - full, size = at + keep + tail;
	if (!dst)
		return size;
	uint8_t *d = dst;
	memcpy(d, base, at + keep);
	memcpy(d + at - 8, &keep, 8);
	memcpy(d + at + keep, base + at + full, tail);
	((struct perf_event_header *)dst)->size = (uint16_t)size;
	return size;
}

/* The u32 at off in h's payload; false when the payload holds fewer than
 * min bytes. */
static bool payload_u32(const struct perf_event_header *h, size_t min, size_t off, uint32_t *v)
{
	if (h->size < sizeof(*h) + min)
		return false;
	memcpy(v, (const uint8_t *)(h + 1) + off, 4);
	return true;
}

/* pid and tid at the start of the payload (COMM, MMAP, MMAP2). */
static int decode_ids(const struct perf_event_header *h, size_t min, struct perfrecord *out)
{
	uint32_t pid, tid;
	if (!payload_u32(h, min, 0, &pid) || !payload_u32(h, min, 4, &tid))
		return -EBADMSG;
	out->pid = (pid_t)pid;
	out->tid = (pid_t)tid;
	return 0;
}

/* FORK and EXIT: u32 pid, ppid, tid, ptid, u64 time. */
static int decode_task(const struct perf_event_header *h, struct perfrecord *out)
{
	const uint8_t *p = (const uint8_t *)(h + 1);
	uint32_t f[4];
	if (h->size < sizeof(*h) + 24)
		return -EBADMSG;
	memcpy(f, p, 16);
	memcpy(&out->time, p + 16, 8);
	out->pid = (pid_t)f[0];
	out->ppid = (pid_t)f[1];
	out->tid = (pid_t)f[2];
	out->ptid = (pid_t)f[3];
	return 0;
}

/* COMM: u32 pid, tid, then the name (at most 16 bytes kept). */
static int decode_exec(const struct perf_event_header *h, struct perfrecord *out)
{
	if (decode_ids(h, 9, out))
		return -EBADMSG;
	size_t n = h->size - sizeof(*h) - 8;
	memcpy(out->comm, (const uint8_t *)(h + 1) + 8, n < 16 ? n : 16);
	return 0;
}

int perfrecord_decode(const struct perf_event_header *h, bool callchain, struct perfrecord *out)
{
	memset(out, 0, sizeof(*out));
	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		out->kind = PERFRECORD_SAMPLE;
		if (perfrecord_parse_sample(h, h->size, callchain, &out->sample))
			return -EBADMSG;
		out->pid = out->sample.pid;
		out->tid = out->sample.tid;
		return 0;
	case PERF_RECORD_LOST:
		out->kind = PERFRECORD_LOST;
		if (h->size < sizeof(*h) + 16)
			return -EBADMSG;
		memcpy(&out->lost, (const uint8_t *)(h + 1) + 8, 8);
		return 0;
	case PERF_RECORD_THROTTLE:
		out->kind = PERFRECORD_THROTTLE;
		return 0;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		out->kind = h->type == PERF_RECORD_FORK ? PERFRECORD_FORK : PERFRECORD_EXIT;
		return decode_task(h, out);
	case PERF_RECORD_COMM:
		if (!(h->misc & PERF_RECORD_MISC_COMM_EXEC))
			return 0; /* a rename, not an exec: OTHER */
		out->kind = PERFRECORD_EXEC;
		return decode_exec(h, out);
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		out->kind = PERFRECORD_MMAP;
		return decode_ids(h, 8, out);
	default:
		return 0;
	}
}

bool perfrecord_is_sideband(enum perfrecord_kind kind)
{
	return kind == PERFRECORD_FORK || kind == PERFRECORD_EXIT || kind == PERFRECORD_EXEC ||
	       kind == PERFRECORD_MMAP;
}
