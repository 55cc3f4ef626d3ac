// SPDX-License-Identifier: GPL-2.0
/* Result file handling, see outfile.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "outfile.h"

/* "DIR/.NAME.PID-N.tmp" beside o->target, created; o->fd on it. 0 or -errno */
static int tmp_create(struct outfile *o)
{
	const char *slash = strrchr(o->target, '/');
	int dirlen = slash ? (int)(slash - o->target) + 1 : 0;
	size_t len = strlen(o->target) + 32;
	int e = EEXIST;

	o->tmp = malloc(len);
	if (!o->tmp)
		return -ENOMEM;
	for (unsigned int n = 0; n < 100 && e == EEXIST; n++) {
		snprintf(o->tmp, len, "%.*s.%s.%d-%u.tmp", dirlen, o->target,
			 o->target + dirlen, (int)getpid(), n);
		o->fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (o->fd >= 0) {
			if (o->mode)
				fchmod(o->fd, o->mode);
			return 0;
		}
		e = errno;
	}
	free(o->tmp);
	o->tmp = NULL;
	return -e;
}

static void tmp_remove(struct outfile *o)
{
	if (o->tmp)
		unlink(o->tmp);
	free(o->tmp);
	o->tmp = NULL;
}

int outfile_open(struct outfile *o, const char *path)
{
	struct stat st;
	int e;

	memset(o, 0, sizeof(*o));
	o->fd = -1;
	o->path = path && strcmp(path, "-") ? path : NULL;
	if (!o->path)
		return 0;
	/* an existing path must be writable; a pipe or device is kept open */
	o->fd = open(o->path, O_WRONLY | O_CLOEXEC);
	if (o->fd >= 0) {
		if (fstat(o->fd, &st)) {
			e = -errno;
			outfile_abandon(o);
			return e;
		}
		if (!S_ISREG(st.st_mode))
			return 0;
		close(o->fd);
		o->fd = -1;
		o->mode = st.st_mode & 07777;
		o->target = realpath(o->path, NULL);    /* through symlinks */
	} else if (errno == ENOENT && lstat(o->path, &st)) {
		o->target = strdup(o->path);
	} else {
		return -errno;          /* ENOENT: a dangling symlink */
	}
	if (!o->target)
		return -errno;
	/* the directory must take the temporary file: try it now */
	e = tmp_create(o);
	if (!e) {
		close(o->fd);
		o->fd = -1;
		tmp_remove(o);
		return 0;
	}
	outfile_abandon(o);
	return e;
}

FILE *outfile_begin(struct outfile *o)
{
	FILE *f;
	int e;

	if (!o->path)
		return stdout;
	if (o->target && !o->tmp) {
		e = tmp_create(o);
		if (e) {
			errno = -e;
			return NULL;
		}
	}
	if (o->fd < 0) {
		errno = EBADF;
		return NULL;
	}
	f = fdopen(o->fd, "w");
	if (!f) {
		e = errno;
		outfile_abandon(o);
		errno = e;
		return NULL;
	}
	o->fd = -1;     /* owned by f now */
	return f;
}

int outfile_end(struct outfile *o, FILE *f, bool complete)
{
	bool bad = fflush(f) || ferror(f) || !complete;

	if (f == stdout)
		return bad ? -1 : 0;
	/* on disk before it replaces anything: a crash leaves one or the other */
	if (!bad && o->tmp && fsync(fileno(f)))
		bad = true;
	if (fclose(f))
		bad = true;
	if (o->tmp && !bad && rename(o->tmp, o->target))
		bad = true;
	if (bad)
		tmp_remove(o);
	free(o->tmp);
	o->tmp = NULL;
	free(o->target);
	o->target = NULL;
	o->path = NULL;
	return bad ? -1 : 0;
}

void outfile_abandon(struct outfile *o)
{
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
	tmp_remove(o);
	free(o->target);
	o->target = NULL;
}
