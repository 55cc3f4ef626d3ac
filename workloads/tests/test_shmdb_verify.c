// SPDX-License-Identifier: GPL-2.0
/*
 * cmocka tests of shmdb's buffer verification against the committed
 * versions (session_verify), with a stale-mapping harness: a memfd of
 * ordinary shared memory stands in for the segment, and a private copy of
 * an older state mapped MAP_FIXED over a buffer's page stands in for a
 * stale PMD.  Buffers of 4 KiB, one per page.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "dbbuf.h"
#include "shmdb.h"

#define BUF 4096ull
#define NBUF 4ull
#define NW (BUF / 8)

static struct ctl *ctl;
static int fd;
static char *base;
static char msg[256];

static int setup(void **state)
{
	(void)state;
	ctl = calloc(1, sizeof(*ctl));
	assert_non_null(ctl);
	ctl->committed = calloc(NBUF, sizeof(*ctl->committed));
	fd = memfd_create("shmdb-test", MFD_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)(NBUF * BUF)), 0);
	base = mmap(NULL, NBUF * BUF, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(base != MAP_FAILED);
	msg[0] = 0;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	munmap(base, NBUF * BUF);
	close(fd);
	free(ctl->committed);
	free(ctl);
	return 0;
}

static volatile uint64_t *buf(uint64_t i)
{
	return (volatile uint64_t *)(base + i * BUF);
}

/* A writer's commit, as txn() does it under the latch. */
static void write_version(uint64_t i, uint64_t ver)
{
	dbbuf_fill(buf(i), NW, i, ver);
	ctl->committed[i] = (uint32_t)ver;
}

static enum dbbuf_state verify(uint64_t i, uint64_t *ver)
{
	return session_verify(ctl, buf(i), NW, i, i, ver, msg, sizeof(msg));
}

/* Map a private copy of `copy` over buffer i's page (the stale view). */
static void stale_view(uint64_t i, const void *copy)
{
	void *a = base + i * BUF;

	assert_true(mmap(a, BUF, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == a);
	memcpy(a, copy, BUF);
}

/* The file's page mapped back where it belongs. */
static void real_view(uint64_t i)
{
	void *a = base + i * BUF;

	assert_true(mmap(a, BUF, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
			 fd, (off_t)(i * BUF)) == a);
}

static void test_committed_version_passes(void **state)
{
	uint64_t ver = 99;

	(void)state;
	assert_int_equal(verify(0, &ver), DBBUF_ZERO);  /* never written */
	assert_int_equal(ver, 0);
	write_version(0, 1);
	write_version(0, 2);
	assert_int_equal(verify(0, &ver), DBBUF_OK);
	assert_int_equal(ver, 2);
	assert_string_equal(msg, "");
}

/* A stale view showing the buffer's older, self-consistent copy. */
static void test_stale_older_copy_is_an_error(void **state)
{
	char old[BUF];
	uint64_t ver;

	(void)state;
	write_version(1, 1);
	memcpy(old, base + BUF, BUF);
	write_version(1, 2);
	stale_view(1, old);
	assert_int_equal(verify(1, &ver), DBBUF_BAD);
	assert_non_null(strstr(msg, "buffer 1: version 1, committed 2"));
}

/* A write through the stale view is lost: the file still holds the old. */
static void test_lost_write_is_an_error(void **state)
{
	char cur[BUF];
	uint64_t ver;

	(void)state;
	write_version(2, 5);
	memcpy(cur, base + 2 * BUF, BUF);
	stale_view(2, cur);
	write_version(2, 6);
	assert_int_equal(verify(2, &ver), DBBUF_OK);
	real_view(2);
	assert_int_equal(verify(2, &ver), DBBUF_BAD);
	assert_non_null(strstr(msg, "version 5, committed 6"));
}

/* All zero with a version committed: an error unless a punch/truncate ran. */
static void test_zero_needs_a_loss(void **state)
{
	static const char zeros[BUF];
	uint64_t ver;

	(void)state;
	write_version(3, 7);
	stale_view(3, zeros);
	assert_int_equal(verify(3, &ver), DBBUF_BAD);
	assert_non_null(strstr(msg, "buffer 3: all zero, committed 7, no punch or truncate ran"));
	ctl->loss_seq = 2;              /* one punch or truncate has run */
	assert_int_equal(verify(3, &ver), DBBUF_ZERO);
}

static void test_corrupt_is_an_error(void **state)
{
	uint64_t ver;

	(void)state;
	write_version(0, 3);
	buf(0)[NW - 1] ^= 1;
	assert_int_equal(verify(0, &ver), DBBUF_BAD);
	assert_non_null(strstr(msg, "is neither valid nor reset"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_committed_version_passes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stale_older_copy_is_an_error, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lost_write_is_an_error, setup, teardown),
		cmocka_unit_test_setup_teardown(test_zero_needs_a_loss, setup, teardown),
		cmocka_unit_test_setup_teardown(test_corrupt_is_an_error, setup, teardown),
	};

	return cmocka_run_group_tests_name("shmdb_verify", tests, NULL, NULL);
}
