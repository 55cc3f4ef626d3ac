// SPDX-License-Identifier: GPL-2.0
/*
 * cmocka tests: shmdb option parsing and checks (lib/segopts.c), the
 * --check needs and guest-shape comparison (lib/needs.c), table-driven.
 * Every input of issue 12 that hung or misreported is a row here.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "shmdb.h"

/* Split a command line on spaces into argv (argv[0] = "shmdb"). */
static int split(const char *line, char *buf, size_t len, char **argv, int max)
{
	int argc = 0;

	snprintf(buf, len, "%s", line);
	argv[argc++] = "shmdb";
	for (char *t = strtok(buf, " "); t && argc < max - 1; t = strtok(NULL, " "))
		argv[argc++] = t;
	argv[argc] = NULL;
	return argc;
}

/* parse + validate: 0, or -1 with err */
static int run(const char *line, struct cfg *c, char *err, size_t errlen)
{
	static char buf[1024];
	char *argv[64];
	int argc = split(line, buf, sizeof(buf), argv, 64);

	err[0] = 0;
	if (cfg_parse(argc, argv, c, err, errlen))
		return -1;
	return cfg_validate(c, err, errlen);
}

static void test_bad_inputs(void **state)
{
	static const struct { const char *args, *msg; } rows[] = {
		/* defect 1: wrapping address, bounded space */
		{ "--address 0xffffffffc0000000", "--address 0xffffffffc0000000: must be" },
		{ "--address 0xffffffffc0000000 --size 512M --page-size 4K", "--address" },
		{ "--address 0x200000000000", "below 0x200000000000 (32 TiB)" },
		{ "--address 0x7fffc0000000", "below 0x200000000000" },
		{ "--address 0x1fffc0000000 --size 2G", "must end by 0x200000000000" },
		{ "--address 0x1fffc0000000 --size 1G --placement skewed", "+ 2M (skewed)" },
		{ "--address 0x1f4000000000 --size 1T --touch sparse --backing hugetlbfs",
		  "at most 768G here" },
		{ "--size 64T --touch sparse --backing hugetlbfs", "must end by 0x200000000000" },
		/* --touch sparse and --map private */
		{ "--touch some", "--touch: unknown value 'some' (all, sparse)" },
		{ "--touch sparse --page-size 4K --backing memfd", "--touch sparse needs --page-size 2M" },
		{ "--touch sparse --page-size 1G", "--touch sparse needs --page-size 2M" },
		{ "--touch sparse --backing hugetlbfs --disrupt punch", "--touch sparse cannot be disrupted" },
		{ "--touch sparse --buffer-size 4M", "--buffer-size 4M: --touch sparse keeps" },
		{ "--map copy", "--map: unknown value 'copy' (shared, private)" },
		{ "--map private --write-pct 0", "--map private needs a file" },
		{ "--map private --backing anon --write-pct 0", "--map private needs a file" },
		{ "--map private --backing hugetlbfs", "--map private needs --write-pct 0" },
		{ "--map private --backing memfd --write-pct 0 --disrupt punch", "--map private cannot be disrupted" },
		{ "--map private --backing memfd --write-pct 0 --no-prefault", "needs the prefault" },
		/* defect 2: zero and low addresses */
		{ "--address 0", "from 0x100000000" },
		{ "--address 0x40000000", "from 0x100000000" },
		{ "--address 0x2000001000", "1 GiB aligned" },
		/* leading 0 is not octal */
		{ "--address 02000000000000", "invalid address" },
		{ "--address 0x", "invalid address" },
		{ "--address 0x1g", "invalid address" },
		{ "--address -1", "invalid address" },
		/* one line for an unknown option or a missing value */
		{ "--bogus", "unknown option --bogus" },
		{ "--size", "option --size needs a value" },
		/* issue 33: inside a short-option cluster, the option (not "5") */
		{ "--sessions 5 -xy", "unknown option -x (see --help)" },
		{ "--sessions 5 -x", "unknown option -x (see --help)" },
		{ "--quiet -qz", "unknown option -q (see --help)" },
		{ "--quiet=1", "unknown option --quiet=1" },
		/* issue 33: 0 was silently the default */
		{ "--disrupt-len 0 --backing memfd --disrupt punch", "--disrupt-len 0: must be positive" },
		{ "stray", "unexpected argument 'stray'" },
		{ "--hugetlbfs-dir /mnt --backing shm", "--hugetlbfs-dir is only used with --backing hugetlbfs" },
		{ "--hugetlbfs-dir /mnt --backing memfd --page-size 4K", "(here: memfd)" },
		{ "--guest-shape mem_mib=1", "only valid with --check" },
		{ "--size 0", "--size 0: must be a positive multiple" },
		{ "--size 3M", "--size 3M: must be a positive multiple of the page size 2M" },
		{ "--page-size 64K", "only 4K, 2M and 1G" },
		{ "--placement skewed --page-size 1G", "--placement skewed needs 2M or 4K" },
		{ "--buffer-size 100", "--buffer-size 100: must be a power of two" },
		{ "--buffer-size 2G --size 1G", "--buffer-size 2G" },
		{ "--backing hugetlbfs --page-size 4K", "needs --page-size 2M or 1G" },
		{ "--backing anon --attach attach", "--backing anon can only be inherited" },
		{ "--backing shm --disrupt punch", "need a file-backed segment" },
		{ "--backing anon --disrupt munmap", "cannot remap --backing anon" },
		{ "--disrupt punch,bogus", "at 'bogus'" },
		{ "--out=", "--out: empty path (a file name, or - for stdout)" },
		{ "--check --out=", "--out: empty path" },
		{ "--disrupt= --backing memfd",
		  "--disrupt: empty list (punch,truncate,mprotect,munmap,dontneed or none)" },
		{ "--disrupt=, --backing memfd", "at ','" },
		{ "--disrupt punch,punch --backing memfd", "repeated" },
		{ "--duration 0", "--duration 0 needs --txn-count" },
		{ "--active 5 --sessions 4", "--active 5: more than the 4 sessions" },
		{ "--active 2 --txn-count 5", "--active needs a --duration" },
		{ "--attribute --backing memfd --disrupt punch", "--attribute needs --count-faults" },
		{ "--attribute=1 --count-faults", "unknown option --attribute=1" },
		{ "--sessions 0", "--sessions: '0' is not an integer in [1, 100000]" },
		{ "--sessions 100001", "--sessions" },
		{ "--seed -1", "--seed" },
		{ "--teardown-timeout-s 0", "--teardown-timeout-s" },
		{ "--disrupt-len 3M --backing memfd --disrupt punch", "--disrupt-len 3M" },
		{ "--backing nope", "--backing: unknown value 'nope' (shm, hugetlbfs, memfd, anon)" },
		{ "--disrupt-once --backing memfd", "--disrupt-once needs --disrupt" },
		{ "--disrupt-once --backing memfd --disrupt punch --page-size 4K --size 64G --disrupt-len 8K",
		  "--disrupt-once: 8388608 ranges of 8K; at most 4194304" },
	};
	char err[512];
	struct cfg c;

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		int rc = run(rows[i].args, &c, err, sizeof(err));

		if (rc != -1 || !strstr(err, rows[i].msg) || strchr(err, '\n'))
			fail_msg("'%s': rc %d, message '%s', want '%s'", rows[i].args, rc,
				 err, rows[i].msg);
	}
}

static void test_good_inputs(void **state)
{
	static const struct {
		const char *args;
		uint64_t base, duration_ms, txn_count;
	} rows[] = {
		{ "", DEFAULT_BASE, 5000, 0 },
		{ "--address 0x100000000", 0x100000000ull, 5000, 0 },
		{ "--address 4294967296", 0x100000000ull, 5000, 0 },
		{ "--address 0X7FC0000000 --size 1G", 0x7fc0000000ull, 5000, 0 },
		{ "--address 0x8000000000", 0x8000000000ull, 5000, 0 },
		{ "--address 0x1fffc0000000 --size 1G", 0x1fffc0000000ull, 5000, 0 },
		{ "--address 0x8000000000 --size 1T --touch sparse --backing hugetlbfs --placement skewed",
		  0x8000000000ull, 5000, 0 },
		{ "--size 1T --touch sparse --backing memfd --map private --write-pct 0",
		  DEFAULT_BASE, 5000, 0 },
		{ "--address 0x7f40000000 --size 2G --placement skewed --page-size 4K --backing memfd",
		  0x7f40000000ull, 5000, 0 },
		/* defect 8: an explicit --duration stays with --txn-count */
		{ "--txn-count 10", DEFAULT_BASE, 0, 10 },
		{ "--txn-count 10 --duration 5", DEFAULT_BASE, 5000, 10 },
		{ "--duration 5 --txn-count 10", DEFAULT_BASE, 5000, 10 },
		{ "--txn-count 10 --duration-ms 250", DEFAULT_BASE, 250, 10 },
		{ "--seed 219525303 --backing memfd --disrupt punch", DEFAULT_BASE, 5000, 0 },
		{ "--hugetlbfs-dir /mnt --backing hugetlbfs", DEFAULT_BASE, 5000, 0 },
		{ "--count-faults --attribute --backing memfd --disrupt punch", DEFAULT_BASE, 5000, 0 },
		{ "--disrupt-once --backing memfd --disrupt punch,truncate --disrupt-len 1G",
		  DEFAULT_BASE, 5000, 0 },
	};
	char err[512];
	struct cfg c;

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		if (run(rows[i].args, &c, err, sizeof(err)))
			fail_msg("'%s': %s", rows[i].args, err);
		assert_true(c.base == rows[i].base);
		assert_true(c.duration_ms == rows[i].duration_ms);
		assert_true(c.txn_count == rows[i].txn_count);
		assert_true(c.attribute == (strstr(rows[i].args, "--attribute") != NULL));
		assert_true(c.disrupt_once == (strstr(rows[i].args, "--disrupt-once") != NULL));
	}
}

/* --check: needs of a configuration, and the guest-shape comparison */
static void test_needs_and_shapes(void **state)
{
	static const struct {
		const char *args, *shape;
		uint64_t hp2m, hp1g, processes;
		const char *msg;        /* NULL: fits */
	} rows[] = {
		{ "--size 1G --sessions 3000 --placement skewed --disrupt punch --backing hugetlbfs",
		  "mem_mib=3072,hugepages_2m=600,hugepages_1g=0,vcpus=2", 512, 0, 3002, NULL },
		{ "--size 1G --sessions 3000", "mem_mib=3072,hugepages_2m=500,hugepages_1g=0,vcpus=2",
		  512, 0, 3001, "needs 512 free 2M huge pages, the guest shape has 500" },
		{ "--size 2G --page-size 1G", "mem_mib=4096,hugepages_2m=0,hugepages_1g=1,vcpus=2",
		  0, 2, 101, "needs 2 free 1G huge pages" },
		/* 4 KiB x 1 GiB x 10,000 sessions: ~20 GiB of PTE pages */
		{ "--size 1G --page-size 4K --sessions 10000", "mem_mib=16384,hugepages_2m=0,hugepages_1g=0,vcpus=2",
		  0, 0, 10001, "MiB of memory" },
		{ "--sessions 40000", "mem_mib=600000,hugepages_2m=600,hugepages_1g=0,vcpus=2",
		  512, 0, 40001, "pid_max" },
		{ "--sessions 40000", "mem_mib=600000,hugepages_2m=600,hugepages_1g=0,vcpus=64",
		  512, 0, 40001, NULL },
		{ "", "mem_mib=3072,hugepages_2m=600,vcpus=2", 512, 0, 101,
		  "--guest-shape: needs all of" },
		{ "", "mem_mib=3072,hugepages_2m=600,hugepages_1g=0,vcpus=2,cpus=1", 512, 0, 101,
		  "unknown or repeated key 'cpus'" },
		{ "", "mem_mib=3072,hugepages_2m=x,hugepages_1g=0,vcpus=2", 512, 0, 101,
		  "hugepages_2m='x'" },
		/* issue 33: values were cut at 31 characters (this read as 0) and a
		 * trailing comma was accepted */
		{ "", "mem_mib=3072,hugepages_2m=0000000000000000000000000000000512,hugepages_1g=0,vcpus=2",
		  512, 0, 101, NULL },
		{ "", "mem_mib=3072,hugepages_2m=00000000000000000000000000000000511,hugepages_1g=0,vcpus=2",
		  512, 0, 101, "512 free 2M" },
		{ "", "mem_mib=3072,hugepages_2m=600,hugepages_1g=0,vcpus=2,", 512, 0, 101,
		  "--guest-shape: trailing comma" },
		{ "", "mem_mib=1000,hugepages_2m=600,hugepages_1g=0,vcpus=2", 512, 0, 101,
		  "cannot hold its huge page pools" },
		/* sparse 1 TiB: one page per slot; 1,000 unshared skewed sessions
		 * need 1,000 x 1028 table pages (4.02 GiB) + 256 KiB each, + 1 MiB
		 * of committed versions (262,144 buffers of 8 KiB x 4 B) */
		{ "--backing hugetlbfs --size 1T --touch sparse --address 0x8000000000 --sessions 1000 "
		  "--placement skewed --map private --write-pct 0",
		  "mem_mib=6144,hugepages_2m=1100,hugepages_1g=0,vcpus=2", 1025, 0, 1001,
		  "--size 1T --page-size 2M --touch sparse --map private --sessions 1000: needs 4331 MiB" },
		{ "--backing hugetlbfs --size 1T --touch sparse --address 0x8000000000 --sessions 1000 "
		  "--placement skewed --map private --write-pct 0",
		  "mem_mib=7168,hugepages_2m=1100,hugepages_1g=0,vcpus=2", 1025, 0, 1001, NULL },
		/* shared and aligned: 1024 pages, 2 PUD pages per session */
		{ "--backing hugetlbfs --size 1T --touch sparse --address 0x8000000000 --sessions 10000",
		  "mem_mib=5120,hugepages_2m=1100,hugepages_1g=0,vcpus=2", 1024, 0, 10001, NULL },
		{ "--backing hugetlbfs --size 1T --touch sparse --sessions 10000",
		  "mem_mib=5120,hugepages_2m=1000,hugepages_1g=0,vcpus=2", 1024, 0, 10001,
		  "needs 1024 free 2M huge pages" },
	};
	char err[512], opts[128];
	struct machine_res m;
	struct needs n;
	struct cfg c;

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		assert_int_equal(run(rows[i].args, &c, err, sizeof(err)), 0);
		cfg_needs(&c, &n);
		assert_true(n.hugepages_2m == rows[i].hp2m);
		assert_true(n.hugepages_1g == rows[i].hp1g);
		assert_true(n.processes == rows[i].processes);
		assert_true(n.mem_mib > 0);
		err[0] = 0;
		int rc = machine_shape(rows[i].shape, &m, err, sizeof(err));

		if (!rc) {
			cfg_needs_opts(&c, opts, sizeof(opts));
			rc = needs_fit(opts, &n, &m, err, sizeof(err));
		}
		if (rows[i].msg ? rc != -1 || !strstr(err, rows[i].msg) : rc != 0)
			fail_msg("'%s' on '%s': rc %d '%s', want %s", rows[i].args, rows[i].shape,
				 rc, err, rows[i].msg ? rows[i].msg : "a fit");
	}
	/* 4 KiB memory grows with the model: 1 GiB x 10,000 > 20 GiB */
	assert_int_equal(run("--size 1G --page-size 4K --sessions 10000", &c, err, sizeof(err)), 0);
	cfg_needs(&c, &n);
	assert_true(n.mem_mib > 20 * 1024);
}

/* The pages --touch sparse faults: the first page of every slot spanned. */
static void test_touch_pages(void **state)
{
	char err[512];
	struct cfg c;

	(void)state;
	assert_int_equal(run("--size 1T --touch sparse --backing hugetlbfs --address 0x8000000000",
			     &c, err, sizeof(err)), 0);
	assert_true(seg_touch_pages(&c) == 1024);
	assert_true(seg_touch_offset(&c, 0) == 0);
	assert_true(seg_touch_offset(&c, 1) == 1ull << 30);
	assert_true(seg_touch_offset(&c, 1023) == 1023ull << 30);
	/* skewed: 1025 slots; slot 0 from the start, then each slot's first
	 * page, the last one 2 MiB before the end */
	assert_int_equal(run("--size 1T --touch sparse --backing hugetlbfs --address 0x8000000000 "
			     "--placement skewed", &c, err, sizeof(err)), 0);
	assert_true(seg_touch_pages(&c) == 1025);
	assert_true(seg_touch_offset(&c, 0) == 0);
	assert_true(seg_touch_offset(&c, 1) == (1ull << 30) - (2ull << 20));
	assert_true(seg_touch_offset(&c, 1024) == (1ull << 40) - (2ull << 20));
	/* all pages */
	assert_int_equal(run("--size 1G", &c, err, sizeof(err)), 0);
	assert_true(seg_touch_pages(&c) == 512);
	assert_true(seg_touch_offset(&c, 3) == 6ull << 20);
	/* the default 1 GiB, sparse: one page, two when skewed */
	assert_int_equal(run("--touch sparse", &c, err, sizeof(err)), 0);
	assert_true(seg_touch_pages(&c) == 1);
	assert_int_equal(run("--touch sparse --placement skewed", &c, err, sizeof(err)), 0);
	assert_true(seg_touch_pages(&c) == 2);
}

/* The model a run reports: --map private never shares; PUD pages in
 * PageTables only when the kernel counts them, always in memory needs. */
static void test_cfg_model(void **state)
{
	char err[512];
	struct model_res m;
	struct cfg c;

	(void)state;
	assert_int_equal(run("--size 1T --touch sparse --backing hugetlbfs --address 0x8000000000 "
			     "--map private --write-pct 0", &c, err, sizeof(err)), 0);
	cfg_model(&c, 100, false, &m);
	assert_false(m.sharing);
	assert_true(m.expected_bytes == 100ull * 1024 * 4096);
	assert_true(m.memory_bytes == 100ull * 1026 * 4096);
	assert_int_equal(run("--size 1T --touch sparse --backing hugetlbfs --address 0x8000000000",
			     &c, err, sizeof(err)), 0);
	cfg_model(&c, 100, true, &m);
	assert_true(m.sharing);
	assert_true(m.expected_bytes == 100ull * 2 * 4096 + 1024 * 4096);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_inputs),
		cmocka_unit_test(test_good_inputs),
		cmocka_unit_test(test_needs_and_shapes),
		cmocka_unit_test(test_touch_pages),
		cmocka_unit_test(test_cfg_model),
	};

	return cmocka_run_group_tests_name("shmdb_options", tests, NULL, NULL);
}
