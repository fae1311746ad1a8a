/*
 * python — the Python side of an unmodified CPython 3.8–3.13 process, read
 * from its memory: its threads, which holds the GIL, whether a collection
 * runs, and for a thread its Python frames (function, file, line), so the
 * native stack's evaluation-loop frames can be replaced by the Python
 * frames they run.
 *
 * Finding it: python_open looks at a process's modules (unwind/space.h)
 * for the python3.X executable (Debian links libpython statically) or a
 * libpython3.X.so (pyenv's shared builds), and in that module's symbol
 * tables (elf/elfsec, the file as space read it through proc/tfile) for
 * _PyRuntime. The version comes from the file name, checked against the
 * Py_Version symbol on 3.11+; the structure offsets from pylayout's
 * table, or on 3.13+ from the _Py_DebugOffsets the interpreter keeps at
 * the start of _PyRuntime (cookie "xdebugpy"). &PyCode_Type,
 * &PyUnicode_Type and &PyBytes_Type are checked on every object read, and
 * _PyEval_EvalFrameDefault's range says which native frames are the
 * evaluation loop (python_in_eval).
 *
 * Reading: every read goes through one function (struct python_mem; for a
 * live process process_vm_readv; a stack's code objects in one call),
 * length-capped and checked; the memory is
 * the target's and changes under us (cpu mode reads after the sample), so
 * anything that does not check out ends the stack there (PYTHON_TORN),
 * never a crash, never a name read from the wrong object. Code objects are
 * cached by address (a bounded table); a hit re-reads the object's head
 * and compares its type and the name, file and line-table pointers, so an
 * address freed and reused by another code object is read again. A
 * sample costs a read of the thread state, one per frame, and one for all
 * the code objects' heads.
 *
 * Thread ids: native_thread_id on 3.11+; before, the thread state's
 * pthread_t is glibc's struct pthread, whose tid field is found once by
 * looking in the main thread's (_PyRuntime.main_thread) for the pid. Ids
 * are those of the target's pid namespace.
 *
 * Contract: python_open (or python_open_mem) → python_threads,
 * python_state, python_stack* → python_free. Strings handed out live until
 * the next call on the same reader. Not thread safe (one reader a
 * process, used from the ingest thread).
 */
#ifndef STACKTOP_PYTHON_H
#define STACKTOP_PYTHON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "stacktop/runtime/pylayout.h"
#include "stacktop/unwind/space.h"

/* One range of the target's memory to copy. */
struct python_seg {
	uint64_t addr;
	void *buf;
	size_t len;
};

/* Most ranges one readv takes, and most frames python_stack returns. */
#define PYTHON_SEGS_MAX 256

/* read: copy len bytes at addr of the target into buf: 0, or -errno (a
 * short read is an error). readv (NULL: read one by one): n ranges at
 * once, returning how many, from the first, were copied whole. */
struct python_mem {
	int (*read)(void *ctx, uint64_t addr, void *buf, size_t len);
	void *ctx;
	int (*readv)(void *ctx, const struct python_seg *seg, int n);
};

/* Where the interpreter is: runtime addresses. */
struct python_where {
	int major, minor;
	uint64_t runtime;	       /* &_PyRuntime */
	uint64_t eval_start, eval_end; /* _PyEval_EvalFrameDefault [start, end); 0 unknown */
	uint64_t cold_start, cold_end; /* its .cold part, when the symbol table has one */
	uint64_t code_type, str_type, bytes_type; /* &PyCode_Type ...; 0: not checked */
	bool debug_offsets;			  /* layout from _Py_DebugOffsets */
	/* -X perf's trampoline template, _Py_trampoline_func_start and
	 * _end (3.12+); 0 when the module has none. */
	uint64_t tramp_start, tramp_end;
	const char *module; /* basename of the module that holds it (the reader's) */
};

/* A Python frame. */
struct python_frame {
	const char *func; /* co_qualname (3.11+) or co_name */
	const char *file; /* co_filename as the code object has it */
	int line;	  /* 0 when unknown */
	/* The outermost Python frame of one C call of the evaluation loop
	 * (3.8–3.10: every frame; 3.11: is_entry; 3.12+: the frame above a
	 * C-stack shim): one native eval frame runs the frames from the
	 * previous entry (exclusive) to this one. */
	bool entry;
};

/* python_stack's flags. */
enum {
	PYTHON_TRUNCATED = 1 << 0, /* more frames than room, or a chain too long */
	PYTHON_TORN = 1 << 1,	   /* a read failed or did not check out: the stack stops there */
};

struct python_thread {
	pid_t tid; /* 0 when not known */
	uint64_t tstate;
	bool gil; /* holds the GIL */
};

struct python_state {
	pid_t gil_tid; /* the thread holding the GIL; 0 none or unknown */
	int gc;	       /* 1 a collection is running, 0 not, -1 unknown */
	int nthreads;  /* thread states of the main interpreter */
};

struct python;

/* A reader for the process whose mappings sp holds (sp->pid), or -ENOENT
 * when it is not a CPython this reader knows; -ENOMEM. sp is only read
 * during the call. */
int python_open(struct space *sp, struct python **out);
/* A reader over any memory (tests, the fuzzer): layout l (borrowed; must
 * outlive the reader), w as python_open would find it, m the read
 * function, pid the process id (the main thread's tid) for 3.8–3.10. */
int python_open_mem(const struct pylayout *l, const struct python_where *w,
		    const struct python_mem *m, pid_t pid, struct python **out);
void python_free(struct python *py);

const struct python_where *python_where(const struct python *py);
/* Is pc (a native frame's) in the evaluation loop? */
bool python_in_eval(const struct python *py, uint64_t pc);

/* -X perf (3.12+) runs each evaluation call through a copy of a
 * trampoline in anonymous memory, named by the perf map but without CFI.
 * Is pc (a caller's return address less one) the call in such a copy?
 * Then *cfa_off is its frame's size at the return address (CFA = rsp +
 * cfa_off) and *bp_off where it saved rbp (0: kept). The copy's bytes are
 * read and compared with the template the first time a pc is asked;
 * answers are cached. cfa_off and bp_off may be NULL. */
bool python_trampoline(struct python *py, uint64_t pc, int32_t *cfa_off, int32_t *bp_off);

/* The main interpreter's threads, at most max: 0 or -errno. */
int python_threads(struct python *py, struct python_thread *out, int max, int *n);
int python_state(struct python *py, struct python_state *st);
/* Thread tid's Python frames, innermost first, at most max; *flags gets
 * PYTHON_*. 0 (with *n = 0 for a thread running no Python), -ENOENT
 * for a tid without a thread state, -ENOMEM. The code cache (and the
 * buffer of code heads) is made on the first call. */
int python_stack(struct python *py, pid_t tid, struct python_frame *out, int max, int *n,
		 unsigned *flags);

/* Counters (tests, the bench). */
struct python_stats {
	uint64_t reads, code_hits, code_misses, code_stale;
};
const struct python_stats *python_get_stats(const struct python *py);

#endif
