// SPDX-License-Identifier: GPL-2.0
/* TSC-based timestamps calibrated against CLOCK_MONOTONIC, see fastclock.h. */
#include <math.h>
#include <time.h>

#include "fastclock.h"

struct fastclock fastclock;

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts))
		;
}

bool fastclock_init(unsigned int calib_ms)
{
	fastclock.tsc = false;
#ifdef FASTCLOCK_TSC
	double rate[2];

	for (int i = 0; i < 2; i++) {
		uint64_t n0 = now_ns(), t0 = __rdtsc();

		sleep_ms(calib_ms / 2 ? calib_ms / 2 : 1);

		uint64_t n1 = now_ns(), t1 = __rdtsc();

		if (t1 <= t0 || n1 <= n0)
			return false;
		rate[i] = (double)(t1 - t0) / (double)(n1 - n0);
	}
	/* two calibrations must agree within 2 %, else do not trust the TSC */
	if (rate[0] <= 0 || fabs(rate[0] - rate[1]) > 0.02 * rate[0])
		return false;

	double tpn = (rate[0] + rate[1]) / 2;

	fastclock.ticks_per_ns = tpn;
	fastclock.mult = (uint64_t)(4294967296.0 / tpn);
	fastclock.ns0 = now_ns();
	fastclock.tsc0 = __rdtsc();
	fastclock.tsc = fastclock.mult > 0;
#else
	(void)calib_ms;
#endif
	return fastclock.tsc;
}

const char *fastclock_source(void)
{
	return fastclock.tsc ? "tsc" : "clock_gettime";
}
