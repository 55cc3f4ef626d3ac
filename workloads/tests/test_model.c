// SPDX-License-Identifier: GPL-2.0
/* cmocka tests: page-table savings model. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>
#include <cmocka.h>

#include "model.h"

#define K 1024ull
#define M (1024ull * K)
#define G (1024ull * M)
#define T (1024ull * G)
#define BASE (128 * G)

static struct model_res run_pud(uint64_t size, uint64_t page, uint64_t start,
				uint64_t n, bool share, bool pud_counted)
{
	struct model_cfg c = { size, page, start, n, share, pud_counted };
	struct model_res r;

	assert_int_equal(model_compute(&c, &r), 0);
	return r;
}

static struct model_res run(uint64_t size, uint64_t page, uint64_t start,
			    uint64_t n, bool share)
{
	struct model_cfg c = { size, page, start, n, share, false };
	struct model_res r;

	assert_int_equal(model_compute(&c, &r), 0);
	return r;
}

static void test_4k(void **state)
{
	(void)state;
	/* notes: G x (2 MiB + 4 KiB) per process */
	struct model_res r = run(1 * G, 4 * K, BASE, 100, true);

	assert_int_equal(r.pte_pages_per_session, 512);
	assert_int_equal(r.pmd_pages_per_session, 1);
	assert_int_equal(r.marginal_bytes, 2 * M + 4 * K);
	assert_int_equal(r.expected_bytes, 100 * (2 * M + 4 * K));
	assert_false(r.sharing);
	/* 256 MiB: 128 PTE pages + 1 PMD page */
	r = run(256 * M, 4 * K, BASE, 100, true);
	assert_int_equal(r.marginal_bytes, 129 * 4 * K);
	/* a 4 KiB range straddling a 2 MiB boundary needs 2 PTE pages */
	r = run(8 * K, 4 * K, BASE + 2 * M - 4 * K, 1, false);
	assert_int_equal(r.pte_pages_per_session, 2);
	assert_int_equal(r.pmd_pages_per_session, 1);
}

static void test_2m_aligned_shared(void **state)
{
	(void)state;
	struct model_res r = run(1 * G, 2 * M, BASE, 1000, true);

	assert_int_equal(r.slots, 1);
	assert_int_equal(r.full_slots, 1);
	assert_int_equal(r.shared_slots, 1);
	assert_int_equal(r.pmd_pages_per_session, 0);
	assert_int_equal(r.marginal_bytes, 0);
	assert_int_equal(r.shared_bytes, 4 * K);      /* the one shared PMD page */
	assert_int_equal(r.expected_bytes, 4 * K);
	assert_true(r.per_session_bytes > 4.09 && r.per_session_bytes < 4.1);
	assert_true(r.sharing);
	/* no sessions: nothing */
	r = run(1 * G, 2 * M, BASE, 0, true);
	assert_int_equal(r.expected_bytes, 0);
}

static void test_2m_unshared(void **state)
{
	(void)state;
	/* aligned but not shareable (MAP_PRIVATE): one PMD page per GiB */
	struct model_res r = run(1 * G, 2 * M, BASE, 1000, false);

	assert_int_equal(r.marginal_bytes, 4 * K);
	assert_int_equal(r.expected_bytes, 1000 * 4 * K);
	assert_false(r.sharing);

	/* skewed by 2 MiB: 1 GiB straddles 2 slots, neither fully covered */
	r = run(1 * G, 2 * M, BASE + 2 * M, 1000, true);
	assert_int_equal(r.slots, 2);
	assert_int_equal(r.full_slots, 0);
	assert_int_equal(r.pmd_pages_per_session, 2);
	assert_int_equal(r.marginal_bytes, 8 * K);
	assert_int_equal(r.expected_bytes, 1000 * 8 * K);
	assert_false(r.sharing);

	/* less than a GiB, aligned: the partial slot cannot be shared */
	r = run(512 * M, 2 * M, BASE, 10, true);
	assert_int_equal(r.shared_slots, 0);
	assert_int_equal(r.marginal_bytes, 4 * K);

	/* 3 GiB skewed: 4 slots, 2 inner ones fully covered and shared */
	r = run(3 * G, 2 * M, BASE + 2 * M, 10, true);
	assert_int_equal(r.slots, 4);
	assert_int_equal(r.full_slots, 2);
	assert_int_equal(r.pmd_pages_per_session, 2);
	assert_int_equal(r.expected_bytes, 10 * 8 * K + 2 * 4 * K);
}

static void test_seed_article(void **state)
{
	(void)state;
	/* 1 TiB unshared: 1024 PMD pages = 4 MiB per process; the 9,999 extra
	 * processes of the article cost 39.06 GiB without sharing. */
	struct model_res r = run(1024 * G, 2 * M, 0, 10000, false);
	struct model_res s = run(1024 * G, 2 * M, 0, 10000, true);

	assert_int_equal(r.marginal_bytes, 4 * M);
	assert_int_equal(s.marginal_bytes, 0);
	assert_int_equal(s.shared_bytes, 4 * M);
	assert_int_equal(r.expected_bytes - s.expected_bytes, 9999ull * 4 * M);
	/* and for the 1 GiB of the article: 39 MiB */
	r = run(1 * G, 2 * M, 0, 10000, false);
	s = run(1 * G, 2 * M, 0, 10000, true);
	assert_int_equal(r.expected_bytes - s.expected_bytes, 9999ull * 4 * K);
}

static void test_1g(void **state)
{
	(void)state;
	struct model_res r = run(4 * G, 1 * G, BASE, 3000, true);

	assert_int_equal(r.slots, 4);
	assert_int_equal(r.pmd_pages_per_session, 0);
	assert_int_equal(r.pte_pages_per_session, 0);
	assert_int_equal(r.expected_bytes, 0);
	assert_false(r.sharing);
}

static void test_invalid(void **state)
{
	struct model_res r;
	struct model_cfg c = { 0, 2 * M, BASE, 1, true, false };

	(void)state;
	assert_int_equal(model_compute(&c, &r), -1);            /* size 0 */
	c.size = 3 * M;
	assert_int_equal(model_compute(&c, &r), -1);            /* not multiple */
	c.size = 2 * M;
	c.page_size = 64 * K;
	assert_int_equal(model_compute(&c, &r), -1);            /* page size */
	c.page_size = 1 * G;
	c.size = 1 * G;
	c.start = BASE + 2 * M;
	assert_int_equal(model_compute(&c, &r), -1);            /* 1G skewed */
	c.start = UINT64_MAX - G + 1;
	c.size = 2 * G;
	assert_int_equal(model_compute(&c, &r), -1);            /* wraps */
}

/*
 * model_compute must return for any address, including ranges that end at
 * or wrap past 2^64 (0xffffffffc0000000 + 512M once looped for ever).  The
 * alarm turns a hang into a failure; full_slots is checked against a slow
 * but obviously correct count where that count is cheap.
 */
static void test_terminates_any_address(void **state)
{
	static const uint64_t starts[] = {
		0, 2 * M, G - 2 * M, G, BASE, 511 * G, 512 * G,
		0xffffffffc0000000ull, 0xffffffffe0000000ull,
		0xffffffffffe00000ull, UINT64_MAX - G + 1 + 2 * M,
	};
	static const uint64_t sizes[] = {
		2 * M, 512 * M, G - 2 * M, G, G + 2 * M, 3 * G, 1024 * G,
		0xffffffffc0000000ull, UINT64_MAX - 2 * M + 1,
	};
	static const uint64_t pages[] = { 4 * K, 2 * M, G };

	(void)state;
	alarm(10);
	for (size_t a = 0; a < sizeof(starts) / sizeof(starts[0]); a++)
		for (size_t b = 0; b < sizeof(sizes) / sizeof(sizes[0]); b++)
			for (size_t p = 0; p < 3; p++) {
				struct model_cfg c = { sizes[b], pages[p], starts[a], 10, true,
							(a + b) % 2 == 0 };
				struct model_res r;
				int rc = model_compute(&c, &r);
				bool wraps = sizes[b] > UINT64_MAX - starts[a];
				bool aligned = starts[a] % pages[p] == 0 &&
					       sizes[b] % pages[p] == 0;

				assert_int_equal(rc, wraps || !aligned ? -1 : 0);
				if (rc)
					continue;
				assert_true(r.full_slots <= r.slots);
				assert_true(r.memory_bytes >= r.expected_bytes);
				if (sizes[b] <= 4 * G) {
					uint64_t full = 0, end = starts[a] + sizes[b];

					for (uint64_t s = starts[a] / G + (starts[a] % G != 0);
					     s < end / G; s++)
						full++;
					assert_int_equal(r.full_slots, full);
				}
			}
	alarm(0);
}

/*
 * PUD pages: one per 512 GiB region spanned, but the first region's
 * (the program is there).  The seed's scale: 1 TiB of 2 MiB pages.
 */
static void test_pud_1t(void **state)
{
	(void)state;
	/* 1 TiB at 512 GiB, unshared (MAP_PRIVATE): 2 PUD + 1024 PMD pages */
	struct model_res r = run_pud(T, 2 * M, 512 * G, 1000, false, true);

	assert_int_equal(r.slots, 1024);
	assert_int_equal(r.pud_pages_per_session, 2);
	assert_int_equal(r.pmd_pages_per_session, 1024);
	assert_int_equal(r.marginal_bytes, 1026 * 4 * K);
	assert_int_equal(r.memory_bytes, 1000ull * 1026 * 4 * K);
	/* the kernel's PageTables without PUD pages (6.1): PMD pages only,
	 * memory still counts them, VmPTE too */
	r = run_pud(T, 2 * M, 512 * G, 1000, false, false);
	assert_int_equal(r.marginal_bytes, 1024 * 4 * K);
	assert_int_equal(r.expected_bytes, 1000ull * 1024 * 4 * K);
	assert_int_equal(r.memory_bytes, 1000ull * 1026 * 4 * K);
	assert_int_equal(r.vmpte_bytes, 1026 * 4 * K);
	assert_false(r.pud_counted);

	/* skewed by 2 MiB: 1025 slots across 3 PUD regions; unshared that
	 * is 1,000 x 1028 pages = 4.02 GiB (the --check of the 1,000-session
	 * run counts it) */
	r = run_pud(T, 2 * M, 512 * G + 2 * M, 1000, false, true);
	assert_int_equal(r.slots, 1025);
	assert_int_equal(r.full_slots, 1023);
	assert_int_equal(r.pud_pages_per_session, 3);
	assert_int_equal(r.pmd_pages_per_session, 1025);
	assert_int_equal(r.memory_bytes, 1000ull * 1028 * 4 * K);
	/* ... but a shared skewed mapping still shares its 1023 full slots:
	 * skewing only stops the first and last slot from sharing */
	r = run_pud(T, 2 * M, 512 * G + 2 * M, 1000, true, true);
	assert_int_equal(r.shared_slots, 1023);
	assert_int_equal(r.pmd_pages_per_session, 2);
	assert_int_equal(r.marginal_bytes, (2 + 3) * 4 * K);
	assert_int_equal(r.expected_bytes, 1000ull * 5 * 4 * K + 1023 * 4 * K);

	/* 10,000 aligned and shared: the 1024 PMD pages once, 2 PUD pages
	 * each (tens of MiB, not 39 GiB) */
	r = run_pud(T, 2 * M, 512 * G, 10000, true, true);
	assert_int_equal(r.shared_bytes, 4 * M);
	assert_int_equal(r.memory_bytes, 10000ull * 2 * 4 * K + 4 * M);

	/* the default address (128 GiB): regions 0, 1, 2 -> 2 new PUD pages */
	r = run_pud(T, 2 * M, BASE, 1, true, true);
	assert_int_equal(r.pud_pages_per_session, 2);
	/* inside the first 512 GiB: none; across 512 GiB: one */
	assert_int_equal(run(64 * G, 2 * M, BASE, 1, true).pud_pages_per_session, 0);
	assert_int_equal(run(64 * G, 2 * M, 480 * G, 1, true).pud_pages_per_session, 1);
	/* 1 GiB and 4 KiB pages need PUD pages too */
	assert_int_equal(run(2 * G, G, 511 * G, 1, true).pud_pages_per_session, 1);
	assert_int_equal(run(4 * M, 4 * K, 512 * G - 2 * M, 1, true).pud_pages_per_session, 1);
}

/*
 * The seed's "39 GB": 1024 PMD pages x 4 KiB x 9,999 extra processes =
 * 39.06 GiB between 10,000 unshared and 10,000 shared 1 TiB mappings (PUD
 * pages, never shared, cancel out).
 */
static void test_seed_39g(void **state)
{
	(void)state;
	struct model_res u = run_pud(T, 2 * M, 512 * G, 10000, false, true);
	struct model_res s = run_pud(T, 2 * M, 512 * G, 10000, true, true);
	uint64_t saved = u.memory_bytes - s.memory_bytes;

	assert_int_equal(saved, 1024ull * 4 * K * 9999);
	assert_true((double)saved / (double)G > 39.05 && (double)saved / (double)G < 39.07);
	assert_int_equal(u.expected_bytes - s.expected_bytes, saved);
}

static void test_pud_counted_release(void **state)
{
	(void)state;
	assert_false(model_pud_counted("6.1.0-57-amd64"));
	assert_false(model_pud_counted("6.6.30"));
	assert_true(model_pud_counted("6.7.0"));
	assert_true(model_pud_counted("6.12.118+deb12-amd64"));
	assert_true(model_pud_counted("7.0"));
	assert_false(model_pud_counted("5.19.0"));
	assert_false(model_pud_counted(""));
	assert_false(model_pud_counted("x"));
	assert_false(model_pud_counted(NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_4k),
		cmocka_unit_test(test_2m_aligned_shared),
		cmocka_unit_test(test_2m_unshared),
		cmocka_unit_test(test_seed_article),
		cmocka_unit_test(test_1g),
		cmocka_unit_test(test_invalid),
		cmocka_unit_test(test_terminates_any_address),
		cmocka_unit_test(test_pud_1t),
		cmocka_unit_test(test_seed_39g),
		cmocka_unit_test(test_pud_counted_release),
	};

	return cmocka_run_group_tests_name("model", tests, NULL, NULL);
}
