// SPDX-License-Identifier: GPL-2.0
/* cmocka tests: streaming JSON writer. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "json.h"

struct out {
	char *buf;
	size_t len;
	FILE *f;
	struct json j;
};

static void out_open(struct out *o, int pretty)
{
	o->buf = NULL;
	o->f = open_memstream(&o->buf, &o->len);
	json_init(&o->j, o->f, pretty);
}

/* finish, close, return the JSON error code */
static int out_close(struct out *o)
{
	int r = json_finish(&o->j);

	fclose(o->f);
	return r;
}

static void test_compact(void **state)
{
	struct out o;

	(void)state;
	out_open(&o, 0);
	json_obj_begin(&o.j);
	json_kv_str(&o.j, "s", "x");
	json_kv_int(&o.j, "i", -42);
	json_kv_uint(&o.j, "u", UINT64_MAX);
	json_kv_bool(&o.j, "t", true);
	json_kv_bool(&o.j, "f", false);
	json_kv_null(&o.j, "n");
	json_kv_double(&o.j, "d", 0.5);
	json_key(&o.j, "a");
	json_arr_begin(&o.j);
	json_int(&o.j, 1);
	json_arr_begin(&o.j);
	json_arr_end(&o.j);
	json_obj_begin(&o.j);
	json_obj_end(&o.j);
	json_str(&o.j, NULL);
	json_arr_end(&o.j);
	json_obj_end(&o.j);
	assert_int_equal(out_close(&o), 0);
	assert_string_equal(o.buf,
		"{\"s\":\"x\",\"i\":-42,\"u\":18446744073709551615,\"t\":true,"
		"\"f\":false,\"n\":null,\"d\":0.500000,\"a\":[1,[],{},null]}\n");
	free(o.buf);
}

static void test_pretty(void **state)
{
	struct out o;

	(void)state;
	out_open(&o, 1);
	json_obj_begin(&o.j);
	json_kv_int(&o.j, "a", 1);
	json_key(&o.j, "b");
	json_arr_begin(&o.j);
	json_int(&o.j, 2);
	json_int(&o.j, 3);
	json_arr_end(&o.j);
	json_obj_end(&o.j);
	assert_int_equal(out_close(&o), 0);
	assert_string_equal(o.buf,
		"{\n  \"a\": 1,\n  \"b\": [\n    2,\n    3\n  ]\n}\n");
	free(o.buf);
}

static void test_escape(void **state)
{
	struct out o;

	(void)state;
	out_open(&o, 0);
	json_arr_begin(&o.j);
	json_str(&o.j, "quote\" backslash\\ slash/");
	json_str(&o.j, "nl\n cr\r tab\t bs\b ff\f");
	json_str(&o.j, "\x01\x1f\x7f");
	json_str(&o.j, "utf8 \xc3\xa9 \xe2\x82\xac");
	json_strn(&o.j, "a\0b", 3);
	json_arr_end(&o.j);
	assert_int_equal(out_close(&o), 0);
	assert_string_equal(o.buf,
		"[\"quote\\\" backslash\\\\ slash/\","
		"\"nl\\n cr\\r tab\\t bs\\b ff\\f\","
		"\"\\u0001\\u001f\\u007f\","
		"\"utf8 \xc3\xa9 \xe2\x82\xac\","
		"\"a\\u0000b\"]\n");
	free(o.buf);

	/* keys are escaped too */
	out_open(&o, 0);
	json_obj_begin(&o.j);
	json_kv_int(&o.j, "k\"ey", 1);
	json_obj_end(&o.j);
	assert_int_equal(out_close(&o), 0);
	assert_string_equal(o.buf, "{\"k\\\"ey\":1}\n");
	free(o.buf);
}

static void test_doubles(void **state)
{
	struct out o;

	(void)state;
	out_open(&o, 0);
	json_arr_begin(&o.j);
	json_double(&o.j, NAN);
	json_double(&o.j, INFINITY);
	json_double(&o.j, 3.0);
	json_double(&o.j, 1e-9);
	json_double(&o.j, 2e20);
	json_arr_end(&o.j);
	assert_int_equal(out_close(&o), 0);
	assert_string_equal(o.buf,
		"[null,null,3.000000,1.0000000000000001e-09,2e+20]\n");
	free(o.buf);
}

static void test_misuse(void **state)
{
	struct out o;

	(void)state;
	/* value without key inside an object */
	out_open(&o, 0);
	json_obj_begin(&o.j);
	json_int(&o.j, 1);
	json_obj_end(&o.j);
	assert_int_not_equal(out_close(&o), 0);
	free(o.buf);

	/* unclosed object */
	out_open(&o, 0);
	json_obj_begin(&o.j);
	assert_int_not_equal(out_close(&o), 0);
	free(o.buf);

	/* mismatched close */
	out_open(&o, 0);
	json_obj_begin(&o.j);
	json_arr_end(&o.j);
	assert_int_not_equal(out_close(&o), 0);
	free(o.buf);

	/* key in an array, key without value */
	out_open(&o, 0);
	json_arr_begin(&o.j);
	json_key(&o.j, "k");
	assert_int_not_equal(out_close(&o), 0);
	free(o.buf);
	out_open(&o, 0);
	json_obj_begin(&o.j);
	json_key(&o.j, "k");
	json_obj_end(&o.j);
	assert_int_not_equal(out_close(&o), 0);
	free(o.buf);

	/* two top-level values, and nothing at all */
	out_open(&o, 0);
	json_int(&o.j, 1);
	json_int(&o.j, 2);
	assert_int_not_equal(out_close(&o), 0);
	free(o.buf);
	out_open(&o, 0);
	assert_int_not_equal(out_close(&o), 0);
	free(o.buf);

	/* too deep */
	out_open(&o, 0);
	for (int i = 0; i < JSON_MAX_DEPTH + 2; i++)
		json_arr_begin(&o.j);
	assert_int_not_equal(out_close(&o), 0);
	free(o.buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_compact),
		cmocka_unit_test(test_pretty),
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_doubles),
		cmocka_unit_test(test_misuse),
	};

	return cmocka_run_group_tests_name("json", tests, NULL, NULL);
}
