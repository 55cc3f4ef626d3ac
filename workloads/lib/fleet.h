/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A fleet of child processes and its whole life: fork, readiness barrier,
 * abort, bounded waits, SIGKILL, reap with classification, the stuck list.
 * shmdb, racer and forktouch run their processes through it (tests:
 * tests/test_fleet.c).
 *
 * Parent                                  Member (fleet_spawn's fn)
 *   fleet_init(&f, cap, &failures, &stuck, &got_signal)
 *   fleet_spawn(&f, "session", fn, arg)    fleet_arrive(sh, idx, PH)
 *   fleet_wait(&f, PH, n, deadline, "get ready")
 *   fleet_release(&f, PH2)                 if (!fleet_await(sh, PH2)) _exit(FLEET_EXIT_ABORT)
 *   ... fleet_abort(&f) on a failure or signal: members waiting in
 *       fleet_await exit FLEET_EXIT_ABORT at once
 *   fleet_wait_exit(&f, deadline)          _exit(0)
 *   fleet_stop(&f, deadline, "...")        SIGKILL the rest, list the stuck
 *
 * Every wait has a deadline (or ends with a signal or a failure) and names
 * what did not arrive.  A member reaped before it arrived where the fleet
 * waits "died early" (a failure naming the phase), never "stuck"; stuck is
 * only a process still there after SIGKILL and the deadline.  After
 * fleet_abort a member's exit FLEET_EXIT_ABORT or death by SIGKILL is the
 * abort's consequence: counted in n_aborted, not listed as a failure.
 */
#ifndef HUGELAB_FLEET_H
#define HUGELAB_FLEET_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "failures.h"
#include "stuck.h"

#define FLEET_NPH 8             /* phases 0..7 */
#define FLEET_ABORT 0xffu       /* the phase word after fleet_abort */
#define FLEET_EXIT_ABORT 5      /* a member's exit status: it saw the abort */
#define FLEET_ROLE 16

/* Memory shared with the members (one MAP_SHARED mapping). */
struct fleet_shared {
	uint32_t phase;                 /* futex: highest released phase */
	uint32_t arrived[FLEET_NPH];    /* futex: members arrived per phase */
	uint32_t expect[FLEET_NPH];     /* what fleet_wait waits for (0: not yet) */
	uint8_t mark[];                 /* per member: highest phase arrived + 1 */
};

enum fleet_end {
	FLEET_RUNNING,          /* not reaped (yet) */
	FLEET_OK,               /* exit 0 */
	FLEET_EXITED,           /* exit status != 0 */
	FLEET_SIGNALED,         /* killed by a signal */
	FLEET_ABORTED,          /* FLEET_EXIT_ABORT or SIGKILL after fleet_abort */
	FLEET_STUCK,            /* still there after fleet_stop's deadline */
};

struct fleet_member {
	pid_t pid;
	int status;             /* waitpid status once reaped */
	enum fleet_end end;
	bool early;             /* reaped before arriving where the fleet waited */
	bool spared;            /* test hook: never SIGKILLed (a task stuck in the kernel) */
	char role[FLEET_ROLE];
};

struct fleet {
	struct fleet_member *m;
	uint32_t n, cap, nreaped;
	struct fleet_shared *sh;
	size_t sh_len;
	pid_t parent;
	struct failures *failures;
	struct stuck *stuck;
	volatile sig_atomic_t *got_signal;
	bool aborting;
	uint64_t n_aborted;             /* members ended by the abort */
	int waiting_ph;                 /* phase fleet_wait waits for, -1: none */
	uint32_t waiting_n;             /* for members 0 .. waiting_n - 1 */
	const char *waiting_for;        /* its description ("attach") */
	uint32_t *by_pid;               /* member indices sorted by pid (fleet_seal) */
	uint64_t stall_ns;              /* fleet_wait also times out after this long
					 * without an arrival, counted from the first
					 * (0: only its deadline) */
};

/* 0, or -errno.  cap members at most. */
int fleet_init(struct fleet *f, uint32_t cap, struct failures *fl,
	       struct stuck *st, volatile sig_atomic_t *got_signal);
void fleet_free(struct fleet *f);

/*
 * Fork member f->n running fn(arg, idx) (fn should _exit; returning exits 2).
 * The member dies with the parent (PR_SET_PDEATHSIG), ignores SIGINT and
 * SIGHUP (the parent's to handle) and takes SIGTERM's default.  Returns the
 * pid, or -1 with a failure naming the role, index and errno (with the
 * pids limit on EAGAIN).
 */
typedef void (*fleet_fn)(void *arg, uint32_t idx);
pid_t fleet_spawn(struct fleet *f, const char *role, fleet_fn fn, void *arg);
/* Every member is forked: pid lookups by binary search from now on. */
void fleet_seal(struct fleet *f);
/* Test hook: the parent never SIGKILLs member idx. */
void fleet_spare(struct fleet *f, uint32_t idx);
int fleet_index(const struct fleet *f, pid_t pid);

/* Reap exited members (WNOHANG), classify, record failures; the number reaped. */
int fleet_reap(struct fleet *f);

enum fleet_wait_res { FLEET_ARRIVED, FLEET_INTERRUPTED, FLEET_TIMEOUT };
/*
 * Until n members (0 .. n - 1) arrived at phase ph (f->stall_ns: or, once one arrived,
 * no other for that long: thousands of members that all start at once may
 * all arrive late, but not one by one with long gaps).  FLEET_INTERRUPTED: a signal, a
 * failure, or a member died before arriving (a failure: "<role> <idx> (pid
 * P) died before it could <what>: exited with status S").  FLEET_TIMEOUT
 * (deadline_ns, now_ns() clock; 0: none): a failure naming the members
 * that did not arrive, unless what is NULL (a run's planned end).  Reaps
 * while it waits.
 */
enum fleet_wait_res fleet_wait(struct fleet *f, int ph, uint32_t n,
			       uint64_t deadline_ns, const char *what);
/* Until every member is reaped (FLEET_ARRIVED), a signal, or the deadline
 * (0: none); records no failure of its own. */
enum fleet_wait_res fleet_wait_gone(struct fleet *f, uint64_t deadline_ns);
/*
 * One member run to its end (a helper such as shmdb's prefault): 0 when it
 * exited 0; -1 when it failed (a failure names it), could not be forked, or
 * a signal came first: then it is SIGKILLed and, still there stop_ns later,
 * stuck.
 */
int fleet_run_one(struct fleet *f, const char *role, fleet_fn fn, void *arg,
		  uint64_t stop_ns);
/* Members waiting in fleet_await(ph) or below go on. */
void fleet_release(struct fleet *f, uint32_t ph);
/* End the run: members waiting in fleet_await return false. */
void fleet_abort(struct fleet *f);

/* Reap until every member is gone (true) or the deadline passes. */
bool fleet_wait_exit(struct fleet *f, uint64_t deadline_ns);
/*
 * SIGKILL every member still there (not the spared), reap until deadline_ns;
 * those left are stuck: stuck_add with their role, one failure "N processes
 * still there <when> (see stuck)".  Returns the number stuck.
 */
uint32_t fleet_stop(struct fleet *f, uint64_t deadline_ns, const char *when);

/* "exit status 3" / "killed by signal 9 (Killed)" */
void fleet_describe(int status, char *buf, size_t len);

/*
 * Readings after the members are gone.  fleet_meminfo_settled: a
 * /proc/meminfo field (kB figures in bytes, as kv_get) once three readings
 * 50 ms apart agree, at most 3 s (page tables of exited processes are freed
 * after an RCU grace period, slow under TCG); 0 if unreadable.
 * fleet_hp_wait: re-read every pool size[i] until nr, free, rsvd and surp
 * equal before[i] (freeing can lag the last unmap), at most timeout_ms;
 * after[i] and returned[i] filled; true when every pool is back.
 */
uint64_t fleet_meminfo_settled(const char *key);
struct hp_counts;
bool fleet_hp_wait(const char *root, int n, const uint64_t *size,
		   const struct hp_counts *before, struct hp_counts *after,
		   bool *returned, unsigned int timeout_ms);

/* Member side. */
void fleet_arrive(struct fleet_shared *sh, uint32_t idx, int ph);
/* Wait for phase ph released; false: the parent aborted. */
bool fleet_await(struct fleet_shared *sh, uint32_t ph);
/* As fleet_await, at most timeout_ms; -1: not released yet. */
int fleet_await_ms(struct fleet_shared *sh, uint32_t ph, long timeout_ms);

#endif
