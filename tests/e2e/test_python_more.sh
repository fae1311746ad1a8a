#!/bin/bash
# test_python_more — test_python's part that may run beside other tests:
# every pyenv CPython 3.8-3.13 names pyshares.py's functions, dump's
# tracebacks, the GIL flag, multiprocessing workers, the memory view's
# Python code paths and -X perf's trampolines (see test_python.sh).
PY_PART=more
. "$(dirname "$0")/test_python.sh"
