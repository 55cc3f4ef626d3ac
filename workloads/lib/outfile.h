/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The result file (--out / --json): opened when the options are checked, so
 * an unwritable path fails before any work, and found at its path only
 * complete: a regular file is written to a temporary file beside it
 * (".NAME.PID-N.tmp", same directory) and renamed over the path at the end,
 * so a program killed before or while writing (timeout's SIGKILL) leaves no
 * file or the earlier one, never an empty or cut-short document.
 *   outfile_open()     at start: check the path and that its directory takes
 *                      a new file (nothing is left there); a pipe or device
 *                      is opened and kept
 *   outfile_begin()    when the document is ready: FILE * on the temporary
 *                      file (on the pipe or device: written as is)
 *   outfile_end()      fsync, fclose, rename when complete and every write
 *                      went through; else the temporary file is removed and
 *                      -1 returned (disk full, EIO, an unfinished document)
 *   outfile_abandon()  on a setup error or exit: close what outfile_open
 *                      kept, remove the temporary file of a begun document
 * A NULL path or "-" means stdout.  A symlink is followed: its target is
 * replaced.  A replaced file's permissions are kept; a new file gets 0644
 * less the umask.
 */
#ifndef HUGELAB_OUTFILE_H
#define HUGELAB_OUTFILE_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

struct outfile {
	const char *path;       /* as given; NULL: stdout */
	char *target;           /* a regular file: the path renamed over */
	char *tmp;              /* the temporary file of a begun document */
	mode_t mode;            /* the replaced file's permissions; 0: new */
	int fd;                 /* a pipe or device kept from outfile_open */
};

int outfile_open(struct outfile *o, const char *path);     /* 0 or -errno */
FILE *outfile_begin(struct outfile *o);                    /* NULL: errno */
int outfile_end(struct outfile *o, FILE *f, bool complete);
void outfile_abandon(struct outfile *o);

#endif
