# pyworkers.py [fork|spawn] — multiprocessing with two worker processes
# (fork by default; spawn execs a new interpreter for each), each
# burning in its own named function (worker_alpha, worker_beta) while the
# parent waits for them, for test_python.sh's --subprocesses case: the
# workers are CPython too, adopted after the first target. Prints "ready"
# when both have started. Runs until killed (the workers die with it:
# daemon processes, and each polls for its parent).
import multiprocessing
import os
import sys


def spin(n):
    x = 0
    for i in range(n):
        x += i
    return x


def worker_alpha(parent, started):
    started.release()
    while os.getppid() == parent:
        spin(200000)


def worker_beta(parent, started):
    started.release()
    while os.getppid() == parent:
        spin(200000)


def main():
    ctx = multiprocessing.get_context(sys.argv[1] if len(sys.argv) > 1 else "fork")
    started = ctx.Semaphore(0)
    procs = [ctx.Process(target=f, args=(os.getpid(), started), daemon=True)
             for f in (worker_alpha, worker_beta)]
    for p in procs:
        p.start()
    for _ in procs:
        started.acquire()
    print("ready", flush=True)
    for p in procs:
        p.join()


if __name__ == "__main__":
    main()
