# pymem.py — a CPython that maps memory from one Python function, for
# test_python.sh's memory view case: hold_buffers keeps 8 MiB bytearrays
# (each its own mmap), dropping the older half past 16, without a pause,
# so whenever its Python stack is read it is in hold_buffers. Runs until
# killed.
keep = []


def hold_buffers():
    while True:
        keep.append(bytearray(8 << 20))  # at:hold
        if len(keep) > 16:
            del keep[:8]


def main():
    hold_buffers()


main()
