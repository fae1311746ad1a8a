/*
 * locks — who holds the lock a thread waits on: lock owners read from the
 * target's memory, the wait-for graph (thread → lock → owner) and its
 * cycles (deadlocks).
 *
 * A thread blocked in futex(2) names its futex in /proc/PID/task/TID/syscall
 * ("202 uaddr op val ..."). For a glibc pthread_mutex_t the futex word is
 * the mutex's __lock, and its owner's TID sits 8 bytes after it (__owner);
 * robust and PI mutexes keep the owner's TID in the futex word itself. A
 * condition variable, a semaphore or a barrier has no owner and is never
 * given one: glibc waits on those with FUTEX_WAIT_BITSET, and on a mutex's
 * lock word with plain FUTEX_WAIT and the value 2 (locked, with waiters);
 * a stack, when the caller has one, refines it (locks_hint_of_function,
 * by funckind's table):
 * pthread_cond_wait / sem_wait mean no owner, pthread_rwlock_*lock means
 * an rwlock whose writer (__cur_writer) is knowable.
 *
 *   locks_reset → (locks_read_thread / locks_add)* → locks_build →
 *   locks_find / locks_cycle_of / cycles[] → locks_free
 *
 * locks_decode is pure (tests feed it bytes); locks_read_thread does the I/O:
 * one read of the syscall file and one process_vm_readv (ptrace-read
 * permission only: the target is never stopped). An owner is claimed only
 * when it is a live thread of the same process other than the waiter, else
 * the wait is kept with owner 0 ("owner unknown"). No printing, no names:
 * the views and dump name TIDs.
 */
#ifndef STACKTOP_LOCKS_H
#define STACKTOP_LOCKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum locks_kind {
	LOCKS_KIND_NONE = 0, /* not a futex wait */
	LOCKS_KIND_MUTEX,    /* pthread mutex (normal, recursive, error-checking) */
	LOCKS_KIND_ROBUST,   /* robust or PI mutex: the owner is in the futex word */
	LOCKS_KIND_RWLOCK,   /* rwlock: the owner is the writer, when there is one */
	LOCKS_KIND_NOOWNER,  /* condition variable, semaphore, barrier, other futex */
};

/* What the waiter's stack says, when there is one. */
enum locks_hint {
	LOCKS_HINT_NONE = 0, /* no stack: the futex op and the memory decide */
	LOCKS_HINT_MUTEX,    /* pthread_mutex_lock / __lll_lock_wait / _full */
	LOCKS_HINT_NOOWNER,  /* pthread_cond_*wait, sem_*wait, pthread_barrier_wait */
	LOCKS_HINT_RDLOCK,   /* pthread_rwlock_rdlock */
	LOCKS_HINT_WRLOCK,   /* pthread_rwlock_wrlock */
};

/* The futex(2) call a thread is blocked in. */
struct locks_futex {
	uint64_t addr; /* uaddr */
	int op;	       /* with FUTEX_PRIVATE_FLAG / FUTEX_CLOCK_REALTIME */
	uint32_t val;
};

/* The bytes around the futex word: mem[LOCKS_MEM_BEFORE] is the word at
 * addr; before_ok says whether the bytes before it were readable. */
#define LOCKS_MEM_BEFORE 16
#define LOCKS_MEM_SIZE 40

struct locks_wait {
	pid_t pid, tid;
	uint64_t addr; /* the futex: the mutex (or rwlock word) waited on */
	enum locks_kind kind;
	pid_t owner; /* 0: unknown */
	int cycle;   /* 1-based index into cycles[] when in a deadlock, else 0 */
};

struct locks_cycle {
	int first, n; /* tids[first .. first+n): each waits on a lock the next holds */
};

/* How often waiter was seen waiting on a lock owner held (owner 0:
 * unknown), decayed so it covers about the window. */
/* Who held the locks one waiter waited on, as decayed counts: at most
 * LOCKS_HOLD_OWNERS owners a waiter (a target that rotates the owner
 * field of its mutexes, or a lock passed round a pool, would otherwise add
 * an entry per owner per scan: 563k entries and a full core after 4 min
 * at 2,100 threads); past that a new owner takes the place of the
 * faintest. */
#define LOCKS_HOLD_OWNERS 8
struct locks_hold {
	pid_t waiter;
	int nowners;
	struct {
		pid_t owner;
		double n;
	} o[LOCKS_HOLD_OWNERS];
};

struct locks {
	struct locks_wait *w;
	int n;
	size_t cap;
	pid_t *tids; /* the cycles' threads, in wait order */
	size_t tids_cap;
	struct locks_cycle *cycles;
	int ncycles;
	size_t cycles_cap;
	int read_err; /* the last failure to read a target (-EPERM...), 0 if none */
	pid_t read_err_pid;
	/* Kept across locks_reset (locks_tally): who held what waiters waited
	 * on, one entry a waiter, sorted by waiter. */
	struct locks_hold *hold;
	int nhold;
	size_t hold_cap;
};

/* Is tid a live thread of process pid (ctx as given)? */
typedef bool (*locks_alive_fn)(void *ctx, pid_t pid, pid_t tid);

/* Parse the text of /proc/PID/task/TID/syscall: 0 and f filled when it is a
 * futex call, -ENOENT for any other syscall (or running), -EINVAL when it
 * cannot be parsed. */
int locks_parse_syscall(const char *text, struct locks_futex *f);

/* Classify the wait and find its owner from the futex call, the bytes
 * around the word (mem as LOCKS_MEM_SIZE bytes, see LOCKS_MEM_BEFORE; NULL
 * when unreadable) and the hint. *owner is 0 unless alive(owner) holds and
 * owner != tid. Returns the kind. */
enum locks_kind locks_decode(const struct locks_futex *f, const uint8_t *mem, bool before_ok,
			     enum locks_hint hint, pid_t pid, pid_t tid, locks_alive_fn alive,
			     void *ctx, pid_t *owner);

/* The hint one function name of a stack gives (NONE when it says nothing):
 * NOOWNER for what funckind calls idle, MUTEX/RDLOCK/WRLOCK for glibc's
 * pthread_mutex_*lock / pthread_rwlock_*lock. */
enum locks_hint locks_hint_of_function(const char *func);

/* What a thread blocked in futex waits on, as read: the call and the bytes
 * around the word (mem_err: the memory read's -errno, 0 when read). */
struct locks_raw {
	struct locks_futex f;
	uint8_t mem[LOCKS_MEM_SIZE];
	bool before_ok;
	int mem_err;
};

/* Read thread tid of pid's futex call (its syscall file) and the target's
 * memory around the futex word. 0; -ENOENT: not in futex; -errno when the
 * syscall file cannot be read (-EACCES/-EPERM: no ptrace permission). A
 * memory read that fails is kept in r->mem_err (0 is still returned). */
int locks_read_raw(pid_t pid, pid_t tid, struct locks_raw *r);
/* Decode r with the stack's hint into *out (owners checked against
 * /proc/PID/task). */
void locks_resolve(const struct locks_raw *r, pid_t pid, pid_t tid, enum locks_hint hint,
		   struct locks_wait *out);
/* Both: 0, -ENOENT, -errno of the syscall file; or the memory read's
 * -errno with *out filled (kind known, owner 0). */
int locks_read_thread(pid_t pid, pid_t tid, enum locks_hint hint, struct locks_wait *out);

/* Start a new graph (keeps the allocations). */
void locks_reset(struct locks *g);
/* Add a wait (copied). 0 or -ENOMEM. */
int locks_add(struct locks *g, const struct locks_wait *w);
/* Find the cycles: mark each wait's cycle, fill cycles[]/tids[] (each cycle
 * starts at its lowest TID). 0 or -ENOMEM. */
int locks_build(struct locks *g);

/* After locks_build: every count of hold[] times keep (0..1; owners that
 * fall under 0.01 are dropped, and waiters left with none), then one more
 * for each wait of the graph on a lock that can have an owner. O(waits ×
 * log waiters), the table at most LOCKS_HOLD_OWNERS owners a waiter. 0 or
 * -ENOMEM. */
int locks_tally(struct locks *g, double keep);
/* The owners waiter was seen waiting on, as shares (0..1) of its tally:
 * up to max of them into owners/shares, most first. Returns how many. */
int locks_held_by(const struct locks *g, pid_t waiter, pid_t *owners, double *shares, int max);

/* The wait of tid, or NULL. */
const struct locks_wait *locks_find(const struct locks *g, pid_t tid);
/* Waits whose lock tid holds. */
int locks_waiters_on(const struct locks *g, pid_t owner);
/* "mutex", "robust mutex", "rwlock", "futex" (no owner). */
const char *locks_kind_name(enum locks_kind k);

void locks_free(struct locks *g);

#endif
