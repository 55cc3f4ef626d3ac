// SPDX-License-Identifier: GPL-2.0
/* Report of stuck processes, see stuck.h. */
#include <stdio.h>
#include <string.h>

#include "kmsg.h"
#include "procfs.h"
#include "stuck.h"

void stuck_add(struct stuck *s, pid_t pid, const char *role)
{
	s->count++;
	if (s->n >= STUCK_MAX)
		return;
	s->pid[s->n] = pid;
	snprintf(s->role[s->n], sizeof(s->role[0]), "%s", role);
	s->n++;
}

/* State letter from /proc/PID/stat ("pid (comm) S ..."), or "?" */
static void proc_state(pid_t pid, char *buf, size_t len)
{
	char path[64], stat[512], *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	snprintf(buf, len, "?");
	if (read_text(path, stat, sizeof(stat)) <= 0)
		return;
	p = strrchr(stat, ')');
	if (p && p[1] == ' ' && p[2])
		snprintf(buf, len, "%c", p[2]);
}

static void stack_json(struct json *j, pid_t pid)
{
	char path[64], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stack", (int)pid);
	f = fopen(path, "re");
	if (!f || fgets(line, sizeof(line), f) == NULL) {
		if (f)
			fclose(f);
		json_null(j);
		return;
	}
	json_arr_begin(j);
	do {
		line[strcspn(line, "\n")] = 0;
		json_str(j, line);
	} while (fgets(line, sizeof(line), f));
	json_arr_end(j);
	fclose(f);
}

void stuck_json(struct json *j, const struct stuck *s)
{
	char *log[STUCK_LOG_LINES];
	char buf[128], path[64];
	int n;

	json_key(j, "stuck");
	json_obj_begin(j);
	json_kv_uint(j, "count", s->count);
	json_key(j, "processes");
	json_arr_begin(j);
	for (unsigned int i = 0; i < s->n; i++) {
		json_obj_begin(j);
		json_kv_int(j, "pid", s->pid[i]);
		json_kv_str(j, "role", s->role[i]);
		proc_state(s->pid[i], buf, sizeof(buf));
		json_kv_str(j, "state", buf);
		snprintf(path, sizeof(path), "/proc/%d/wchan", (int)s->pid[i]);
		json_kv_str(j, "wchan", read_text(path, buf, sizeof(buf)) > 0 ? buf : NULL);
		json_key(j, "stack");
		stack_json(j, s->pid[i]);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_key(j, "kernel_log_tail");
	json_arr_begin(j);
	n = s->count ? kmsg_tail(log, STUCK_LOG_LINES) : 0;
	for (int i = 0; i < n; i++)
		json_str(j, log[i]);
	kmsg_tail_free(log, n);
	json_arr_end(j);
	json_obj_end(j);
}
