/*
 * hostile_bigname — an executable whose symbol table costs a symbolizer
 * that copies names dearly (issue 28 item 3): 6,000 small functions f_N and
 * one function whose name is 1 MiB long. Built as is by the generic rule;
 * tests/targets/hostile_names.mk then makes hostile_bigname-onename, where
 * every f_N symbol's st_name points at that one 1 MiB name (the file stays
 * 1.4 MB: the string is stored once). main calls all of them in turn, so
 * the profiler meets thousands of new pcs in the one module.
 *
 * usage: hostile_bigname [SECONDS]   (default: forever)
 */
#include "target.h"

#define NFN 6000

static volatile unsigned long sink;

/* X1000(M, d): M(d000) .. M(d999), the one decimal expansion both the
 * functions and the table of them are made with (clang-format does not
 * settle on one layout for these). */
// clang-format off
#define X10(M, n) M(n##0) M(n##1) M(n##2) M(n##3) M(n##4) M(n##5) M(n##6) M(n##7) M(n##8) M(n##9)
#define X100(M, n) X10(M, n##0) X10(M, n##1) X10(M, n##2) X10(M, n##3) X10(M, n##4) \
	X10(M, n##5) X10(M, n##6) X10(M, n##7) X10(M, n##8) X10(M, n##9)
#define X1000(M, n) X100(M, n##0) X100(M, n##1) X100(M, n##2) X100(M, n##3) X100(M, n##4) \
	X100(M, n##5) X100(M, n##6) X100(M, n##7) X100(M, n##8) X100(M, n##9)
// clang-format on
#define X6000(M) X1000(M, 1) X1000(M, 2) X1000(M, 3) X1000(M, 4) X1000(M, 5) X1000(M, 6)

/* f_1000 .. f_6999, each its own function (noipa) with its own symbol. */
#define FN(n)                                                                                      \
	KEEP static void f_##n(void)                                                               \
	{                                                                                          \
		for (int i = 0; i < 2000; i++)                                                     \
			sink += (unsigned long)i * (n);                                            \
	}
X6000(FN)

#define REF(n) f_##n,
static void (*const fns[NFN])(void) = {X6000(REF)};

/* The one long name: 2^20 bytes of "N", given to a function by an asm
 * label made of string literals that the compiler joins. */
#define S2(x) x x
#define S4(x) S2(S2(x))
#define S16(x) S4(S4(x))
#define S256(x) S16(S16(x))
#define S64K(x) S256(S256(x))
#define S1M(x) S16(S64K(x))
KEEP void long_named(void) __asm__(S1M("N"));
void long_named(void)
{
	sink++;
}

int main(int argc, char **argv)
{
	time_t end = argc > 1 ? time(NULL) + atoi(argv[1]) : 0;

	for (;;) {
		for (int i = 0; i < NFN; i++)
			fns[i]();
		long_named();
		if (end && time(NULL) >= end)
			return 0;
	}
}
