/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shmdb --attribute (issue 31): where the time of each fault of 10 ms and
 * more went.  Sessions read their run-queue wait around every timed first
 * access (/proc/thread-self/schedstat, outside the timed window) and keep
 * the long faults; the disruptor logs its operations; the coordinator
 * traces lock:contention_begin/end of its descendants in tracefs during
 * the run and joins the lock waits to the faults (lib/attrib.h,
 * lib/locktrace.h).  The document's "attribution" (workloads/SCHEMA.md).
 */
#ifndef SHMDB_ATTRIBUTE_H
#define SHMDB_ATTRIBUTE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "attrib.h"
#include "json.h"

/* Shared by every process (its own mapping, only with --attribute). */
struct attr_shared {
	uint32_t nfaults;               /* claimed; beyond ATTR_MAX_FAULTS: dropped */
	uint32_t nops;
	uint64_t schedstat_reads;       /* by every session (attr_publish) */
	struct attr_fault faults[ATTR_MAX_FAULTS];
	struct attr_op ops[ATTR_MAX_OPS];
};

/* The coordinator's tracing. */
struct attr_trace {
	bool available;                 /* set up, events enabled */
	char error[200];                /* why not */
	uint64_t buffer_kb;             /* per CPU */
	uint64_t lost;                  /* overrun + dropped events, all CPUs */
	uint64_t lines, begins, ends, unpaired_ends, wakes, waits, matched;
	uint64_t unjoined;              /* inside kept faults beyond MAX_PENDING */
	uint64_t addrs_full;            /* lock addresses the table had no room for */
	uint64_t waits_by_lock[LT_NLOCKS];
	char saved_clock[32];
	char saved_kb[32];
	char saved_hash[8];             /* options/hash-ptr */
	char saved_on[8];               /* tracing_on */
	double schedstat_ns;            /* one pread of schedstat (best of 5) */
	double traced_read_ns;          /* the same with the events recorded */
};

struct attr_shared *attr_shared_new(void);

/* Sessions: open the schedstat file once; this thread's time on a CPU and
 * waiting on a run queue so far (0 when unreadable). */
void attr_session_init(void);
void attr_sched(uint64_t *cpu_ns, uint64_t *rq_ns);
void attr_keep(struct attr_shared *a, const struct attr_fault *f);
/* At the session's end: its schedstat reads into the shared count. */
void attr_publish(struct attr_shared *a);

/* The disruptor: op's interval (CLOCK_MONOTONIC) and its op_seq. */
void attr_log_op(struct attr_shared *a, uint32_t op, uint64_t seq,
		 uint64_t start_ns, uint64_t end_ns);

/* The coordinator: before the fork (trace the descendants, events
 * enabled, recording off), recording on and off around the run, then read
 * the trace and join it to the faults (after the processes are reaped). */
void attr_trace_setup(struct attr_trace *t, pid_t self);
/* The cost of one schedstat read, for the overhead (t->schedstat_ns). */
void attr_measure(struct attr_trace *t);
void attr_trace_start(struct attr_trace *t);
void attr_trace_stop(struct attr_trace *t);
void attr_trace_collect(struct attr_trace *t, struct attr_shared *a);

void attr_json(struct json *j, const struct attr_trace *t, const struct attr_shared *a);

#endif
