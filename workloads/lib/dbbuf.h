/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Buffer format of shmdb transactions (64-bit words):
 *   w[0] = index ^ DBBUF_MAGIC, w[1] = version (>= 1),
 *   w[2..n-1] = dbbuf_mix(index, version)  (never 0).
 * An all-zero buffer is the valid "reset" state (fresh segment, or pages
 * dropped by hole punch / truncate).  Anything else is corrupt.
 */
#ifndef HUGELAB_DBBUF_H
#define HUGELAB_DBBUF_H

#include <stddef.h>
#include <stdint.h>

#define DBBUF_MAGIC 0x5348444242554630ull

enum dbbuf_state { DBBUF_OK, DBBUF_ZERO, DBBUF_BAD };

/* splitmix64 finaliser of (index, version); never 0 */
static inline uint64_t dbbuf_mix(uint64_t idx, uint64_t ver)
{
	uint64_t x = idx * 0x9E3779B97F4A7C15ull + ver;

	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
	x ^= x >> 31;
	return x ? x : 1;
}

/* nw >= 2 words; *ver gets the version (0 for a reset buffer). */
static inline enum dbbuf_state dbbuf_verify(const volatile uint64_t *w,
					    size_t nw, uint64_t idx,
					    uint64_t *ver)
{
	uint64_t h = w[0], v = w[1];

	if (h == 0 && v == 0) {
		for (size_t i = 2; i < nw; i++)
			if (w[i])
				return DBBUF_BAD;
		*ver = 0;
		return DBBUF_ZERO;
	}
	if (h != (idx ^ DBBUF_MAGIC) || v == 0)
		return DBBUF_BAD;

	uint64_t m = dbbuf_mix(idx, v);

	for (size_t i = 2; i < nw; i++)
		if (w[i] != m)
			return DBBUF_BAD;
	*ver = v;
	return DBBUF_OK;
}

/* Payload first, header last. */
static inline void dbbuf_fill(volatile uint64_t *w, size_t nw, uint64_t idx,
			      uint64_t ver)
{
	uint64_t m = dbbuf_mix(idx, ver);

	for (size_t i = 2; i < nw; i++)
		w[i] = m;
	w[1] = ver;
	w[0] = idx ^ DBBUF_MAGIC;
}

#endif
