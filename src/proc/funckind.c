/*
 * funckind — what a function is, from its name (see funckind.h).
 *
 * One table, read top to bottom; the first row that matches decides. A row
 * matches anywhere in the name (SUB), at its start (PREFIX), or the whole
 * name once decorated C names are reduced to their POSIX word (NAME):
 * "__GI___libc_read" and "__x64_sys_read" are "read", "__recv_chk" is
 * "recv", "__poll_nocancel" is "poll", "pread64" is "pread". Rows marked
 * kernel only match kernel symbols: "pipe_read" or "blk_" in a program are
 * the program's own functions. A row is a kind, a way to match and the
 * names matched that way, tried in their order.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "stacktop/proc/funckind.h"

enum match { SUB, PREFIX, NAME };

struct row {
	const char *const *pats; /* NULL-ended; any of them */
	uint8_t match;		 /* enum match */
	uint8_t kind;		 /* enum funckind */
	uint8_t lock;		 /* enum funckind_lock */
	bool kernel;		 /* a kernel symbol only */
};

/* clang-format off */
#define NAMES(...) (const char *const[]){__VA_ARGS__, NULL}
#define R(k, m, ...) {NAMES(__VA_ARGS__), m, FUNCKIND_##k, FUNCKIND_LOCK_ANY, false}
#define K(k, m, ...) {NAMES(__VA_ARGS__), m, FUNCKIND_##k, FUNCKIND_LOCK_ANY, true}
#define L(l, ...) {NAMES(__VA_ARGS__), SUB, FUNCKIND_LOCK, FUNCKIND_LOCK_##l, false}
static const struct row rows[] = {
    /* ---- idle: waiting for work, not for a resource ---- */
    R(IDLE, SUB, "cond_wait", /* pthread_cond_wait, __pthread_cond_wait_common */
                 "cond_timedwait", "cond_clockwait",
                 "condition_variable::wait", /* also wait_for, wait_until */
                 "Condvar::wait", /* Rust std, parking_lot */
                 "sem_wait", /* sem_wait, __new_sem_wait_slow64 */
                 "sem_timedwait", "sem_clockwait", "pthread_join",
                 "clockjoin", /* __pthread_clockjoin_ex */
                 "timedjoin", "barrier_wait"),
    R(IDLE, NAME, "epoll_wait", /* an event loop with nothing ready */
                  "epoll_pwait", "epoll_pwait2"),
    K(IDLE, SUB, "ep_poll", "do_epoll_wait"),
    R(IDLE, SUB, "g_main_context_iterate", "g_main_context_poll", "uv__io_poll", "event_base_loop",
                 "epoll_dispatch", "ev_run", "ngx_process_events", "ngx_epoll_process_events",
                 "runtime.notesleep", /* Go: an M with nothing to run */
                 "runtime.notetsleep", "runtime.stopm", "runtime.mPark", "runtime.netpoll",
                 "sync.(*Cond).Wait",
                 "sync.(*WaitGroup).Wait",
                 "Monitor::wait", /* HotSpot: ObjectMonitor::wait (Object.wait) */
                 "JVM_MonitorWait"),

    /* ---- lock: contention for something another thread holds ---- */
    L(MUTEX, "pthread_mutex_lock", /* ___pthread_mutex_lock, __pthread_mutex_lock_full */
             "pthread_mutex_timedlock", "pthread_mutex_clocklock",
             "pthread_mutex_cond_lock"), /* a woken condvar waiter retaking its mutex */
    L(RDLOCK, "pthread_rwlock_rdlock", "pthread_rwlock_timedrdlock", "pthread_rwlock_clockrdlock"),
    L(WRLOCK, "pthread_rwlock_wrlock", "pthread_rwlock_timedwrlock", "pthread_rwlock_clockwrlock"),
    R(LOCK, SUB, "mutex_lock", /* any other mutex, the kernel's too */
                 "mutex_timedlock", "mutex_clocklock",
                 "mutex_unlock", /* the release's cost is the lock's too */
                 "lll_lock_wait", /* glibc's internal locks too */
                 "lll_unlock_wake", "rwlock_rdlock", "rwlock_wrlock", "rwlock_timed",
                 "rwlock_clock", "rwlock_unlock",
                 "spin_lock", /* pthread_spin_lock, _raw_spin_lock */
                 "std::mutex", "shared_mutex",
                 "Mutex::lock", /* Rust futex::Mutex::lock_contended, HotSpot Mutex::lock */
                 "RwLock::read", "RwLock::write", "mutex::lock", "lock_contended", "parking_lot"),
    K(LOCK, SUB, "rwsem_down"),
    R(LOCK, SUB, "runtime.lock2", /* Go runtime's own locks */
                 "runtime.lockWithRank", "sync.(*Mutex).", "sync.(*RWMutex).",
                 "ObjectMonitor::enter", /* HotSpot: synchronized contention */
                 "ObjectMonitor::EnterI", "ObjectSynchronizer::enter"),

    /* ---- sleep ---- */
    R(SLEEP, SUB, "nanosleep"), /* clock_nanosleep, do_nanosleep */
    R(SLEEP, NAME, "usleep", "sleep", "pause", "sigsuspend", "sigtimedwait", "sigwaitinfo"),
    R(SLEEP, SUB, "sleep_for", /* std::this_thread::sleep_for */
                  "sleep_until", "thread::sleep", /* Rust std::thread::sleep */
                  "runtime.usleep", "time.Sleep", "JVM_Sleep", "os::naked_short_sleep",
                  "os::naked_sleep"),

    /* ---- GC: a collector's work ---- */
    R(GC, SUB, "gcBgMark", /* Go */
               "gcDrain", "gcMark", "gcStart", "gcAssist", "runtime.markroot", "runtime.scanobject",
               "runtime.greyobject", "runtime.scanstack", "runtime.bgsweep", "runtime.sweepone",
               "runtime.wbBufFlush", "runtime.bgscavenge"),
    R(GC, PREFIX, "GC"), /* HotSpot GCTaskThread, GCTraceTime... */
    R(GC, SUB, "G1ConcurrentMark", /* HotSpot G1 */
               "G1ConcurrentRefine", "G1ParScanThreadState", "G1ParEvacuateFollowers",
               "G1YoungCollector", "G1FullCollector", "G1CollectedHeap::", "G1RemSet",
               "ConcurrentGCThread", "PSScavenge", /* HotSpot Parallel */
               "PSParallelCompact", "PSPromotionManager", "ShenandoahHeap", "ShenandoahConcurrent",
               "ZMark", /* HotSpot ZGC */
               "ZRelocate", "DefNewGeneration", /* HotSpot Serial */
               "MarkSweep::", "CollectedHeap::", /* GenCollectedHeap::do_collection... */
               "SerialHeap::", "ParallelScavengeHeap::"),
    R(GC, PREFIX, "gc_"), /* CPython gc_collect_main, gc_collect_region */
    R(GC, SUB, "gc_collect", "PyGC_Collect", "Scavenger", /* V8 */
               "MarkCompact", "Heap::CollectGarbage", "ConcurrentMarking", "IncrementalMarking",
               "garbage"),
    R(GC, NAME, "collect", /* CPython before 3.12: gcmodule.c's collect() */
                "collect_with_callback", "collect_generations"),

    /* ---- I/O ---- */
    R(IO, NAME, "read", "readv", "pread", "preadv", "preadv2", "write", "writev", "pwrite",
                "pwritev", "pwritev2", "poll", "ppoll", "select", "pselect", "pselect6", "recv",
                "recvfrom", "recvmsg", "recvmmsg", "send", "sendto", "sendmsg", "sendmmsg",
                "accept", "accept4", "connect", "fsync", "fdatasync", "sync_file_range", "open",
                "openat", "fread", "fwrite", "fflush", "splice", "sendfile", "copy_file_range",
                "io_uring_enter", "io_getevents", "io_submit"),
    R(IO, SUB, "internal/poll.(*FD)."), /* Go */
    K(IO, SUB, "vfs_read", "vfs_write", "do_select", "core_sys_select", "do_sys_poll",
               "poll_schedule_timeout", "pipe_read", "pipe_write", "tcp_recvmsg", "tcp_sendmsg",
               "unix_stream_read", "sk_wait_data", "wait_woken", "inet_csk_accept", "sock_read",
               "sock_write", "io_schedule", "filemap_read", "blk_"),

    /* ---- syscall: how a thread waits, not what for ---- */
    R(SYSCALL, SUB, "futex"), /* futex_wait_queue, runtime.futex */
    R(SYSCALL, NAME, "syscall"), /* glibc syscall() */
    R(SYSCALL, SUB, "syscall.Syscall", /* Go */
                    "syscall.RawSyscall"),
    K(SYSCALL, SUB, "entry_SYSCALL", "do_syscall_64", "syscall_exit", "exit_to_user_mode",
                    "restart_syscall"),
    K(SYSCALL, PREFIX, "x64_sys_", /* any other syscall's entry */
                       "se_sys_", "do_sys_"),

    /* ---- runtime: allocators and language runtimes ---- */
    R(RUNTIME, SUB, "malloc", "calloc", "realloc", "_int_free", "cfree"),
    R(RUNTIME, NAME, "free"),
    R(RUNTIME, SUB, "operator new", "operator delete", "runtime.", /* Go */
                    "runtime::", "SafepointSynchronize::", /* HotSpot */
                    "InterpreterRuntime::", "SharedRuntime::", "CompileBroker::"),
};
/* clang-format on */
#undef R
#undef K
#undef L
#undef NAMES

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

static bool pat_matches(enum match match, const char *pat, const char *func, const char *word)
{
	switch (match) {
	case SUB:
		return strstr(func, pat) != NULL;
	case PREFIX:
		return !strncmp(skip_underscores(func), pat, strlen(pat));
	default:
		return word[0] && !strcmp(word, pat);
	}
}

static bool row_matches(const struct row *r, const char *func, const char *word)
{
	for (const char *const *p = r->pats; *p; p++)
		if (pat_matches((enum match)r->match, *p, func, word))
			return true;
	return false;
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

/* A runtime's collector threads, by the names the runtime gives them:
 * HotSpot's (G1, Parallel, ZGC, Shenandoah; "VM Thread" also runs other
 * safepoint work, so it is left to its frames). */
bool funckind_gc_thread(const char *comm)
{
	static const char *const prefixes[] = {"GC Thread#", "GC task thread", "G1 Conc#",
					       "G1 Refine#", "G1 Main Marker", "ZWorker",
					       "ZDriver",    "Shenandoah",     "Conc GC"};

	for (size_t i = 0; comm && i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(comm, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

const char *funckind_name(enum funckind k)
{
	static const char *const names[FUNCKIND_COUNT] = {"none",  "lock", "idle",    "I/O",
							  "sleep", "GC",   "runtime", "syscall"};

	return (unsigned)k < FUNCKIND_COUNT ? names[k] : "?";
}
