/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel log scanner: reads /dev/kmsg without blocking from a start point and
 * collects findings (WARNING, BUG, Oops, "Bad page", lockdep reports, RCU
 * stalls, hung tasks, ...) with a few lines of context.
 *
 *   struct kmsg_scan k;
 *   kmsg_open(&k);            // start at the end of the log: only new records
 *   ... run ...
 *   kmsg_poll(&k);            // read everything new (non-blocking)
 *   kmsg_json(&j, &k);        // writes "kernel_log": {...}
 *
 * Records overwritten before they were read (the ring buffer wrapped) are
 * a finding of their own ("kmsg records lost"), counted in k->lost.
 *   kmsg_close(&k);
 *
 * kmsg_feed() takes one message line and is what the unit tests drive.
 */
#ifndef HUGELAB_KMSG_H
#define HUGELAB_KMSG_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "json.h"

#define KMSG_CTX_BEFORE 2
#define KMSG_CTX_AFTER 12
#define KMSG_MAX_EXCERPT 400
#define KMSG_LINE 512

struct kmsg_scan {
	int fd;                   /* -1 when /dev/kmsg is unavailable */
	bool available;
	unsigned int findings;    /* matching lines + losses of records */
	/*
	 * Records overwritten before they were read (read() failed with
	 * EPIPE, or the sequence numbers jumped): at least 1 per loss, the
	 * exact count when the previous record's number is known.
	 */
	unsigned long long lost;
	unsigned long long last_seq;
	bool have_seq, overrun;
	/* read(2), or a fake in the unit tests */
	ssize_t (*read)(int fd, void *buf, size_t len);
	char **excerpt;
	size_t n, cap;
	bool truncated;           /* excerpt hit KMSG_MAX_EXCERPT */
	char ring[KMSG_CTX_BEFORE][KMSG_LINE];
	int ring_n;
	int after_left;
};

/* Name of the pattern msg matches, or NULL. */
const char *kmsg_match(const char *msg);
/* Message text of a /dev/kmsg record "pri,seq,ts,flags;text\n..." (first line). */
const char *kmsg_record_text(const char *rec, size_t *len);

void kmsg_init(struct kmsg_scan *k);
int kmsg_open(struct kmsg_scan *k);          /* 0, or -1 (k stays usable) */
void kmsg_feed(struct kmsg_scan *k, const char *msg);
/* One /dev/kmsg record: counts records lost before it, then kmsg_feed(). */
void kmsg_feed_record(struct kmsg_scan *k, const char *rec);
/* Read every new record (non-blocking); EPIPE: records were lost. */
void kmsg_poll(struct kmsg_scan *k);
/* Writes key "kernel_log": {"available","warnings","lost","truncated","excerpt"}. */
void kmsg_json(struct json *j, const struct kmsg_scan *k);
void kmsg_close(struct kmsg_scan *k);
/*
 * The last n (at most 1000) messages of the whole kernel log, oldest first,
 * into lines[] (strdup'ed, free with kmsg_tail_free); returns the count,
 * 0 when /dev/kmsg cannot be read.  For reports of stuck processes.
 */
int kmsg_tail(char **lines, int n);
void kmsg_tail_free(char **lines, int n);

#endif
