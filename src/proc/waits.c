/*
 * waits — classify what an off-CPU thread waits in (see waits.h).
 *
 * The inputs are read by the wall sampler from /proc/PID/task/TID/{stat,
 * syscall,wchan} before it stops the thread (a ptrace stop turns the state
 * into 't' and the syscall file into the stop's view, so reading them after
 * would classify every sample as "stopped"). proc(5): the syscall file holds
 * "running" when the thread is on a CPU, "-1 sp pc" when it is blocked but
 * not in a syscall (e.g. a page fault), else "nr arg1..arg6 sp pc" in hex
 * for the args. Syscall numbers are x86-64 (<sys/syscall.h>), which is the
 * only architecture the sampler supports.
 *
 * D state wins over the syscall: an uninterruptible read of a dead NFS
 * server is not "I/O waiting for a client", it is stuck in the kernel, and
 * wchan says where.
 *
 * lock against idle: a futex is a mutex, a condition variable, a semaphore
 * or a join alike, so the syscall alone says "lock"; only the stack tells
 * contention (pthread_mutex_lock, __lll_lock_wait) from waiting for work
 * (pthread_cond_wait, sem_wait, pthread_join), and an event loop's poll
 * from a poll for one answer; which function is which is funckind's table,
 * the one every view asks. waits_by_function is asked about the frames
 * of the unwound stack, leaf first, by ingest; the first frame with an
 * opinion decides (a condvar wait that woke and now waits to retake its
 * mutex is in __lll_lock_wait under pthread_cond_wait: contention). A
 * blocked epoll_wait is an event loop with nothing ready: idle whatever
 * the stack.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include "stacktop/proc/waits.h"
#include "stacktop/proc/funckind.h"

struct sysname {
	int nr;
	const char *name;
};

#define SN(x)                                                                                      \
	{                                                                                          \
		SYS_##x, #x                                                                        \
	}
/* Syscalls a blocked thread is commonly found in, plus the frequent others
 * so "other" can name them. Sorted only for reading; lookup is linear. */
static const struct sysname sysnames[] = {
    SN(read),
    SN(write),
    SN(open),
    SN(close),
    SN(stat),
    SN(fstat),
    SN(lstat),
    SN(poll),
    SN(lseek),
    SN(mmap),
    SN(mprotect),
    SN(munmap),
    SN(brk),
    SN(rt_sigaction),
    SN(rt_sigprocmask),
    SN(rt_sigreturn),
    SN(ioctl),
    SN(pread64),
    SN(pwrite64),
    SN(readv),
    SN(writev),
    SN(access),
    SN(pipe),
    SN(select),
    SN(sched_yield),
    SN(mremap),
    SN(msync),
    SN(madvise),
    SN(dup),
    SN(dup2),
    SN(pause),
    SN(nanosleep),
    SN(getitimer),
    SN(alarm),
    SN(setitimer),
    SN(getpid),
    SN(sendfile),
    SN(socket),
    SN(connect),
    SN(accept),
    SN(sendto),
    SN(recvfrom),
    SN(sendmsg),
    SN(recvmsg),
    SN(shutdown),
    SN(bind),
    SN(listen),
    SN(clone),
    SN(fork),
    SN(vfork),
    SN(execve),
    SN(exit),
    SN(wait4),
    SN(kill),
    SN(uname),
    SN(semop),
    SN(msgsnd),
    SN(msgrcv),
    SN(fcntl),
    SN(flock),
    SN(fsync),
    SN(fdatasync),
    SN(truncate),
    SN(ftruncate),
    SN(getdents64),
    SN(rename),
    SN(mkdir),
    SN(unlink),
    SN(sysinfo),
    SN(ptrace),
    SN(rt_sigsuspend),
    SN(rt_sigtimedwait),
    SN(sigaltstack),
    SN(prctl),
    SN(sync),
    SN(gettid),
    SN(tkill),
    SN(futex),
    SN(sched_setaffinity),
    SN(sched_getaffinity),
    SN(io_getevents),
    SN(epoll_wait),
    SN(semtimedop),
    SN(timer_create),
    SN(clock_gettime),
    SN(clock_nanosleep),
    SN(exit_group),
    SN(epoll_ctl),
    SN(tgkill),
    SN(waitid),
    SN(inotify_add_watch),
    SN(openat),
    SN(mkdirat),
    SN(newfstatat),
    SN(unlinkat),
    SN(pselect6),
    SN(ppoll),
    SN(splice),
    SN(tee),
    SN(sync_file_range),
    SN(vmsplice),
    SN(epoll_pwait),
    SN(signalfd),
    SN(timerfd_create),
    SN(eventfd),
    SN(fallocate),
    SN(timerfd_settime),
    SN(accept4),
    SN(signalfd4),
    SN(eventfd2),
    SN(epoll_create1),
    SN(pipe2),
    SN(preadv),
    SN(pwritev),
    SN(recvmmsg),
    SN(sendmmsg),
    SN(getrandom),
    SN(memfd_create),
    SN(statx),
    SN(io_uring_enter),
    SN(io_pgetevents),
    SN(pidfd_open),
    SN(clone3),
    SN(preadv2),
    SN(pwritev2),
    SN(copy_file_range),
    SN(syncfs),
    SN(msgget),
    SN(epoll_pwait2),
    SN(futex_waitv),
    SN(membarrier),
    SN(rseq),
    SN(restart_syscall),
};
#undef SN

static bool is_lock(int nr)
{
	return nr == SYS_futex || nr == SYS_futex_waitv || nr == SYS_semop ||
	       nr == SYS_semtimedop || nr == SYS_flock;
}

/* epoll is an event loop's wait: blocked there, nothing is ready. */
static bool is_idle(int nr)
{
	return nr == SYS_epoll_wait || nr == SYS_epoll_pwait || nr == SYS_epoll_pwait2;
}

static bool is_io(int nr)
{
	/* clang-format off */
	static const int io[] = {
	    SYS_read,            SYS_write,           SYS_pread64,         SYS_pwrite64,
	    SYS_readv,           SYS_writev,          SYS_preadv,          SYS_pwritev,
	    SYS_preadv2,         SYS_pwritev2,        SYS_recvfrom,        SYS_sendto,
	    SYS_recvmsg,         SYS_sendmsg,         SYS_recvmmsg,        SYS_sendmmsg,
	    SYS_poll,            SYS_ppoll,           SYS_select,          SYS_pselect6,
	    SYS_accept,          SYS_accept4,         SYS_connect,         SYS_fsync,
	    SYS_fdatasync,       SYS_sync,            SYS_syncfs,          SYS_sync_file_range,
	    SYS_sendfile,        SYS_splice,          SYS_tee,             SYS_vmsplice,
	    SYS_copy_file_range, SYS_io_getevents,    SYS_io_pgetevents,   SYS_io_uring_enter,
	    SYS_msgrcv,          SYS_msgsnd,          SYS_open,            SYS_openat,
	};
	/* clang-format on */
	for (size_t i = 0; i < sizeof(io) / sizeof(io[0]); i++)
		if (io[i] == nr)
			return true;
	return false;
}

static bool is_sleep(int nr)
{
	return nr == SYS_nanosleep || nr == SYS_clock_nanosleep || nr == SYS_pause ||
	       nr == SYS_rt_sigsuspend || nr == SYS_rt_sigtimedwait;
}

/* restart_syscall continues an interrupted nanosleep, clock_nanosleep,
 * futex wait or poll with its remaining timeout (kernel: restart_block),
 * and it is what a thread shows after any stop, our own included: only the
 * kernel function it sleeps in tells which. */
static enum sample_wait by_wchan(const char *wchan)
{
	enum sample_wait w;

	if (!wchan)
		return SAMPLE_WAIT_OTHER;
	/* A futex is lock until the stack says otherwise, as the syscall is. */
	if (strstr(wchan, "futex"))
		return SAMPLE_WAIT_LOCK;
	w = waits_of_funckind(funckind_of(wchan, true));
	return w != SAMPLE_WAIT_NONE ? w : SAMPLE_WAIT_OTHER;
}

bool waits_wchan_generic(const char *wchan)
{
	static const char *const generic[] = {
	    "do_syscall_64", "entry_SYSCALL",  "syscall_exit", "restart_syscall",
	    "ptrace_stop",   "do_signal_stop", "get_signal",   "exit_to_user_mode"};

	if (!wchan || !wchan[0])
		return false;
	while (*wchan == '_')
		wchan++;
	for (size_t i = 0; i < sizeof(generic) / sizeof(generic[0]); i++)
		if (!strncmp(wchan, generic[i], strlen(generic[i])))
			return true;
	return false;
}

enum sample_wait waits_classify(char state, int syscall_nr, const char *wchan)
{
	if (state == 'D')
		return SAMPLE_WAIT_DSTATE;
	if (state == 'R')
		return SAMPLE_WAIT_NONE;
	if (syscall_nr < 0) {
		/* Blocked outside a syscall (page fault) or unknown: wchan may
		 * still say it is a futex or a sleep. */
		return by_wchan(wchan);
	}
	if (syscall_nr == SYS_restart_syscall)
		return by_wchan(wchan);
	if (is_lock(syscall_nr))
		return SAMPLE_WAIT_LOCK;
	if (is_idle(syscall_nr))
		return SAMPLE_WAIT_IDLE;
	if (is_io(syscall_nr))
		return SAMPLE_WAIT_IO;
	if (is_sleep(syscall_nr))
		return SAMPLE_WAIT_SLEEP;
	return SAMPLE_WAIT_OTHER;
}

const char *waits_name(enum sample_wait w)
{
	static const char *names[SAMPLE_WAIT_COUNT] = {
	    "running", "lock", "I/O", "sleep", "D-state", "other", "idle", "CPU-wait", "GIL"};
	return (unsigned)w < SAMPLE_WAIT_COUNT ? names[w] : "?";
}

const char *waits_frame_name(enum sample_wait w)
{
	static const char *names[SAMPLE_WAIT_COUNT] = {"[running]", "[lock]",	  "[I/O]",
						       "[sleep]",   "[D-state]",  "[other]",
						       "[idle]",    "[CPU-wait]", "[GIL]"};
	return (unsigned)w < SAMPLE_WAIT_COUNT ? names[w] : "[?]";
}

enum sample_wait waits_of_funckind(enum funckind k)
{
	switch (k) {
	case FUNCKIND_LOCK:
		return SAMPLE_WAIT_LOCK;
	case FUNCKIND_IDLE:
		return SAMPLE_WAIT_IDLE;
	case FUNCKIND_IO:
		return SAMPLE_WAIT_IO;
	case FUNCKIND_SLEEP:
		return SAMPLE_WAIT_SLEEP;
	default:
		return SAMPLE_WAIT_NONE;
	}
}

enum sample_wait waits_by_function(enum sample_wait kind, int syscall_nr, const char *func)
{
	bool poll_family = syscall_nr == SYS_poll || syscall_nr == SYS_ppoll ||
			   syscall_nr == SYS_select || syscall_nr == SYS_pselect6;
	bool futex = kind == SAMPLE_WAIT_LOCK || kind == SAMPLE_WAIT_OTHER;
	enum sample_wait w;

	/* Only these are refined: the table is not read for the others. */
	if (!func || (!futex && !(kind == SAMPLE_WAIT_IO && poll_family)))
		return SAMPLE_WAIT_NONE;
	w = waits_of_funckind(funckind_of(func, false));
	/* A futex: its caller says lock or idle. A poll: an event loop's is idle. */
	if (futex)
		return w == SAMPLE_WAIT_LOCK || w == SAMPLE_WAIT_IDLE ? w : SAMPLE_WAIT_NONE;
	return w == SAMPLE_WAIT_IDLE ? w : SAMPLE_WAIT_NONE;
}

const char *waits_syscall_name(int nr)
{
	for (size_t i = 0; i < sizeof(sysnames) / sizeof(sysnames[0]); i++)
		if (sysnames[i].nr == nr)
			return sysnames[i].name;
	return NULL;
}

int waits_parse_syscall(const char *text, int *nr, unsigned long long *sp, unsigned long long *pc)
{
	unsigned long long v[8];
	char *end;
	*nr = -1;
	if (sp)
		*sp = 0;
	if (pc)
		*pc = 0;
	if (!text)
		return -EINVAL;
	if (strncmp(text, "running", 7) == 0)
		return 0;
	long n = strtol(text, &end, 10);
	if (end == text)
		return -EINVAL;
	const char *p = end;
	int k = 0;
	/* "-1 sp pc" has two more numbers, a syscall has eight. */
	while (k < 8) {
		unsigned long long x = strtoull(p, &end, 16);
		if (end == p)
			break;
		v[k++] = x;
		p = end;
	}
	if (n == -1 && k >= 2) {
		if (sp)
			*sp = v[0];
		if (pc)
			*pc = v[1];
		return 0;
	}
	if (n < 0 || n > INT_MAX || k != 8)
		return -EINVAL; /* (a number past INT_MAX must not wrap into a real one) */
	*nr = (int)n;
	if (sp)
		*sp = v[6];
	if (pc)
		*pc = v[7];
	return 0;
}

int waits_parse_schedstat(const char *text, unsigned long long *run_ns)
{
	return waits_parse_schedstat2(text, run_ns, NULL);
}

int waits_parse_schedstat2(const char *text, unsigned long long *run_ns,
			   unsigned long long *delay_ns)
{
	char *end;
	if (!text)
		return -EINVAL;
	unsigned long long v = strtoull(text, &end, 10);
	if (end == text)
		return -EINVAL;
	if (delay_ns) {
		const char *p = end;
		unsigned long long d = strtoull(p, &end, 10);
		if (end == p)
			return -EINVAL;
		*delay_ns = d;
	}
	*run_ns = v;
	return 0;
}
