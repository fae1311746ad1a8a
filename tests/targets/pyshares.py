# pyshares.py — a pure-Python CPU loop with known shares: three leaf
# functions run 60, 30 and 10 rounds of one loop (spin) behind a chain
# of calls (main → run → step → leaf_* → spin), for test_python.sh. Runs
# until killed. Each leaf runs for tens of milliseconds at a time: stacktop
# reads the Python frames when it names a sample, up to a collect tick
# (50 ms) after it was taken, so a leaf's first moments are counted to the
# one before; over whole rounds of the cycle what each leaf loses to the
# previous one it gains from the next, and the shares stay right.
def spin(n):
    x = 0
    for i in range(n):
        x += i
    return x


# Each leaf's time is in spin, its callee: the leaf's %Total is its share.
def leaf_sixty(n):
    return spin(n)


def leaf_thirty(n):
    return spin(n)


def leaf_ten(n):
    return spin(n)


def step(k):
    leaf_sixty(6 * k)
    leaf_thirty(3 * k)
    leaf_ten(k)


def run():
    while True:
        step(300000)


def main():
    run()


main()
