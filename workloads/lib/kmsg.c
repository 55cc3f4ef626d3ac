// SPDX-License-Identifier: GPL-2.0
/* Kernel log scanner, see kmsg.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kmsg.h"

static const char *const patterns[] = {
	"WARNING:",                     /* incl. suspicious RCU usage, lockdep */
	"BUG:",                         /* incl. soft lockup, sleeping function */
	"kernel BUG at",
	"Oops",
	"Bad page",
	"general protection fault",
	"Kernel panic",
	"possible circular locking",
	"possible recursive locking",
	"inconsistent lock state",
	"suspicious RCU usage",
	"rcu_sched detected stall",
	"rcu_preempt detected stall",
	"rcu: INFO:",
	"self-detected stall",
	"INFO: task ",                  /* ... blocked for more than N seconds */
	"blocked for more than",
	"KASAN:",
	"UBSAN:",
	"list_add corruption",
	"list_del corruption",
};

const char *kmsg_match(const char *msg)
{
	for (size_t i = 0; i < sizeof(patterns) / sizeof(patterns[0]); i++)
		if (strstr(msg, patterns[i]))
			return patterns[i];
	return NULL;
}

const char *kmsg_record_text(const char *rec, size_t *len)
{
	const char *p = strchr(rec, ';');

	p = p ? p + 1 : rec;
	*len = strcspn(p, "\n");
	return p;
}

void kmsg_init(struct kmsg_scan *k)
{
	memset(k, 0, sizeof(*k));
	k->fd = -1;
	k->read = read;
}

int kmsg_open(struct kmsg_scan *k)
{
	kmsg_init(k);
	k->fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (k->fd < 0)
		return -1;
	if (lseek(k->fd, 0, SEEK_END) < 0) {
		close(k->fd);
		k->fd = -1;
		return -1;
	}
	k->available = true;
	return 0;
}

static void add_line(struct kmsg_scan *k, const char *s)
{
	if (k->n >= KMSG_MAX_EXCERPT) {
		k->truncated = true;
		return;
	}
	if (k->n == k->cap) {
		size_t cap = k->cap ? k->cap * 2 : 32;
		char **nv = realloc(k->excerpt, cap * sizeof(*nv));

		if (!nv)
			return;
		k->excerpt = nv;
		k->cap = cap;
	}
	char *d = strdup(s);

	if (d)
		k->excerpt[k->n++] = d;
}

void kmsg_feed(struct kmsg_scan *k, const char *msg)
{
	if (kmsg_match(msg)) {
		k->findings++;
		if (k->after_left == 0)
			for (int i = 0; i < k->ring_n; i++)
				add_line(k, k->ring[i]);
		k->ring_n = 0;
		add_line(k, msg);
		k->after_left = KMSG_CTX_AFTER;
		return;
	}
	if (k->after_left > 0) {
		add_line(k, msg);
		k->after_left--;
		return;
	}
	if (k->ring_n == KMSG_CTX_BEFORE) {
		memmove(k->ring[0], k->ring[1],
			sizeof(k->ring[0]) * (KMSG_CTX_BEFORE - 1));
		k->ring_n--;
	}
	snprintf(k->ring[k->ring_n++], KMSG_LINE, "%s", msg);
}

/* Records lost before the one numbered seq: a finding of their own. */
static void count_lost(struct kmsg_scan *k, unsigned long long seq, bool known)
{
	bool exact = known && k->have_seq && seq > k->last_seq + 1;
	unsigned long long n = exact ? seq - k->last_seq - 1 : 1;
	char line[128];

	if (!exact && !k->overrun)
		return;
	k->lost += n;
	k->findings++;
	k->overrun = false;
	snprintf(line, sizeof(line), "kmsg records lost: %s%llu overwritten before they were read",
		 exact ? "" : "at least ", n);
	add_line(k, line);
}

void kmsg_feed_record(struct kmsg_scan *k, const char *rec)
{
	char line[KMSG_LINE], *end = NULL;
	const char *c = strchr(rec, ',');
	unsigned long long seq = c ? strtoull(c + 1, &end, 10) : 0;
	bool known = c && end != c + 1 && *end == ',';
	size_t len;
	const char *t = kmsg_record_text(rec, &len);

	count_lost(k, seq, known);
	if (known) {
		k->last_seq = seq;
		k->have_seq = true;
	}
	if (len >= sizeof(line))
		len = sizeof(line) - 1;
	memcpy(line, t, len);
	line[len] = 0;
	kmsg_feed(k, line);
}

void kmsg_poll(struct kmsg_scan *k)
{
	char rec[8192];

	if (k->fd < 0)
		return;
	for (;;) {
		ssize_t n = k->read(k->fd, rec, sizeof(rec) - 1);

		if (n < 0 && errno == EPIPE) {
			k->overrun = true;      /* records overwritten */
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;          /* EAGAIN: nothing new */
		rec[n] = 0;
		kmsg_feed_record(k, rec);
	}
	if (k->overrun)                 /* nothing readable after the loss */
		count_lost(k, 0, false);
}

void kmsg_json(struct json *j, const struct kmsg_scan *k)
{
	json_key(j, "kernel_log");
	json_obj_begin(j);
	json_kv_bool(j, "available", k->available);
	json_kv_uint(j, "warnings", k->findings);
	json_kv_uint(j, "lost", k->lost);
	json_kv_bool(j, "truncated", k->truncated);
	json_key(j, "excerpt");
	json_arr_begin(j);
	for (size_t i = 0; i < k->n; i++)
		json_str(j, k->excerpt[i]);
	json_arr_end(j);
	json_obj_end(j);
}

void kmsg_close(struct kmsg_scan *k)
{
	if (k->fd >= 0)
		close(k->fd);
	for (size_t i = 0; i < k->n; i++)
		free(k->excerpt[i]);
	free(k->excerpt);
	kmsg_init(k);
}

int kmsg_tail(char **lines, int n)
{
	char rec[8192];
	int fd, count = 0, head = 0;

	if (n <= 0 || n > 1000)
		return 0;
	fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return 0;
	for (;;) {
		ssize_t r = read(fd, rec, sizeof(rec) - 1);
		size_t len;
		const char *t;
		char *d;

		if (r < 0 && (errno == EPIPE || errno == EINTR))
			continue;
		if (r <= 0)
			break;
		rec[r] = 0;
		t = kmsg_record_text(rec, &len);
		d = strndup(t, len);
		if (!d)
			break;
		if (count < n) {
			lines[count++] = d;
		} else {                /* ring: drop the oldest */
			free(lines[head]);
			lines[head] = d;
			head = (head + 1) % n;
		}
	}
	close(fd);
	if (head) {                     /* rotate into order, oldest first */
		char *tmp[1000];

		for (int i = 0; i < n; i++)
			tmp[i] = lines[(head + i) % n];
		memcpy(lines, tmp, (size_t)n * sizeof(*lines));
	}
	return count;
}

void kmsg_tail_free(char **lines, int n)
{
	for (int i = 0; i < n; i++)
		free(lines[i]);
}
