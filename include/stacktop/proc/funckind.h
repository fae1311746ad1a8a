/*
 * funckind — what a function is, from its name alone: a lock, a wait for
 * work, I/O, a sleep, a garbage collector, a language runtime, a way into
 * the kernel, or none of these. The one table every screen asks, so a wait
 * has the same word everywhere: wall mode's refinement of a futex wait
 * (waits_by_function), the lock owners' hint (locks_hint_of_function),
 * `dump`, the icicle's colours and the threads view's state of a sleeper.
 *
 * Pure: a name in, a kind out; no I/O, no allocation, no state. Names are
 * C symbols (glibc's "__GI___libc_read", "___pthread_cond_wait"), kernel
 * symbols, demangled C++ and Rust ("std::condition_variable::wait(...)"),
 * Go ("runtime.gcDrain", "sync.(*Mutex).lockSlow") and HotSpot
 * ("ObjectMonitor::wait"). Most patterns match anywhere in the name; the
 * short POSIX names (read, write, poll, sleep, free) match the whole name
 * once its decorations are dropped (leading underscores; "libc_", "GI_",
 * "x64_sys_", "ksys_"... prefixes; "_nocancel", "64", "_chk" suffixes;
 * ".constprop.0"-like compiler clones), so "thread" is not "read".
 *
 * The first pattern that matches decides, in this order: idle, lock, sleep,
 * GC, I/O, syscall, runtime. Idle comes before lock because a condition
 * variable's name carries its mutex ("condition_variable::wait(
 * std::unique_lock<std::mutex>&)"), and both before syscall because Rust
 * names its futex-based types "futex::Mutex" / "futex::Condvar".
 *
 * FUNCKIND_SYSCALL says "this is the way a thread waits, not what for": a
 * futex (a mutex and a condition variable wait in the same call), glibc's
 * syscall(), the kernel's entry and exit paths. Callers take the kind of
 * what is around it: the caller on the stack (the icicle), the futex's
 * word (the threads view), the syscall (waits).
 */
#ifndef STACKTOP_FUNCKIND_H
#define STACKTOP_FUNCKIND_H

#include <stdbool.h>

enum funckind {
	FUNCKIND_NONE = 0, /* says nothing: application or library code */
	FUNCKIND_LOCK,	   /* contention: mutex, rwlock, spin lock, monitor enter; unlock */
	FUNCKIND_IDLE,	   /* waiting for work: condvar, semaphore, join, event loop */
	FUNCKIND_IO,	   /* read, write, poll, recv, send, accept, fsync; kernel I/O paths */
	FUNCKIND_SLEEP,	   /* nanosleep, usleep, sleep, pause, sigsuspend */
	FUNCKIND_GC,	   /* a garbage collector's work (Go, HotSpot, CPython, V8) */
	FUNCKIND_RUNTIME,  /* an allocator or a language runtime (malloc, runtime.*) */
	FUNCKIND_SYSCALL,  /* how, not what for: futex, syscall(), kernel entry/exit */
	FUNCKIND_COUNT
};

/* Which lock a FUNCKIND_LOCK name takes, where its layout is known (the
 * locks module reads the owner by it); ANY for every other name. */
enum funckind_lock {
	FUNCKIND_LOCK_ANY = 0,
	FUNCKIND_LOCK_MUTEX,  /* glibc pthread_mutex_*lock (not unlock, not __lll_lock_wait) */
	FUNCKIND_LOCK_RDLOCK, /* glibc pthread_rwlock_*rdlock */
	FUNCKIND_LOCK_WRLOCK, /* glibc pthread_rwlock_*wrlock */
};

/* The kind of function func (NULL or "" → NONE). kernel: func is a kernel
 * symbol (a kernel frame, a wchan); some patterns ("pipe_read", "blk_",
 * "ep_poll") are kernel functions only. */
enum funckind funckind_of(const char *func, bool kernel);

/* For a user-space name: its kind, and in *lock (may be NULL) which lock
 * when the kind is LOCK (else FUNCKIND_LOCK_ANY). */
enum funckind funckind_lock_of(const char *func, enum funckind_lock *lock);

/* Is a thread of that name (its comm) a runtime's garbage collector
 * (HotSpot's "GC Thread#0", "G1 Conc#0", "G1 Refine#0"...)? Its CPU is
 * GC whatever its frames say (libjvm's may have no names). */
bool funckind_gc_thread(const char *comm);

/* "none", "lock", "idle", "I/O", "sleep", "GC", "runtime", "syscall". */
const char *funckind_name(enum funckind k);

#endif
