/*
 * newstacks — a target whose every sample is a stack never seen before, for
 * the memory bench (bench/memory.sh): what a profiler keeps per distinct
 * stack must be given back when the stack leaves its window, or it grows
 * with the run time.
 *
 *   newstacks [SECONDS]      default: run until killed
 *
 * The main thread runs rounds. Each round takes the next value of a
 * counter, scrambles it (splitmix64) and descends DEPTH (24) levels through
 * sixteen noipa functions step_0 .. step_f: level k calls the step named by
 * bits 4k..4k+3 of the scrambled value, through a table of pointers. The
 * last step spins ~50 µs (calibrated) and returns. So a round is one random
 * path among 16^24, and a 99 Hz sampler (one sample per ~200 rounds) never
 * sees the same stack twice; only the first few levels of the call trie
 * are shared.
 *
 * The set of frames is small and fixed (sixteen steps, one call site each,
 * plus main and the spin): only the stacks are new. Every step does work
 * after its call (NO_TAIL), so no call is a tail call under -O2, and the
 * build has no frame pointers: the profiler unwinds it through DWARF CFI.
 */
#include "target.h"

#define DEPTH 24

typedef uint64_t (*step_fn)(unsigned level, uint64_t path, uint64_t x);

static uint64_t iters_per_leaf;
static step_fn steps[16];

/* The body every step shares: spin at the bottom, else go one level down
 * into the step that the next four bits of path name. */
#define STEP_BODY(level, path, x)                                                                  \
	do {                                                                                       \
		if ((level) == 0) {                                                                \
			SPIN(x, iters_per_leaf);                                                   \
			return (x);                                                                \
		}                                                                                  \
		(x) = steps[(path)&15]((level)-1, (path) >> 4 | (path) << 60, (x));                \
		NO_TAIL();                                                                         \
		return (x) + (level);                                                              \
	} while (0)

#define DEFINE_STEP(name)                                                                          \
	KEEP uint64_t name(unsigned level, uint64_t path, uint64_t x)                              \
	{                                                                                          \
		STEP_BODY(level, path, x);                                                         \
	}

DEFINE_STEP(step_0)
DEFINE_STEP(step_1)
DEFINE_STEP(step_2)
DEFINE_STEP(step_3)
DEFINE_STEP(step_4)
DEFINE_STEP(step_5)
DEFINE_STEP(step_6)
DEFINE_STEP(step_7)
DEFINE_STEP(step_8)
DEFINE_STEP(step_9)
DEFINE_STEP(step_a)
DEFINE_STEP(step_b)
DEFINE_STEP(step_c)
DEFINE_STEP(step_d)
DEFINE_STEP(step_e)
DEFINE_STEP(step_f)

/* splitmix64: consecutive counters give unrelated paths. */
TARGET_INLINE uint64_t scramble(uint64_t c)
{
	c += 0x9E3779B97F4A7C15ULL;
	c = (c ^ (c >> 30)) * 0xBF58476D1CE4E5B9ULL;
	c = (c ^ (c >> 27)) * 0x94D049BB133111EBULL;
	return c ^ (c >> 31);
}

KEEP void rounds(double seconds)
{
	double end = seconds > 0 ? mono_s() + seconds : 0;
	uint64_t x = 1;

	for (uint64_t c = 0;; c++) {
		x = steps[scramble(c) & 15](DEPTH - 1, scramble(c) >> 4, x);
		if (end > 0 && c % 256 == 0 && mono_s() >= end)
			break;
	}
	sink += x;
}

int main(int argc, char **argv)
{
	const step_fn all[16] = {step_0, step_1, step_2, step_3, step_4, step_5, step_6, step_7,
				 step_8, step_9, step_a, step_b, step_c, step_d, step_e, step_f};
	double seconds;

	if (arg_seconds(argc, argv, "newstacks [SECONDS]", &seconds))
		return 2;
	memcpy(steps, all, sizeof(steps));
	iters_per_leaf = spin_calibrate(0.00005);
	rounds(seconds);
	return 0;
}
