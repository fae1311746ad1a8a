// A plain Java program with one known hot method (test_jvm.sh): started with
// no flags, its JIT code is named only once the JVM writes its perf map.
// java -cp build/targets/java JvmHot [SECONDS [FILE]]: runs SECONDS (0: until
// killed); once FILE exists it spins in stacktopLateSpin instead.
public class JvmHot {
    static long stacktopHotSpin(long n, long seed) {
        long x = seed;
        for (long i = 0; i < n; i++)
            x = x * 6364136223846793005L + (i ^ (x >>> 29));
        return x;
    }
    // Compiled only once main switches to it: code the JIT makes after a
    // perf map was written.
    static long stacktopLateSpin(long n, long seed) {
        long x = seed;
        for (long i = 0; i < n; i++)
            x = x * 2862933555777941757L + (i ^ (x >>> 31)) + 3037000493L;
        return x;
    }

    public static void main(String[] args) {
        long t0 = System.nanoTime();
        long end = args.length > 0 && !args[0].equals("0") ? t0 + Long.parseLong(args[0]) * 1_000_000_000L : Long.MAX_VALUE;
        java.io.File late = args.length > 1 ? new java.io.File(args[1]) : null;
        boolean switched = false;
        long s = 0;
        for (int k = 0; System.nanoTime() < end; k++) {
            if (late != null && !switched && k % 64 == 0)
                switched = late.exists();
            s += switched ? stacktopLateSpin(2_000_000, s) : stacktopHotSpin(2_000_000, s);
        }
        System.out.println(s == 42 ? "" : "done");
    }
}
