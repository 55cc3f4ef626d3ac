/* SPDX-License-Identifier: GPL-2.0 */
/* shmdb: database-like sessions on one shared segment, plus a disruptor. */
#ifndef SHMDB_H
#define SHMDB_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <stdio.h>

#include "attribute.h"
#include "dbbuf.h"
#include "fleet.h"
#include "hist.h"
#include "model.h"
#include "needs.h"
#include "ops.h"
#include "segment.h"

/* The sessions' phases (lib/fleet.h: ctl->fleet holds the phase word and
 * the arrivals; the coordinator's abort is FLEET_ABORT). */
enum phase { PH_INIT, PH_ATTACH, PH_RUN, PH_DONE };

/* Control mapping shared by all processes (never disrupted). */
struct ctl {
	pid_t coordinator;              /* sessions exit if it is gone */
	struct fleet_shared *fleet;     /* phase and arrivals (lib/fleet.h) */
	uint32_t stop;
	uint32_t disruptor_ready;        /* futex: mapped and faulted */
	uint64_t op_seq;                /* odd while a disruptor op runs */
	uint64_t loss_seq;              /* odd while punch/truncate runs */
	uint32_t op_cur;
	uint64_t attach_start_ns;
	uint64_t deadline_ns;           /* fast_ns() end of the run, 0: none */

	struct hist attach;             /* per session attach+fault time */
	struct hist attach_cpu;         /* the same window's CPU time */
	struct hist first_touch;        /* per page (or populate chunk) */
	struct hist txn;
	struct hist access;             /* first access to a txn's buffer */
	struct hist faulting;           /* first accesses that faulted (--count-faults) */
	struct hist dis_faulting[NOPS];
	struct hist dis_txn[NOPS];
	struct hist dis_access[NOPS];
	struct hist op_dur[NOPS];
	uint64_t op_count[NOPS];
	uint64_t op_errors;
	char op_error_msg[256];

	uint64_t txns, reads, writes, resets, retries, sigbus;
	uint64_t verify_errors;
	uint32_t verify_msg_taken;
	char verify_msg[256];
	uint64_t session_errors;
	char session_msg[256];
	uint64_t sessions_done;
	uint64_t populate_used;         /* sessions that used MADV_POPULATE_READ */

	uint32_t latch[NLATCH];
	/*
	 * Version last committed to each buffer transactions use (indexed
	 * like session_buffers(); low 32 bits, 0: never written), stored by
	 * writers under the buffer's latch; a separate shared mapping of
	 * session_buffers() entries made before the fork.
	 */
	uint32_t *committed;
	struct attr_shared *attr;       /* --attribute (attribute.h), else NULL */
};

/* session.c */
/*
 * Verify buffer idx (slot: its entry in ctl->committed) under its latch.
 * DBBUF_BAD: corrupt, or a self-consistent version other than the one
 * committed (a stale view, a lost write), or all-zero although a version
 * was committed and no punch or truncate has run; why in msg.
 */
enum dbbuf_state session_verify(const struct ctl *ctl, const volatile uint64_t *w,
				size_t nw, uint64_t idx, uint64_t slot,
				uint64_t *ver, char *msg, size_t len);
void session_main(const struct cfg *c, const struct seg *s, struct ctl *ctl,
		  unsigned int id) __attribute__((noreturn));

/* disrupt.c */
void disrupt_main(const struct cfg *c, const struct seg *s, struct ctl *ctl)
	__attribute__((noreturn));

#endif
