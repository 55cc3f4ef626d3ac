// SPDX-License-Identifier: GPL-2.0
/*
 * cmocka tests: the programs' command lines as the lab gives them.  A
 * refused option is exit status 2 and one line on stderr, "PROG: " and a
 * message naming the option, before anything runs; --check refuses the
 * same.  Runs build/PROG (next to build/tests/, make check builds both).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

static char bindir[PATH_MAX];

struct row {
	const char *prog;
	const char *args[8];    /* NULL-terminated */
	const char *msg;        /* in the one line after "PROG: " */
};

/* build/PROG ARGS...: exit status (-1: not exited); stderr into err */
static int run(const char *prog, const char *const *args, char *err, size_t len)
{
	char path[PATH_MAX + 32];
	const char *argv[12];
	int p[2], st, n = 0;
	size_t got = 0;
	ssize_t r;
	pid_t pid;

	snprintf(path, sizeof(path), "%s/%s", bindir, prog);
	argv[n++] = path;
	for (int i = 0; args[i] && n < 11; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		int null = open("/dev/null", O_RDWR);

		dup2(null, 0);
		dup2(null, 1);
		dup2(p[1], 2);
		execv(path, (char *const *)argv);
		_exit(127);
	}
	close(p[1]);
	while (got < len - 1 && (r = read(p[0], err + got, len - 1 - got)) > 0)
		got += r;
	err[got] = 0;
	close(p[0]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void check_refused(const struct row *rows, size_t n)
{
	char err[4096], prefix[64];

	for (size_t i = 0; i < n; i++) {
		const struct row *w = &rows[i];
		int rc = run(w->prog, w->args, err, sizeof(err));
		char *nl = strchr(err, '\n');

		snprintf(prefix, sizeof(prefix), "%s: ", w->prog);
		if (rc != 2 || strncmp(err, prefix, strlen(prefix)) ||
		    !strstr(err, w->msg) || !nl || nl[1])
			fail_msg("%s %s %s: exit %d, stderr '%s', want 2 and one line with '%s'",
				 w->prog, w->args[0], w->args[1] ? w->args[1] : "", rc, err,
				 w->msg);
	}
}

/*
 * Every row has --check: the options are parsed as for a run (the same
 * code), and an option that is wrongly taken only prints needs, never
 * starts a run on this machine.
 */
static void test_racer_ops(void **state)
{
	static const struct row rows[] = {
		{ "racer", { "--check", "--ops=", NULL }, "--ops: bad value ''" },
		{ "racer", { "--ops", "", "--check", NULL }, "--ops: bad value ''" },
		{ "racer", { "--check", "--ops=,", NULL }, "--ops: bad value ','" },
		{ "racer", { "--check", "--ops=punch,,munmap", NULL }, "--ops: bad value" },
		{ "racer", { "--check", "--ops=bogus", NULL }, "--ops: bad value 'bogus'" },
		{ "racer", { "--check", "--ops=truncate", NULL },
		  "--ops: truncate changes the file size" },
	};

	(void)state;
	check_refused(rows, sizeof(rows) / sizeof(rows[0]));
}

/* the lab's JSON option (lab_programs' json_opt) with an empty path */
static void test_empty_result_path(void **state)
{
	static const struct row rows[] = {
		{ "shmdb", { "--check", "--out", "", NULL },
		  "--out: empty path (a file name, or - for stdout)" },
		{ "shmdb", { "--out=", "--check", NULL }, "--out: empty path" },
		{ "forktouch", { "--check", "--out", "", NULL },
		  "--out: empty path (a file name, or - for stdout)" },
		{ "forktouch", { "--check", "--out=", NULL }, "--out: empty path" },
		{ "racer", { "--check", "--json", "", NULL },
		  "--json: empty path (a file name, or - for stdout)" },
		{ "racer", { "--json=", "--check", NULL }, "--json: empty path" },
	};

	(void)state;
	check_refused(rows, sizeof(rows) / sizeof(rows[0]));
}

/* issue 33: a --path that is no hugetlbfs mount is named as such, before
 * the pool is looked at ("pool too small" on a host without huge pages) */
static void test_racer_path_not_hugetlbfs(void **state)
{
	static const struct row rows[] = {
		{ "racer", { "--path", "/tmp", NULL },
		  "--path /tmp: not a hugetlbfs mount of --page-size" },
		{ "racer", { "--path", "/nonexistent-hugelab", NULL },
		  "--path /nonexistent-hugelab: No such file or directory" },
	};

	(void)state;
	check_refused(rows, sizeof(rows) / sizeof(rows[0]));
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_racer_ops),
		cmocka_unit_test(test_empty_result_path),
		cmocka_unit_test(test_racer_path_not_hugetlbfs),
	};
	const char *slash = strrchr(argv[0], '/');

	(void)argc;
	/* build/tests/test_cli: the programs are in build/tests/.. */
	if (slash)
		snprintf(bindir, sizeof(bindir), "%.*s/..", (int)(slash - argv[0]), argv[0]);
	else
		snprintf(bindir, sizeof(bindir), "..");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
