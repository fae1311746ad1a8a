/*
 * wall — the ptrace wall-clock sampler (see wall.h for the contract).
 *
 * Safety is the point of this file. The rules, with their sources:
 *
 *  - PTRACE_SEIZE, never PTRACE_ATTACH (which sends SIGSTOP) and never
 *    PTRACE_O_EXITKILL (which would SIGKILL the target when we die). With
 *    no options the kernel detaches and restarts every tracee if stacktop
 *    dies, even by SIGKILL, except tracees in group-stop, which stay
 *    stopped (ptrace(2), "tracer death"; kernel/ptrace.c exit_ptrace).
 *  - Only a stop we asked for is sampled: PTRACE_INTERRUPT gives a
 *    PTRACE_EVENT_STOP with SIGTRAP. If the thread is in (or enters) a
 *    group-stop, the event stop carries the stopping signal (SIGSTOP,
 *    SIGTSTP, SIGTTIN, SIGTTOU) and it is resumed with PTRACE_LISTEN, which
 *    leaves it stopped the way the user wanted and lets SIGCONT wake it.
 *  - Any other stop is a signal-delivery-stop: the signal was meant for the
 *    target, so it is re-injected with PTRACE_CONT(sig) at once. Tracees
 *    report these to us only when we waitpid, so wall_reap polls every
 *    thread (WNOHANG) on each tick and should be called on SIGCHLD.
 *  - waitpid never blocks: a thread in uninterruptible sleep cannot trap
 *    until its wait ends, so waits poll with a deadline. A thread whose
 *    stop did not come in time is marked pending and resumed when the stop
 *    shows up. D-state threads are never interrupted: their user sp/pc come
 *    from /proc/.../syscall and the stack is read while they sleep.
 *  - PTRACE_DETACH needs a stopped tracee (it fails with ESRCH on a running
 *    or listening one), so detaching interrupts each thread once more; a
 *    group-stopped thread detached from its event stop stays stopped
 *    (__ptrace_unlink re-arms the group stop).
 *  - The process leader of our own child (a launched command) is waited
 *    with WNOWAIT, so its exit status is left for its real parent (main).
 *
 * Reading state before the stop: the stop itself turns the state into 't'
 * and the syscall file into the stop's view, so stat/syscall/wchan are read
 * first, from fds kept open (open+read+close costs 10-15 µs, pread 2-5 µs;
 * notes/sampler-unwinder-symbolizer.md §4). After any stop an interrupted
 * sleep goes on as restart_syscall, and wchan then often names only
 * do_syscall_64: the syscall it continues is the last one we saw, or the one
 * whose number the code before the user pc loads.
 *
 * Reuse: a thread whose schedstat run time has not moved since its last
 * sample has not run, so its stack is the same: the cached copy is sent
 * again without a stop (an off-CPU one only: a thread sampled running
 * and not run since has gone to sleep meanwhile, somewhere else). Our own
 * stop makes a sleeping thread run a little (to trap and re-enter its
 * syscall), so the reference run time is read after the thread has gone
 * back to sleep, at the end of the tick. On a loaded machine it may not
 * have: resumed, it waits in a run queue to re-enter its sleep, and reads
 * 'R' for tens of ms. A fresh look then called an idle condvar waiter
 * running (one such sample kept it from `i`), so a thread that reads 'R'
 * and has not run at all since we resumed it (its run time read while it
 * was stopped) is still in the wait we saw: the cached sample stands.
 *
 * Waiting for a CPU: a runnable thread ('R') is on a CPU or in a run
 * queue, and only schedstat tells which share: its second field is the
 * time spent runnable but waiting (run delay; Documentation/scheduler/
 * sched-stats.rst). An R sample's weight is split between running and
 * CPU-wait by the deltas of run time and run delay since the thread's last
 * sample; weights are integers, so the fraction is carried to the thread's
 * next sample (error diffusion) and the counts come out right on average.
 *
 * The pause: the header's "pause" is how long a thread is held stopped,
 * from the moment its stop is seen to its resume. The time from
 * PTRACE_INTERRUPT to the stop is not in it: the thread runs (or sleeps)
 * until it reaches a trap, and on a busy machine that takes as long as the
 * scheduler makes it wait for a CPU (ms), which is not time we stop it.
 * It is a mean, and it does include any time stacktop itself waits for a
 * CPU while it holds the thread: the thread stays stopped meanwhile.
 *
 * Keeping up: every thread is due rate times a second, so the work grows
 * with the thread count (1,000 threads at 19 Hz: 19,000 samples a second).
 * Once a second the CPU time the passes took (this thread's, not the wall
 * time: on a saturated box a pass waits for a CPU too, and that lowered
 * the rate to its floor while the passes cost little) is compared with a
 * budget (a quarter of one core); over it, the period grows so that the
 * passes fit in about a fifth; well under it, a lowered rate climbs back.
 * Passes that take most of the wall time (threads slow to reach their
 * stops) count as over budget too. A sample's weight stays in periods of
 * the configured rate, so times and shares keep their meaning, and
 * wall_note says what was lowered and what a sample now counts for (the
 * header's count is in those periods).
 *
 * process_vm_readv does not split one iovec (process_vm_readv(2)), so the
 * stack is read as page-sized remote pieces: a read that crosses the top
 * of the stack mapping returns the pages before it.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <elf.h>

#include "stacktop/lib/array.h"
#include "stacktop/sample/sampler.h"
#include "stacktop/proc/target.h"
#include "stacktop/proc/waits.h"
#include "stacktop/sample/wall.h"
#include "stacktop/lib/mono.h"

#define WAIT_STOP_NS (20 * 1000 * 1000ull) /* a sample's stop must come within */
#define WAIT_DETACH_NS (100 * 1000 * 1000ull)
#define ADAPT_EVERY_NS 1000000000ull	  /* the rate is reconsidered this often */
#define ADAPT_BUDGET 0.25		  /* share of a core the passes may take */
#define ADAPT_AIM 0.20			  /* what a lowered rate aims at */
#define ADAPT_LOW 0.08			  /* under this, a lowered rate climbs back */
#define ADAPT_WALL 0.60			  /* share of the wall time the passes may take */
#define ADAPT_MAX_PERIOD_NS 1000000000ull /* never below 1 Hz a thread */
#define PAGE 4096u

enum { FD_STAT, FD_SYSCALL, FD_WCHAN, FD_SCHEDSTAT, FD_COUNT };

struct wall_thread {
	pid_t pid, tid;
	int fd[FD_COUNT];
	bool our_child; /* leader of a process we are the real parent of */
	bool gone;
	bool detached;	 /* gone because we let it go, not because it exited */
	bool pending;	 /* an INTERRUPT whose stop has not been seen */
	bool group_stop; /* listening in a group-stop */
	bool have_cache;
	bool settled;	  /* last_run is the run time after the last sample */
	bool sampled_now; /* took a fresh sample this tick: settle it */
	uint64_t next_ns;
	unsigned long long last_run;
	unsigned long long stop_run; /* run time while held in our last stop */
	bool have_stop_run;
	int last_nr;  /* the last real syscall seen, for restart_syscall */
	bool cw_have; /* cw_run/cw_delay hold the last sample's schedstat */
	unsigned long long cw_run, cw_delay;
	double cw_carry;     /* CPU-wait weight owed to the next R sample (< 1) */
	struct sample cache; /* the last sample; cache.stack points into buf */
	uint8_t *buf;
	uint8_t *buf2; /* the interrupted stack's copy, made on first need */
};

struct wall_sampler {
	struct sampler base; /* the sampler interface (see the end of this file) */
	struct wall_config cfg;
	uint64_t period_ns;
	struct wall_thread *th;
	size_t n, cap;
	struct wall_stats st;
	pid_t self;
	uint64_t rng;
	uint64_t base_period_ns; /* the configured rate's */
	uint64_t adapt_t0, adapt_busy_ns, adapt_cpu_ns;
	char note[96];
};

static bool is_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/* pread a small procfs file into buf (NUL-terminated). */
static int pread_text(int fd, char *buf, size_t size)
{
	if (fd < 0)
		return -EBADF;
	ssize_t n = pread(fd, buf, size - 1, 0);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return (int)n;
}

/* Run time and, when delay is not NULL, run-queue delay (ns). */
static int read_sched(struct wall_thread *t, unsigned long long *run, unsigned long long *delay)
{
	char buf[128];
	unsigned long long d;
	int r = pread_text(t->fd[FD_SCHEDSTAT], buf, sizeof(buf));
	if (r < 0)
		return r;
	r = waits_parse_schedstat2(buf, run, &d);
	if (r == 0 && delay)
		*delay = d;
	return r;
}

static int read_run_ns(struct wall_thread *t, unsigned long long *run)
{
	return read_sched(t, run, NULL);
}

static int read_state(struct wall_thread *t, char *state)
{
	char buf[1024];
	int r = pread_text(t->fd[FD_STAT], buf, sizeof(buf));
	if (r < 0)
		return r;
	return target_parse_stat_state(buf, state);
}

/* The syscall a thread continues with restart_syscall, when someone
 * else's stop came first (a debugger, an earlier stacktop): most libc
 * wrappers load the number right before the instruction, "mov $nr, %eax;
 * syscall" (b8 imm32 0f 05; 436 of the 529 syscall sites in glibc 2.36), and
 * pc is the address after it. -1 when the code says nothing. */
static int syscall_at(pid_t pid, unsigned long long pc)
{
	uint8_t code[7];
	struct iovec local = {code, sizeof(code)}, remote = {(void *)(uintptr_t)(pc - 7), 7};
	if (pc < 7 || process_vm_readv(pid, &local, 1, &remote, 1, 0) != 7)
		return -1;
	if (code[0] != 0xb8 || code[5] != 0x0f || code[6] != 0x05)
		return -1;
	uint32_t nr = (uint32_t)code[1] | (uint32_t)code[2] << 8 | (uint32_t)code[3] << 16 |
		      (uint32_t)code[4] << 24;
	return nr < 1024 ? (int)nr : -1;
}

/* Fill s->state/wait/syscall_nr/wchan from procfs; sp/pc from the syscall
 * file (0 when unknown). Must run before any stop. */
static int read_wait(struct wall_thread *t, struct sample *s, char *state, unsigned long long *sp,
		     unsigned long long *pc)
{
	char buf[256];
	int nr = -1;
	*sp = *pc = 0;
	int r = read_state(t, state);
	if (r < 0)
		return r;
	if (pread_text(t->fd[FD_SYSCALL], buf, sizeof(buf)) > 0)
		waits_parse_syscall(buf, &nr, sp, pc);
	/* Our previous stop interrupted a sleep, which now continues as
	 * restart_syscall, and wchan often names only do_syscall_64 then: the
	 * syscall it continues is the one we saw before. */
	if (nr == SYS_restart_syscall && t->last_nr < 0)
		t->last_nr = syscall_at(t->pid, *pc);
	if (nr == SYS_restart_syscall && t->last_nr >= 0)
		nr = t->last_nr;
	else if (nr >= 0)
		t->last_nr = nr;
	s->wchan[0] = '\0';
	if (pread_text(t->fd[FD_WCHAN], buf, sizeof(buf)) > 0 && strcmp(buf, "0") != 0)
		snprintf(s->wchan, sizeof(s->wchan), "%.31s", buf);
	s->syscall_nr = nr;
	s->wait = waits_classify(*state, nr, s->wchan);
	s->state = *state == 'R' ? SAMPLE_ONCPU : SAMPLE_OFFCPU;
	if (s->state == SAMPLE_ONCPU)
		s->wait = SAMPLE_WAIT_NONE;
	return 0;
}

/* Copy up to size bytes of the target's memory from addr into buf, page by
 * page so that a read crossing the end of the mapping still returns the
 * part before it. Returns bytes read. */
static uint64_t read_stack(pid_t pid, uint64_t addr, uint8_t *buf, unsigned size)
{
	struct iovec local = {buf, size};
	struct iovec remote[64];
	int n = 0;
	uint64_t a = addr, end = addr + size;
	while (a < end && n < 64) {
		uint64_t next = (a / PAGE + 1) * PAGE;
		if (next > end)
			next = end;
		remote[n].iov_base = (void *)a;
		remote[n].iov_len = next - a;
		n++;
		a = next;
	}
	ssize_t got = process_vm_readv(pid, &local, 1, remote, (unsigned long)n, 0);
	return got > 0 ? (uint64_t)got : 0;
}

/* The stop came as a signal handler starts (a signal delivered just before
 * it: our stop is reported after the kernel built the handler's frame), so
 * sp is at the kernel's rt_sigframe: the restorer's address, then the
 * ucontext: flags, link, the alternate stack (sp, flags, size), then the
 * interrupted registers (rbp 10th, rsp 15th, rip 16th). When the handler
 * runs on an alternate stack that holds sp, as Go's always do, the
 * interrupted code's stack (a goroutine's) is not in the copy: it is read
 * too, while the thread is stopped, so the unwinder goes on through it.
 * Only the target's own memory is read, at most a stack's copy. */
static void read_interrupted(struct wall_sampler *ws, struct wall_thread *t, struct sample *s)
{
	uint64_t uc[22], sp = s->regs[SAMPLE_REG_RSP];

	s->stack2_size = 0;
	if (s->stack_size < 8 + sizeof(uc))
		return;
	memcpy(uc, t->buf + 8, sizeof(uc));
	/* uc_flags: UC_FP_XSTATE, UC_SIGCONTEXT_SS, UC_STRICT_RESTORE_SS; no
	 * uc_link; an alternate stack enabled (ss_flags 0: the interrupted
	 * code was not on it) that holds sp; the interrupted sp off it. */
	uint64_t ss_sp = uc[2], ss_size = uc[4], isp = uc[5 + 15];
	if ((uc[0] & ~7ull) || uc[1] || (uint32_t)uc[3] || !ss_size || ss_size > (64u << 20) ||
	    sp < ss_sp || sp - ss_sp >= ss_size || (isp >= ss_sp && isp - ss_sp < ss_size) ||
	    !uc[5 + 16])
		return;
	if (!t->buf2 && !(t->buf2 = malloc(ws->cfg.stack_size)))
		return;
	s->stack2 = t->buf2;
	s->stack2_base = isp;
	s->stack2_size = read_stack(t->pid, isp, t->buf2, ws->cfg.stack_size);
}

/* x86-64 user_regs_struct → DWARF register numbers. */
static void regs_to_dwarf(const struct user_regs_struct *r, struct sample *s)
{
	uint64_t *o = s->regs;
	o[0] = r->rax, o[1] = r->rdx, o[2] = r->rcx, o[3] = r->rbx;
	o[4] = r->rsi, o[5] = r->rdi, o[6] = r->rbp, o[7] = r->rsp;
	o[8] = r->r8, o[9] = r->r9, o[10] = r->r10, o[11] = r->r11;
	o[12] = r->r12, o[13] = r->r13, o[14] = r->r14, o[15] = r->r15;
	o[16] = r->rip;
	s->regs_mask = (1u << SAMPLE_NREGS) - 1;
}

/* One non-blocking wait for t. 1 with *status, 0 nothing, -errno. The
 * leader of our own child is peeked at with WNOWAIT when it exits, so main
 * still gets its exit status. */
static int wait_once(struct wall_thread *t, int *status)
{
	if (t->our_child) {
		siginfo_t si;
		memset(&si, 0, sizeof(si));
		if (waitid(P_PID, (id_t)t->tid, &si,
			   WEXITED | WSTOPPED | WNOHANG | WNOWAIT | __WALL) < 0)
			return -errno;
		if (si.si_pid == 0)
			return 0;
		if (si.si_code == CLD_EXITED || si.si_code == CLD_KILLED ||
		    si.si_code == CLD_DUMPED) {
			*status = 0; /* WIFEXITED */
			return 1;
		}
	}
	pid_t r = waitpid(t->tid, status, WNOHANG | __WALL);
	if (r < 0)
		return -errno;
	return r == t->tid ? 1 : 0;
}

/* Wait for t's next event, polling until deadline_ns. 1, 0 on timeout,
 * -errno (ECHILD: not our tracee any more). */
static int wait_until(struct wall_thread *t, int *status, uint64_t deadline_ns)
{
	for (unsigned i = 0;; i++) {
		int r = wait_once(t, status);
		if (r != 0)
			return r;
		if (mono_ns() >= deadline_ns)
			return 0;
		if (i < 64) {
			sched_yield();
		} else {
			struct timespec ts = {0, 50000};
			nanosleep(&ts, NULL);
		}
	}
}

/* Resume t from a stop it reported that was not (or no longer) ours to
 * keep: re-inject signals, LISTEN on group-stops. */
static void handle_stop(struct wall_sampler *ws, struct wall_thread *t, int status)
{
	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		t->gone = true;
		return;
	}
	if (!WIFSTOPPED(status))
		return;
	int sig = WSTOPSIG(status), ev = status >> 16;
	if (ev == PTRACE_EVENT_STOP) {
		/* A late stop of ours: like a sample's, its run time is the
		 * reference for "queued back" (see "Reuse" at the top). */
		if (t->pending)
			t->have_stop_run = read_run_ns(t, &t->stop_run) == 0;
		t->pending = false;
		if (is_stop_signal(sig)) {
			t->group_stop = true;
			ptrace(PTRACE_LISTEN, t->tid, 0, 0);
		} else {
			t->group_stop = false;
			ptrace(PTRACE_CONT, t->tid, 0, 0);
		}
		return;
	}
	if (ev) {
		ptrace(PTRACE_CONT, t->tid, 0, 0); /* an event we did not ask for */
		return;
	}
	ws->st.signals++;
	ptrace(PTRACE_CONT, t->tid, 0, (void *)(long)sig);
}

static void thread_close(struct wall_thread *t)
{
	for (int i = 0; i < FD_COUNT; i++)
		if (t->fd[i] >= 0)
			close(t->fd[i]);
	free(t->buf);
	free(t->buf2);
}

/* Drop threads marked gone (reaping any status they left). */
static void compact(struct wall_sampler *ws)
{
	size_t k = 0;
	for (size_t i = 0; i < ws->n; i++) {
		struct wall_thread *t = &ws->th[i];
		if (t->gone) {
			int status;
			/* An exited tracee stays a zombie until its tracer reaps it;
			 * our child's leader is left for main to reap. */
			if (!t->detached && !t->our_child)
				while (waitpid(t->tid, &status, WNOHANG | __WALL) > 0)
					;
			ws->st.exited += !t->detached;
			thread_close(t);
			continue;
		}
		ws->th[k++] = ws->th[i];
	}
	ws->n = k;
}

int wall_new(const struct wall_config *c, struct wall_sampler **out)
{
	struct wall_sampler *ws = calloc(1, sizeof(*ws));
	if (!ws)
		return -ENOMEM;
	ws->cfg.rate_hz = c && c->rate_hz ? c->rate_hz : WALL_DEFAULT_RATE_HZ;
	ws->cfg.stack_size = c && c->stack_size ? c->stack_size : WALL_DEFAULT_STACK_SIZE;
	if (ws->cfg.stack_size > 64 * PAGE - PAGE)
		ws->cfg.stack_size = 64 * PAGE - PAGE;
	ws->period_ns = 1000000000ull / ws->cfg.rate_hz;
	ws->base_period_ns = ws->period_ns;
	ws->self = getpid();
	ws->rng = mono_ns() | 1;
	*out = ws;
	return 0;
}

static struct wall_thread *find(const struct wall_sampler *ws, pid_t tid)
{
	for (size_t i = 0; i < ws->n; i++)
		if (ws->th[i].tid == tid && !ws->th[i].gone)
			return &ws->th[i];
	return NULL;
}

bool wall_has_thread(const struct wall_sampler *ws, pid_t tid)
{
	return find(ws, tid) != NULL;
}

int wall_nthreads(const struct wall_sampler *ws)
{
	int n = 0;
	for (size_t i = 0; i < ws->n; i++)
		n += !ws->th[i].gone;
	return n;
}

int wall_tracer_of(pid_t pid)
{
	pid_t tracer = 0;
	int err = target_tracer(pid, &tracer);
	return err < 0 ? err : tracer;
}

static int open_fds(struct wall_thread *t)
{
	static const char *names[FD_COUNT] = {"stat", "syscall", "wchan", "schedstat"};
	char path[96];
	for (int i = 0; i < FD_COUNT; i++) {
		snprintf(path, sizeof(path), "/proc/%d/task/%d/%s", t->pid, t->tid, names[i]);
		t->fd[i] = open(path, O_RDONLY | O_CLOEXEC);
		if (t->fd[i] < 0 && i == FD_STAT)
			return errno == ENOENT ? -ESRCH : -errno;
	}
	return 0;
}

static bool is_our_child(pid_t pid)
{
	char buf[512];
	ssize_t n = target_read_proc(pid, 0, "stat", buf, sizeof(buf));
	const char *p = n > 0 ? strrchr(buf, ')') : NULL;
	int ppid = 0;
	char st;
	return p && sscanf(p + 1, " %c %d", &st, &ppid) == 2 && ppid == getpid();
}

int wall_add_thread(struct wall_sampler *ws, pid_t pid, pid_t tid)
{
	if (find(ws, tid))
		return -EEXIST;
	int tracer = wall_tracer_of(tid);
	if (tracer == -ENOENT || tracer == -ESRCH)
		return -ESRCH;
	if (tracer > 0 && tracer != ws->self)
		return -EBUSY;
	struct wall_thread *t = array_slot((void **)&ws->th, &ws->cap, ws->n, sizeof(*ws->th));
	if (!t)
		return -ENOMEM;
	t->pid = pid;
	t->tid = tid;
	t->last_nr = -1;
	for (int i = 0; i < FD_COUNT; i++)
		t->fd[i] = -1;
	int err = open_fds(t);
	if (!err && !(t->buf = malloc(ws->cfg.stack_size)))
		err = -ENOMEM;
	char state = 0;
	if (!err)
		read_state(t, &state);
	if (!err && ptrace(PTRACE_SEIZE, tid, 0, 0) < 0) {
		err = -errno;
		if (err == -EPERM && wall_tracer_of(tid) > 0)
			err = -EBUSY;
	}
	if (err) {
		thread_close(t);
		if (err != -ESRCH)
			ws->st.threads_failed++;
		return err;
	}
	t->our_child = tid == pid && is_our_child(pid);
	/* Spread the threads' samples over the period. */
	t->next_ns = mono_ns() + ((uint64_t)tid * 2654435761u) % ws->period_ns;
	ws->n++;
	/* A thread seized in group-stop re-traps at once to report it; LISTEN
	 * so a SIGCONT from the user can wake it while we are attached. */
	if (state == 'T') {
		int status;
		if (wait_until(t, &status, mono_ns() + WAIT_STOP_NS) == 1)
			handle_stop(ws, t, status);
	}
	return 0;
}

int wall_reap(struct wall_sampler *ws)
{
	int handled = 0;
	for (size_t i = 0; i < ws->n; i++) {
		struct wall_thread *t = &ws->th[i];
		int status, r;
		/* A few at most: each handled stop resumes the thread. */
		for (int k = 0; k < 8 && !t->gone && (r = wait_once(t, &status)) != 0; k++) {
			if (r < 0) {
				t->gone = r == -ECHILD;
				break;
			}
			handle_stop(ws, t, status);
			handled++;
		}
	}
	compact(ws);
	return handled;
}

/* Sample a D-state thread without stopping it: sp and pc from its syscall
 * file, the stack read while it sleeps. */
static void sample_nostop(struct wall_sampler *ws, struct wall_thread *t, unsigned long long sp,
			  unsigned long long pc)
{
	struct sample *s = &t->cache;
	memset(s->regs, 0, sizeof(s->regs));
	s->regs_mask = 0;
	s->stack_size = 0;
	s->stack2_size = 0;
	if (sp && pc) {
		s->regs[SAMPLE_REG_RSP] = sp;
		s->regs[SAMPLE_REG_RIP] = pc;
		s->regs_mask = 1u << SAMPLE_REG_RSP | 1u << SAMPLE_REG_RIP;
		s->stack_size = read_stack(t->pid, sp, t->buf, ws->cfg.stack_size);
	}
	ws->st.nostop++;
}

/* Stop t with PTRACE_INTERRUPT, copy registers and stack, resume it.
 * 0, or -errno (thread gone, stop timed out). */
static int sample_stop(struct wall_sampler *ws, struct wall_thread *t)
{
	struct sample *s = &t->cache;
	int status = 0, r;
	uint64_t t0 = mono_ns();
	if (ptrace(PTRACE_INTERRUPT, t->tid, 0, 0) < 0) {
		if (errno == ESRCH)
			t->gone = true;
		return -errno;
	}
	for (;;) {
		r = wait_until(t, &status, t0 + WAIT_STOP_NS);
		if (r == 0) {
			t->pending = true; /* resumed by wall_reap when it comes */
			return -ETIMEDOUT;
		}
		if (r < 0 || WIFEXITED(status) || WIFSIGNALED(status)) {
			t->gone = true;
			return -ESRCH;
		}
		if (WIFSTOPPED(status) && status >> 16 == PTRACE_EVENT_STOP)
			break;
		handle_stop(ws, t, status); /* a signal for the target: pass it on */
	}
	uint64_t t_stopped = mono_ns();
	struct user_regs_struct ur;
	struct iovec iov = {&ur, sizeof(ur)};
	bool ok = ptrace(PTRACE_GETREGSET, t->tid, (void *)NT_PRSTATUS, &iov) == 0;
	if (ok) {
		regs_to_dwarf(&ur, s);
		s->stack_size = read_stack(t->pid, ur.rsp, t->buf, ws->cfg.stack_size);
		read_interrupted(ws, t, s);
	}
	t->have_stop_run = read_run_ns(t, &t->stop_run) == 0;
	int sig = WSTOPSIG(status);
	t->group_stop = is_stop_signal(sig);
	ptrace(t->group_stop ? PTRACE_LISTEN : PTRACE_CONT, t->tid, 0, 0);
	uint64_t pause = mono_ns() - t_stopped;
	ws->st.stops++;
	ws->st.reach_ns_total += t_stopped - t0;
	ws->st.pause_ns_total += pause;
	if (pause > ws->st.pause_ns_max)
		ws->st.pause_ns_max = pause;
	return ok ? 0 : -EIO;
}

/* The next period, jittered by up to ±10 %: a fixed period would alias
 * with a target's own fixed periods (a lock handed over every 20 ms, seen
 * at 50 Hz, is always caught in the same phase). */
static uint64_t next_period(struct wall_sampler *ws)
{
	ws->rng ^= ws->rng << 13;
	ws->rng ^= ws->rng >> 7;
	ws->rng ^= ws->rng << 17;
	uint64_t span = ws->period_ns / 5;
	return ws->period_ns - span / 2 + (span ? ws->rng % span : 0);
}

/* How much of an R sample's weight was spent waiting for a CPU, from the
 * schedstat deltas since the thread's last sample (see the top). Call for
 * every sample of t with have: schedstat was read. */
static uint32_t cpu_wait_weight(struct wall_thread *t, bool runnable, bool have,
				unsigned long long run, unsigned long long delay, uint32_t weight)
{
	uint32_t k = 0;
	if (have && t->cw_have && runnable && run >= t->cw_run && delay >= t->cw_delay) {
		unsigned long long dr = run - t->cw_run, dd = delay - t->cw_delay;
		if (dr + dd > 0) {
			double x = (double)weight * (double)dd / (double)(dr + dd) + t->cw_carry;
			double r = x + 0.5;
			k = r <= 0 ? 0 : r >= weight ? weight : (uint32_t)r;
			t->cw_carry = x - k;
		}
	}
	if (have) {
		t->cw_run = run;
		t->cw_delay = delay;
		t->cw_have = true;
	}
	return k;
}

/* Hand s to cb, its weight split: cpu of it as waiting for a CPU. */
static void deliver(struct sample *s, uint32_t cpu, void (*cb)(void *, const struct sample *),
		    void *ctx)
{
	uint32_t weight = s->weight;
	if (cpu && s->state == SAMPLE_ONCPU) {
		if (cpu < weight) {
			s->weight = weight - cpu;
			cb(ctx, s);
		}
		s->weight = cpu;
		s->state = SAMPLE_OFFCPU;
		s->wait = SAMPLE_WAIT_CPU;
		cb(ctx, s);
		s->state = SAMPLE_ONCPU;
		s->wait = SAMPLE_WAIT_NONE;
		s->weight = weight;
		return;
	}
	cb(ctx, s);
}

/* Whether t, resumed from our stop, is still waiting for a CPU to go back
 * to its sleep: runnable, and not run since (see "Reuse" at the top). The
 * reference is cleared by the next fresh look. */
static bool queued_back(struct wall_thread *t, unsigned long long run)
{
	char state;
	return t->have_stop_run && run == t->stop_run && read_state(t, &state) == 0 && state == 'R';
}

/* Take (or reuse) one sample of t and deliver it. Returns 1 if delivered. */
static int sample_one(struct wall_sampler *ws, struct wall_thread *t, uint64_t now, uint32_t weight,
		      void (*cb)(void *, const struct sample *), void *ctx)
{
	struct sample *s = &t->cache;
	unsigned long long run = 0, delay = 0, sp, pc;
	char state;
	bool have_run = read_sched(t, &run, &delay) == 0;
	/* Reuse only an off-CPU sample: a thread last seen running that has
	 * not run since has gone to sleep after it, so that sample is stale
	 * (repeated, it showed an idle condvar waiter as on-CPU for good). */
	bool queued = have_run && queued_back(t, run);
	if (t->have_cache && s->state == SAMPLE_OFFCPU && have_run &&
	    ((t->settled && run == t->last_run) || queued)) {
		ws->st.reused++;
	} else if (queued) {
		/* Queued back from a stop of ours that came too late to be a
		 * sample: no stack of its wait, and "running" would be wrong. */
		ws->st.failed++;
		return 0;
	} else {
		struct sample fresh = {0};
		if (read_wait(t, &fresh, &state, &sp, &pc) < 0) {
			t->gone = true;
			return 0;
		}
		s->state = fresh.state;
		s->wait = fresh.wait;
		s->syscall_nr = fresh.syscall_nr;
		memcpy(s->wchan, fresh.wchan, sizeof(s->wchan));
		t->have_cache = false;
		t->settled = false;
		t->have_stop_run = false;
		if (state == 'Z' || state == 'X') {
			t->gone = true;
			return 0;
		}
		if (state == 'D') {
			sample_nostop(ws, t, sp, pc);
			t->last_run = run;
			t->settled = have_run;
		} else if (sample_stop(ws, t) < 0) {
			ws->st.failed++;
			return 0;
		} else {
			t->sampled_now = true;
		}
		t->have_cache = true;
	}
	s->pid = t->pid;
	s->tid = t->tid;
	s->time_ns = now;
	s->weight = weight;
	s->stack = t->buf;
	s->kpcs = NULL;
	s->nkpcs = 0;
	s->upcs = NULL;
	s->nupcs = 0;
	ws->st.samples++;
	uint32_t cpu = cpu_wait_weight(t, s->state == SAMPLE_ONCPU, have_run, run, delay, weight);
	ws->st.cpu_wait += cpu;
	if (cb)
		deliver(s, cpu, cb, ctx);
	return 1;
}

/* After a tick: the run time of each thread sampled with a stop, read once
 * it is asleep again, is the reference for "has not run since". */
static void settle(struct wall_sampler *ws)
{
	for (size_t i = 0; i < ws->n; i++) {
		struct wall_thread *t = &ws->th[i];
		char state;
		if (!t->sampled_now)
			continue;
		t->sampled_now = false;
		if (t->gone || read_state(t, &state) < 0)
			continue;
		if (state == 'S' || state == 'D' || state == 'T' || state == 't')
			t->settled = read_run_ns(t, &t->last_run) == 0;
	}
}

/* One pass over the threads, then the bookkeeping after it. With all,
 * every thread is sampled now, weight 1, with a fresh look (no cached
 * stack); otherwise only the threads whose period is due. */
static int sample_pass(struct wall_sampler *ws, uint64_t now_ns, bool all,
		       void (*cb)(void *ctx, const struct sample *s), void *ctx)
{
	int delivered = 0;
	wall_reap(ws);
	for (size_t i = 0; i < ws->n; i++) {
		struct wall_thread *t = &ws->th[i];
		if (t->gone || t->pending || (!all && now_ns < t->next_ns))
			continue;
		if (all) {
			t->have_cache = false; /* always a fresh look */
			delivered += sample_one(ws, t, now_ns, 1, cb, ctx);
			continue;
		}
		/* Called less often than the period (the caller's tick): one
		 * sample stands for every period that has passed, so each
		 * thread's weight is its wall time whatever the tick. */
		uint64_t k = 1 + (now_ns - t->next_ns) / ws->period_ns;
		if (k > 1000)
			k = 1000; /* a long pause of the caller: do not let one stack take it all */
		/* In periods of the configured rate, whatever the rate now. */
		uint64_t w = (k * ws->period_ns + ws->base_period_ns / 2) / ws->base_period_ns;
		delivered += sample_one(ws, t, now_ns, (uint32_t)(w ? w : 1), cb, ctx);
		t->next_ns += (k - 1) * ws->period_ns + next_period(ws);
		if (t->next_ns <= now_ns)
			t->next_ns = now_ns + next_period(ws);
	}
	settle(ws);
	compact(ws);
	return delivered;
}

/* Once a second: lower the rate when the passes took more than their
 * budget, raise it back when they take little. */
static void adapt_rate(struct wall_sampler *ws, uint64_t start_ns, uint64_t end_ns, uint64_t cpu_ns)
{
	if (!ws->adapt_t0)
		ws->adapt_t0 = start_ns;
	ws->adapt_busy_ns += end_ns - start_ns;
	ws->adapt_cpu_ns += cpu_ns;
	if (end_ns - ws->adapt_t0 < ADAPT_EVERY_NS)
		return;
	double span = (double)(end_ns - ws->adapt_t0);
	double used = (double)ws->adapt_cpu_ns / span, wall = (double)ws->adapt_busy_ns / span;
	if (wall > ADAPT_WALL && wall * ADAPT_BUDGET / ADAPT_WALL > used)
		used = wall * ADAPT_BUDGET / ADAPT_WALL;
	uint64_t p = ws->period_ns;
	if (used > ADAPT_BUDGET)
		p = (uint64_t)((double)p * used / ADAPT_AIM);
	else if (used < ADAPT_LOW && p > ws->base_period_ns)
		p /= 2;
	if (p > ADAPT_MAX_PERIOD_NS)
		p = ADAPT_MAX_PERIOD_NS;
	if (p < ws->base_period_ns)
		p = ws->base_period_ns;
	ws->period_ns = p;
	ws->adapt_t0 = end_ns;
	ws->adapt_busy_ns = 0;
	ws->adapt_cpu_ns = 0;
	double weight = (double)p / (double)ws->base_period_ns;
	if (p > ws->base_period_ns)
		snprintf(ws->note, sizeof(ws->note),
			 "rate lowered to %.1f Hz a thread to keep up (a sample counts %.*f)",
			 1e9 / (double)p, weight < 10 ? 1 : 0, weight);
	else
		ws->note[0] = 0;
}

int wall_tick(struct wall_sampler *ws, uint64_t now_ns,
	      void (*cb)(void *ctx, const struct sample *s), void *ctx)
{
	uint64_t t0 = mono_ns(), c0 = mono_thread_cpu_ns();
	int n = sample_pass(ws, now_ns, false, cb, ctx);
	uint64_t c1 = mono_thread_cpu_ns();
	adapt_rate(ws, t0, mono_ns(), c1 > c0 ? c1 - c0 : 0);
	return n;
}

const char *wall_note(const struct wall_sampler *ws)
{
	return ws->note[0] ? ws->note : NULL;
}

int wall_sample_all(struct wall_sampler *ws, uint64_t now_ns,
		    void (*cb)(void *ctx, const struct sample *s), void *ctx)
{
	return sample_pass(ws, now_ns, true, cb, ctx);
}

int wall_sample_thread(struct wall_sampler *ws, pid_t tid, uint64_t now_ns,
		       void (*cb)(void *ctx, const struct sample *s), void *ctx)
{
	struct wall_thread *t = find(ws, tid);
	if (!t)
		return -ESRCH;
	if (t->gone || t->pending)
		return 0;
	t->have_cache = false; /* a fresh look */
	return sample_one(ws, t, now_ns, 1, cb, ctx);
}

/* Stop t once more and detach from that stop. 0, or -EAGAIN when it would
 * not stop in time (D state). */
static int detach_one(struct wall_sampler *ws, struct wall_thread *t)
{
	int status, r;
	char state = 0;
	if (t->gone)
		return 0;
	/* Do not arm a trap in a thread that cannot take it now. */
	if (!t->pending && read_state(t, &state) == 0 && state == 'D')
		return -EAGAIN;
	if (!t->pending && ptrace(PTRACE_INTERRUPT, t->tid, 0, 0) < 0) {
		t->gone = true; /* ESRCH: exited, or not ours any more */
		return 0;
	}
	t->pending = true;
	uint64_t deadline = mono_ns() + WAIT_DETACH_NS;
	for (;;) {
		r = wait_until(t, &status, deadline);
		if (r == 0)
			return -EAGAIN;
		if (r < 0 || WIFEXITED(status) || WIFSIGNALED(status)) {
			t->gone = true;
			return 0;
		}
		if (!WIFSTOPPED(status))
			continue;
		int ev = status >> 16, sig = WSTOPSIG(status);
		/* Signal-delivery-stop: detach and deliver it in one go. Our
		 * pending interrupt is dropped by the detach. Group-stop: detach
		 * with 0 and it stays stopped. */
		long data = ev == 0 ? sig : 0;
		ptrace(PTRACE_DETACH, t->tid, 0, (void *)data);
		t->gone = t->detached = true;
		return 0;
	}
}

int wall_detach_all(struct wall_sampler *ws)
{
	int err = 0;
	if (!ws)
		return 0;
	wall_reap(ws);
	/* A thread in D may leave it soon: give it a few tries. */
	for (int round = 0; round < 5; round++) {
		err = 0;
		for (size_t i = 0; i < ws->n; i++)
			if (detach_one(ws, &ws->th[i]) < 0)
				err = -EAGAIN;
		compact(ws);
		if (!err)
			break;
		struct timespec ts = {0, 20 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	return err;
}

void wall_free(struct wall_sampler *ws)
{
	if (!ws)
		return;
	wall_detach_all(ws);
	for (size_t i = 0; i < ws->n; i++)
		thread_close(&ws->th[i]);
	free(ws->th);
	free(ws);
}

const struct wall_stats *wall_get_stats(const struct wall_sampler *ws)
{
	return &ws->st;
}

/* ---- the sampler interface (sampler.h) -----------------------------------
 *
 * wall as a source: collect takes the samples due; a SIGCHLD reaps stops at
 * once; stop detaches every thread, so no exit path leaves one stopped. */

static struct wall_sampler *wall_of(const struct sampler *s)
{
	return (struct wall_sampler *)s;
}

static int wall_src_add_thread(struct sampler *s, pid_t pid, pid_t tid)
{
	return wall_add_thread(wall_of(s), pid, tid);
}

static bool wall_src_has_thread(const struct sampler *s, pid_t tid)
{
	return wall_has_thread(wall_of(s), tid);
}

static int wall_src_nthreads(const struct sampler *s)
{
	return wall_nthreads(wall_of(s));
}

static int wall_src_collect(struct sampler *s, uint64_t now_ns, const struct sampler_sink *sink)
{
	return wall_tick(wall_of(s), now_ns, sink->sample, sink->ctx);
}

static void wall_src_on_child(struct sampler *s)
{
	wall_reap(wall_of(s));
}

/* Tick at least as often as the rate, or the rate could not be reached. */
static uint64_t wall_src_tick_ns(const struct sampler *s)
{
	return wall_of(s)->period_ns;
}

static void wall_src_stats(const struct sampler *s, struct sampler_stats *out)
{
	const struct wall_sampler *ws = wall_of(s);
	const struct wall_stats *st = wall_get_stats(ws);
	out->samples = st->samples;
	/* Never 0 once sampling: the header shows "pause" only when > 0. */
	out->pause_us = st->stops ? st->pause_ns_total / 1e3 / st->stops : 0.001;
	/* The configured rate: a lowered rate's samples weigh more (periods
	 * of the configured rate), so the window still grows at this rate. */
	out->rate_hz = ws->cfg.rate_hz;
	out->per_thread_rate = true;
	out->coverage_note = wall_note(ws);
	out->threads_failed = st->threads_failed;
}

void wall_explain(int err, pid_t pid, char *buf, size_t size)
{
	if (err == -EBUSY) {
		int tracer = wall_tracer_of(pid);
		snprintf(
		    buf, size,
		    "process %d is already traced by pid %d (a debugger or strace?): detach it "
		    "first, or use --mode cpu, which does not need ptrace.",
		    pid, tracer > 0 ? tracer : 0);
	} else if ((err == -EPERM || err == -EACCES) && target_is_kthread(pid)) {
		/* ptrace refuses kernel threads whoever asks: root is no cure */
		snprintf(buf, size,
			 "process %d is a kernel thread: kernel threads cannot be traced, so wall "
			 "mode cannot sample it (root or not).",
			 pid);
	} else if ((err == -EPERM || err == -EACCES) && geteuid() == 0) {
		snprintf(buf, size,
			 "not permitted to trace process %d even as root: see "
			 "kernel.yama.ptrace_scope or a security module (SELinux, AppArmor); "
			 "--mode cpu does not need ptrace.",
			 pid);
	} else if (err == -EPERM || err == -EACCES) {
		snprintf(
		    buf, size,
		    "not permitted to trace process %d (uid %d): wall mode needs ptrace: run as "
		    "root (sudo), or give stacktop CAP_SYS_PTRACE.",
		    pid, (int)getuid());
	} else if (err == -ESRCH) {
		snprintf(buf, size, "process %d exited before sampling could start.", pid);
	} else if (err == -EMFILE || err == -ENFILE) {
		snprintf(buf, size,
			 "out of file descriptors (four per thread): raise 'ulimit -n'.");
	} else {
		snprintf(buf, size, "cannot sample process %d: %s.", pid, strerror(-err));
	}
}

static void wall_src_stop(struct sampler *s)
{
	wall_detach_all(wall_of(s));
}

static void wall_src_free(struct sampler *s)
{
	wall_free(wall_of(s));
}

static void wall_src_explain(const struct sampler *s, int err, pid_t pid, char *buf, size_t size)
{
	wall_explain(err, pid, buf, size);
}

static const struct sampler_ops wall_sampler_ops = {
    .mode = "wall",
    .add_thread = wall_src_add_thread,
    .has_thread = wall_src_has_thread,
    .nthreads = wall_src_nthreads,
    .collect = wall_src_collect,
    .on_child = wall_src_on_child,
    .tick_ns = wall_src_tick_ns,
    .stats = wall_src_stats,
    .explain = wall_src_explain,
    .stop = wall_src_stop,
    .free = wall_src_free,
};

int wall_sampler_new(const struct wall_config *c, struct sampler **out)
{
	struct wall_sampler *ws;
	int err = wall_new(c, &ws);
	if (err)
		return err;
	ws->base.ops = &wall_sampler_ops;
	*out = &ws->base;
	return 0;
}
