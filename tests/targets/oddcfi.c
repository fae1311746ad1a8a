/*
 * oddcfi — a target whose hot stack passes through CFI the rule cache does
 * not model (see oddcfi.h):
 *
 *   main → oddcfi_run → oddcfi_expr → oddcfi_rbx → oddcfi_hot
 *
 * oddcfi_hot burns all the CPU. The rule cache alone stops at oddcfi_rbx
 * (truncated); with libunwind's fallback the stack reaches main. Runs until
 * killed, or SECONDS when given.
 */
#include "target.h"
#include "oddcfi.h"

KEEP uint64_t oddcfi_hot(uint64_t x)
{
	SPIN(x, 200000);
	return x;
}

KEEP void oddcfi_run(double seconds)
{
	double end = seconds > 0 ? mono_s() + seconds : 0;
	uint64_t x = 1;

	do {
		x = oddcfi_expr(x, oddcfi_hot);
		sink = x;
	} while (!end || mono_s() < end);
	NO_TAIL();
}

int main(int argc, char **argv)
{
	oddcfi_run(argc > 1 ? atof(argv[1]) : 0);
	return 0;
}
