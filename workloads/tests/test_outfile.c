// SPDX-License-Identifier: GPL-2.0
/*
 * cmocka tests: the result file (lib/outfile.h).  A regular file appears at
 * its path only complete: a program killed (timeout --kill-after's SIGKILL)
 * before or while writing leaves no file, or the earlier complete one; a
 * pipe or device is written as is.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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

#include "outfile.h"

#define DOC "{\"status\": \"ok\", \"padding\": \"%0*d\"}\n"
#define OLD "{\"status\": \"fail\"}\n"

static char dir[64], path[128];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/test_outfile.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof(path), "%s/r.json", dir);
	return 0;
}

static int teardown(void **state)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char p[400];

	(void)state;
	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
			unlink(p);
		}
	if (d)
		closedir(d);
	return rmdir(dir);
}

/* names in dir other than . and .., sorted by nothing; returns the count */
static int entries(char *first, size_t len)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (!n++ && first)
			snprintf(first, len, "%s", e->d_name);
	}
	closedir(d);
	return n;
}

static void write_file(const char *p, const char *text, mode_t mode)
{
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, mode);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

static char *read_file(const char *p)
{
	static char buf[1 << 17];
	int fd = open(p, O_RDONLY);
	ssize_t n;

	assert_true(fd >= 0);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	assert_true(n >= 0);
	buf[n] = 0;
	return buf;
}

static int write_doc(FILE *f, int pad)
{
	return fprintf(f, DOC, pad, 0) < 0;
}

static const char *expected_doc(int pad)
{
	static char buf[1 << 17];

	snprintf(buf, sizeof(buf), DOC, pad, 0);
	return buf;
}

static void test_new_file_appears_complete(void **state)
{
	struct outfile o;
	struct stat st;
	mode_t um = umask(022);
	FILE *f;

	(void)state;
	assert_int_equal(outfile_open(&o, path), 0);
	assert_int_equal(entries(NULL, 0), 0);        /* nothing created yet */
	f = outfile_begin(&o);
	assert_non_null(f);
	assert_int_equal(write_doc(f, 10), 0);
	assert_int_equal(fflush(f), 0);
	assert_int_equal(access(path, F_OK), -1);     /* not before the end */
	assert_int_equal(outfile_end(&o, f, true), 0);
	assert_string_equal(read_file(path), expected_doc(10));
	assert_int_equal(entries(NULL, 0), 1);        /* no temporary left */
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	umask(um);
}

/*
 * A child opens the result, writes part of the document (pad bytes of 0,
 * flushed) when pad >= 0, then is SIGKILLed as by timeout --kill-after.
 */
static void killed_child(int pad)
{
	int st;
	pid_t p = fork();

	assert_true(p >= 0);
	if (!p) {
		struct outfile o;
		FILE *f;

		if (outfile_open(&o, path))
			_exit(3);
		if (pad >= 0) {
			f = outfile_begin(&o);
			if (!f)
				_exit(4);
			fprintf(f, "{\"status\": \"ok\", \"padding\": \"%0*d", pad, 0);
			fflush(f);
		}
		kill(getpid(), SIGKILL);
		_exit(5);
	}
	assert_int_equal(waitpid(p, &st, 0), p);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
}

static void test_killed_during_the_run(void **state)
{
	(void)state;
	killed_child(-1);
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(entries(NULL, 0), 0);
}

static void test_killed_while_writing(void **state)
{
	char name[300];

	(void)state;
	killed_child(5000);
	assert_int_equal(access(path, F_OK), -1);
	/* the cut-short temporary stays beside it, hidden, not a .json */
	assert_int_equal(entries(name, sizeof(name)), 1);
	assert_int_equal(name[0], '.');
	assert_null(strstr(name + strlen(name) - 5, ".json"));
}

static void test_killed_keeps_the_earlier_result(void **state)
{
	(void)state;
	write_file(path, OLD, 0644);
	killed_child(-1);
	assert_string_equal(read_file(path), OLD);
	killed_child(5000);
	assert_string_equal(read_file(path), OLD);
}

static void test_replaces_existing_keeping_its_mode(void **state)
{
	struct outfile o;
	struct stat st;
	FILE *f;

	(void)state;
	write_file(path, OLD, 0600);
	assert_int_equal(outfile_open(&o, path), 0);
	assert_string_equal(read_file(path), OLD);    /* not truncated */
	f = outfile_begin(&o);
	assert_non_null(f);
	assert_int_equal(write_doc(f, 3), 0);
	assert_string_equal(read_file(path), OLD);
	assert_int_equal(outfile_end(&o, f, true), 0);
	assert_string_equal(read_file(path), expected_doc(3));
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(entries(NULL, 0), 1);
}

static void test_incomplete_document_is_dropped(void **state)
{
	struct outfile o;
	FILE *f;

	(void)state;
	assert_int_equal(outfile_open(&o, path), 0);
	f = outfile_begin(&o);
	assert_non_null(f);
	fputs("{\"status\": ", f);
	assert_int_equal(outfile_end(&o, f, false), -1);
	assert_int_equal(entries(NULL, 0), 0);

	write_file(path, OLD, 0644);
	assert_int_equal(outfile_open(&o, path), 0);
	f = outfile_begin(&o);
	assert_non_null(f);
	fputs("{\"status\": ", f);
	assert_int_equal(outfile_end(&o, f, false), -1);
	assert_string_equal(read_file(path), OLD);
	assert_int_equal(entries(NULL, 0), 1);
}

static void test_abandon(void **state)
{
	struct outfile o;

	(void)state;
	/* a setup error: nothing was created */
	assert_int_equal(outfile_open(&o, path), 0);
	outfile_abandon(&o);
	assert_int_equal(entries(NULL, 0), 0);
	/* exit between begin and end: the temporary goes */
	assert_int_equal(outfile_open(&o, path), 0);
	assert_non_null(outfile_begin(&o));
	assert_int_equal(entries(NULL, 0), 1);
	outfile_abandon(&o);
	assert_int_equal(entries(NULL, 0), 0);
	/* an existing file is left alone */
	write_file(path, OLD, 0644);
	assert_int_equal(outfile_open(&o, path), 0);
	outfile_abandon(&o);
	assert_string_equal(read_file(path), OLD);
}

static void test_symlink_is_written_through(void **state)
{
	char target[160];
	struct outfile o;
	struct stat st;
	FILE *f;

	(void)state;
	snprintf(target, sizeof(target), "%s/target", dir);
	write_file(target, OLD, 0644);
	assert_int_equal(symlink("target", path), 0);
	assert_int_equal(outfile_open(&o, path), 0);
	f = outfile_begin(&o);
	assert_non_null(f);
	assert_int_equal(write_doc(f, 1), 0);
	assert_int_equal(outfile_end(&o, f, true), 0);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_string_equal(read_file(target), expected_doc(1));
	assert_int_equal(entries(NULL, 0), 2);
}

static void test_bad_paths_fail_at_open(void **state)
{
	char p[200];
	struct outfile o;

	(void)state;
	snprintf(p, sizeof(p), "%s/missing/r.json", dir);
	assert_int_equal(outfile_open(&o, p), -ENOENT);
	assert_int_equal(outfile_open(&o, dir), -EISDIR);
	assert_int_equal(symlink("nowhere", path), 0);        /* dangling */
	assert_int_equal(outfile_open(&o, path), -ENOENT);
	assert_int_equal(entries(NULL, 0), 1);
}

static void test_device_is_written_as_is(void **state)
{
	struct outfile o;
	struct stat st;
	FILE *f;

	(void)state;
	assert_int_equal(outfile_open(&o, "/dev/null"), 0);
	f = outfile_begin(&o);
	assert_non_null(f);
	assert_int_equal(write_doc(f, 1), 0);
	assert_int_equal(outfile_end(&o, f, true), 0);
	assert_int_equal(stat("/dev/null", &st), 0);
	assert_true(S_ISCHR(st.st_mode));
	if (access("/dev/full", W_OK))
		return;
	/* a write error is reported (ENOSPC) */
	assert_int_equal(outfile_open(&o, "/dev/full"), 0);
	f = outfile_begin(&o);
	assert_non_null(f);
	write_doc(f, 1);
	assert_int_equal(outfile_end(&o, f, true), -1);
	assert_int_equal(stat("/dev/full", &st), 0);
	assert_true(S_ISCHR(st.st_mode));
}

static void test_pipe_is_written_as_is(void **state)
{
	struct outfile o;
	struct stat st;
	char buf[256];
	ssize_t n;
	int rd;
	FILE *f;

	(void)state;
	assert_int_equal(mkfifo(path, 0644), 0);
	rd = open(path, O_RDONLY | O_NONBLOCK);        /* a reader: no block */
	assert_true(rd >= 0);
	assert_int_equal(outfile_open(&o, path), 0);
	f = outfile_begin(&o);
	assert_non_null(f);
	assert_int_equal(write_doc(f, 2), 0);
	assert_int_equal(outfile_end(&o, f, true), 0);
	n = read(rd, buf, sizeof(buf) - 1);
	close(rd);
	assert_true(n > 0);
	buf[n] = 0;
	assert_string_equal(buf, expected_doc(2));
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	assert_int_equal(entries(NULL, 0), 1);
}

static void test_stdout(void **state)
{
	struct outfile o;

	(void)state;
	assert_int_equal(outfile_open(&o, "-"), 0);
	assert_ptr_equal(outfile_begin(&o), stdout);
	assert_int_equal(outfile_end(&o, stdout, true), 0);
	assert_int_equal(outfile_open(&o, NULL), 0);
	assert_ptr_equal(outfile_begin(&o), stdout);
	assert_int_equal(outfile_end(&o, stdout, false), -1);
	assert_int_equal(entries(NULL, 0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_new_file_appears_complete, setup, teardown),
		cmocka_unit_test_setup_teardown(test_killed_during_the_run, setup, teardown),
		cmocka_unit_test_setup_teardown(test_killed_while_writing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_killed_keeps_the_earlier_result,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_replaces_existing_keeping_its_mode,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_incomplete_document_is_dropped,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_abandon, setup, teardown),
		cmocka_unit_test_setup_teardown(test_symlink_is_written_through, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_paths_fail_at_open, setup, teardown),
		cmocka_unit_test_setup_teardown(test_device_is_written_as_is, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pipe_is_written_as_is, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stdout, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
