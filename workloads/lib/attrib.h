/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Attribution of long faults (shmdb --attribute, issue 31): the records a
 * session keeps for each fault of at least ATTR_MIN_NS, the disruptor's
 * operation log, and the pure logic that joins them with the lock waits of
 * lib/locktrace.h.  No I/O: tests/test_attrib.c.
 */
#ifndef HUGELAB_ATTRIB_H
#define HUGELAB_ATTRIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "locktrace.h"

#define ATTR_MIN_NS 10000000ull         /* faults kept: 10 ms and longer */
#define ATTR_MAX_FAULTS 2048            /* kept per run; more are counted */
#define ATTR_MAX_OPS 16384              /* disruptor operations logged */
#define ATTR_MAX_WAITS 8                /* waits listed per fault (all summed) */
#define ATTR_SPIN_SITE "(mutex, no stack)"

/*
 * One lock wait inside a fault's window (clipped to it): ns blocked, from
 * its start to the waiter's wakeup (or the end when none was seen), then
 * runnable_ns woken but waiting for a CPU (in the run-queue wait too).
 */
struct attr_wait {
	enum lt_lock lock;
	uint64_t addr;                  /* the lock's address */
	uint64_t start_ns, ns, runnable_ns;
	char site[40];
};

/* A kept fault: what the session recorded, then what the trace adds. */
struct attr_fault {
	/* the session (shared memory, written once) */
	uint32_t session, pid;
	uint64_t start_ns;              /* CLOCK_MONOTONIC */
	uint64_t latency_ns;
	uint64_t runqueue_ns, cpu_ns;   /* schedstat: waiting for a CPU, on one */
	uint64_t op_seq_start, op_seq_end;
	int32_t op;                     /* enum wl_op in progress, -1: none */
	/* the coordinator, from the trace */
	uint64_t lock_ns[LT_NLOCKS];    /* blocked, per lock */
	uint64_t lock_runnable_ns;      /* woken, before the lock was taken */
	uint32_t nwaits;                /* all, listed or not */
	struct attr_wait waits[ATTR_MAX_WAITS];
};

/* One disruptor operation, CLOCK_MONOTONIC; seq: op_seq while it ran (odd). */
struct attr_op {
	uint64_t seq, start_ns, end_ns;
	uint32_t op;
};

/* /proc/.../schedstat: time on a CPU (field 1), waiting on a run queue (2). */
bool schedstat_parse(const char *s, uint64_t *cpu_ns, uint64_t *wait_ns);

/*
 * Add w to f if it overlaps f's window (clipped, split at its wakeup);
 * true if it did.  A mutex wait without a stack (a lockdep kernel's mutex
 * that only spun: its stack is not taken, locktrace.h; 6.1.192 prints its
 * flags as nothing) inside a fault is the fault mutex, the one mutex of
 * the hugetlb fault path.
 */
bool attr_add_wait(struct attr_fault *f, const struct lt_wait *w);

/*
 * Index faults by pid (idx: n entries, sorted by pid then start); then
 * attr_match adds a wait to every fault of its task it overlaps, and
 * returns how many.
 */
void attr_index(const struct attr_fault *f, uint32_t *idx, uint32_t n);
uint32_t attr_match(struct attr_fault *f, const uint32_t *idx, uint32_t n,
		    const struct lt_wait *w);
/* Would attr_match add w to any fault? */
bool attr_overlaps(const struct attr_fault *f, const uint32_t *idx, uint32_t n,
		   const struct lt_wait *w);

/*
 * The locks' addresses: which tasks waited on each, and what a stack
 * named it.  A LT_FAULT_RWSEM wait (an rwsem taken in hugetlb_fault
 * itself) is named by its address: what another wait's stack named it
 * (the punch's i_mmap_lock_write() in hugetlbfs_punch_hole, an
 * out-of-line hugetlb_vma_lock_read()), else i_mmap_rwsem when two or
 * more tasks waited on it (one per file) and the VMA lock when only one
 * did (one per VMA, so per process).
 */
#define ATTR_ADDRS (1u << 14)
struct attr_addr {
	uint64_t addr;          /* 0: free */
	uint32_t pid;           /* the first task that waited on it */
	bool shared;            /* another task did too */
	int named;              /* LT_VMA or LT_IMMAP from a stack, else -1 */
};
struct attr_addrs {
	struct attr_addr a[ATTR_ADDRS];
	uint64_t full;          /* addresses not recorded: table full */
};
void attr_addr_note(struct attr_addrs *t, const struct lt_wait *w);
enum lt_lock attr_addr_lock(const struct attr_addrs *t, const struct lt_wait *w);

/* Does op overlap the window of any of the n faults? */
bool attr_op_wanted(const struct attr_op *op, const struct attr_fault *f, uint32_t n);

#endif
