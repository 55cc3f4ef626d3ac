/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Cheap nanosecond timestamps for latency samples.
 *
 * clock_gettime() is a vDSO call only when the kernel's clocksource is
 * TSC-based; under QEMU TCG guests run on hpet/acpi_pm, where every call is a
 * system call plus an emulated MMIO read (tens of microseconds), which would
 * dominate the latencies measured.  fast_ns() reads the TSC directly and
 * scales it with a factor calibrated against CLOCK_MONOTONIC by
 * fastclock_init() (inherited over fork).  Without a usable TSC (not x86, or
 * calibration fails) it falls back to now_ns().  Use it for differences only.
 */
#ifndef HUGELAB_FASTCLOCK_H
#define HUGELAB_FASTCLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "hist.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define FASTCLOCK_TSC 1
#endif

struct fastclock {
	bool tsc;               /* TSC in use */
	uint64_t tsc0, ns0;
	uint64_t mult;          /* ns per tick, 32.32 fixed point */
	double ticks_per_ns;
};

extern struct fastclock fastclock;

/* Calibrate over about calib_ms milliseconds; returns true if the TSC is used. */
bool fastclock_init(unsigned int calib_ms);
/* ns for a tick delta (exposed for tests) */
static inline uint64_t fastclock_scale(uint64_t ticks, uint64_t mult)
{
	return (uint64_t)(((unsigned __int128)ticks * mult) >> 32);
}
/* "tsc" or "clock_gettime" */
const char *fastclock_source(void);

static inline uint64_t fast_ns(void)
{
#ifdef FASTCLOCK_TSC
	if (fastclock.tsc) {
		int64_t d = (int64_t)(__rdtsc() - fastclock.tsc0);

		return fastclock.ns0 + fastclock_scale(d > 0 ? (uint64_t)d : 0,
						       fastclock.mult);
	}
#endif
	return now_ns();
}

#endif
