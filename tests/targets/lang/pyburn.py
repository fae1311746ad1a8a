# pyburn — a known hot Python function for `python3.12+ -X perf_jit`, whose
# trampolines are named in a jitdump file (/tmp/jit-PID.dump). CPython
# writes that file through a stdio buffer: after py_hot has its trampoline,
# a few hundred small functions get theirs so that py_hot's record reaches
# the file; then py_hot runs for SECONDS (argv, default 60).
import sys
import time


def py_hot(n):
    s = 0
    for i in range(n):
        s = (s * 31 + i) % 1000003
    return s


def main(seconds):
    py_hot(10)
    for i in range(600):
        ns = {}
        exec("def filler_%d(x):\n    return x + %d\n" % (i, i), ns)
        ns["filler_%d" % i](i)
    end = time.time() + seconds
    while time.time() < end:
        py_hot(100000)


main(float(sys.argv[1]) if len(sys.argv) > 1 else 60)
