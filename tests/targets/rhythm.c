/*
 * rhythm — a target whose CPU spikes on a cadence (issue 27): a steady low
 * level and, every PERIOD seconds, a full core for SPIKE seconds.
 *
 *   rhythm [PERIOD [SPIKE [STEADY_PCT [SECONDS]]]]
 *          defaults: 5 s, 1.5 s, 10% of a core, run until killed
 *
 * PERIOD "rN": no rhythm, the same spikes at random times (a Poisson
 * process: exponential gaps of mean N seconds after each spike, seeded by
 * the pid), which must get no rhythm line.
 *
 * One thread. The spikes start on absolute deadlines (CLOCK_MONOTONIC), so
 * the period does not drift with the work or with the CPU the machine
 * gives; a spike spins for SPIKE seconds of wall time in spike_burn (its
 * own frame), so a starved spike is lower, never later or longer. Between
 * spikes, steady_burn spins STEADY_PCT of every 100 ms step (thread CPU
 * time) and the thread sleeps to the next step.
 */
#include "target.h"

#include <math.h>
#include <stdbool.h>

static uint64_t spin_per_ms;

KEEP uint64_t spike_burn(uint64_t x, double until)
{
	while (mono_s() < until)
		SPIN(x, spin_per_ms);
	return x;
}

KEEP uint64_t steady_burn(uint64_t x, double cpu_s)
{
	double t0 = thread_cpu_s();

	while (thread_cpu_s() - t0 < cpu_s)
		SPIN(x, spin_per_ms / 4 + 1);
	return x;
}

/* An exponential gap of mean seconds (a Poisson process's). */
static double random_gap(double mean)
{
	static unsigned seed;

	if (!seed)
		seed = (unsigned)getpid() * 2654435761u;
	seed = seed * 1103515245u + 12345u;
	return -mean * log(((seed >> 8) + 1.0) / 16777217.0);
}

int main(int argc, char **argv)
{
	bool random_onsets = argc > 1 && argv[1][0] == 'r';
	double period = argc > 1 ? atof(argv[1] + random_onsets) : 5;
	double spike = argc > 2 ? atof(argv[2]) : 1.5;
	double steady = argc > 3 ? atof(argv[3]) : 10;
	double seconds = argc > 4 ? atof(argv[4]) : 0;
	double t0, next_spike;
	uint64_t x = 1;

	if (argc > 5 || period <= 0 || spike < 0 || (spike >= period && !random_onsets) ||
	    steady < 0 || steady > 90 || seconds < 0) {
		fprintf(stderr, "usage: rhythm [PERIOD [SPIKE [STEADY_PCT [SECONDS]]]]\n");
		return 2;
	}
	spin_per_ms = spin_calibrate(0.001);
	t0 = mono_s();
	next_spike = t0 + 1;
	for (;;) {
		double now = mono_s();

		if (seconds > 0 && now - t0 >= seconds)
			break;
		if (now >= next_spike) {
			x = spike_burn(x, next_spike + spike);
			NO_TAIL();
			next_spike += random_onsets ? spike + random_gap(period) : period;
			continue;
		}
		x = steady_burn(x, 0.1 * steady / 100);
		NO_TAIL();
		double wake = now + 0.1;
		sleep_s((wake < next_spike ? wake : next_spike) - mono_s());
	}
	sink += x;
	return 0;
}
