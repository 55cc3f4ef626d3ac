// SPDX-License-Identifier: GPL-2.0
/* cmocka tests: /proc and /sys parsers on fixture text from real files. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "procfs.h"

/* Debian 12 host, /proc/meminfo (excerpt, unmodified lines) */
static const char meminfo_txt[] =
	"MemTotal:       24683584 kB\n"
	"MemFree:        20667308 kB\n"
	"MemAvailable:   23723828 kB\n"
	"Active(anon):       1820 kB\n"
	"KernelStack:        2752 kB\n"
	"PageTables:         5544 kB\n"
	"SecPageTables:         0 kB\n"
	"HugePages_Total:     600\n"
	"HugePages_Free:      88\n"
	"HugePages_Rsvd:       0\n"
	"HugePages_Surp:       0\n"
	"Hugepagesize:       2048 kB\n"
	"Hugetlb:         2277376 kB\n";

static FILE *text(const char *s)
{
	return fmemopen((void *)s, strlen(s), "r");
}

static void test_meminfo(void **state)
{
	struct kvlist l = { 0 };
	bool found;
	FILE *f = text(meminfo_txt);

	(void)state;
	assert_int_equal(meminfo_parse(f, &l), 0);
	fclose(f);
	assert_int_equal(l.n, 13);
	assert_true(kv_get(&l, "PageTables", &found) == 5544ull * 1024);
	assert_true(found);
	assert_true(kv_get(&l, "MemTotal", NULL) == 24683584ull * 1024);
	assert_true(kv_get(&l, "Active(anon)", NULL) == 1820ull * 1024);
	/* no unit: not scaled */
	assert_true(kv_get(&l, "HugePages_Free", NULL) == 88);
	assert_true(kv_get(&l, "Hugepagesize", NULL) == 2ull << 20);
	assert_true(kv_get(&l, "NoSuchKey", &found) == 0);
	assert_false(found);
	kvlist_free(&l);

	/* malformed lines are rejected */
	f = text("MemTotal 123 kB\n");
	assert_int_equal(meminfo_parse(f, &l), -1);
	fclose(f);
	f = text("MemTotal: x kB\n");
	assert_int_equal(meminfo_parse(f, &l), -1);
	fclose(f);
	f = text("MemTotal: 12 MB\n");
	assert_int_equal(meminfo_parse(f, &l), -1);
	fclose(f);
	kvlist_free(&l);
}

static const char vmstat_before[] =
	"nr_free_pages 1738662\n"
	"nr_page_table_pages 1386\n"
	"pgfault 31438634\n"
	"thp_fault_alloc 2109\n"
	"htlb_buddy_alloc_success 0\n";

/* after: what a patched kernel adds (htlb_pmd_*), one counter gone down */
static const char vmstat_after[] =
	"nr_free_pages 1738000\n"
	"nr_page_table_pages 1386\n"
	"pgfault 31440000\n"
	"thp_fault_alloc 2109\n"
	"htlb_buddy_alloc_success 0\n"
	"htlb_pmd_share 999\n"
	"nr_htlb_pmd_shared 0\n";

static void test_vmstat_delta(void **state)
{
	struct kvlist b = { 0 }, a = { 0 };
	char *buf = NULL;
	size_t len;
	FILE *f = text(vmstat_before), *o;
	struct json j;

	(void)state;
	assert_int_equal(vmstat_parse(f, &b), 0);
	fclose(f);
	f = text(vmstat_after);
	assert_int_equal(vmstat_parse(f, &a), 0);
	fclose(f);
	assert_int_equal(b.n, 5);
	assert_true(kv_get(&a, "htlb_pmd_share", NULL) == 999);

	o = open_memstream(&buf, &len);
	json_init(&j, o, 0);
	vmstat_delta_json(&j, &b, &a);
	assert_int_equal(json_finish(&j), 0);
	fclose(o);
	/* changed counters (signed), every thp/htlb/hugetlb key, nothing else */
	assert_string_equal(buf,
		"{\"nr_free_pages\":-662,\"pgfault\":1366,\"thp_fault_alloc\":0,"
		"\"htlb_buddy_alloc_success\":0,\"htlb_pmd_share\":999,"
		"\"nr_htlb_pmd_shared\":0}\n");
	free(buf);
	kvlist_free(&a);
	kvlist_free(&b);
}

static void test_status_vmpte(void **state)
{
	FILE *f = text("Name:\tgrep\nVmRSS:\t    2152 kB\nVmPTE:\t      48 kB\nThreads:\t1\n");

	(void)state;
	assert_int_equal(status_vmpte_parse(f), 48 * 1024);
	fclose(f);
	f = text("Name:\tkthreadd\nThreads:\t1\n");     /* kernel threads: none */
	assert_int_equal(status_vmpte_parse(f), -1);
	fclose(f);
	/* the real file of this process has one */
	assert_true(status_vmpte_read(getpid()) > 0);
}

static void test_cpuinfo(void **state)
{
	static const char ci[] =
		"processor\t: 0\n"
		"model name\t: QEMU Virtual CPU version 2.5+\n"
		"flags\t\t: fpu vme de pse tsc msr pae mce cx8 apic sep pdpe1gb lm pni\n"
		"\n"
		"processor\t: 1\n"
		"flags\t\t: fpu vme onlyonsecond\n";
	static const char ci_no[] =
		"processor\t: 0\n"
		"flags\t\t: fpu vme de pse tsc msr pae pdpe1gbx xpdpe1gb lm\n";
	FILE *f = text(ci);

	(void)state;
	assert_true(cpuinfo_has_flag(f, "pdpe1gb"));
	rewind(f);
	assert_true(cpuinfo_has_flag(f, "fpu"));
	rewind(f);
	assert_true(cpuinfo_has_flag(f, "pni"));      /* last on the line */
	rewind(f);
	assert_false(cpuinfo_has_flag(f, "onlyonsecond"));
	rewind(f);
	assert_false(cpuinfo_has_flag(f, "pdpe"));    /* no prefix match */
	fclose(f);
	f = text(ci_no);
	assert_false(cpuinfo_has_flag(f, "pdpe1gb"));
	fclose(f);
}

static void put(const char *dir, const char *name, const char *val)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs(val, f);
	fclose(f);
}

static void test_hugepages_sysfs(void **state)
{
	char root[] = "/tmp/hugelab-test-hp.XXXXXX", d2[256], d1[256];
	uint64_t sizes[8];
	struct hp_counts c;

	(void)state;
	assert_non_null(mkdtemp(root));
	snprintf(d2, sizeof(d2), "%s/hugepages-2048kB", root);
	snprintf(d1, sizeof(d1), "%s/hugepages-1048576kB", root);
	assert_int_equal(mkdir(d2, 0755), 0);
	assert_int_equal(mkdir(d1, 0755), 0);
	put(d2, "nr_hugepages", "600\n");
	put(d2, "free_hugepages", "88\n");
	put(d2, "resv_hugepages", "3\n");
	put(d2, "surplus_hugepages", "0\n");
	put(d1, "nr_hugepages", "1\n");
	put(d1, "free_hugepages", "1\n");
	put(d1, "resv_hugepages", "0\n");
	/* surplus_hugepages missing: read fails for this size */
	put(root, "hugetlb_fault_lock", "vma [i_mmap]\n");

	assert_int_equal(hp_sizes(root, sizes, 8), 2);
	assert_true(sizes[0] == 2ull << 20);
	assert_true(sizes[1] == 1ull << 30);
	assert_int_equal(hp_read(root, 2ull << 20, &c), 0);
	assert_int_equal(c.nr, 600);
	assert_int_equal(c.free, 88);
	assert_int_equal(c.rsvd, 3);
	assert_int_equal(c.surp, 0);
	assert_int_equal(hp_read(root, 1ull << 30, &c), -1);
	assert_int_equal(hp_read(root, 16ull << 30, &c), -1);  /* no such pool */

	char buf[64], p[512];

	snprintf(p, sizeof(p), "%s/hugetlb_fault_lock", root);
	assert_true(read_text(p, buf, sizeof(buf)) > 0);
	assert_string_equal(sysfs_selected_word(buf), "i_mmap");

	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	assert_int_equal(system(cmd), 0);
}

static void test_pids_limit(void **state)
{
	char root[] = "/tmp/hugelab-test-cg.XXXXXX", d[256], buf[512];
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(root));
	snprintf(d, sizeof(d), "%s/system.slice", root);
	assert_int_equal(mkdir(d, 0755), 0);
	snprintf(d, sizeof(d), "%s/system.slice/ssh.service", root);
	assert_int_equal(mkdir(d, 0755), 0);
	put(d, "pids.max", "4915\n");
	put(d, "pids.current", "4915\n");

	f = text("0::/system.slice/ssh.service\n");
	pids_limit_describe(f, root, buf, sizeof(buf));
	fclose(f);
	assert_string_equal(buf, " (cgroup /system.slice/ssh.service: "
			    "pids.current 4915, pids.max 4915)");
	/* cgroup v1 only, no controller file, no input: nothing to say */
	f = text("12:pids:/user.slice\n");
	pids_limit_describe(f, root, buf, sizeof(buf));
	fclose(f);
	assert_string_equal(buf, "");
	f = text("0::/elsewhere\n");
	pids_limit_describe(f, root, buf, sizeof(buf));
	fclose(f);
	assert_string_equal(buf, "");
	pids_limit_describe(NULL, root, buf, sizeof(buf));
	assert_string_equal(buf, "");
}

static void test_helpers(void **state)
{
	char a[] = "vma\n", b[] = "  ", c[] = "[vma] i_mmap";

	(void)state;
	assert_true(hp_dirname_size("hugepages-2048kB") == 2ull << 20);
	assert_true(hp_dirname_size("hugepages-1048576kB") == 1ull << 30);
	assert_true(hp_dirname_size("hugepages-2048") == 0);
	assert_true(hp_dirname_size("hugepages-kB") == 0);
	assert_true(hp_dirname_size("nr_hugepages") == 0);
	assert_string_equal(sysfs_selected_word(a), "vma");
	assert_null(sysfs_selected_word(b));
	assert_string_equal(sysfs_selected_word(c), "vma");
	assert_int_equal(read_text("/nonexistent/file", a, sizeof(a)), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_meminfo),
		cmocka_unit_test(test_vmstat_delta),
		cmocka_unit_test(test_status_vmpte),
		cmocka_unit_test(test_cpuinfo),
		cmocka_unit_test(test_hugepages_sysfs),
		cmocka_unit_test(test_pids_limit),
		cmocka_unit_test(test_helpers),
	};

	return cmocka_run_group_tests_name("procfs", tests, NULL, NULL);
}
