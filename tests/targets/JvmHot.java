// A plain Java program with one known hot method (test_jvm.sh): started with
// no flags, its JIT code is named only once the JVM writes its perf map.
// java -cp build/targets/java JvmHot [SECONDS] (default: run until killed).
public class JvmHot {
    static long stacktopHotSpin(long n, long seed) {
        long x = seed;
        for (long i = 0; i < n; i++)
            x = x * 6364136223846793005L + (i ^ (x >>> 29));
        return x;
    }
    public static void main(String[] args) {
        long end = args.length > 0 ? System.nanoTime() + Long.parseLong(args[0]) * 1_000_000_000L : Long.MAX_VALUE;
        long s = 0;
        while (System.nanoTime() < end)
            s += stacktopHotSpin(2_000_000, s);
        System.out.println(s == 42 ? "" : "done");
    }
}
