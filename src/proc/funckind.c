/*
 * funckind — what a function is, from its name (see funckind.h).
 *
 * One table, read top to bottom; the first row that matches decides. A row
 * matches anywhere in the name (SUB), at its start (PREFIX), or the whole
 * name once decorated C names are reduced to their POSIX word (NAME):
 * "__GI___libc_read" and "__x64_sys_read" are "read", "__recv_chk" is
 * "recv", "__poll_nocancel" is "poll", "pread64" is "pread". Rows marked
 * kernel only match kernel symbols: "pipe_read" or "blk_" in a program are
 * the program's own functions.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "stacktop/proc/funckind.h"

enum match { SUB, PREFIX, NAME };

struct row {
	const char *pat;
	uint8_t match; /* enum match */
	uint8_t kind;  /* enum funckind */
	uint8_t lock;  /* enum funckind_lock */
	bool kernel;   /* a kernel symbol only */
};

/* clang-format off */
#define R(p, m, k) {p, m, FUNCKIND_##k, FUNCKIND_LOCK_ANY, false}
#define K(p, m, k) {p, m, FUNCKIND_##k, FUNCKIND_LOCK_ANY, true}
#define L(p, l) {p, SUB, FUNCKIND_LOCK, FUNCKIND_LOCK_##l, false}
static const struct row rows[] = {
    /* ---- idle: waiting for work, not for a resource ---- */
    R("cond_wait", SUB, IDLE),		/* pthread_cond_wait, __pthread_cond_wait_common */
    R("cond_timedwait", SUB, IDLE),
    R("cond_clockwait", SUB, IDLE),
    R("condition_variable::wait", SUB, IDLE), /* also wait_for, wait_until */
    R("Condvar::wait", SUB, IDLE),	/* Rust std, parking_lot */
    R("sem_wait", SUB, IDLE),		/* sem_wait, __new_sem_wait_slow64 */
    R("sem_timedwait", SUB, IDLE),
    R("sem_clockwait", SUB, IDLE),
    R("pthread_join", SUB, IDLE),
    R("clockjoin", SUB, IDLE),		/* __pthread_clockjoin_ex */
    R("timedjoin", SUB, IDLE),
    R("barrier_wait", SUB, IDLE),
    R("epoll_wait", NAME, IDLE),	/* an event loop with nothing ready */
    R("epoll_pwait", NAME, IDLE),
    R("epoll_pwait2", NAME, IDLE),
    K("ep_poll", SUB, IDLE),
    K("do_epoll_wait", SUB, IDLE),
    R("g_main_context_iterate", SUB, IDLE),
    R("g_main_context_poll", SUB, IDLE),
    R("uv__io_poll", SUB, IDLE),
    R("event_base_loop", SUB, IDLE),
    R("epoll_dispatch", SUB, IDLE),
    R("ev_run", SUB, IDLE),
    R("ngx_process_events", SUB, IDLE),
    R("ngx_epoll_process_events", SUB, IDLE),
    R("runtime.notesleep", SUB, IDLE),	/* Go: an M with nothing to run */
    R("runtime.notetsleep", SUB, IDLE),
    R("runtime.stopm", SUB, IDLE),
    R("runtime.netpoll", SUB, IDLE),
    R("sync.(*Cond).Wait", SUB, IDLE),
    R("sync.(*WaitGroup).Wait", SUB, IDLE),
    R("Monitor::wait", SUB, IDLE),	/* HotSpot: ObjectMonitor::wait (Object.wait) */
    R("JVM_MonitorWait", SUB, IDLE),

    /* ---- lock: contention for something another thread holds ---- */
    L("pthread_mutex_lock", MUTEX),	/* ___pthread_mutex_lock, __pthread_mutex_lock_full */
    L("pthread_mutex_timedlock", MUTEX),
    L("pthread_mutex_clocklock", MUTEX),
    L("pthread_mutex_cond_lock", MUTEX), /* a woken condvar waiter retaking its mutex */
    L("pthread_rwlock_rdlock", RDLOCK),
    L("pthread_rwlock_timedrdlock", RDLOCK),
    L("pthread_rwlock_clockrdlock", RDLOCK),
    L("pthread_rwlock_wrlock", WRLOCK),
    L("pthread_rwlock_timedwrlock", WRLOCK),
    L("pthread_rwlock_clockwrlock", WRLOCK),
    R("mutex_lock", SUB, LOCK),		/* any other mutex, the kernel's too */
    R("mutex_timedlock", SUB, LOCK),
    R("mutex_clocklock", SUB, LOCK),
    R("mutex_unlock", SUB, LOCK),	/* the release's cost is the lock's too */
    R("lll_lock_wait", SUB, LOCK),	/* glibc's internal locks too */
    R("lll_unlock_wake", SUB, LOCK),
    R("rwlock_rdlock", SUB, LOCK),
    R("rwlock_wrlock", SUB, LOCK),
    R("rwlock_timed", SUB, LOCK),
    R("rwlock_clock", SUB, LOCK),
    R("rwlock_unlock", SUB, LOCK),
    R("spin_lock", SUB, LOCK),		/* pthread_spin_lock, _raw_spin_lock */
    R("std::mutex", SUB, LOCK),
    R("shared_mutex", SUB, LOCK),
    R("Mutex::lock", SUB, LOCK),	/* Rust futex::Mutex::lock_contended, HotSpot Mutex::lock */
    R("RwLock::read", SUB, LOCK),
    R("RwLock::write", SUB, LOCK),
    R("mutex::lock", SUB, LOCK),
    R("lock_contended", SUB, LOCK),
    R("parking_lot", SUB, LOCK),
    K("rwsem_down", SUB, LOCK),
    R("runtime.lock2", SUB, LOCK),	/* Go runtime's own locks */
    R("runtime.lockWithRank", SUB, LOCK),
    R("sync.(*Mutex).", SUB, LOCK),
    R("sync.(*RWMutex).", SUB, LOCK),
    R("ObjectMonitor::enter", SUB, LOCK), /* HotSpot: synchronized contention */
    R("ObjectMonitor::EnterI", SUB, LOCK),
    R("ObjectSynchronizer::enter", SUB, LOCK),

    /* ---- sleep ---- */
    R("nanosleep", SUB, SLEEP),		/* clock_nanosleep, do_nanosleep */
    R("usleep", NAME, SLEEP),
    R("sleep", NAME, SLEEP),
    R("pause", NAME, SLEEP),
    R("sigsuspend", NAME, SLEEP),
    R("sigtimedwait", NAME, SLEEP),
    R("sigwaitinfo", NAME, SLEEP),
    R("sleep_for", SUB, SLEEP),		/* std::this_thread::sleep_for */
    R("sleep_until", SUB, SLEEP),
    R("thread::sleep", SUB, SLEEP),	/* Rust std::thread::sleep */
    R("runtime.usleep", SUB, SLEEP),
    R("time.Sleep", SUB, SLEEP),
    R("JVM_Sleep", SUB, SLEEP),
    R("os::naked_short_sleep", SUB, SLEEP),
    R("os::naked_sleep", SUB, SLEEP),

    /* ---- GC: a collector's work ---- */
    R("gcBgMark", SUB, GC),		/* Go */
    R("gcDrain", SUB, GC),
    R("gcMark", SUB, GC),
    R("gcStart", SUB, GC),
    R("gcAssist", SUB, GC),
    R("runtime.markroot", SUB, GC),
    R("runtime.scanobject", SUB, GC),
    R("runtime.greyobject", SUB, GC),
    R("runtime.scanstack", SUB, GC),
    R("runtime.bgsweep", SUB, GC),
    R("runtime.sweepone", SUB, GC),
    R("runtime.wbBufFlush", SUB, GC),
    R("GC", PREFIX, GC),		/* HotSpot GCTaskThread, GCTraceTime... */
    R("G1ConcurrentMark", SUB, GC),	/* HotSpot G1 */
    R("G1ConcurrentRefine", SUB, GC),
    R("G1ParScanThreadState", SUB, GC),
    R("G1ParEvacuateFollowers", SUB, GC),
    R("G1YoungCollector", SUB, GC),
    R("G1FullCollector", SUB, GC),
    R("G1CollectedHeap::", SUB, GC),
    R("G1RemSet", SUB, GC),
    R("ConcurrentGCThread", SUB, GC),
    R("PSScavenge", SUB, GC),		/* HotSpot Parallel */
    R("PSParallelCompact", SUB, GC),
    R("PSPromotionManager", SUB, GC),
    R("ShenandoahHeap", SUB, GC),
    R("ShenandoahConcurrent", SUB, GC),
    R("ZMark", SUB, GC),		/* HotSpot ZGC */
    R("ZRelocate", SUB, GC),
    R("DefNewGeneration", SUB, GC),	/* HotSpot Serial */
    R("MarkSweep::", SUB, GC),
    R("gc_", PREFIX, GC),		/* CPython gc_collect_main, gc_collect_region */
    R("gc_collect", SUB, GC),
    R("PyGC_Collect", SUB, GC),
    R("Scavenger", SUB, GC),		/* V8 */
    R("MarkCompact", SUB, GC),
    R("Heap::CollectGarbage", SUB, GC),
    R("garbage", SUB, GC),

    /* ---- I/O ---- */
    R("read", NAME, IO),
    R("readv", NAME, IO),
    R("pread", NAME, IO),
    R("preadv", NAME, IO),
    R("preadv2", NAME, IO),
    R("write", NAME, IO),
    R("writev", NAME, IO),
    R("pwrite", NAME, IO),
    R("pwritev", NAME, IO),
    R("pwritev2", NAME, IO),
    R("poll", NAME, IO),
    R("ppoll", NAME, IO),
    R("select", NAME, IO),
    R("pselect", NAME, IO),
    R("pselect6", NAME, IO),
    R("recv", NAME, IO),
    R("recvfrom", NAME, IO),
    R("recvmsg", NAME, IO),
    R("recvmmsg", NAME, IO),
    R("send", NAME, IO),
    R("sendto", NAME, IO),
    R("sendmsg", NAME, IO),
    R("sendmmsg", NAME, IO),
    R("accept", NAME, IO),
    R("accept4", NAME, IO),
    R("connect", NAME, IO),
    R("fsync", NAME, IO),
    R("fdatasync", NAME, IO),
    R("sync_file_range", NAME, IO),
    R("open", NAME, IO),
    R("openat", NAME, IO),
    R("fread", NAME, IO),
    R("fwrite", NAME, IO),
    R("fflush", NAME, IO),
    R("splice", NAME, IO),
    R("sendfile", NAME, IO),
    R("copy_file_range", NAME, IO),
    R("io_uring_enter", NAME, IO),
    R("io_getevents", NAME, IO),
    R("io_submit", NAME, IO),
    R("internal/poll.(*FD).", SUB, IO), /* Go */
    K("vfs_read", SUB, IO),
    K("vfs_write", SUB, IO),
    K("do_select", SUB, IO),
    K("core_sys_select", SUB, IO),
    K("do_sys_poll", SUB, IO),
    K("poll_schedule_timeout", SUB, IO),
    K("pipe_read", SUB, IO),
    K("pipe_write", SUB, IO),
    K("tcp_recvmsg", SUB, IO),
    K("tcp_sendmsg", SUB, IO),
    K("unix_stream_read", SUB, IO),
    K("sk_wait_data", SUB, IO),
    K("wait_woken", SUB, IO),
    K("inet_csk_accept", SUB, IO),
    K("sock_read", SUB, IO),
    K("sock_write", SUB, IO),
    K("io_schedule", SUB, IO),
    K("filemap_read", SUB, IO),
    K("blk_", SUB, IO),

    /* ---- syscall: how a thread waits, not what for ---- */
    R("futex", SUB, SYSCALL),		/* futex_wait_queue, runtime.futex */
    R("syscall", NAME, SYSCALL),	/* glibc syscall() */
    R("syscall.Syscall", SUB, SYSCALL), /* Go */
    R("syscall.RawSyscall", SUB, SYSCALL),
    K("entry_SYSCALL", SUB, SYSCALL),
    K("do_syscall_64", SUB, SYSCALL),
    K("syscall_exit", SUB, SYSCALL),
    K("exit_to_user_mode", SUB, SYSCALL),
    K("restart_syscall", SUB, SYSCALL),
    K("x64_sys_", PREFIX, SYSCALL),	/* any other syscall's entry */
    K("se_sys_", PREFIX, SYSCALL),
    K("do_sys_", PREFIX, SYSCALL),

    /* ---- runtime: allocators and language runtimes ---- */
    R("malloc", SUB, RUNTIME),
    R("calloc", SUB, RUNTIME),
    R("realloc", SUB, RUNTIME),
    R("_int_free", SUB, RUNTIME),
    R("cfree", SUB, RUNTIME),
    R("free", NAME, RUNTIME),
    R("operator new", SUB, RUNTIME),
    R("operator delete", SUB, RUNTIME),
    R("runtime.", SUB, RUNTIME),	/* Go */
    R("runtime::", SUB, RUNTIME),
    R("SafepointSynchronize::", SUB, RUNTIME), /* HotSpot */
    R("InterpreterRuntime::", SUB, RUNTIME),
    R("SharedRuntime::", SUB, RUNTIME),
    R("CompileBroker::", SUB, RUNTIME),
};
/* clang-format on */
#undef R
#undef K
#undef L

#define NROWS (sizeof(rows) / sizeof(rows[0]))

static const char *skip_underscores(const char *s)
{
	while (*s == '_')
		s++;
	return s;
}

/* The POSIX word of a decorated C name into buf ("" when it is too long to
 * be one): "__GI___libc_read" → "read", "__x64_sys_pread64" → "pread",
 * "__recv_chk" → "recv", "poll_schedule_timeout.constprop.0" keeps its
 * name without the clone's suffix. */
static void posix_word(const char *f, char *buf, size_t size)
{
	static const char *const prefixes[] = {"GI_",	  "libc_",   "x64_sys_", "ia32_sys_",
					       "se_sys_", "do_sys_", "ksys_",	 "sys_"};
	static const char *const suffixes[] = {"_nocancel", "64", "_chk"};
	size_t n, k;
	const char *dot;

	for (int round = 0; round < 3; round++) {
		f = skip_underscores(f);
		for (k = 0; k < sizeof(prefixes) / sizeof(prefixes[0]); k++)
			if (!strncmp(f, prefixes[k], strlen(prefixes[k]))) {
				f += strlen(prefixes[k]);
				break;
			}
		if (k == sizeof(prefixes) / sizeof(prefixes[0]))
			break;
	}
	dot = strchr(f, '.'); /* a compiler's clone: ".constprop.0", ".isra.0", ".cold" */
	n = dot ? (size_t)(dot - f) : strlen(f);
	if (n >= size) {
		buf[0] = '\0';
		return;
	}
	memcpy(buf, f, n);
	buf[n] = '\0';
	/* "__pread64_nocancel": both, outer first */
	for (k = 0; k < sizeof(suffixes) / sizeof(suffixes[0]); k++) {
		size_t l = strlen(suffixes[k]);

		if (n > l && !strcmp(buf + n - l, suffixes[k])) {
			buf[n -= l] = '\0';
			k = (size_t)-1; /* from the first again */
		}
	}
}

static bool row_matches(const struct row *r, const char *func, const char *word)
{
	switch (r->match) {
	case SUB:
		return strstr(func, r->pat) != NULL;
	case PREFIX:
		return !strncmp(skip_underscores(func), r->pat, strlen(r->pat));
	default:
		return word[0] && !strcmp(word, r->pat);
	}
}

static const struct row *lookup(const char *func, bool kernel)
{
	char word[48];

	if (!func || !func[0])
		return NULL;
	posix_word(func, word, sizeof(word));
	for (size_t i = 0; i < NROWS; i++)
		if ((kernel || !rows[i].kernel) && row_matches(&rows[i], func, word))
			return &rows[i];
	return NULL;
}

enum funckind funckind_of(const char *func, bool kernel)
{
	const struct row *r = lookup(func, kernel);

	return r ? (enum funckind)r->kind : FUNCKIND_NONE;
}

enum funckind funckind_lock_of(const char *func, enum funckind_lock *lock)
{
	const struct row *r = lookup(func, false);

	if (lock)
		*lock = r ? (enum funckind_lock)r->lock : FUNCKIND_LOCK_ANY;
	return r ? (enum funckind)r->kind : FUNCKIND_NONE;
}

const char *funckind_name(enum funckind k)
{
	static const char *const names[FUNCKIND_COUNT] = {"none",  "lock", "idle",    "I/O",
							  "sleep", "GC",   "runtime", "syscall"};

	return (unsigned)k < FUNCKIND_COUNT ? names[k] : "?";
}
