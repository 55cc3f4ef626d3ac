// SPDX-License-Identifier: GPL-2.0
/* cmocka tests: lock waits from tracefs lines (lib/locktrace.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "locktrace.h"

static void test_parse_lines(void **state)
{
	struct lt_line l;

	(void)state;
	assert_int_equal(lt_parse_line("           shmdb-812     [001] d..1.   123.456789: "
				       "contention_begin: 00000000a1b2c3d4 (flags=READ)", &l),
			 LT_L_BEGIN);
	assert_int_equal(l.pid, 812);
	assert_true(l.ts_ns == 123456789000ull);
	assert_true(l.addr == 0xa1b2c3d4ull);
	assert_int_equal(l.flags, LCB_F_READ);
	/* no irq-info column, a comm with a dash and a blank, 9 digits */
	assert_int_equal(lt_parse_line("  my-prog x-77 [000]  5.000000001: contention_begin: "
				       "ffff888003a1 (flags=SPIN|MUTEX)", &l), LT_L_BEGIN);
	assert_int_equal(l.pid, 77);
	assert_true(l.ts_ns == 5000000001ull);
	assert_int_equal(l.flags, LCB_F_SPIN | LCB_F_MUTEX);
	assert_int_equal(lt_parse_line("shmdb-9 [000] ..... 7.5: contention_end: 1f (ret=0)", &l),
			 LT_L_END);
	assert_true(l.addr == 0x1f && l.ts_ns == 7500000000ull);
	/* what 6.1.192 prints for a mutex */
	assert_int_equal(lt_parse_line("sh-86 [000] ...1. 2.726554: contention_begin: "
				       "ffffffff8238d4e0 (flags=)", &l), LT_L_BEGIN);
	assert_int_equal(l.flags, 0);
	assert_int_equal(lt_parse_line("shmdb-9 [000] d..1. 7.500001: <stack trace>", &l),
			 LT_L_STACK);
	assert_int_equal(lt_parse_line(" => hugetlb_fault+0x5e1/0x9a0", &l), LT_L_FRAME);
	assert_string_equal(l.frame, "hugetlb_fault");
	assert_int_equal(lt_parse_line("kworker/0:1-12 [001] d..2. 8.25: sched_wakeup: "
				       "comm=my shmdb pid=812 prio=120 target_cpu=000", &l),
			 LT_L_WAKE);
	assert_int_equal(l.pid, 12);
	assert_int_equal(l.woken, 812);
	assert_true(l.ts_ns == 8250000000ull);
	assert_int_equal(lt_parse_line("x-12 [001] d..2. 8.25: sched_wakeup: comm=x pid=z", &l),
			 LT_L_OTHER);
	assert_int_equal(lt_parse_line(" => handle_mm_fault", &l), LT_L_FRAME);
	assert_string_equal(l.frame, "handle_mm_fault");
	/* the header, other events, garbage */
	assert_int_equal(lt_parse_line("# tracer: nop", &l), LT_L_OTHER);
	assert_int_equal(lt_parse_line("#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION", &l),
			 LT_L_OTHER);
	assert_int_equal(lt_parse_line("shmdb-9 [000] ..... 7.5: sched_switch: x", &l), LT_L_OTHER);
	assert_int_equal(lt_parse_line("shmdb-9 [000] ..... x.5: contention_end: 1f (ret=0)", &l),
			 LT_L_OTHER);
	assert_int_equal(lt_parse_line("shmdb [000] ..... 7.5: contention_end: 1f (ret=0)", &l),
			 LT_L_OTHER);
	assert_int_equal(lt_parse_line("shmdb-9 [000] ..... 7.5: contention_begin: 1f", &l),
			 LT_L_OTHER);
	assert_int_equal(lt_parse_line("", &l), LT_L_OTHER);
}

static enum lt_lock classify(unsigned int flags, const char *const *f, int n, char *site)
{
	return lt_classify(flags, f, n, site, 48);
}

static void test_classify(void **state)
{
	static const char *const vma[] = {
		"__traceiter_contention_begin", "rwsem_down_read_slowpath", "down_read",
		"hugetlb_vma_lock_read", "hugetlb_fault", "handle_mm_fault",
	};
	static const char *const immap[] = {
		"rwsem_down_read_slowpath", "down_read", "hugetlb_fault", "handle_mm_fault",
	};
	static const char *const share[] = { "down_read", "huge_pmd_share", "huge_pte_alloc" };
	static const char *const punch[] = { "down_write", "hugetlbfs_punch_hole", "vfs_fallocate" };
	static const char *const mutex[] = {
		"__mutex_lock", "mutex_lock_nested", "hugetlb_fault", "handle_mm_fault",
	};
	static const char *const mmap[] = { "down_read", "lock_mm_and_find_vma", "do_user_addr_fault" };
	static const char *const spin[] = { "queued_spin_lock_slowpath", "_raw_spin_lock", "hugetlb_fault" };
	static const char *const lib[] = { "rwsem_down_write_slowpath", "down_write", "some_fs_op" };
	static const char *const only[] = { "down_read", "rwsem_down_read_slowpath" };
	char site[48];

	(void)state;
	assert_int_equal(classify(LCB_F_READ, vma, 6, site), LT_VMA);
	assert_string_equal(site, "hugetlb_vma_lock_read");
	/* hugetlb_vma_lock_read() inlined, or i_mmap_rwsem: by address */
	assert_int_equal(classify(LCB_F_READ, immap, 4, site), LT_FAULT_RWSEM);
	assert_string_equal(site, "hugetlb_fault");
	assert_int_equal(classify(LCB_F_READ, share, 3, site), LT_IMMAP);
	assert_int_equal(classify(LCB_F_WRITE, punch, 3, site), LT_IMMAP);
	assert_int_equal(classify(LCB_F_MUTEX, mutex, 4, site), LT_FAULT_MUTEX);
	/* the same site as a rwsem is i_mmap_rwsem, as a mutex the fault mutex */
	assert_int_equal(classify(LCB_F_MUTEX | LCB_F_SPIN, mutex, 4, site), LT_FAULT_MUTEX);
	assert_int_equal(classify(LCB_F_READ, mmap, 3, site), LT_MMAP);
	assert_int_equal(classify(LCB_F_SPIN, spin, 3, site), LT_OTHER);
	assert_string_equal(site, "hugetlb_fault");
	assert_int_equal(classify(LCB_F_WRITE, lib, 3, site), LT_OTHER);
	assert_string_equal(site, "some_fs_op");
	/* 6.1.192 prints a mutex's flags as "(flags=)": its frames say mutex */
	assert_int_equal(classify(0, mutex, 4, site), LT_FAULT_MUTEX);
	assert_int_equal(classify(0, immap, 4, site), LT_FAULT_RWSEM);
	assert_int_equal(classify(LCB_F_READ, only, 2, site), LT_OTHER);
	assert_string_equal(site, "?");
	assert_int_equal(classify(LCB_F_READ, vma, 0, site), LT_OTHER);
}

struct got {
	int n;
	struct lt_wait w[8];
	char site[8][48];
};

static void collect(void *arg, const struct lt_wait *w)
{
	struct got *g = arg;

	if (g->n < 8) {
		g->w[g->n] = *w;
		snprintf(g->site[g->n], 48, "%s", w->site);
		g->n++;
	}
}

static void feed(struct lt_state *st, const char *const *lines)
{
	for (; *lines; lines++)
		lt_feed(st, *lines);
	lt_finish(st);
}

static void test_pairing(void **state)
{
	static const char *const lines[] = {
		"# tracer: nop",
		/* a VMA-lock wait of 812, interleaved with 813's fault mutex */
		"shmdb-812 [001] d..1. 10.000100: contention_begin: aa (flags=READ)",
		"shmdb-813 [000] ..... 10.000150: contention_begin: bb (flags=SPIN|MUTEX)",
		"shmdb-812 [001] d..1. 10.000101: <stack trace>",
		" => rwsem_down_read_slowpath+0x1/0x2",
		" => down_read",
		" => hugetlb_vma_lock_read",
		" => hugetlb_fault",
		"shmdb-813 [000] ..... 10.000151: <stack trace>",
		" => __mutex_lock",
		" => hugetlb_fault",
		/* the mutex stops spinning and sleeps: the same wait */
		"shmdb-813 [000] ..... 10.000200: contention_begin: bb (flags=MUTEX)",
		"shmdb-813 [000] ..... 10.000201: <stack trace>",
		" => __mutex_lock",
		" => some_other_site",
		/* a spinlock's end inside the wait (its begin filtered): not ours */
		"shmdb-812 [001] d..1. 10.001000: contention_end: cc (ret=0)",
		/* woken twice: the last wakeup counts; a wakeup of a task not waiting */
		"shmdb-990 [000] d..2. 10.030000: sched_wakeup: comm=shmdb pid=812 prio=120 target_cpu=001",
		"shmdb-990 [000] d..2. 10.040000: sched_wakeup: comm=shmdb pid=812 prio=120 target_cpu=001",
		"shmdb-990 [000] d..2. 10.040000: sched_wakeup: comm=shmdb pid=555 prio=120 target_cpu=001",
		"shmdb-812 [001] d..1. 10.050100: contention_end: aa (ret=0)",
		"shmdb-813 [000] ..... 10.020150: contention_end: bb (ret=0)",
		/* an end without a begin; a begin never ended */
		"shmdb-900 [000] ..... 11.0: contention_end: aa (ret=0)",
		"shmdb-901 [000] ..... 11.0: contention_begin: aa (flags=WRITE)",
		/* a second wait of 812, its stack at the very end */
		"shmdb-812 [001] d..1. 12.000000: contention_begin: dd (flags=READ)",
		"shmdb-812 [001] d..1. 12.000001: <stack trace>",
		" => down_read",
		" => huge_pmd_share",
		"shmdb-812 [001] d..1. 12.000500: contention_end: dd (ret=0)",
		NULL,
	};
	struct lt_state st;
	struct got g = { 0 };

	(void)state;
	assert_int_equal(lt_init(&st, collect, &g), 0);
	feed(&st, lines);
	assert_int_equal(g.n, 3);
	assert_int_equal(g.w[0].pid, 812);
	assert_int_equal(g.w[0].lock, LT_VMA);
	assert_true(g.w[0].begin_ns == 10000100000ull && g.w[0].end_ns == 10050100000ull);
	assert_string_equal(g.site[0], "hugetlb_vma_lock_read");
	assert_true(g.w[0].wake_ns == 10040000000ull);
	assert_true(g.w[0].addr == 0xaa);
	assert_true(g.w[1].wake_ns == 0);
	assert_int_equal(st.wakes, 3);
	assert_int_equal(g.w[1].pid, 813);
	assert_int_equal(g.w[1].lock, LT_FAULT_MUTEX);
	assert_true(g.w[1].begin_ns == 10000150000ull && g.w[1].end_ns == 10020150000ull);
	assert_int_equal(g.w[2].lock, LT_IMMAP);
	assert_true(g.w[2].wake_ns == 0);      /* a new wait forgets the old wakeup */
	assert_true(g.w[2].end_ns - g.w[2].begin_ns == 500000);
	assert_int_equal(st.unpaired_ends, 2);
	assert_int_equal(st.begins, 5);
	assert_int_equal(st.waits, 3);
	lt_free(&st);
}

static void test_unclassified_stackless(void **state)
{
	static const char *const lines[] = {
		"shmdb-5 [001] d..1. 1.000000: contention_begin: aa (flags=READ)",
		"shmdb-5 [001] d..1. 1.000010: contention_end: aa (ret=0)",
		NULL,
	};
	struct lt_state st;
	struct got g = { 0 };

	(void)state;
	assert_int_equal(lt_init(&st, collect, &g), 0);
	feed(&st, lines);
	assert_int_equal(g.n, 1);
	assert_int_equal(g.w[0].lock, LT_OTHER);
	assert_false(g.w[0].classified);
	assert_int_equal(g.w[0].flags, LCB_F_READ);
	assert_string_equal(g.site[0], "?");
	lt_free(&st);
}

/* A lockdep kernel's mutex: begin(MUTEX|SPIN) without a stack (the
 * trigger skips it), then begin(MUTEX) with one when it sleeps. */
static void test_later_stack_classifies(void **state)
{
	static const char *const lines[] = {
		"shmdb-7 [001] ..... 1.000000: contention_begin: aa (flags=SPIN|MUTEX)",
		"shmdb-7 [001] ..... 1.000100: contention_begin: aa (flags=MUTEX)",
		"shmdb-7 [001] ..... 1.000101: <stack trace>",
		" => __mutex_lock",
		" => hugetlb_fault",
		"shmdb-7 [001] ..... 1.020000: contention_end: aa (ret=0)",
		NULL,
	};
	struct lt_state st;
	struct got g = { 0 };

	(void)state;
	assert_int_equal(lt_init(&st, collect, &g), 0);
	feed(&st, lines);
	assert_int_equal(g.n, 1);
	assert_int_equal(g.w[0].lock, LT_FAULT_MUTEX);
	assert_true(g.w[0].classified);
	assert_int_equal(g.w[0].flags, LCB_F_SPIN | LCB_F_MUTEX);
	assert_true(g.w[0].begin_ns == 1000000000ull);
	lt_free(&st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_lines),
		cmocka_unit_test(test_classify),
		cmocka_unit_test(test_pairing),
		cmocka_unit_test(test_unclassified_stackless),
		cmocka_unit_test(test_later_stack_classifies),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
