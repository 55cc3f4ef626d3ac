// SPDX-License-Identifier: GPL-2.0
/* cmocka tests: shmdb buffer format (valid / reset / corrupt). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
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

static void test_mix(void **state)
{
	(void)state;
	/* never zero, so a written payload is never mistaken for a reset */
	for (uint64_t i = 0; i < 2000; i++)
		for (uint64_t v = 1; v < 50; v++)
			assert_true(dbbuf_mix(i, v) != 0);
	assert_true(dbbuf_mix(1, 1) != dbbuf_mix(1, 2));
	assert_true(dbbuf_mix(1, 1) != dbbuf_mix(2, 1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_states),
		cmocka_unit_test(test_mix),
	};

	return cmocka_run_group_tests_name("dbbuf", tests, NULL, NULL);
}
