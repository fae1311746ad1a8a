/*
 * pidfilter — which processes' samples a CPU-wide perf event keeps (see
 * pidfilter.h).
 *
 * The program, by hand (no compiler or libbpf needed at run time):
 *
 *   r0 = bpf_get_current_pid_tgid()    process id in the upper half
 *   r0 >>= 32; *(u32 *)(r10 - 4) = r0
 *   r0 = bpf_map_lookup_elem(map, r10 - 4)
 *   return r0 ? 1 : 0                   0: the kernel drops the sample
 *
 * In a PID namespace other than the first (stacktop in a container), the
 * pids we know are the namespace's, not the global ones the first helper
 * returns: the program asks bpf_get_ns_current_pid_tgid for the process id
 * in our namespace instead (identified by the device and inode of
 * /proc/self/ns/pid), and drops tasks outside it.
 *
 * The overflow handler runs it before the sample is written, so a dropped
 * sample costs no stack copy and no ring space. The map is a preallocated
 * hash (programs that run from a timer interrupt may only use those); its
 * contents are mirrored here so pidfilter_has needs no system call.
 */
#include "stacktop/sample/pidfilter.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* The first PID namespace's inode number (PROC_PID_INIT_INO). */
#define PIDNS_INIT_INO 0xEFFFFFFCull

struct pidfilter {
	int map_fd, prog_fd;
	pid_t *pids; /* the map's keys, unsorted */
	int n;
};

static int bpf_call(int cmd, union bpf_attr *attr)
{
	long r = syscall(SYS_bpf, cmd, attr, sizeof(*attr));
	return r < 0 ? -errno : (int)r;
}

static struct bpf_insn insn(uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm)
{
	struct bpf_insn i = {.code = code, .dst_reg = dst, .src_reg = src, .off = off, .imm = imm};
	return i;
}

/* A 64-bit constant into reg: two instructions. */
static void load_imm64(struct bpf_insn *out, uint8_t reg, uint64_t v)
{
	out[0] = insn(BPF_LD | BPF_DW | BPF_IMM, reg, 0, 0, (int32_t)(uint32_t)v);
	out[1] = insn(0, 0, 0, 0, (int32_t)(uint32_t)(v >> 32));
}

/* The process id of the current task into *(u32 *)(r10 - 4). In the first
 * PID namespace: the global one. Else, the one in ours (dev, ino), and a
 * task outside our namespace is dropped. Returns the instructions used. */
static int emit_current_pid(struct bpf_insn *p, bool init_ns, uint64_t dev, uint64_t ino)
{
	int n = 0;
	if (init_ns) {
		p[n++] = insn(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_get_current_pid_tgid);
		p[n++] = insn(BPF_ALU64 | BPF_RSH | BPF_K, BPF_REG_0, 0, 0, 32);
		p[n++] = insn(BPF_STX | BPF_MEM | BPF_W, BPF_REG_10, BPF_REG_0, -4, 0);
		return n;
	}
	load_imm64(&p[n], BPF_REG_1, dev);
	n += 2;
	load_imm64(&p[n], BPF_REG_2, ino);
	n += 2;
	/* struct bpf_pidns_info { u32 pid; u32 tgid; } at r10 - 16 */
	p[n++] = insn(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_3, BPF_REG_10, 0, 0);
	p[n++] = insn(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_3, 0, 0, -16);
	p[n++] = insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_4, 0, 0, 8);
	p[n++] = insn(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_get_ns_current_pid_tgid);
	/* not in our namespace: return 0 (drop) */
	p[n++] = insn(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, 2, 0);
	p[n++] = insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0);
	p[n++] = insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	p[n++] = insn(BPF_LDX | BPF_MEM | BPF_W, BPF_REG_0, BPF_REG_10, -12, 0);
	p[n++] = insn(BPF_STX | BPF_MEM | BPF_W, BPF_REG_10, BPF_REG_0, -4, 0);
	return n;
}

static int load_program(int map_fd)
{
	struct stat st;
	bool init_ns = stat("/proc/self/ns/pid", &st) != 0 || (uint64_t)st.st_ino == PIDNS_INIT_INO;
	/* The kernel compares with its own dev_t encoding (major << 20). */
	uint64_t dev = init_ns ? 0 : ((uint64_t)major(st.st_dev) << 20) | minor(st.st_dev);
	struct bpf_insn prog[32];
	int n = emit_current_pid(prog, init_ns, dev, init_ns ? 0 : (uint64_t)st.st_ino);
	const struct bpf_insn tail[] = {
	    insn(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_10, 0, 0),
	    insn(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, -4),
	    /* r1 = the map (a 16-byte load: the fd, then an empty second half) */
	    insn(BPF_LD | BPF_DW | BPF_IMM, BPF_REG_1, BPF_PSEUDO_MAP_FD, 0, map_fd),
	    insn(0, 0, 0, 0, 0),
	    insn(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem),
	    insn(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, 2, 0),
	    insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 1),
	    insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	    insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0),
	    insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};
	memcpy(prog + n, tail, sizeof(tail));
	n += (int)(sizeof(tail) / sizeof(tail[0]));
	union bpf_attr a;
	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_PERF_EVENT;
	a.insns = (uint64_t)(uintptr_t)prog;
	a.insn_cnt = (uint32_t)n;
	a.license = (uint64_t)(uintptr_t) "Dual BSD/GPL";
	memcpy(a.prog_name, "stacktop_pids", sizeof("stacktop_pids"));
	return bpf_call(BPF_PROG_LOAD, &a);
}

int pidfilter_new(struct pidfilter **out)
{
	union bpf_attr a;
	struct pidfilter *f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->pids = calloc(PIDFILTER_MAX, sizeof(*f->pids));
	if (!f->pids) {
		free(f);
		return -ENOMEM;
	}
	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_HASH;
	a.key_size = sizeof(uint32_t);
	a.value_size = sizeof(uint32_t);
	a.max_entries = PIDFILTER_MAX;
	a.map_flags = 0; /* preallocated */
	memcpy(a.map_name, "stacktop_pids", sizeof("stacktop_pids"));
	f->map_fd = bpf_call(BPF_MAP_CREATE, &a);
	f->prog_fd = -1;
	if (f->map_fd >= 0)
		f->prog_fd = load_program(f->map_fd);
	int err = f->map_fd < 0 ? f->map_fd : f->prog_fd < 0 ? f->prog_fd : 0;
	if (err) {
		f->map_fd = f->map_fd < 0 ? -1 : f->map_fd;
		f->prog_fd = -1;
		pidfilter_free(f);
		return err;
	}
	/* The descriptors must not leak into a launched command. */
	fcntl(f->map_fd, F_SETFD, FD_CLOEXEC);
	fcntl(f->prog_fd, F_SETFD, FD_CLOEXEC);
	*out = f;
	return 0;
}

void pidfilter_free(struct pidfilter *f)
{
	if (!f)
		return;
	if (f->prog_fd >= 0)
		close(f->prog_fd);
	if (f->map_fd >= 0)
		close(f->map_fd);
	free(f->pids);
	free(f);
}

int pidfilter_attach(struct pidfilter *f, int perf_fd)
{
	return ioctl(perf_fd, PERF_EVENT_IOC_SET_BPF, f->prog_fd) < 0 ? -errno : 0;
}

static int find(const struct pidfilter *f, pid_t pid)
{
	for (int i = 0; i < f->n; i++)
		if (f->pids[i] == pid)
			return i;
	return -1;
}

static int map_update(struct pidfilter *f, int cmd, pid_t pid)
{
	uint32_t key = (uint32_t)pid, one = 1;
	union bpf_attr a;
	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)f->map_fd;
	a.key = (uint64_t)(uintptr_t)&key;
	if (cmd == BPF_MAP_UPDATE_ELEM) {
		a.value = (uint64_t)(uintptr_t)&one;
		a.flags = BPF_ANY;
	}
	return bpf_call(cmd, &a);
}

int pidfilter_add(struct pidfilter *f, pid_t pid)
{
	if (find(f, pid) >= 0)
		return 0;
	if (f->n >= PIDFILTER_MAX)
		return -ENOSPC;
	int err = map_update(f, BPF_MAP_UPDATE_ELEM, pid);
	if (err)
		return err;
	f->pids[f->n++] = pid;
	return 0;
}

void pidfilter_remove(struct pidfilter *f, pid_t pid)
{
	int i = find(f, pid);
	if (i < 0)
		return;
	map_update(f, BPF_MAP_DELETE_ELEM, pid);
	f->pids[i] = f->pids[--f->n];
}

bool pidfilter_has(const struct pidfilter *f, pid_t pid)
{
	return find(f, pid) >= 0;
}

int pidfilter_count(const struct pidfilter *f)
{
	return f->n;
}

pid_t pidfilter_pid(const struct pidfilter *f, int i)
{
	return f->pids[i];
}
