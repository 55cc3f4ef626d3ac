/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The result file (--out / --json): opened when the options are checked, so
 * an unwritable path fails before any work, but neither truncated nor left
 * behind until the result is written:
 *   outfile_open()     at start: create (O_EXCL, remembered) or open as is
 *   outfile_begin()    when the document is ready: truncate, FILE *
 *   outfile_end()      fclose; -1 when anything failed (disk full, EIO)
 *   outfile_abandon()  on a setup error: remove the file if we created it
 * A NULL path or "-" means stdout.
 */
#ifndef HUGELAB_OUTFILE_H
#define HUGELAB_OUTFILE_H

#include <stdbool.h>
#include <stdio.h>

struct outfile {
	const char *path;       /* NULL: stdout */
	int fd;
	bool created;
};

int outfile_open(struct outfile *o, const char *path);     /* 0 or -errno */
FILE *outfile_begin(struct outfile *o);                    /* NULL: errno */
int outfile_end(struct outfile *o, FILE *f);
void outfile_abandon(struct outfile *o);

#endif
