// SPDX-License-Identifier: GPL-2.0
/* cmocka tests: racer option parsing and checks (racer/options.c), --check
 * needs against guest shapes; table-driven. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "racer.h"

static int run(const char *line, struct racer *r, char *err, size_t errlen)
{
	static char buf[1024];
	char *argv[64];
	int argc = 0;

	snprintf(buf, sizeof(buf), "%s", line);
	argv[argc++] = "racer";
	for (char *t = strtok(buf, " "); t && argc < 63; t = strtok(NULL, " "))
		argv[argc++] = t;
	argv[argc] = NULL;
	err[0] = 0;
	if (racer_parse(argc, argv, r, err, errlen))
		return -1;
	return racer_validate(r, err, errlen);
}

static void test_bad_inputs(void **state)
{
	static const struct { const char *args, *msg; } rows[] = {
		{ "--size 0", "--size must be a positive multiple of --page-size" },
		{ "--size 3M", "--size must be a positive multiple" },
		{ "--size 128G", "at most 64G" },
		{ "--page-size 4K", "--page-size must be 2M or 1G" },
		{ "--addr 0", "from 0x100000000" },
		{ "--addr 0x40000000", "from 0x100000000" },
		{ "--addr 0xffffffffc0000000", "below 0x8000000000" },
		{ "--addr 0x7fc0000000 --size 2G", "must end by 0x8000000000" },
		{ "--addr 0x4000001000", "1 GiB aligned" },
		{ "--addr 04000000000", "--addr: bad value '04000000000'" },
		{ "--addr 0x", "--addr: bad value" },
		{ "--bogus", "unknown option --bogus" },
		{ "--json", "option --json needs a value" },
		/* issue 33: inside a short-option cluster, the option (not "5") */
		{ "--procs 5 -xy", "unknown option -x (see --help)" },
		{ "--procs 5 -hx", "unknown option -x (see --help)" },
		{ "--json=", "--json: empty path (a file name, or - for stdout)" },
		{ "--check --json=", "--json: empty path" },
		{ "extra", "unexpected argument 'extra'" },
		{ "--procs 0", "--procs: bad value '0' (an integer in [1, 512])" },
		{ "--threads 65", "--threads: bad value" },
		{ "--duration 0", "--duration: bad value" },
		{ "--ops punch,nope", "--ops: bad value" },
		/* an empty list is not "none": it would race with nothing */
		{ "--ops=",
		  "--ops: bad value '' (a list of dontneed,mprotect,munmap,punch or none)" },
		{ "--check --ops=", "--ops: bad value ''" },
		{ "--ops=,", "--ops: bad value ','" },
		{ "--ops=punch,", "--ops: bad value 'punch,'" },
		{ "--ops=,punch", "--ops: bad value ',punch'" },
		{ "--ops=Punch", "--ops: bad value 'Punch'" },
		{ "--ops truncate", "--ops: truncate changes the file size" },
		{ "--write-pct 101", "--write-pct: bad value" },
		{ "--teardown-timeout-s 0", "--teardown-timeout-s: bad value" },
		{ "--guest-shape mem_mib=1", "only valid with --check" },
	};
	char err[512];
	struct racer r;

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		int rc = run(rows[i].args, &r, err, sizeof(err));

		if (rc != -1 || !strstr(err, rows[i].msg) || strchr(err, '\n'))
			fail_msg("'%s': rc %d, message '%s', want '%s'", rows[i].args, rc,
				 err, rows[i].msg);
	}
}

static void test_good_inputs(void **state)
{
	static const struct { const char *args; uint64_t addr, size, ops, seed; } rows[] = {
		{ "", 0x4000000000ull, 1ull << 30, RACER_OPS, 1 },
		{ "--addr 0x100000000 --size 2M", 0x100000000ull, 2ull << 20, RACER_OPS, 1 },
		{ "--addr 274877906944", 0x4000000000ull, 1ull << 30, RACER_OPS, 1 },
		{ "--ops dontneed,mprotect,munmap,punch", 0x4000000000ull, 1ull << 30, RACER_OPS, 1 },
		{ "--addr 0x7fc0000000 --size 1G --ops none", 0x7fc0000000ull, 1ull << 30, 0, 1 },
		{ "--ops punch,dontneed --seed 219525303", 0x4000000000ull, 1ull << 30,
		  (1u << OP_PUNCH) | (1u << OP_DONTNEED), 219525303 },
	};
	char err[512];
	struct racer r;

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		if (run(rows[i].args, &r, err, sizeof(err)))
			fail_msg("'%s': %s", rows[i].args, err);
		assert_true(r.addr == rows[i].addr);
		assert_true(r.size == rows[i].size);
		assert_true(r.ops == rows[i].ops);
		assert_true(r.seed == rows[i].seed);
	}
}

static void test_needs_and_shapes(void **state)
{
	static const struct {
		const char *args, *shape;
		uint64_t hp2m, hp1g, processes;
		const char *msg;
	} rows[] = {
		/* the default inventory's racer guest */
		{ "--duration 60 --procs 8 --threads 2 --size 1G --page-size 2M --ops dontneed,mprotect,munmap,punch",
		  "mem_mib=4096,hugepages_2m=1200,hugepages_1g=0,vcpus=2", 516, 0, 13, NULL },
		/* punch slack: 4 pages (2M), 1 page (1G) */
		{ "--ops dontneed", "mem_mib=4096,hugepages_2m=512,hugepages_1g=0,vcpus=2", 512, 0, 6, NULL },
		{ "--ops punch", "mem_mib=4096,hugepages_2m=512,hugepages_1g=0,vcpus=2", 516, 0, 6,
		  "needs 516 free 2M huge pages, the guest shape has 512" },
		{ "--page-size 1G --size 2G", "mem_mib=8192,hugepages_2m=0,hugepages_1g=2,vcpus=2", 0, 3, 9,
		  "needs 3 free 1G huge pages" },
		{ "--procs 512 --threads 64", "mem_mib=4096,hugepages_2m=1200,hugepages_1g=0,vcpus=2",
		  516, 0, 517, "MiB of memory" },
	};
	char err[512], opts[160];
	struct machine_res m;
	struct needs n;
	struct racer r;

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		assert_int_equal(run(rows[i].args, &r, err, sizeof(err)), 0);
		racer_needs(&r, &n);
		assert_true(n.hugepages_2m == rows[i].hp2m);
		assert_true(n.hugepages_1g == rows[i].hp1g);
		assert_true(n.processes == rows[i].processes);
		int rc = machine_shape(rows[i].shape, &m, err, sizeof(err));

		if (!rc) {
			racer_needs_opts(&r, opts, sizeof(opts));
			rc = needs_fit(opts, &n, &m, err, sizeof(err));
		}
		if (rows[i].msg ? rc != -1 || !strstr(err, rows[i].msg) : rc != 0)
			fail_msg("'%s' on '%s': rc %d '%s', want %s", rows[i].args, rows[i].shape,
				 rc, err, rows[i].msg ? rows[i].msg : "a fit");
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_inputs),
		cmocka_unit_test(test_good_inputs),
		cmocka_unit_test(test_needs_and_shapes),
	};

	return cmocka_run_group_tests_name("racer_options", tests, NULL, NULL);
}
