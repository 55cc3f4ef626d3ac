// SPDX-License-Identifier: GPL-2.0
/* cmocka tests: strict option parsers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "opts.h"

static void test_size_ok(void **state)
{
	static const struct { const char *s; uint64_t v; } ok[] = {
		{ "0", 0 }, { "4096", 4096 }, { "4K", 4096 }, { "4k", 4096 },
		{ "2M", 2ull << 20 }, { "512M", 512ull << 20 }, { "1G", 1ull << 30 },
		{ "1g", 1ull << 30 }, { "3T", 3ull << 40 }, { "1GiB", 1ull << 30 },
		{ "2MB", 2ull << 20 }, { "16777215T", 16777215ull << 40 },
		{ "18446744073709551615", UINT64_MAX },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		uint64_t v = 12345;

		assert_int_equal(parse_size(ok[i].s, &v), 0);
		assert_true(v == ok[i].v);
	}
}

static void test_size_bad(void **state)
{
	static const char *const bad[] = {
		"", "G", "-1", "+1", " 1G", "1G ", "1.5G", "1X", "1GG", "1iB",
		"1Gi", "1KBB", "0x10", "16777216T", "18446744073709551616", NULL,
	};

	(void)state;
	for (int i = 0; bad[i]; i++) {
		uint64_t v = 777;

		assert_int_equal(parse_size(bad[i], &v), -1);
		assert_true(v == 777);                  /* untouched */
	}
	assert_int_equal(parse_size(NULL, NULL), -1);
}

static void test_u64(void **state)
{
	uint64_t v = 0;

	(void)state;
	assert_int_equal(parse_u64("10", 1, 100, &v), 0);
	assert_int_equal(v, 10);
	assert_int_equal(parse_u64("0", 1, 100, &v), -1);
	assert_int_equal(parse_u64("101", 1, 100, &v), -1);
	assert_int_equal(parse_u64("1k", 0, 10000, &v), -1);
	assert_int_equal(parse_u64("", 0, 10, &v), -1);
	assert_int_equal(parse_u64("-0", 0, 10, &v), -1);
	assert_int_equal(parse_u64("99999999999999999999", 0, UINT64_MAX, &v), -1);
	assert_int_equal(v, 10);
}

static void test_list(void **state)
{
	static const char *const names[] = { "punch", "truncate", "mprotect",
					     "munmap", "dontneed", NULL };
	uint64_t m = 99;
	const char *bad;

	(void)state;
	assert_int_equal(parse_list("punch,truncate,mprotect,munmap,dontneed",
				    names, &m, &bad), 0);
	assert_int_equal(m, 0x1f);
	assert_int_equal(parse_list("mprotect", names, &m, NULL), 0);
	assert_int_equal(m, 1 << 2);
	assert_int_equal(parse_list("dontneed,punch", names, &m, NULL), 0);
	assert_int_equal(m, (1 << 4) | 1);
	assert_int_equal(parse_list("none", names, &m, NULL), 0);
	assert_int_equal(m, 0);

	m = 5;
	/* an empty list is a mistake (--ops=), "none" says none */
	assert_int_equal(parse_list("", names, &m, &bad), -1);
	assert_string_equal(bad, "");
	assert_int_equal(parse_list(",", names, &m, &bad), -1);
	assert_int_equal(m, 5);
	assert_int_equal(parse_list("punch,bogus", names, &m, &bad), -1);
	assert_string_equal(bad, "bogus");
	assert_int_equal(m, 5);
	assert_int_equal(parse_list("punch,punch", names, &m, &bad), -1);
	assert_int_equal(parse_list("punch,", names, &m, &bad), -1);
	assert_int_equal(parse_list(",punch", names, &m, &bad), -1);
	assert_int_equal(parse_list("punc", names, &m, &bad), -1);
	assert_int_equal(parse_list("punchx", names, &m, &bad), -1);

	assert_int_equal(parse_choice("munmap", names), 3);
	assert_int_equal(parse_choice("MUNMAP", names), -1);
}

static void test_fmt(void **state)
{
	char b[32];

	(void)state;
	assert_string_equal(fmt_size(2ull << 20, b, sizeof(b)), "2M");
	assert_string_equal(fmt_size(1ull << 30, b, sizeof(b)), "1G");
	assert_string_equal(fmt_size(4096, b, sizeof(b)), "4K");
	assert_string_equal(fmt_size(3ull << 40, b, sizeof(b)), "3T");
	assert_string_equal(fmt_size(1536ull << 20, b, sizeof(b)), "1536M");
	assert_string_equal(fmt_size(100, b, sizeof(b)), "100");
	assert_string_equal(fmt_size(0, b, sizeof(b)), "0");
}

static void test_addr(void **state)
{
	static const struct { const char *s; uint64_t v; } ok[] = {
		{ "0", 0 }, { "0x0", 0 }, { "0x2000000000", 0x2000000000ull },
		{ "0X7FC0000000", 0x7fc0000000ull }, { "0xffffffffc0000000", 0xffffffffc0000000ull },
		{ "137438953472", 0x2000000000ull }, { "0xFFFFFFFFFFFFFFFF", UINT64_MAX },
	};
	static const char *const bad[] = {
		"", "0x", "x10", "010", "02000000000000", "00", "-1", "+1", " 1",
		"1 ", "0x1g", "0x10000000000000000", "18446744073709551616", "1G",
		"0b1", NULL,
	};

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		uint64_t v = 12345;

		assert_int_equal(parse_addr(ok[i].s, &v), 0);
		assert_true(v == ok[i].v);
	}
	for (int i = 0; bad[i]; i++) {
		uint64_t v = 777;

		if (parse_addr(bad[i], &v) != -1)
			fail_msg("'%s' accepted", bad[i]);
		assert_true(v == 777);
	}
	assert_int_equal(parse_addr(NULL, NULL), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_size_ok),
		cmocka_unit_test(test_size_bad),
		cmocka_unit_test(test_u64),
		cmocka_unit_test(test_addr),
		cmocka_unit_test(test_list),
		cmocka_unit_test(test_fmt),
	};

	return cmocka_run_group_tests_name("opts", tests, NULL, NULL);
}
