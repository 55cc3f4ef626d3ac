/* SPDX-License-Identifier: GPL-2.0 */
/*
 * log2 latency histogram.
 *
 * Bucket 0 holds the value 0; bucket i (1..64) holds values v with
 * 2^(i-1) <= v < 2^i, so its upper bound is 2^i - 1 (UINT64_MAX for 64).
 * A struct hist is plain data (no pointers): it can live in shared memory
 * and be merged into with hist_merge_atomic() from many processes.
 */
#ifndef HUGELAB_HIST_H
#define HUGELAB_HIST_H

#include <stdint.h>
#include <time.h>

#include "json.h"

#define HIST_BUCKETS 65

struct hist {
	uint64_t count;
	uint64_t sum;
	uint64_t min;           /* UINT64_MAX while empty */
	uint64_t max;
	uint64_t b[HIST_BUCKETS];
};

void hist_init(struct hist *h);
unsigned int hist_bucket(uint64_t v);
uint64_t hist_bucket_upper(unsigned int i);

static inline void hist_insert(struct hist *h, uint64_t v)
{
	unsigned int i = v ? 64 - (unsigned int)__builtin_clzll(v) : 0;

	h->b[i]++;
	h->count++;
	h->sum += v;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
}

/* dst += src (single writer) */
void hist_merge(struct hist *dst, const struct hist *src);
/* dst += src with atomic operations: safe with concurrent mergers. */
void hist_merge_atomic(struct hist *dst, const struct hist *src);

/*
 * Value at quantile q (0 < q <= 1): the upper bound of the bucket holding the
 * sample of rank ceil(q * count), clamped to [min, max].  0 when empty.
 */
uint64_t hist_percentile(const struct hist *h, double q);
double hist_mean(const struct hist *h);

/* The histogram object of workloads/SCHEMA.md (as a value). */
void hist_json(struct json *j, const struct hist *h);

/* Clock id in nanoseconds; 0 when the clock cannot be read. */
static inline uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	if (clock_gettime(id, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

/*
 * CPU time of the calling thread (user + system, the kernel's exact
 * sum_exec_runtime): what a window cost, without the time spent waiting
 * for a CPU among thousands of runnable processes.  A syscall, not vDSO.
 */
static inline uint64_t thread_cpu_ns(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

#endif
