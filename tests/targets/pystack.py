# pystack.py — a CPython target with a known shape for the Python reader's
# tests (tests/unit/test_python.c, dump): the main thread sleeps at the end
# of a chain of calls, one thread sleeps holding a lock, another waits on
# it. Prints "ready" once all three are where they stay. Lines the tests
# check carry a "# at:NAME" mark; they find the numbers by the mark.
import sys
import threading
import time

lock = threading.Lock()
held = threading.Event()


def holder():
    with lock:
        held.set()
        time.sleep(3600)  # at:holder


def waiter():
    held.wait()
    lock.acquire()  # at:waiter


class Chain:
    def inner(self):
        time.sleep(3600)  # at:inner

    def middle(self):
        self.inner()  # at:middle


def outer():
    Chain().middle()  # at:outer


def main():
    threading.Thread(target=holder, name="holder", daemon=True).start()
    held.wait()
    threading.Thread(target=waiter, name="waiter", daemon=True).start()
    time.sleep(0.2)
    print("ready", flush=True)
    outer()  # at:main


main()
