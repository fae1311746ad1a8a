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

/* f_0 .. f_5999, each its own function (noipa) with its own symbol. */
#define FN(n)                                                                                      \
	KEEP static void f_##n(void)                                                               \
	{                                                                                          \
		for (int i = 0; i < 2000; i++)                                                     \
			sink += (unsigned long)i * (n);                                            \
	}
#define FN10(n)                                                                                    \
	FN(n##0) FN(n##1) FN(n##2) FN(n##3) FN(n##4) FN(n##5) FN(n##6) FN(n##7) FN(n##8) FN(n##9)
#define FN100(n)                                                                                   \
	FN10(n##0)                                                                                 \
	FN10(n##1)                                                                                 \
	FN10(n##2)                                                                                 \
	FN10(n##3)                                                                                 \
	FN10(n##4)                                                                                 \
	FN10(n##5) FN10(n##6) FN10(n##7) FN10(n##8) FN10(n##9)
#define FN1000(n)                                                                                  \
	FN100(n##0)                                                                                \
	FN100(n##1)                                                                                \
	FN100(n##2)                                                                                \
	FN100(n##3)                                                                                \
	FN100(n##4)                                                                                \
	FN100(n##5) FN100(n##6) FN100(n##7) FN100(n##8) FN100(n##9)
FN1000(1)
FN1000(2)
FN1000(3)
FN1000(4)
FN1000(5)
FN1000(6)

#define REF(n) f_##n,
#define REF10(n)                                                                                   \
	REF(n##0)                                                                                  \
	REF(n##1) REF(n##2) REF(n##3) REF(n##4) REF(n##5) REF(n##6) REF(n##7) REF(n##8) REF(n##9)
#define REF100(n)                                                                                  \
	REF10(n##0)                                                                                \
	REF10(n##1)                                                                                \
	REF10(n##2)                                                                                \
	REF10(n##3)                                                                                \
	REF10(n##4) REF10(n##5) REF10(n##6) REF10(n##7) REF10(n##8) REF10(n##9)
#define REF1000(n)                                                                                 \
	REF100(n##0)                                                                               \
	REF100(n##1)                                                                               \
	REF100(n##2)                                                                               \
	REF100(n##3)                                                                               \
	REF100(n##4) REF100(n##5) REF100(n##6) REF100(n##7) REF100(n##8) REF100(n##9)

static void (*const fns[NFN])(void) = {REF1000(1) REF1000(2) REF1000(3) REF1000(4) REF1000(5)
					   REF1000(6)};

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
