/*
 * pylayout_gen/gen.c — prints one row of src/runtime/pylayout.c: the offsets
 * stacktop's Python reader needs, taken with offsetof() from CPython's own
 * headers (internal ones too, hence Py_BUILD_CORE), in the order of struct
 * pylayout's fields (the table initializes them by position). With
 * "names" it prints the column names instead, for the table's head, with
 * "count" how many there are. Not part of stacktop: gen.sh compiles it once
 * per installed CPython and writes the table. -1 is a field the version
 * does not have.
 */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#if PY_VERSION_HEX < 0x030B0000
#include <frameobject.h>
#endif
#if PY_VERSION_HEX < 0x03090000
#include <internal/pycore_pystate.h>
#else
#include <internal/pycore_runtime.h>
#include <internal/pycore_interp.h>
#endif
#if PY_VERSION_HEX >= 0x030B0000
#include <internal/pycore_frame.h>
#endif

/* The fields in struct pylayout's order; F(name, value) adds the next. */
static const char *names[64];
static long values[64];
static int nfields;
#define F(name, v) (names[nfields] = #name, values[nfields++] = (long)(v))

/* The head's column names, a line of them under 76 characters. */
static void print_names(void)
{
	int col = 0;

	printf(" *");
	for (int i = 0; i < nfields; i++) {
		if (col + (int)strlen(names[i]) > 72) {
			printf("\n *");
			col = 0;
		}
		col += printf(" %s", names[i]);
	}
	printf("\n");
}

int main(int argc, char **argv)
{
	F(major, PY_MAJOR_VERSION);
	F(minor, PY_MINOR_VERSION);
	F(rt_interp_head, offsetof(_PyRuntimeState, interpreters.head));
	F(rt_main_thread, offsetof(_PyRuntimeState, main_thread));
#if PY_VERSION_HEX < 0x030C0000
	F(rt_gil_locked, offsetof(_PyRuntimeState, ceval.gil.locked));
	F(rt_gil_holder, offsetof(_PyRuntimeState, ceval.gil.last_holder));
#else
	F(rt_gil_locked, -1);
	F(rt_gil_holder, -1);
#endif
#if PY_VERSION_HEX < 0x03090000
	F(rt_gc_collecting, offsetof(_PyRuntimeState, gc.collecting));
#else
	F(rt_gc_collecting, -1);
#endif
#if PY_VERSION_HEX < 0x030C0000
	F(is_gil_locked, -1);
	F(is_gil_holder, -1);
#else
	F(is_gil_locked, offsetof(PyInterpreterState, _gil.locked));
	F(is_gil_holder, offsetof(PyInterpreterState, _gil.last_holder));
#endif
	F(is_next, offsetof(PyInterpreterState, next));
#if PY_VERSION_HEX < 0x030B0000
	F(is_tstate_head, offsetof(PyInterpreterState, tstate_head));
#else
	F(is_tstate_head, offsetof(PyInterpreterState, threads.head));
#endif
#if PY_VERSION_HEX < 0x03090000
	F(is_gc_collecting, -1);
#else
	F(is_gc_collecting, offsetof(PyInterpreterState, gc.collecting));
#endif
	F(ts_next, offsetof(PyThreadState, next));
	F(ts_interp, offsetof(PyThreadState, interp));
#if PY_VERSION_HEX < 0x030B0000
	F(ts_frame, offsetof(PyThreadState, frame));
	F(ts_cframe, -1);
	F(cf_current_frame, -1);
	F(ts_native_thread_id, -1);
#elif PY_VERSION_HEX < 0x030D0000
	F(ts_frame, -1);
	F(ts_cframe, offsetof(PyThreadState, cframe));
	F(cf_current_frame, offsetof(_PyCFrame, current_frame));
	F(ts_native_thread_id, offsetof(PyThreadState, native_thread_id));
#else
	F(ts_frame, offsetof(PyThreadState, current_frame));
	F(ts_cframe, -1);
	F(cf_current_frame, -1);
	F(ts_native_thread_id, offsetof(PyThreadState, native_thread_id));
#endif
	F(ts_thread_id, offsetof(PyThreadState, thread_id));
#if PY_VERSION_HEX < 0x030B0000
	F(fr_previous, offsetof(PyFrameObject, f_back));
	F(fr_code, offsetof(PyFrameObject, f_code));
	F(fr_instr, offsetof(PyFrameObject, f_lasti));
	F(fr_is_entry, -1);
	F(fr_owner, -1);
	F(owned_by_cstack, -1);
#else
	F(fr_previous, offsetof(_PyInterpreterFrame, previous));
#if PY_VERSION_HEX < 0x030D0000
	F(fr_code, offsetof(_PyInterpreterFrame, f_code));
	F(fr_instr, offsetof(_PyInterpreterFrame, prev_instr));
#else
	F(fr_code, offsetof(_PyInterpreterFrame, f_executable));
	F(fr_instr, offsetof(_PyInterpreterFrame, instr_ptr));
#endif
#if PY_VERSION_HEX < 0x030C0000
	F(fr_is_entry, offsetof(_PyInterpreterFrame, is_entry));
	F(fr_owner, offsetof(_PyInterpreterFrame, owner));
	F(owned_by_cstack, -1);
#else
	F(fr_is_entry, -1);
	F(fr_owner, offsetof(_PyInterpreterFrame, owner));
	F(owned_by_cstack, FRAME_OWNED_BY_CSTACK);
#endif
#endif
	F(co_name, offsetof(PyCodeObject, co_name));
#if PY_VERSION_HEX >= 0x030B0000
	F(co_qualname, offsetof(PyCodeObject, co_qualname));
	F(co_code_adaptive, offsetof(PyCodeObject, co_code_adaptive));
#else
	F(co_qualname, -1);
	F(co_code_adaptive, -1);
#endif
	F(co_filename, offsetof(PyCodeObject, co_filename));
	F(co_firstlineno, offsetof(PyCodeObject, co_firstlineno));
#if PY_VERSION_HEX < 0x030A0000
	F(co_linetable, offsetof(PyCodeObject, co_lnotab));
#else
	F(co_linetable, offsetof(PyCodeObject, co_linetable));
#endif
	F(ob_type, offsetof(PyObject, ob_type));
	F(u_length, offsetof(PyASCIIObject, length));
	F(u_state, offsetof(PyASCIIObject, state));
	F(u_ascii_size, sizeof(PyASCIIObject));
	F(u_compact_size, sizeof(PyCompactUnicodeObject));
	F(b_size, offsetof(PyVarObject, ob_size));
	F(b_sval, offsetof(PyBytesObject, ob_sval));
	if (argc > 1 && strcmp(argv[1], "names") == 0) {
		print_names();
		return 0;
	}
	if (argc > 1) {
		printf("%d\n", nfields);
		return 0;
	}
	printf("\t{");
	for (int i = 0; i < nfields; i++)
		printf("%s%5ld", i ? "," : "", values[i]);
	printf("}, /* " PY_VERSION " */\n");
	return 0;
}
