/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Processes that did not exit by the teardown deadline (a task stuck in the
 * kernel, D state, is what the lab hunts): stuck_json writes key "stuck":
 *   {"count": N, "processes": [{"pid", "role", "state", "wchan",
 *    "stack": [lines] | null}], "kernel_log_tail": [last 100 messages]}
 * (workloads/SCHEMA.md); /proc/PID/stack needs root and may be unreadable.
 */
#ifndef HUGELAB_STUCK_H
#define HUGELAB_STUCK_H

#include <sys/types.h>

#include "json.h"

#define STUCK_MAX 64
#define STUCK_LOG_LINES 100

struct stuck {
	unsigned int count;             /* all stuck processes */
	unsigned int n;                 /* described (at most STUCK_MAX) */
	pid_t pid[STUCK_MAX];
	char role[STUCK_MAX][16];
};

void stuck_add(struct stuck *s, pid_t pid, const char *role);
void stuck_json(struct json *j, const struct stuck *s);

#endif
