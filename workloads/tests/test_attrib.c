// SPDX-License-Identifier: GPL-2.0
/* cmocka tests: joining lock waits to long faults (lib/attrib.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "attrib.h"

static void test_schedstat(void **state)
{
	uint64_t c = 5, w = 7;

	(void)state;
	assert_true(schedstat_parse("123456 789012 42\n", &c, &w));
	assert_true(c == 123456 && w == 789012);
	assert_true(schedstat_parse("0 18446744073709551615 1", &c, &w));
	assert_true(c == 0 && w == UINT64_MAX);
	c = 5;
	w = 7;
	assert_false(schedstat_parse("123456\n", &c, &w));
	assert_false(schedstat_parse("", &c, &w));
	assert_true(c == 5 && w == 7);
}

static struct lt_wait wait(uint32_t pid, enum lt_lock lock, uint64_t b, uint64_t e)
{
	return (struct lt_wait){ .pid = pid, .lock = lock, .begin_ns = b, .end_ns = e,
				 .site = "hugetlb_fault", .classified = true };
}

static void test_add_wait_clips(void **state)
{
	struct attr_fault f = { .pid = 5, .start_ns = 1000, .latency_ns = 500 };
	struct lt_wait w;

	(void)state;
	/* inside, straddling either edge, around it, outside, another task */
	w = wait(5, LT_VMA, 1100, 1200);
	assert_true(attr_add_wait(&f, &w));
	w = wait(5, LT_IMMAP, 900, 1050);
	assert_true(attr_add_wait(&f, &w));
	w = wait(5, LT_IMMAP, 1450, 2000);
	assert_true(attr_add_wait(&f, &w));
	w = wait(5, LT_FAULT_MUTEX, 0, 5000);
	assert_true(attr_add_wait(&f, &w));
	w = wait(5, LT_VMA, 1500, 1600);
	assert_false(attr_add_wait(&f, &w));
	w = wait(5, LT_VMA, 100, 1000);
	assert_false(attr_add_wait(&f, &w));
	w = wait(6, LT_VMA, 1100, 1200);
	assert_false(attr_add_wait(&f, &w));
	assert_int_equal(f.nwaits, 4);
	assert_true(f.lock_ns[LT_VMA] == 100);
	assert_true(f.lock_ns[LT_IMMAP] == 50 + 50);
	assert_true(f.lock_ns[LT_FAULT_MUTEX] == 500);
	assert_true(f.waits[1].start_ns == 1000 && f.waits[1].ns == 50);
	assert_string_equal(f.waits[0].site, "hugetlb_fault");
	assert_true(f.lock_runnable_ns == 0);
}

static void test_add_wait_splits_at_wakeup(void **state)
{
	struct attr_fault f = { .pid = 5, .start_ns = 1000, .latency_ns = 500 };
	struct lt_wait w = wait(5, LT_IMMAP, 1100, 1300);

	(void)state;
	/* woken at 1250: 150 blocked, 50 runnable */
	w.wake_ns = 1250;
	assert_true(attr_add_wait(&f, &w));
	assert_true(f.lock_ns[LT_IMMAP] == 150 && f.lock_runnable_ns == 50);
	assert_true(f.waits[0].ns == 150 && f.waits[0].runnable_ns == 50);
	/* woken before the window: all of the clipped part runnable */
	w = wait(5, LT_VMA, 500, 1100);
	w.wake_ns = 900;
	assert_true(attr_add_wait(&f, &w));
	assert_true(f.lock_ns[LT_VMA] == 0 && f.lock_runnable_ns == 150);
	/* woken after the window: all of it blocked */
	w = wait(5, LT_VMA, 1400, 2000);
	w.wake_ns = 1800;
	assert_true(attr_add_wait(&f, &w));
	assert_true(f.lock_ns[LT_VMA] == 100 && f.lock_runnable_ns == 150);
	/* a wakeup before the wait's begin is not its wakeup */
	w = wait(5, LT_FAULT_MUTEX, 1300, 1400);
	w.wake_ns = 1200;
	assert_true(attr_add_wait(&f, &w));
	assert_true(f.lock_ns[LT_FAULT_MUTEX] == 100 && f.lock_runnable_ns == 150);
}

static void test_mutex_without_stack(void **state)
{
	struct attr_fault f = { .pid = 5, .start_ns = 0, .latency_ns = 1000 };
	struct lt_wait w = wait(5, LT_OTHER, 100, 200);

	(void)state;
	/* a mutex that only spun: no stack, the fault mutex */
	w.classified = false;
	w.site = "?";
	w.flags = LCB_F_MUTEX | LCB_F_SPIN;
	assert_true(attr_add_wait(&f, &w));
	assert_true(f.lock_ns[LT_FAULT_MUTEX] == 100 && f.lock_ns[LT_OTHER] == 0);
	assert_string_equal(f.waits[0].site, ATTR_SPIN_SITE);
	/* flags printed as nothing (6.1.192's mutex) */
	w.flags = 0;
	assert_true(attr_add_wait(&f, &w));
	assert_true(f.lock_ns[LT_FAULT_MUTEX] == 200);
	assert_int_equal(f.nwaits, 2);
	f.nwaits = 1;
	/* a rwsem without a stack stays other; a named mutex keeps its name */
	w.flags = LCB_F_READ;
	assert_true(attr_add_wait(&f, &w));
	assert_true(f.lock_ns[LT_OTHER] == 100);
	assert_string_equal(f.waits[1].site, "?");
	w = wait(5, LT_OTHER, 300, 350);
	w.flags = LCB_F_MUTEX;
	w.site = "seq_read_iter";
	assert_true(attr_add_wait(&f, &w));
	assert_true(f.lock_ns[LT_OTHER] == 150 && f.lock_ns[LT_FAULT_MUTEX] == 200);
}

static void test_add_wait_bounded(void **state)
{
	struct attr_fault f = { .pid = 5, .start_ns = 0, .latency_ns = 1000 };

	(void)state;
	for (int i = 0; i < ATTR_MAX_WAITS + 3; i++) {
		struct lt_wait w = wait(5, LT_OTHER, (uint64_t)i * 10, (uint64_t)i * 10 + 5);

		assert_true(attr_add_wait(&f, &w));
	}
	assert_int_equal(f.nwaits, ATTR_MAX_WAITS + 3);
	assert_true(f.lock_ns[LT_OTHER] == 5 * (ATTR_MAX_WAITS + 3));
	assert_true(f.waits[ATTR_MAX_WAITS - 1].start_ns == 10 * (ATTR_MAX_WAITS - 1));
}

static void test_match_by_task(void **state)
{
	struct attr_fault f[5] = {
		{ .pid = 9, .start_ns = 100, .latency_ns = 50 },
		{ .pid = 3, .start_ns = 100, .latency_ns = 50 },
		{ .pid = 9, .start_ns = 10, .latency_ns = 50 },
		{ .pid = 4, .start_ns = 100, .latency_ns = 50 },
		{ .pid = 9, .start_ns = 300, .latency_ns = 50 },
	};
	uint32_t idx[5];
	struct lt_wait w;

	(void)state;
	attr_index(f, idx, 5);
	assert_int_equal(idx[0], 1);
	assert_int_equal(idx[1], 3);
	assert_int_equal(idx[2], 2);
	assert_int_equal(idx[3], 0);
	assert_int_equal(idx[4], 4);
	/* one wait across pid 9's first two faults, none of the others' */
	w = wait(9, LT_VMA, 40, 120);
	assert_int_equal(attr_match(f, idx, 5, &w), 2);
	assert_true(f[2].lock_ns[LT_VMA] == 20 && f[0].lock_ns[LT_VMA] == 20);
	assert_int_equal(f[4].nwaits + f[1].nwaits + f[3].nwaits, 0);
	w = wait(7, LT_VMA, 0, 1000);
	assert_int_equal(attr_match(f, idx, 5, &w), 0);
	w = wait(3, LT_VMA, 0, 1000);
	assert_int_equal(attr_match(f, idx, 5, &w), 1);
	w = wait(1, LT_VMA, 0, 1000);
	assert_int_equal(attr_match(f, idx, 0, &w), 0);
}

static struct lt_wait at(uint32_t pid, enum lt_lock lock, uint64_t addr)
{
	struct lt_wait w = wait(pid, lock, 0, 1);

	w.addr = addr;
	return w;
}

static void test_addr_names_fault_rwsem(void **state)
{
	static struct attr_addrs t;
	struct lt_wait w;

	(void)state;
	memset(&t, 0, sizeof(t));
	/* 0xa: waited on by two tasks (a file's i_mmap_rwsem); 0xb: by one
	 * (a VMA's lock); 0xc: by one, but a stack named it (the punch) */
	w = at(1, LT_FAULT_RWSEM, 0xa);
	attr_addr_note(&t, &w);
	w = at(2, LT_FAULT_RWSEM, 0xa);
	attr_addr_note(&t, &w);
	w = at(1, LT_FAULT_RWSEM, 0xb);
	attr_addr_note(&t, &w);
	attr_addr_note(&t, &w);
	w = at(1, LT_FAULT_RWSEM, 0xc);
	attr_addr_note(&t, &w);
	w = at(9, LT_IMMAP, 0xc);
	attr_addr_note(&t, &w);
	w = at(3, LT_FAULT_RWSEM, 0xd);         /* a stack says VMA lock */
	attr_addr_note(&t, &w);
	w = at(4, LT_VMA, 0xd);
	attr_addr_note(&t, &w);
	w = at(1, LT_FAULT_RWSEM, 0xa);
	assert_int_equal(attr_addr_lock(&t, &w), LT_IMMAP);
	w.addr = 0xb;
	assert_int_equal(attr_addr_lock(&t, &w), LT_VMA);
	w.addr = 0xc;
	assert_int_equal(attr_addr_lock(&t, &w), LT_IMMAP);
	w.addr = 0xd;
	assert_int_equal(attr_addr_lock(&t, &w), LT_VMA);
	w.addr = 0xe;           /* never noted: one task, as far as we know */
	assert_int_equal(attr_addr_lock(&t, &w), LT_VMA);
	/* other locks keep their names */
	w = at(1, LT_FAULT_MUTEX, 0xa);
	assert_int_equal(attr_addr_lock(&t, &w), LT_FAULT_MUTEX);
	assert_true(t.full == 0);
}

static void test_overlaps(void **state)
{
	struct attr_fault f[2] = {
		{ .pid = 3, .start_ns = 100, .latency_ns = 50 },
		{ .pid = 4, .start_ns = 100, .latency_ns = 50 },
	};
	uint32_t idx[2];
	struct lt_wait w = wait(3, LT_VMA, 140, 200);

	(void)state;
	attr_index(f, idx, 2);
	assert_true(attr_overlaps(f, idx, 2, &w));
	w.begin_ns = 150;
	assert_false(attr_overlaps(f, idx, 2, &w));
	w = wait(5, LT_VMA, 0, 1000);
	assert_false(attr_overlaps(f, idx, 2, &w));
	assert_int_equal(f[0].nwaits + f[1].nwaits, 0);
}

static void test_op_wanted(void **state)
{
	struct attr_fault f[2] = {
		{ .start_ns = 100, .latency_ns = 50 }, { .start_ns = 500, .latency_ns = 50 },
	};
	struct attr_op in = { .start_ns = 140, .end_ns = 400 };
	struct attr_op before = { .start_ns = 0, .end_ns = 100 };
	struct attr_op between = { .start_ns = 150, .end_ns = 500 };
	struct attr_op around = { .start_ns = 450, .end_ns = 900 };

	(void)state;
	assert_true(attr_op_wanted(&in, f, 2));
	assert_false(attr_op_wanted(&before, f, 2));
	assert_false(attr_op_wanted(&between, f, 2));
	assert_true(attr_op_wanted(&around, f, 2));
	assert_false(attr_op_wanted(&around, f, 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_schedstat),
		cmocka_unit_test(test_add_wait_clips),
		cmocka_unit_test(test_add_wait_splits_at_wakeup),
		cmocka_unit_test(test_mutex_without_stack),
		cmocka_unit_test(test_add_wait_bounded),
		cmocka_unit_test(test_match_by_task),
		cmocka_unit_test(test_addr_names_fault_rwsem),
		cmocka_unit_test(test_overlaps),
		cmocka_unit_test(test_op_wanted),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
