// SPDX-License-Identifier: GPL-2.0
/* cmocka tests: lib/rng.h seeding never yields the all-zero xorshift state. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "rng.h"

/* Inverse of x ^= x >> s on 64 bits. */
static uint64_t unxorshift(uint64_t y, int s)
{
	uint64_t x = y;

	for (int i = 0; i < 64 / s + 1; i++)
		x = y ^ (x >> s);
	return x;
}

/* Inverse of an odd multiplier mod 2^64 (Newton). */
static uint64_t inv(uint64_t a)
{
	uint64_t x = a;

	for (int i = 0; i < 6; i++)
		x *= 2 - a * x;
	return x;
}

/* x with rng_splitmix64(x) == y */
static uint64_t unsplitmix(uint64_t y)
{
	y = unxorshift(y, 31);
	y *= inv(0x94d049bb133111ebull);
	y = unxorshift(y, 27);
	y *= inv(0xbf58476d1ce4e5b9ull);
	y = unxorshift(y, 30);
	return y - 0x9e3779b97f4a7c15ull;
}

static void test_inverse(void **state)
{
	(void)state;
	for (uint64_t x = 0; x < 1000; x++)
		assert_true(unsplitmix(rng_splitmix64(x * 0x1234567ull)) == x * 0x1234567ull);
}

/*
 * The one seed per stream whose state would be 0 (splitmix64 is a
 * bijection) gets a fixed non-zero state, and its stream is not stuck;
 * 219525303 (zeroed shmdb's disruptor before) is an ordinary seed now.
 */
static void test_never_zero(void **state)
{
	static const uint64_t streams[] = { 0, 1, 2, 1000, 0xD15B0B7ull, UINT64_MAX };

	(void)state;
	for (size_t i = 0; i < sizeof(streams) / sizeof(streams[0]); i++) {
		uint64_t seed = unsplitmix(0) ^ rng_splitmix64(streams[i]);
		uint64_t s = rng_seed(seed, streams[i]), a, b;

		assert_true(s != 0);
		a = rng_next(&s);
		b = rng_next(&s);
		assert_true(a != b && s != 0);
		for (uint64_t k = 0; k < 100000; k++)
			assert_true(rng_seed(k * 2654435761ull, streams[i]) != 0);
		assert_true(rng_seed(219525303, streams[i]) != 0);
	}
	/* different streams of one seed differ */
	assert_true(rng_seed(1, 1) != rng_seed(1, 2));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_inverse),
		cmocka_unit_test(test_never_zero),
	};

	return cmocka_run_group_tests_name("rng", tests, NULL, NULL);
}
