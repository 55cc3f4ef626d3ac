// SPDX-License-Identifier: GPL-2.0
/* cmocka tests: shmdb buffer format (valid / reset / corrupt). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dbbuf.h"

#define NW 1024

static void test_states(void **state)
{
	static uint64_t w[NW];
	uint64_t ver = 99;

	(void)state;
	memset(w, 0, sizeof(w));
	assert_int_equal(dbbuf_verify(w, NW, 7, &ver), DBBUF_ZERO);
	assert_int_equal(ver, 0);

	dbbuf_fill(w, NW, 7, 1);
	assert_int_equal(dbbuf_verify(w, NW, 7, &ver), DBBUF_OK);
	assert_int_equal(ver, 1);
	dbbuf_fill(w, NW, 7, 2);
	assert_int_equal(dbbuf_verify(w, NW, 7, &ver), DBBUF_OK);
	assert_int_equal(ver, 2);

	/* the wrong buffer index */
	assert_int_equal(dbbuf_verify(w, NW, 8, &ver), DBBUF_BAD);

	/* one payload word flipped */
	w[500] ^= 1;
	assert_int_equal(dbbuf_verify(w, NW, 7, &ver), DBBUF_BAD);
	w[500] ^= 1;

	/* torn: new header, half old payload (an update lost halfway) */
	dbbuf_fill(w, NW, 7, 2);
	uint64_t old = dbbuf_mix(7, 1);

	for (int i = NW / 2; i < NW; i++)
		w[i] = old;
	assert_int_equal(dbbuf_verify(w, NW, 7, &ver), DBBUF_BAD);

	/* zero header, non-zero payload: not a reset */
	memset(w, 0, sizeof(w));
	w[NW - 1] = 1;
	assert_int_equal(dbbuf_verify(w, NW, 7, &ver), DBBUF_BAD);

	/* right header, zero payload (page lost under a buffer): corrupt */
	memset(w, 0, sizeof(w));
	w[0] = 7 ^ DBBUF_MAGIC;
	w[1] = 3;
	assert_int_equal(dbbuf_verify(w, NW, 7, &ver), DBBUF_BAD);

	/* version 0 with a header is invalid */
	dbbuf_fill(w, NW, 7, 1);
	w[1] = 0;
	assert_int_equal(dbbuf_verify(w, NW, 7, &ver), DBBUF_BAD);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The payload must tell buffers and versions apart: a stale version or a
 * buffer read at the wrong index (a foreign page) must not verify.  No two
 * of 200 indexes x 20 versions may share a payload word, and a buffer
 * filled for one (index, version) must fail verification as any other.
 */
static void test_mix(void **state)
{
	static uint64_t v[200 * 20];
	uint64_t w[16], ver;
	size_t n = 0;

	(void)state;
	for (uint64_t i = 0; i < 200; i++)
		for (uint64_t k = 1; k <= 20; k++)
			v[n++] = dbbuf_mix(i, k);
	qsort(v, n, sizeof(v[0]), cmp_u64);
	for (size_t i = 1; i < n; i++)
		assert_true(v[i] != v[i - 1]);
	dbbuf_fill(w, 16, 7, 3);
	assert_int_equal(dbbuf_verify(w, 16, 7, &ver), DBBUF_OK);
	assert_int_equal(ver, 3);
	assert_int_equal(dbbuf_verify(w, 16, 8, &ver), DBBUF_BAD);
	w[5] = dbbuf_mix(7, 2);         /* one stale word */
	assert_int_equal(dbbuf_verify(w, 16, 7, &ver), DBBUF_BAD);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_states),
		cmocka_unit_test(test_mix),
	};

	return cmocka_run_group_tests_name("dbbuf", tests, NULL, NULL);
}
