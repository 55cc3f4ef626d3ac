/* SPDX-License-Identifier: GPL-2.0 */
/*
 * forktouch: the bare baseline of shmdb's attach phase.  N processes are
 * forked, wait for one start signal, attach (or inherit) the same segment
 * as shmdb and fault the same pages in the same order, with nothing else:
 * no private state, no per-page timing, no transactions.  Its
 * attach.per_session and attach.total_s are what shmdb's sessions are
 * compared with.  The segment options are shmdb's (lib/segment.h:
 * lib/segopts.c parses them, lib/segment.c creates the segment): an experiment's arguments
 * carry over, --sessions being the number of processes.
 */
#ifndef FORKTOUCH_H
#define FORKTOUCH_H

#include <stddef.h>
#include <stdio.h>

#include "segment.h"

/* shmdb's options that forktouch takes; the others (transactions,
 * disruptor) are refused. */
extern const char *const ft_options[];

void ft_usage(FILE *f);
/* parse + validate: 0, or -1 with one line in err (no program name). */
int ft_parse(int argc, char **argv, struct cfg *c, char *err, size_t errlen);

#endif
