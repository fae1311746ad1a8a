/*
 * driver — runs a fuzz entry point (LLVMFuzzerTestOneInput) without
 * libFuzzer, so `make check` can smoke-test every parser with gcc: each
 * seed file of a corpus directory is fed as is, then mutated (bit flips,
 * byte changes, truncation, duplication, splices with other seeds) for a
 * fixed number of rounds with a fixed seed, so a crash reproduces.
 * `make fuzz` builds the same entry points with clang's libFuzzer and
 * AddressSanitizer for real, open-ended fuzzing.
 *
 * usage: fuzz_X CORPUS_DIR [ROUNDS]
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_SEEDS 64
#define FUZZ_MAX_INPUT 65536

static uint8_t *seeds[MAX_SEEDS];
static size_t seed_len[MAX_SEEDS];
static int nseeds;
static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void load_corpus(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	if (!d)
		return;
	while ((e = readdir(d)) && nseeds < MAX_SEEDS) {
		char path[4096];
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		FILE *f = fopen(path, "rb");
		if (!f)
			continue;
		uint8_t *buf = malloc(FUZZ_MAX_INPUT);
		size_t n = fread(buf, 1, FUZZ_MAX_INPUT, f);
		fclose(f);
		seeds[nseeds] = buf;
		seed_len[nseeds++] = n;
	}
	closedir(d);
}

static size_t mutate(uint8_t *buf, size_t n)
{
	int ops = 1 + (int)(next_rand() % 8);
	for (int i = 0; i < ops; i++) {
		switch (next_rand() % 6) {
		case 0: /* flip a bit */
			if (n)
				buf[next_rand() % n] ^= (uint8_t)(1u << (next_rand() % 8));
			break;
		case 1: /* set a byte to an interesting value */
			if (n) {
				static const uint8_t vals[] = {0,   0xff, 0x7f, 0x80, '\n',
							       ' ', '-',  ':',	'0'};
				buf[next_rand() % n] = vals[next_rand() % sizeof(vals)];
			}
			break;
		case 2: /* truncate */
			if (n)
				n = next_rand() % n;
			break;
		case 3: /* duplicate a chunk */
			if (n && n < FUZZ_MAX_INPUT / 2) {
				size_t at = next_rand() % n, len = next_rand() % (n - at) + 1;
				memmove(buf + at + len, buf + at, n - at);
				n += len;
			}
			break;
		case 4: /* splice another seed */
			if (nseeds) {
				int s = (int)(next_rand() % (uint64_t)nseeds);
				size_t at = n ? next_rand() % n : 0;
				size_t len = seed_len[s] < FUZZ_MAX_INPUT - at
						 ? seed_len[s]
						 : FUZZ_MAX_INPUT - at;
				memcpy(buf + at, seeds[s], len);
				if (at + len > n)
					n = at + len;
			}
			break;
		default: /* random byte */
			if (n)
				buf[next_rand() % n] = (uint8_t)next_rand();
			break;
		}
	}
	return n;
}

int main(int argc, char **argv)
{
	long rounds = argc > 2 ? atol(argv[2]) : 10000;
	static uint8_t buf[FUZZ_MAX_INPUT];
	if (argc > 1)
		load_corpus(argv[1]);
	for (int i = 0; i < nseeds; i++)
		LLVMFuzzerTestOneInput(seeds[i], seed_len[i]);
	for (long r = 0; r < rounds; r++) {
		size_t n;
		if (nseeds && next_rand() % 8) {
			int s = (int)(next_rand() % (uint64_t)nseeds);
			n = seed_len[s];
			memcpy(buf, seeds[s], n);
		} else {
			n = next_rand() % 512;
			for (size_t i = 0; i < n; i++)
				buf[i] = (uint8_t)next_rand();
		}
		n = mutate(buf, n);
		LLVMFuzzerTestOneInput(buf, n);
	}
	printf("%s: %d seeds, %ld rounds, no crash\n", argv[0], nseeds, rounds);
	for (int i = 0; i < nseeds; i++)
		free(seeds[i]);
	return 0;
}
