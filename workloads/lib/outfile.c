// SPDX-License-Identifier: GPL-2.0
/* Result file handling, see outfile.h. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "outfile.h"

int outfile_open(struct outfile *o, const char *path)
{
	o->path = path && strcmp(path, "-") ? path : NULL;
	o->fd = -1;
	o->created = false;
	if (!o->path)
		return 0;
	o->fd = open(o->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (o->fd >= 0) {
		o->created = true;
		return 0;
	}
	if (errno == EEXIST)
		o->fd = open(o->path, O_WRONLY | O_CLOEXEC);
	return o->fd >= 0 ? 0 : -errno;
}

FILE *outfile_begin(struct outfile *o)
{
	FILE *f;

	if (!o->path)
		return stdout;
	if (o->fd < 0) {
		errno = EBADF;
		return NULL;
	}
	struct stat st;

	/* a regular file is truncated; a pipe or device is written as is */
	if (fstat(o->fd, &st) || (S_ISREG(st.st_mode) && ftruncate(o->fd, 0)))
		return NULL;
	f = fdopen(o->fd, "w");
	if (f) {
		o->fd = -1;     /* owned by f now */
		o->created = false;
	}
	return f;
}

int outfile_end(struct outfile *o, FILE *f)
{
	int bad = ferror(f);

	if (f == stdout)
		return fflush(f) || bad ? -1 : 0;
	bad |= fclose(f);
	o->path = NULL;
	return bad ? -1 : 0;
}

void outfile_abandon(struct outfile *o)
{
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
	if (o->path && o->created)
		unlink(o->path);
	o->created = false;
}
