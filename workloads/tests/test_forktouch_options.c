// SPDX-License-Identifier: GPL-2.0
/*
 * cmocka tests: forktouch option parsing (forktouch/options.c): shmdb's
 * segment options with shmdb's meaning, everything else refused with one
 * line; table-driven.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <cmocka.h>

#include "forktouch.h"

static int run(const char *line, struct cfg *c, char *err, size_t errlen)
{
	static char buf[1024];
	char *argv[64];
	int argc = 0;

	snprintf(buf, sizeof(buf), "%s", line);
	argv[argc++] = "forktouch";
	for (char *t = strtok(buf, " "); t && argc < 63; t = strtok(NULL, " "))
		argv[argc++] = t;
	argv[argc] = NULL;
	err[0] = 0;
	return ft_parse(argc, argv, c, err, errlen);
}

static void test_bad(void **state)
{
	static const struct { const char *args, *msg; } rows[] = {
		/* shmdb's run options have no meaning here */
		{ "--disrupt punch", "--disrupt: not a forktouch option" },
		{ "--duration 5", "--duration: not a forktouch option" },
		{ "--txn-count=5", "--txn-count: not a forktouch option" },
		{ "--write-pct 0", "--write-pct: not a forktouch option" },
		{ "--active 3", "--active: not a forktouch option" },
		{ "--count-faults", "--count-faults: not a forktouch option" },
		{ "--attribute", "--attribute: not a forktouch option" },
		{ "--bogus", "--bogus: not a forktouch option" },
		/* shmdb's own checks, with shmdb's messages */
		{ "--address 0", "from 0x100000000" },
		{ "--address 0x200000000000", "below 0x200000000000" },
		{ "--sessions 0", "--sessions: '0' is not an integer in [1, 100000]" },
		{ "--touch sparse --page-size 4K --backing memfd", "--touch sparse needs --page-size 2M" },
		{ "--map private", "--map private needs a file" },
		{ "--size", "option --size needs a value" },
		{ "--sessions 5 -xy", "unknown option -x (see --help)" },
		{ "stray", "unexpected argument 'stray'" },
		{ "--guest-shape mem_mib=1", "only valid with --check" },
		{ "--out=", "--out: empty path (a file name, or - for stdout)" },
		{ "--check --out=", "--out: empty path" },
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

static void test_good(void **state)
{
	static const struct {
		const char *args;
		uint64_t sessions, size;
		int sparse, priv, skewed;
	} rows[] = {
		{ "", 100, 1ull << 30, 0, 0, 0 },
		/* an experiment's segment options carry over from shmdb */
		{ "--backing hugetlbfs --page-size 2M --size 1G --placement skewed --sessions 10000 --attach attach --quiet",
		  10000, 1ull << 30, 0, 0, 1 },
		{ "--backing hugetlbfs --size 1T --touch sparse --address 0x8000000000 --sessions 1000 --placement skewed --map private",
		  1000, 1ull << 40, 1, 1, 1 },
		{ "--size=2G --sessions=7 --no-prefault --teardown-timeout-s 5", 7, 2ull << 30, 0, 0, 0 },
		/* a value that looks like an option name is a value */
		{ "--hugetlbfs-dir --backing --backing hugetlbfs", 100, 1ull << 30, 0, 0, 0 },
		{ "--check --guest-shape mem_mib=4096,hugepages_2m=600,hugepages_1g=0,vcpus=2", 100, 1ull << 30, 0, 0, 0 },
	};
	char err[512];
	struct cfg c;

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		if (run(rows[i].args, &c, err, sizeof(err)))
			fail_msg("'%s': %s", rows[i].args, err);
		assert_true(c.sessions == rows[i].sessions);
		assert_true(c.size == rows[i].size);
		assert_int_equal(c.sparse, rows[i].sparse);
		assert_int_equal(c.priv, rows[i].priv);
		assert_int_equal(c.skewed, rows[i].skewed);
		assert_true(c.write_pct == 0);
	}
}

/* Every name forktouch takes is one of shmdb's options (shmdb parses them). */
static void test_names_are_shmdb_options(void **state)
{
	char err[512], line[128];
	struct cfg c;

	(void)state;
	for (int i = 0; ft_options[i]; i++) {
		snprintf(line, sizeof(line), "--%s", ft_options[i]);
		run(line, &c, err, sizeof(err));
		if (strstr(err, "unknown option") || strstr(err, "not a forktouch option"))
			fail_msg("%s: %s", line, err);
	}
}

/* issue 33: the 4 KiB populate's result is not ignored (forktouch's child
 * falls back to touching on -EOPNOTSUPP, fails on any other error) */
static void test_populate_result(void **state)
{
	uint64_t len = 4ull << 20;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int e;

	(void)state;
	assert_true(p != MAP_FAILED);
	e = seg_populate_read(p, len);
	assert_true(e == 0 || e == -EOPNOTSUPP);        /* a kernel before 5.14 */
	if (e == 0) {
		assert_int_equal(mprotect(p + (2ull << 20), 2ull << 20, PROT_NONE), 0);
		e = seg_populate_read(p, len);
		assert_true(e < 0 && e != -EOPNOTSUPP); /* not the pre-5.14 fallback */
	}
	munmap(p, len);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_names_are_shmdb_options),
		cmocka_unit_test(test_populate_result),
	};

	return cmocka_run_group_tests_name("forktouch_options", tests, NULL, NULL);
}
