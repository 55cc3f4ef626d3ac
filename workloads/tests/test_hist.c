// SPDX-License-Identifier: GPL-2.0
/* cmocka tests: log2 histogram insert, merge, percentiles, JSON. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "hist.h"

static void test_buckets(void **state)
{
	(void)state;
	assert_int_equal(hist_bucket(0), 0);
	assert_int_equal(hist_bucket(1), 1);
	assert_int_equal(hist_bucket(2), 2);
	assert_int_equal(hist_bucket(3), 2);
	assert_int_equal(hist_bucket(4), 3);
	assert_int_equal(hist_bucket(1023), 10);
	assert_int_equal(hist_bucket(1024), 11);
	assert_int_equal(hist_bucket(UINT64_MAX), 64);
	assert_int_equal(hist_bucket_upper(0), 0);
	assert_int_equal(hist_bucket_upper(10), 1023);
	assert_true(hist_bucket_upper(64) == UINT64_MAX);
	/* every value lies at or below its bucket's upper bound, above the previous */
	for (uint64_t v = 1; v < 5000; v += 7) {
		unsigned int b = hist_bucket(v);

		assert_true(v <= hist_bucket_upper(b));
		assert_true(v > hist_bucket_upper(b - 1));
	}
}

static void test_insert_stats(void **state)
{
	struct hist h;

	(void)state;
	hist_init(&h);
	assert_int_equal(hist_percentile(&h, 0.5), 0);
	assert_true(hist_mean(&h) == 0.0);
	hist_insert(&h, 5);
	hist_insert(&h, 0);
	hist_insert(&h, 1000);
	assert_int_equal(h.count, 3);
	assert_int_equal(h.sum, 1005);
	assert_int_equal(h.min, 0);
	assert_int_equal(h.max, 1000);
	assert_int_equal(h.b[0], 1);
	assert_int_equal(h.b[3], 1);
	assert_int_equal(h.b[10], 1);
}

static void test_percentiles(void **state)
{
	struct hist h;

	(void)state;
	hist_init(&h);
	for (uint64_t v = 1; v <= 100; v++)
		hist_insert(&h, v);
	/* rank 50 is the value 50, in bucket [32, 63] */
	assert_int_equal(hist_percentile(&h, 0.50), 63);
	/* rank 90 -> 90 in [64, 127]: upper bound 127 clamped to max 100 */
	assert_int_equal(hist_percentile(&h, 0.90), 100);
	assert_int_equal(hist_percentile(&h, 0.01), 1);
	/* rank 2 -> value 2 in [2, 3] */
	assert_int_equal(hist_percentile(&h, 0.02), 3);
	assert_int_equal(hist_percentile(&h, 1.0), 100);
	assert_int_equal(hist_percentile(&h, 0), 1);

	/* a single value: every percentile is that value (clamped to min/max) */
	hist_init(&h);
	hist_insert(&h, 700);
	assert_int_equal(hist_percentile(&h, 0.5), 700);
	assert_int_equal(hist_percentile(&h, 0.999), 700);

	/* 999 samples of 100 ([64, 127]) and one slow one */
	hist_init(&h);
	for (int i = 0; i < 999; i++)
		hist_insert(&h, 100);
	hist_insert(&h, 1000000);
	assert_int_equal(hist_percentile(&h, 0.99), 127);
	assert_int_equal(hist_percentile(&h, 0.999), 127);
	assert_int_equal(hist_percentile(&h, 0.9995), 1000000);
}

static void fill_range(struct hist *h, uint64_t from, uint64_t to, uint64_t step)
{
	for (uint64_t v = from; v < to; v += step)
		hist_insert(h, v);
}

static void test_merge(void **state)
{
	struct hist a, b, all, empty;

	(void)state;
	hist_init(&a);
	hist_init(&b);
	hist_init(&all);
	hist_init(&empty);
	fill_range(&a, 10, 5000, 3);
	fill_range(&b, 7000, 90000, 11);
	fill_range(&all, 10, 5000, 3);
	fill_range(&all, 7000, 90000, 11);
	hist_merge(&a, &b);
	assert_memory_equal(&a, &all, sizeof(a));
	hist_merge(&a, &empty);
	assert_memory_equal(&a, &all, sizeof(a));
	/* merging into an empty histogram copies min */
	hist_merge(&empty, &b);
	assert_int_equal(empty.min, 7000);
	assert_int_equal(empty.count, b.count);
}

static void test_merge_atomic_processes(void **state)
{
	const int procs = 8, rounds = 200;
	struct hist *shared = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE,
				   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct hist expect;

	(void)state;
	assert_true(shared != MAP_FAILED);
	hist_init(shared);
	hist_init(&expect);
	for (int p = 0; p < procs; p++) {
		struct hist local;

		hist_init(&local);
		fill_range(&local, 1 + (uint64_t)p, 100000, 997);
		for (int r = 0; r < rounds; r++)
			hist_merge(&expect, &local);
		if (fork() == 0) {
			for (int r = 0; r < rounds; r++)
				hist_merge_atomic(shared, &local);
			_exit(0);
		}
	}
	for (int p = 0; p < procs; p++) {
		int st;

		assert_true(wait(&st) > 0);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	assert_memory_equal(shared, &expect, sizeof(expect));
	munmap(shared, sizeof(*shared));
}

static void test_json(void **state)
{
	struct hist h;
	struct json j;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	hist_init(&h);
	hist_insert(&h, 3);
	hist_insert(&h, 3);
	hist_insert(&h, 1500);
	json_init(&j, f, 0);
	hist_json(&j, &h);
	assert_int_equal(json_finish(&j), 0);
	fclose(f);
	assert_string_equal(buf,
		"{\"unit\":\"ns\",\"count\":3,\"sum\":1506,\"min\":3,\"max\":1500,"
		"\"mean\":502.000000,\"p50\":3,\"p90\":1500,\"p99\":1500,\"p999\":1500,"
		"\"buckets\":[[3,2],[2047,1]]}\n");
	free(buf);

	/* empty: min reported as 0, no buckets */
	buf = NULL;
	f = open_memstream(&buf, &len);
	hist_init(&h);
	json_init(&j, f, 0);
	hist_json(&j, &h);
	assert_int_equal(json_finish(&j), 0);
	fclose(f);
	assert_non_null(strstr(buf, "\"count\":0,\"sum\":0,\"min\":0,\"max\":0"));
	assert_non_null(strstr(buf, "\"buckets\":[]"));
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buckets),
		cmocka_unit_test(test_insert_stats),
		cmocka_unit_test(test_percentiles),
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_merge_atomic_processes),
		cmocka_unit_test(test_json),
	};

	return cmocka_run_group_tests_name("hist", tests, NULL, NULL);
}
