/*
 * hostile_source — a target whose line table names files it must not get
 * stacktop to show (issue 28, item 8): its two hot functions claim, through
 * #line, to be written in /etc/shadow and in /proc/kmsg. Annotating them as
 * root must print neither file: /etc/shadow is read only for a reader who
 * could read it (the target's user, or anyone when offline as root), and
 * /proc/kmsg (reading it consumes the kernel log) is never opened at all.
 *
 *   hostile_source [SECONDS]      default: run until killed
 *
 * shadow_loop and kmsg_loop take about half of the CPU each.
 */
#include "target.h"

#line 1 "/etc/shadow"
KEEP uint64_t shadow_loop(uint64_t x, uint64_t n)
{
	SPIN(x, n);
	return x;
}

#line 1 "/proc/kmsg"
KEEP uint64_t kmsg_loop(uint64_t x, uint64_t n)
{
	SPIN(x, n);
	return x;
}

#line 30 "hostile_source.c"
int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 0, t0 = mono_s();
	uint64_t x = 1;

	while (!secs || mono_s() - t0 < secs) {
		x = shadow_loop(x, 2000000);
		x = kmsg_loop(x, 2000000);
		sink = x;
	}
	return 0;
}
