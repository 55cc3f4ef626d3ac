// SPDX-License-Identifier: GPL-2.0
/* Unit tests of racer/tag.h: tag encoding and the strict/weak page checks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../racer/tag.h"

#define MB2 (2ull << 20)
#define WORDS 512u

static void fill_page(uint64_t *w, uint64_t page_off, uint64_t gen)
{
	for (unsigned int k = 0; k < WORDS; k++)
		w[k] = tag_make(page_off + k * TAG_BLOCK, gen);
}

static void test_tag_fields(void **state)
{
	uint64_t w = tag_make(5 * MB2 + 3 * TAG_BLOCK, 7);

	(void)state;
	assert_int_equal(w >> 48, TAG_MAGIC);
	assert_int_equal((w >> 24) & TAG_OFF_MASK, 5 * 512 + 3);
	assert_int_equal(tag_gen(w), 7);
	/* Different offsets or generations never give the same word. */
	assert_true(tag_make(0, 1) != tag_make(TAG_BLOCK, 1));
	assert_true(tag_make(0, 1) != tag_make(0, 2));
}

static void test_gen_between_wraps(void **state)
{
	(void)state;
	assert_true(tag_gen_between(5, 5, 5));
	assert_true(tag_gen_between(6, 5, 6));
	assert_false(tag_gen_between(4, 5, 6));
	assert_false(tag_gen_between(7, 5, 6));
	/* Around the 24-bit wrap. */
	assert_true(tag_gen_between(0, TAG_GEN_MASK, 1));
	assert_true(tag_gen_between(TAG_GEN_MASK, TAG_GEN_MASK, 1));
	assert_false(tag_gen_between(2, TAG_GEN_MASK, 1));
}

static void test_check_word(void **state)
{
	uint64_t off = 9 * MB2 + 17 * TAG_BLOCK;

	(void)state;
	assert_int_equal(tag_check_word(tag_make(off, 4), off, 3, 5, false), TAG_OK);
	assert_int_equal(tag_check_word(tag_make(off, 2), off, 3, 5, false), TAG_BAD);
	assert_int_equal(tag_check_word(tag_make(off, 6), off, 3, 5, false), TAG_BAD);
	/* Right generation, wrong file offset (e.g. a wrong page mapped). */
	assert_int_equal(tag_check_word(tag_make(off + MB2, 4), off, 3, 5, true),
			 TAG_BAD);
	assert_int_equal(tag_check_word(0, off, 3, 5, false), TAG_BAD);
	assert_int_equal(tag_check_word(0, off, 3, 5, true), TAG_ZERO);
	/* Garbage without the magic. */
	assert_int_equal(tag_check_word(tag_make(off, 4) ^ (1ull << 60), off, 3, 5,
					true), TAG_BAD);
}

static void test_check_page(void **state)
{
	uint64_t w[WORDS], off = 3 * MB2;
	unsigned int bad = 99;

	(void)state;
	fill_page(w, off, 11);
	assert_int_equal(tag_check_page(w, WORDS, off, TAG_BLOCK, 11, false, &bad),
			 TAG_OK);
	assert_int_equal(tag_check_page(w, WORDS, off, TAG_BLOCK, 12, false, &bad),
			 TAG_BAD);
	assert_int_equal(bad, 0);
	/* One stale block in the middle. */
	w[300] = tag_make(off + 300 * TAG_BLOCK, 10);
	assert_int_equal(tag_check_page(w, WORDS, off, TAG_BLOCK, 11, true, &bad),
			 TAG_BAD);
	assert_int_equal(bad, 300);
	/* All zero: only valid after a punch. */
	for (unsigned int k = 0; k < WORDS; k++)
		w[k] = 0;
	assert_int_equal(tag_check_page(w, WORDS, off, TAG_BLOCK, 11, true, &bad),
			 TAG_ZERO);
	assert_int_equal(tag_check_page(w, WORDS, off, TAG_BLOCK, 11, false, &bad),
			 TAG_BAD);
	/* Partly zero in a stable window is never valid. */
	fill_page(w, off, 11);
	w[511] = 0;
	assert_int_equal(tag_check_page(w, WORDS, off, TAG_BLOCK, 11, true, &bad),
			 TAG_BAD);
	assert_int_equal(bad, 511);
	w[0] = 0;
	w[511] = tag_make(off + 511 * TAG_BLOCK, 11);
	assert_int_equal(tag_check_page(w, WORDS, off, TAG_BLOCK, 11, true, &bad),
			 TAG_BAD);
	assert_int_equal(bad, 1);
}

static void test_check_page_1g_stride(void **state)
{
	uint64_t w[WORDS], stride = (1ull << 30) / WORDS, off = 1ull << 30;
	unsigned int bad = 0;

	(void)state;
	for (unsigned int k = 0; k < WORDS; k++)
		w[k] = tag_make(off + k * stride, 3);
	assert_int_equal(tag_check_page(w, WORDS, off, stride, 3, false, &bad),
			 TAG_OK);
	assert_int_equal(tag_check_page(w, WORDS, off, TAG_BLOCK, 3, false, &bad),
			 TAG_BAD);
	assert_int_equal(bad, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tag_fields),
		cmocka_unit_test(test_gen_between_wraps),
		cmocka_unit_test(test_check_word),
		cmocka_unit_test(test_check_page),
		cmocka_unit_test(test_check_page_1g_stride),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
