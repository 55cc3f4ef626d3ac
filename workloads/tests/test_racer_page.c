// SPDX-License-Identifier: GPL-2.0
/*
 * cmocka tests of racer/page.c, worker.c and unshare.c on a memfd of
 * ordinary shared memory standing in for the hugetlbfs file (2 MiB "huge"
 * pages: 512 tagged words, one per 4 KiB).
 *
 * The stale-mapping harness: a private copy of a page's contents is mapped
 * MAP_FIXED where the file's page was, then the file is changed (punched)
 * underneath: what a stale or foreign PMD shows.  The checker must see it.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "page.h"
#include "tag.h"
#include "unshare.h"
#include "worker.h"

#define PAGE (2ull << 20)
#define NPAGES 2ull

static struct racer R;

static void *shared_anon(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	assert_true(p != MAP_FAILED);
	return p;
}

static int setup(void **state)
{
	pthread_mutexattr_t a;
	void *probe;

	(void)state;
	memset(&R, 0, sizeof(R));
	R.page_size = PAGE;
	R.size = NPAGES * PAGE;
	R.npages = NPAGES;
	R.threads = 1;
	R.write_pct = 50;
	R.fd = memfd_create("racer-test", MFD_CLOEXEC);
	assert_true(R.fd >= 0);
	assert_int_equal(ftruncate(R.fd, (off_t)R.size), 0);
	probe = mmap(NULL, R.size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(probe != MAP_FAILED);
	munmap(probe, R.size);
	R.addr = (uint64_t)(uintptr_t)probe;
	R.ctl = shared_anon(R.npages * sizeof(*R.ctl));
	R.sh = shared_anon(sizeof(*R.sh));
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	for (uint64_t i = 0; i < R.npages; i++)
		pthread_mutex_init(&R.ctl[i].lock, &a);
	pthread_mutexattr_destroy(&a);
	assert_int_equal(map_whole(&R, true), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	munmap((void *)(uintptr_t)R.addr, R.size);
	munmap(R.ctl, R.npages * sizeof(*R.ctl));
	munmap(R.sh, sizeof(*R.sh));
	close(R.fd);
	return 0;
}

static volatile uint64_t *page_at(uint64_t i)
{
	return (volatile uint64_t *)(uintptr_t)(R.addr + i * PAGE);
}

/* Map a private copy of `copy` (a page's old contents) over page i. */
static void stale_view(uint64_t i, const void *copy)
{
	void *a = (void *)(uintptr_t)(R.addr + i * PAGE);

	assert_true(mmap(a, PAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == a);
	memcpy(a, copy, PAGE);
}

static uint64_t file_word(uint64_t off)
{
	uint64_t w = ~0ull;

	assert_int_equal(pread(R.fd, &w, sizeof(w), (off_t)off), sizeof(w));
	return w;
}

static void punch_file_only(uint64_t i)
{
	assert_int_equal(fallocate(R.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				   (off_t)(i * PAGE), (off_t)PAGE), 0);
}

static void test_tagged_page_passes(void **state)
{
	(void)state;
	page_write(&R, 1, false);
	assert_true(page_check(&R, 1, "test"));
	assert_int_equal(R.sh->tag_errors, 0);
	assert_int_equal(R.sh->strict_reads, 1);
	assert_int_equal(R.sh->file_words, 4);
	assert_int_equal(page_at(1)[PAGE / 8 - 512], tag_make(PAGE + PAGE - TAG_BLOCK, 1));
}

/*
 * The page's pre-punch copy stays mapped while the file is punched: the
 * tags read through the stale view are those of the committed generation
 * (the strict tag check accepts them), pread() of the file reads the hole.
 */
static void test_stale_copy_after_punch_caught_by_pread(void **state)
{
	void *copy = malloc(PAGE);

	(void)state;
	assert_non_null(copy);
	page_write(&R, 0, false);
	memcpy(copy, (void *)(uintptr_t)R.addr, PAGE);
	stale_view(0, copy);
	assert_int_equal(racer_punch(&R, 0, 1), 0);
	assert_int_equal(file_word(0), 0);
	assert_int_equal(page_at(0)[0], tag_make(0, 1));
	page_check(&R, 0, "test");
	assert_int_equal(R.sh->tag_errors, 1);
	assert_string_equal(R.sh->samples[0].check, "file");
	assert_int_equal(R.sh->samples[0].found, tag_make(0, 1));
	assert_int_equal(R.sh->samples[0].expect, 0);
	free(copy);
}

/* The file and the mapping both read zero but no punch was recorded. */
static void test_unrecorded_zeros_are_an_error(void **state)
{
	(void)state;
	page_write(&R, 0, false);
	punch_file_only(0);
	assert_int_equal(page_at(0)[0], 0);
	page_check(&R, 0, "test");
	assert_int_equal(R.sh->tag_errors, 1);
	assert_string_equal(R.sh->samples[0].check, "strict");
}

/* A recorded punch reads as zero, without error; a re-tag ends it. */
static void test_recorded_punch_reads_zero(void **state)
{
	(void)state;
	page_write(&R, 0, false);
	assert_int_equal(racer_punch(&R, 0, 1), 0);
	assert_false(page_check(&R, 0, "test"));
	assert_int_equal(R.sh->zero_reads, 1);
	page_write(&R, 0, true);
	assert_true(page_check(&R, 0, "test"));
	assert_int_equal(R.sh->tag_errors, 0);
	assert_int_equal(R.sh->retags_after_punch, 1);
	assert_int_equal(R.ctl[0].gen, 2);
}

/*
 * A writer "running" the whole time (odd seqcount) sends the check down
 * the weak path: zeros of a page never punched are an error there; zeros
 * of a page punched once are accepted even after its re-tag, and the file
 * is not compared, so a stale view of the punched (zero) page over the
 * re-tagged file passes (README.md: what the checker can and cannot see).
 */
static void test_weak_check(void **state)
{
	void *zeros = calloc(1, PAGE);

	(void)state;
	assert_non_null(zeros);
	page_write(&R, 0, false);
	R.ctl[0].seq++;
	punch_file_only(0);
	page_check(&R, 0, "test");
	assert_int_equal(R.sh->weak_reads, 1);
	assert_int_equal(R.sh->tag_errors, 1);
	assert_string_equal(R.sh->samples[0].check, "weak");
	R.ctl[0].seq++;

	page_write(&R, 1, false);
	assert_int_equal(racer_punch(&R, 1, 1), 0);
	page_write(&R, 1, true);
	stale_view(1, zeros);
	assert_int_equal(file_word(PAGE), tag_make(PAGE, 2));
	R.ctl[1].seq++;
	page_check(&R, 1, "test");
	assert_int_equal(R.sh->weak_reads, 2);
	assert_int_equal(R.sh->tag_errors, 1);  /* not seen by the weak path */
	R.ctl[1].seq++;
	page_check(&R, 1, "test");               /* the strict path sees it */
	assert_int_equal(R.sh->tag_errors, 2);
	free(zeros);
}

static void test_inject_is_reported(void **state)
{
	(void)state;
	page_write(&R, 1, false);
	page_inject_stale(&R, 1);
	assert_int_equal(R.sh->tag_errors, 1);
	assert_string_equal(R.sh->samples[0].check, "strict");
	assert_true(page_check(&R, 1, "test"));
	assert_int_equal(R.sh->tag_errors, 1);
}

/* fork f(r) after dropping this process' mapping (it maps its own). */
static pid_t child(void (*f)(struct racer *, unsigned int), unsigned int arg)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		munmap((void *)(uintptr_t)R.addr, R.size);
		f(&R, arg);
	}
	return pid;
}

static enum wl_op child_op;

static void unsharer(struct racer *r, unsigned int idx)
{
	unsharer_main(r, child_op, idx);
}

/*
 * Two workers and one unsharer per operation on the real file: work done,
 * every operation ran, no false alarm.
 */
static void test_workers_and_unsharers_clean(void **state)
{
	static const enum wl_op ops[] = { OP_DONTNEED, OP_MPROTECT, OP_MUNMAP, OP_PUNCH };
	struct timespec ts = { 0, 500 * 1000000 };
	pid_t pids[6];
	int st;

	(void)state;
	R.ops = RACER_OPS;
	for (uint64_t i = 0; i < NPAGES; i++)   /* as main.c's fill() */
		page_write(&R, i, false);
	pids[0] = child(worker_main, 0);
	pids[1] = child(worker_main, 1);
	for (unsigned int k = 0; k < 4; k++) {
		child_op = ops[k];
		pids[2 + k] = child(unsharer, k);
	}
	nanosleep(&ts, NULL);
	atomic_store(&R.sh->stop, 1);
	for (unsigned int k = 0; k < 6; k++) {
		assert_int_equal(waitpid(pids[k], &st, 0), pids[k]);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	assert_true(R.sh->writes > 0 && R.sh->reads > 0);
	for (unsigned int k = 0; k < 4; k++) {
		if (R.sh->op_errors[ops[k]])
			fail_msg("%s", R.sh->op_error_msg[ops[k]]);
		assert_true(R.sh->ops[ops[k]] > 0);
	}
	for (uint32_t k = 0; k < R.sh->nsamples && k < MAX_SAMPLES; k++) {
		struct tag_sample *t = &R.sh->samples[k];

		print_message("sample: page %llu word %llu found %#llx expect %#llx %s %s\n",
			      (unsigned long long)t->page, (unsigned long long)t->word,
			      (unsigned long long)t->found, (unsigned long long)t->expect,
			      t->role, t->check);
	}
	assert_int_equal(R.sh->tag_errors, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_tagged_page_passes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stale_copy_after_punch_caught_by_pread,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_unrecorded_zeros_are_an_error,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_recorded_punch_reads_zero, setup, teardown),
		cmocka_unit_test_setup_teardown(test_weak_check, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inject_is_reported, setup, teardown),
		cmocka_unit_test_setup_teardown(test_workers_and_unsharers_clean, setup, teardown),
	};

	return cmocka_run_group_tests_name("racer_page", tests, NULL, NULL);
}
