# pygil.py — two threads that only run Python, so one waits for the GIL
# while the other holds it (test_python.sh: wall mode's "GIL" kind); the
# main thread sleeps. Runs until killed.
import threading
import time


def spin():
    x = 0
    while True:
        x += 1


for _ in range(2):
    threading.Thread(target=spin, daemon=True).start()
time.sleep(3600)
