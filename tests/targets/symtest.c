/*
 * symtest — a target with functions of known names and lines, for the
 * symbolizer tests. It prints one line per function to stdout:
 *   NAME ADDRESS LINE
 * (ADDRESS is the runtime address, LINE the line of the function's opening
 * brace), then "ready", and waits until stdin is closed (or 30 s pass).
 *
 * symtest_alpha and symtest_beta are global (in .dynsym when linked with
 * -rdynamic); symtest_gamma is static, so only .symtab or a debug file
 * names it. sym.mk builds stripped and debug-file variants of this file.
 */
#include <stdio.h>
#include <unistd.h>

volatile int symtest_sink;

static const int alpha_line = __LINE__ + 2;
__attribute__((noinline)) int symtest_alpha(int x)
{
	for (int i = 0; i < x; i++)
		symtest_sink += i * 3;
	return symtest_sink;
}

static const int beta_line = __LINE__ + 2;
__attribute__((noinline)) int symtest_beta(int x)
{
	for (int i = 0; i < x; i++)
		symtest_sink ^= i * 7 + 1;
	return symtest_sink + 1;
}

static const int gamma_line = __LINE__ + 2;
static __attribute__((noinline)) int symtest_gamma(int x)
{
	for (int i = 0; i < x; i++)
		symtest_sink -= i * 5 + 2;
	return symtest_sink - 1;
}

int main(void)
{
	char c;

	alarm(30);
	printf("symtest_alpha %p %d\n", (void *)symtest_alpha, alpha_line);
	printf("symtest_beta %p %d\n", (void *)symtest_beta, beta_line);
	printf("symtest_gamma %p %d\n", (void *)symtest_gamma, gamma_line);
	printf("ready\n");
	fflush(stdout);
	symtest_sink = symtest_alpha(symtest_sink + 3) + symtest_beta(4) + symtest_gamma(5);
	while (read(0, &c, 1) > 0)
		;
	return 0;
}
