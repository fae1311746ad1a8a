/*
 * pylayout — where CPython keeps what the Python reader (runtime/python.h)
 * needs, per minor version 3.8 to 3.13: byte offsets inside its runtime,
 * interpreter, thread, frame, code, str and bytes structures on x86-64.
 *
 * The table (src/runtime/pylayout.c) is generated from CPython's own
 * headers by src/runtime/pylayout_gen/gen.sh (offsetof() with
 * Py_BUILD_CORE) as one row a version, the fields by position in this
 * struct's order; a new version is a new row from rerunning it. On 3.13+
 * the reader prefers the interpreter's own _Py_DebugOffsets and uses the
 * row only where those say nothing. Offsets of one minor version hold for
 * all its releases (CPython keeps the ABI of a minor version; Debian's
 * 3.11 and pyenv's 3.11.7 give the same row). -1: the version has no such
 * field. Read-only data: nothing to allocate or free.
 */
#ifndef STACKTOP_PYLAYOUT_H
#define STACKTOP_PYLAYOUT_H

struct pylayout {
	int major, minor;
	/* _PyRuntimeState: the interpreter list, the main thread's pthread_t,
	 * the GIL (3.8–3.11) and the collector (3.8). */
	int rt_interp_head, rt_main_thread, rt_gil_locked, rt_gil_holder, rt_gc_collecting;
	/* PyInterpreterState: the GIL on 3.12+ (its own _gil), the list of
	 * interpreters and of thread states, the collector (3.9+). */
	int is_gil_locked, is_gil_holder, is_next, is_tstate_head, is_gc_collecting;
	/* PyThreadState: the current frame directly (3.8–3.10: a
	 * PyFrameObject; 3.13: an _PyInterpreterFrame) or through its
	 * _PyCFrame (3.11, 3.12); pthread_t and the OS thread id (3.11+). */
	int ts_next, ts_interp, ts_frame, ts_cframe, cf_current_frame, ts_native_thread_id,
	    ts_thread_id;
	/* The frame: PyFrameObject (f_back, f_code, f_lasti) before 3.11,
	 * _PyInterpreterFrame (previous, f_code/f_executable,
	 * prev_instr/instr_ptr, is_entry or owner) since. */
	int fr_previous, fr_code, fr_instr, fr_is_entry, fr_owner, owned_by_cstack;
	/* PyCodeObject; co_linetable is co_lnotab before 3.10. */
	int co_name, co_qualname, co_code_adaptive, co_filename, co_firstlineno, co_linetable;
	/* PyObject, str (PyASCIIObject and its compact form), bytes. */
	int ob_type, u_length, u_state, u_ascii_size, u_compact_size, b_size, b_sval;
};

/* The row of CPython major.minor, or NULL when the table has none. */
const struct pylayout *pylayout_find(int major, int minor);

#endif
