/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A program's list of failures: the JSON result's "failures" array and the
 * reason its status is "fail".  One list per program (shmdb, racer,
 * forktouch), one message per failure, the first FAILURES_MAX kept.
 */
#ifndef HUGELAB_FAILURES_H
#define HUGELAB_FAILURES_H

#include "json.h"

#define FAILURES_MAX 64

struct failures {
	const char *prog;       /* "prog: FAIL: msg" on stderr at once; NULL: silent */
	int n;                  /* messages kept (at most FAILURES_MAX) */
	int dropped;            /* failures past FAILURES_MAX */
	char *msg[FAILURES_MAX];
};

/* Record one failure (printf format). */
void failures_add(struct failures *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Write key: [messages...] (and "<N more>" when some were dropped). */
void failures_json(struct json *j, const char *key, const struct failures *f);

#endif
