/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Pseudo-random numbers for the workloads: xorshift64* streams seeded with
 * splitmix64, so that no --seed (and no stream number) gives the all-zero
 * state, in which xorshift returns 0 forever.
 */
#ifndef HUGELAB_RNG_H
#define HUGELAB_RNG_H

#include <stdint.h>

static inline uint64_t rng_splitmix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* State of stream `stream` for `seed`: never 0. */
static inline uint64_t rng_seed(uint64_t seed, uint64_t stream)
{
	uint64_t s = rng_splitmix64(seed ^ rng_splitmix64(stream));

	return s ? s : 0x9e3779b97f4a7c15ull;
}

/* xorshift64*: s must not be 0 (rng_seed never gives 0; 0 stays 0). */
static inline uint64_t rng_next(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1Dull;
}

#endif
