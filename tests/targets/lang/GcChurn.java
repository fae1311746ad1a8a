// GcChurn — a Java program whose CPU is mostly garbage collection: with a
// small heap (-Xmx32m) it keeps a ring of live objects and replaces them
// fast, so young collections copy live data and old ones mark it. Runs for
// SECONDS (args[0], default 60). test_gc checks the header's GC share,
// test_hsperf the Java heap line read from its hsperfdata file.
public class GcChurn {
	static Object[] ring = new Object[50_000];

	public static void main(String[] args) throws Exception {
		long seconds = args.length > 0 ? Long.parseLong(args[0]) : 60;
		long end = System.nanoTime() + seconds * 1_000_000_000L;
		long i = 0, sum = 0;
		while (System.nanoTime() < end) {
			for (int k = 0; k < 10_000; k++, i++) {
				int[] a = new int[16 + (int) (i % 64)];
				a[0] = (int) i;
				ring[(int) ((i * 7919) % ring.length)] = a;
				sum += a.length;
			}
		}
		System.out.println(sum);
	}
}
