// SPDX-License-Identifier: GPL-2.0
/*
 * cmocka tests of lib/fleet.c with real child processes: the barrier, an
 * abort before every member is ready, a member that dies early (not
 * "stuck"), a member that never exits (stuck, bounded), members killed by
 * signals, bounded waits that name what did not arrive, the pool wait.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "fleet.h"
#include "hist.h"
#include "procfs.h"

#define MS 1000000ull

static volatile sig_atomic_t sig;
static struct failures fl;
static struct stuck st;
static struct fleet f;

static int setup(void **state)
{
	(void)state;
	sig = 0;
	memset(&fl, 0, sizeof(fl));
	memset(&st, 0, sizeof(st));
	return fleet_init(&f, 16, &fl, &st, &sig);
}

static int teardown(void **state)
{
	(void)state;
	for (uint32_t i = 0; i < f.n; i++)
		if (f.m[i].end == FLEET_RUNNING || f.m[i].end == FLEET_STUCK)
			kill(f.m[i].pid, SIGKILL);
	while (waitpid(-1, NULL, 0) > 0)
		;
	fleet_free(&f);
	for (int i = 0; i < fl.n; i++)
		free(fl.msg[i]);
	return 0;
}

static bool has_failure(const char *needle)
{
	for (int i = 0; i < fl.n; i++)
		if (strstr(fl.msg[i], needle))
			return true;
	return false;
}

/* ready (phase 0), wait for release of phase 1, arrive at 1, exit 0 */
static void well_behaved(void *arg, uint32_t idx)
{
	(void)arg;
	fleet_arrive(f.sh, idx, 0);
	if (!fleet_await(f.sh, 1))
		_exit(FLEET_EXIT_ABORT);
	fleet_arrive(f.sh, idx, 1);
	_exit(0);
}

/* member 0 and 1 behave, member 2 is slow to get ready (sleeps) */
static void slow_third(void *arg, uint32_t idx)
{
	if (idx == 2)
		usleep(300000);
	well_behaved(arg, idx);
}

static void dies_early(void *arg, uint32_t idx)
{
	if (idx == 1)
		_exit(4);
	well_behaved(arg, idx);
}

static void never_exits(void *arg, uint32_t idx)
{
	fleet_arrive(f.sh, idx, 0);
	if (idx == 0)
		for (;;)
			pause();
	well_behaved(arg, idx);
}

static void segfaults_after_ready(void *arg, uint32_t idx)
{
	(void)arg;
	fleet_arrive(f.sh, idx, 0);
	if (!fleet_await(f.sh, 1))
		_exit(FLEET_EXIT_ABORT);
	if (idx == 1) {
		signal(SIGSEGV, SIG_DFL);       /* not cmocka's handler */
		raise(SIGSEGV);
	}
	_exit(0);
}

static void spawn(fleet_fn fn, int n)
{
	for (int i = 0; i < n; i++)
		assert_true(fleet_spawn(&f, "worker", fn, NULL) > 0);
	fleet_seal(&f);
}

static void test_barrier_and_clean_exit(void **state)
{
	(void)state;
	spawn(well_behaved, 4);
	assert_int_equal(fleet_wait(&f, 0, 4, now_ns() + 5000 * MS, "get ready"), FLEET_ARRIVED);
	fleet_release(&f, 1);
	assert_int_equal(fleet_wait(&f, 1, 4, now_ns() + 5000 * MS, "finish"), FLEET_ARRIVED);
	assert_true(fleet_wait_exit(&f, now_ns() + 5000 * MS));
	for (uint32_t i = 0; i < 4; i++)
		assert_int_equal(f.m[i].end, FLEET_OK);
	assert_int_equal(fl.n, 0);
	assert_int_equal(fleet_index(&f, f.m[3].pid), 3);
	assert_int_equal(fleet_index(&f, -7), -1);
}

/* a signal ends the wait; the abort ends the members waiting at once */
static void test_abort_before_all_ready(void **state)
{
	uint64_t t0;

	(void)state;
	spawn(slow_third, 3);
	sig = SIGTERM;
	assert_int_equal(fleet_wait(&f, 0, 3, 0, "get ready"), FLEET_INTERRUPTED);
	t0 = now_ns();
	fleet_abort(&f);
	assert_true(fleet_wait_exit(&f, now_ns() + 5000 * MS));
	/* no teardown timeout's worth of waiting: the members see the abort */
	assert_true(now_ns() - t0 < 2000 * MS);
	assert_int_equal(f.n_aborted, 3);
	assert_int_equal(fleet_stop(&f, now_ns() + 1000 * MS, "after the abort"), 0);
	assert_int_equal(fl.n, 0);       /* the abort's consequences are not failures */
	assert_int_equal(st.count, 0);
}

/* died before it was ready: a failure naming the phase, not "stuck" */
static void test_member_dies_early(void **state)
{
	(void)state;
	spawn(dies_early, 3);
	assert_int_equal(fleet_wait(&f, 0, 3, 0, "get ready"), FLEET_INTERRUPTED);
	assert_true(has_failure("worker 1 (pid "));
	assert_true(has_failure("died before it could get ready: exit status 4"));
	assert_true(f.m[1].early);
	assert_int_equal(f.m[1].end, FLEET_EXITED);
	fleet_abort(&f);
	assert_true(fleet_wait_exit(&f, now_ns() + 5000 * MS));
	assert_int_equal(fleet_stop(&f, now_ns() + 1000 * MS, "at teardown"), 0);
	assert_int_equal(st.count, 0);
	assert_int_equal(fl.n, 1);
}

/* never exits: the deadline names it, SIGKILL (or a spared one: stuck) */
static void test_member_never_exits(void **state)
{
	uint64_t t0;

	(void)state;
	spawn(never_exits, 3);
	assert_int_equal(fleet_wait(&f, 0, 3, now_ns() + 5000 * MS, "get ready"), FLEET_ARRIVED);
	fleet_release(&f, 1);
	t0 = now_ns();
	assert_int_equal(fleet_wait(&f, 1, 3, now_ns() + 300 * MS, "finish"), FLEET_TIMEOUT);
	assert_true(now_ns() - t0 < 1000 * MS);
	assert_true(has_failure("1 of 3 processes did not finish within"));
	assert_true(has_failure("worker 0 (pid "));
	fleet_spare(&f, 0);             /* stands for a task stuck in the kernel */
	t0 = now_ns();
	assert_int_equal(fleet_stop(&f, now_ns() + 500 * MS, "0.5 s after teardown began"), 1);
	assert_true(now_ns() - t0 < 1500 * MS);
	assert_int_equal(st.count, 1);
	assert_int_equal(st.pid[0], f.m[0].pid);
	assert_string_equal(st.role[0], "worker");
	assert_int_equal(f.m[0].end, FLEET_STUCK);
	assert_true(has_failure("1 processes still there 0.5 s after teardown began"));
}

/* the same member not spared: SIGKILL ends it, nothing stuck */
static void test_sigkill_ends_a_member_that_never_exits(void **state)
{
	(void)state;
	spawn(never_exits, 2);
	assert_int_equal(fleet_wait(&f, 0, 2, now_ns() + 5000 * MS, "get ready"), FLEET_ARRIVED);
	fleet_release(&f, 1);
	assert_false(fleet_wait_exit(&f, now_ns() + 200 * MS));
	assert_int_equal(fleet_stop(&f, now_ns() + 2000 * MS, "at teardown"), 0);
	assert_int_equal(f.m[0].end, FLEET_SIGNALED);      /* not an abort: a failure */
	assert_true(has_failure("worker 0 (pid "));
	assert_true(has_failure("killed by signal 9"));
	assert_int_equal(st.count, 0);
}

/* a member killed by a signal after it was ready; SIGINT/SIGHUP ignored */
static void test_signals(void **state)
{
	(void)state;
	spawn(segfaults_after_ready, 3);
	assert_int_equal(fleet_wait(&f, 0, 3, now_ns() + 5000 * MS, "get ready"), FLEET_ARRIVED);
	kill(f.m[0].pid, SIGINT);       /* the parent's to handle */
	kill(f.m[2].pid, SIGHUP);
	usleep(50000);
	fleet_release(&f, 1);
	assert_true(fleet_wait_exit(&f, now_ns() + 5000 * MS));
	assert_int_equal(f.m[0].end, FLEET_OK);
	assert_int_equal(f.m[2].end, FLEET_OK);
	assert_int_equal(f.m[1].end, FLEET_SIGNALED);
	assert_false(f.m[1].early);
	assert_true(has_failure("worker 1 (pid "));
	assert_true(has_failure("killed by signal 11"));
	assert_int_equal(fl.n, 1);
}

/* member 0 never gets ready, the others do at once: the stall bound (from
 * the first arrival) ends the wait without a deadline, naming member 0 */
static void first_never_ready(void *arg, uint32_t idx)
{
	if (idx == 0)
		for (;;)
			pause();
	well_behaved(arg, idx);
}

static void test_stall_names_who_did_not_arrive(void **state)
{
	uint64_t t0 = now_ns();
	char pid[32];

	(void)state;
	spawn(first_never_ready, 4);
	f.stall_ns = 300 * MS;
	assert_int_equal(fleet_wait(&f, 0, 4, 0, "get ready"), FLEET_TIMEOUT);
	assert_true(now_ns() - t0 < 2000 * MS);
	assert_true(has_failure("1 of 4 processes did not get ready within"));
	snprintf(pid, sizeof(pid), "worker 0 (pid %d)", (int)f.m[0].pid);
	assert_true(has_failure(pid));
	fleet_abort(&f);
	assert_int_equal(fleet_stop(&f, now_ns() + 2000 * MS, "at teardown"), 0);
	assert_int_equal(f.n_aborted, 4);       /* 3 saw the abort, 0 was SIGKILLed */
}

static void exits_with(void *arg, uint32_t idx)
{
	(void)idx;
	_exit(*(int *)arg);
}

static void sleeps(void *arg, uint32_t idx)
{
	(void)arg;
	(void)idx;
	for (;;)
		pause();
}

/* one helper run to its end; a failing one named; a signal stops it */
static void test_run_one(void **state)
{
	int zero = 0, three = 3;

	(void)state;
	assert_int_equal(fleet_run_one(&f, "helper", exits_with, &zero, 1000 * MS), 0);
	assert_int_equal(fl.n, 0);
	assert_int_equal(fleet_run_one(&f, "helper", exits_with, &three, 1000 * MS), -1);
	assert_true(has_failure("helper 1 (pid "));
	assert_true(has_failure("exit status 3"));
	sig = SIGINT;
	assert_int_equal(fleet_run_one(&f, "helper", sleeps, NULL, 1000 * MS), -1);
	assert_int_equal(f.m[2].end, FLEET_ABORTED);
	assert_int_equal(st.count, 0);
}

static void write_pool(const char *dir, unsigned int free_pages)
{
	char path[256];
	FILE *fp;
	static const char *const names[] = {
		"nr_hugepages", "free_hugepages", "resv_hugepages", "surplus_hugepages",
	};

	for (int i = 0; i < 4; i++) {
		snprintf(path, sizeof(path), "%s/hugepages-2048kB/%s", dir, names[i]);
		fp = fopen(path, "w");
		assert_non_null(fp);
		fprintf(fp, "%u\n", i == 0 ? 8 : i == 1 ? free_pages : 0);
		fclose(fp);
	}
}

/* the pool wait is bounded and says which pools are back */
static void test_hp_wait(void **state)
{
	char dir[] = "/tmp/test_fleet.XXXXXX", sub[64], cmd[96];
	uint64_t size = 2ull << 20;
	struct hp_counts before, after;
	bool ret;
	uint64_t t0;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(sub, sizeof(sub), "%s/hugepages-2048kB", dir);
	assert_int_equal(mkdir(sub, 0755), 0);
	write_pool(dir, 8);
	assert_int_equal(hp_read(dir, size, &before), 0);
	assert_true(fleet_hp_wait(dir, 1, &size, &before, &after, &ret, 1000));
	assert_true(ret);
	write_pool(dir, 7);
	t0 = now_ns();
	assert_false(fleet_hp_wait(dir, 1, &size, &before, &after, &ret, 200));
	assert_true(now_ns() - t0 < 1000 * MS);
	assert_false(ret);
	assert_int_equal(after.free, 7);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_barrier_and_clean_exit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_abort_before_all_ready, setup, teardown),
		cmocka_unit_test_setup_teardown(test_member_dies_early, setup, teardown),
		cmocka_unit_test_setup_teardown(test_member_never_exits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sigkill_ends_a_member_that_never_exits,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_signals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stall_names_who_did_not_arrive, setup, teardown),
		cmocka_unit_test_setup_teardown(test_run_one, setup, teardown),
		cmocka_unit_test(test_hp_wait),
	};

	return cmocka_run_group_tests_name("fleet", tests, NULL, NULL);
}
