// SPDX-License-Identifier: GPL-2.0
/* cmocka tests: kernel log scanner on real report lines. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>

#include "kmsg.h"

static void test_match(void **state)
{
	static const char *const hits[] = {
		"WARNING: CPU: 1 PID: 321 at mm/hugetlb.c:5240 hugetlb_split+0x3c/0x50",
		"WARNING: possible circular locking dependency detected",
		"WARNING: suspicious RCU usage",
		"BUG: unable to handle page fault for address: ffff888100000000",
		"kernel BUG at mm/hugetlb.c:5065!",
		"Oops: 0000 [#1] PREEMPT SMP NOPTI",
		"BUG: Bad page state in process shmdb  pfn:12a00",
		"BUG: Bad page map in process shmdb  pte:8000000102a000e7",
		"INFO: task shmdb:412 blocked for more than 120 seconds.",
		"rcu: INFO: rcu_sched detected stalls on CPUs/tasks:",
		"rcu: INFO: rcu_preempt self-detected stall on CPU",
		"watchdog: BUG: soft lockup - CPU#0 stuck for 22s! [shmdb:77]",
		"general protection fault, probably for non-canonical address 0xdead000000000100: 0000 [#1]",
		"Kernel panic - not syncing: Fatal exception",
		"WARNING: inconsistent lock state",
		NULL,
	};
	static const char *const misses[] = {
		"hugetlbfs: shmdb (77): Using mlock ulimits for SHM_HUGETLB is obsolete",
		"HugeTLB: registered 2.00 MiB page size, pre-allocated 600 pages",
		"Run /init as init process",
		"rcu: Hierarchical RCU implementation.",
		"lockdep: fixing up alternatives.",
		"ACPI: bus type PCI registered",
		NULL,
	};

	(void)state;
	for (int i = 0; hits[i]; i++)
		assert_non_null(kmsg_match(hits[i]));
	for (int i = 0; misses[i]; i++)
		assert_null(kmsg_match(misses[i]));
}

static void test_record_text(void **state)
{
	size_t len;
	const char *t = kmsg_record_text(
		"4,1234,5678901,-;WARNING: CPU: 0 PID: 1 at x\n SUBSYSTEM=mm\n", &len);

	(void)state;
	assert_int_equal(len, strlen("WARNING: CPU: 0 PID: 1 at x"));
	assert_memory_equal(t, "WARNING: CPU: 0 PID: 1 at x", len);
	t = kmsg_record_text("6,1,2,c;hello", &len);
	assert_int_equal(len, 5);
	assert_memory_equal(t, "hello", 5);
}

static void test_feed_context(void **state)
{
	struct kmsg_scan k;
	char line[64];

	(void)state;
	kmsg_init(&k);
	kmsg_feed(&k, "noise 1");
	kmsg_feed(&k, "noise 2");
	kmsg_feed(&k, "before 1");
	kmsg_feed(&k, "before 2");
	kmsg_feed(&k, "WARNING: CPU: 1 PID: 9 at mm/mmap.c:748 __vma_adjust");
	for (int i = 0; i < KMSG_CTX_AFTER + 5; i++) {
		snprintf(line, sizeof(line), "after %d", i);
		kmsg_feed(&k, line);
	}
	assert_int_equal(k.findings, 1);
	/* 2 before, the match, KMSG_CTX_AFTER after */
	assert_int_equal(k.n, KMSG_CTX_BEFORE + 1 + KMSG_CTX_AFTER);
	assert_string_equal(k.excerpt[0], "before 1");
	assert_string_equal(k.excerpt[1], "before 2");
	assert_string_equal(k.excerpt[2],
			    "WARNING: CPU: 1 PID: 9 at mm/mmap.c:748 __vma_adjust");
	assert_string_equal(k.excerpt[3], "after 0");
	snprintf(line, sizeof(line), "after %d", KMSG_CTX_AFTER - 1);
	assert_string_equal(k.excerpt[k.n - 1], line);

	/* a second finding within the context does not repeat lines */
	kmsg_feed(&k, "Oops: 0000 [#1] SMP");
	kmsg_feed(&k, "BUG: Bad page state in process x");
	assert_int_equal(k.findings, 3);
	assert_string_equal(k.excerpt[k.n - 1], "BUG: Bad page state in process x");

	char *buf = NULL;
	size_t len;
	FILE *f = open_memstream(&buf, &len);
	struct json j;

	json_init(&j, f, 0);
	json_obj_begin(&j);
	kmsg_json(&j, &k);
	json_obj_end(&j);
	assert_int_equal(json_finish(&j), 0);
	fclose(f);
	assert_non_null(strstr(buf, "\"kernel_log\":{\"available\":false,\"warnings\":3,"));
	assert_non_null(strstr(buf, "\"before 1\",\"before 2\",\"WARNING: CPU: 1"));
	free(buf);
	kmsg_close(&k);
	assert_int_equal(k.n, 0);
}

static void test_excerpt_cap(void **state)
{
	struct kmsg_scan k;

	(void)state;
	kmsg_init(&k);
	for (int i = 0; i < KMSG_MAX_EXCERPT + 10; i++)
		kmsg_feed(&k, "WARNING: flood");
	assert_int_equal(k.findings, KMSG_MAX_EXCERPT + 10);
	assert_int_equal(k.n, KMSG_MAX_EXCERPT);
	assert_true(k.truncated);
	kmsg_close(&k);
}

/* A fake /dev/kmsg: one record per read, "" is EPIPE, NULL ends (EAGAIN). */
#define EPIPE_REC ""
static const char *const *script;
static int script_pos;

static ssize_t fake_read(int fd, void *buf, size_t len)
{
	const char *r = script[script_pos];

	(void)fd;
	if (!r) {
		errno = EAGAIN;
		return -1;
	}
	script_pos++;
	if (!*r) {
		errno = EPIPE;
		return -1;
	}
	snprintf(buf, len, "%s", r);
	return (ssize_t)strlen(buf);
}

static void poll_script(struct kmsg_scan *k, const char *const *s)
{
	kmsg_init(k);
	k->fd = 0;
	k->available = true;
	k->read = fake_read;
	script = s;
	script_pos = 0;
	kmsg_poll(k);
}

/* No loss: consecutive records, one finding. */
static void test_poll_consecutive(void **state)
{
	static const char *const s[] = {
		"6,100,1,-;hello\n", "4,101,2,-;BUG: Bad page state in process x\n",
		"6,102,3,-;bye\n", NULL,
	};
	struct kmsg_scan k;

	(void)state;
	poll_script(&k, s);
	assert_int_equal(k.findings, 1);
	assert_int_equal(k.lost, 0);
	kmsg_close(&k);
}

/* EPIPE between records 101 and 150: 48 records lost, a finding. */
static void test_poll_epipe_counts_lost(void **state)
{
	static const char *const s[] = {
		"6,100,1,-;hello\n", "6,101,2,-;world\n", EPIPE_REC,
		"6,150,3,-;after the wrap\n", NULL,
	};
	struct kmsg_scan k;

	(void)state;
	poll_script(&k, s);
	assert_int_equal(k.lost, 48);
	assert_int_equal(k.findings, 1);
	assert_string_equal(k.excerpt[0],
			    "kmsg records lost: 48 overwritten before they were read");
	kmsg_close(&k);
}

/* EPIPE on the first read after the start: the count is a lower bound. */
static void test_poll_epipe_first(void **state)
{
	static const char *const s[] = {
		EPIPE_REC, "4,5000,3,-;BUG: Bad page map in process y\n", NULL,
	};
	struct kmsg_scan k;
	char *buf = NULL;
	size_t len;
	FILE *f;
	struct json j;

	(void)state;
	poll_script(&k, s);
	assert_int_equal(k.lost, 1);
	assert_int_equal(k.findings, 2);
	assert_string_equal(k.excerpt[0],
			    "kmsg records lost: at least 1 overwritten before they were read");
	f = open_memstream(&buf, &len);
	json_init(&j, f, 0);
	json_obj_begin(&j);
	kmsg_json(&j, &k);
	json_obj_end(&j);
	assert_int_equal(json_finish(&j), 0);
	fclose(f);
	assert_non_null(strstr(buf, "\"kernel_log\":{\"available\":true,\"warnings\":2,\"lost\":1,"));
	free(buf);
	kmsg_close(&k);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_match),
		cmocka_unit_test(test_record_text),
		cmocka_unit_test(test_feed_context),
		cmocka_unit_test(test_excerpt_cap),
		cmocka_unit_test(test_poll_consecutive),
		cmocka_unit_test(test_poll_epipe_counts_lost),
		cmocka_unit_test(test_poll_epipe_first),
	};

	return cmocka_run_group_tests_name("kmsg", tests, NULL, NULL);
}
