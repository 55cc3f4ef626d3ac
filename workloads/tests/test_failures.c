// SPDX-License-Identifier: GPL-2.0
/* cmocka tests: a program's failure list (lib/failures.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "failures.h"

/* The JSON failures_json() writes inside an object, as a C string. */
static char *as_json(const struct failures *f)
{
	struct json j;
	char *buf = NULL;
	size_t len;
	FILE *out = open_memstream(&buf, &len);

	assert_non_null(out);
	json_init(&j, out, 0);
	json_obj_begin(&j);
	failures_json(&j, "failures", f);
	json_obj_end(&j);
	assert_int_equal(json_finish(&j), 0);
	fclose(out);
	return buf;
}

static void test_empty(void **state)
{
	struct failures f = { 0 };
	char *s;

	(void)state;
	s = as_json(&f);
	assert_string_equal(s, "{\"failures\":[]}\n");
	free(s);
}

static void test_format_and_escape(void **state)
{
	struct failures f = { 0 };
	char *s;

	(void)state;
	failures_add(&f, "session %d: got %s", 7, "\"x\"");
	assert_int_equal(f.n, 1);
	assert_int_equal(f.dropped, 0);
	assert_string_equal(f.msg[0], "session 7: got \"x\"");
	s = as_json(&f);
	assert_string_equal(s, "{\"failures\":[\"session 7: got \\\"x\\\"\"]}\n");
	free(s);
}

/* Past FAILURES_MAX messages are counted, not kept, and the JSON says so. */
static void test_cap_and_dropped(void **state)
{
	struct failures f = { 0 };
	char *s, *tail;

	(void)state;
	for (int i = 0; i < FAILURES_MAX + 5; i++)
		failures_add(&f, "failure %d", i);
	assert_int_equal(f.n, FAILURES_MAX);
	assert_int_equal(f.dropped, 5);
	assert_string_equal(f.msg[0], "failure 0");
	assert_string_equal(f.msg[FAILURES_MAX - 1], "failure 63");
	s = as_json(&f);
	tail = strstr(s, "\"failure 63\",\"<5 more>\"]}");
	assert_non_null(tail);
	assert_null(strstr(s, "failure 64"));
	free(s);
}

/* prog set: each failure is printed at once on stderr with the prefix. */
static void test_prog_prints(void **state)
{
	struct failures f = { .prog = "shmdb" };
	char *buf = NULL;
	size_t len;
	FILE *mem = open_memstream(&buf, &len);
	FILE *saved = stderr;

	(void)state;
	assert_non_null(mem);
	stderr = mem;
	failures_add(&f, "pool %s", "empty");
	stderr = saved;
	fclose(mem);
	assert_string_equal(buf, "shmdb: FAIL: pool empty\n");
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_format_and_escape),
		cmocka_unit_test(test_cap_and_dropped),
		cmocka_unit_test(test_prog_prints),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
