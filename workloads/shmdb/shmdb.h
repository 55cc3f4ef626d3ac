/* SPDX-License-Identifier: GPL-2.0 */
/* shmdb: database-like sessions on one shared segment, plus a disruptor. */
#ifndef SHMDB_H
#define SHMDB_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <stdio.h>

#include "dbbuf.h"
#include "fleet.h"
#include "hist.h"
#include "model.h"
#include "needs.h"
#include "ops.h"

enum backing { B_SHM, B_HUGETLBFS, B_MEMFD, B_ANON };
enum attach_mode { A_FORK, A_ATTACH };

extern const char *const backing_names[];
extern const char *const attach_names[];
extern const char *const placement_names[];
extern const char *const touch_names[];
extern const char *const map_names[];

#define DEFAULT_BASE 0x2000000000ull    /* 128 GiB: first 512 GiB PUD range */
#define MIN_BASE 0x100000000ull         /* 4 GiB: clear of the program and heap */
/*
 * 32 TiB: x86_64 user space is 128 TiB (47 bits); the top-down mmap area
 * and the stack sit just below 128 TiB (at most 1 TiB lower with mmap
 * ASLR), the legacy bottom-up layout starts at TASK_SIZE / 3 (42.7 TiB).
 * Below 32 TiB nothing else of the process shares the segment's PUD pages
 * but the program in the first 512 GiB (lib/model.h), and a 1 TiB segment
 * fits with room to spare.
 */
#define MAX_END 0x200000000000ull
/* Memory besides the segment (options.c cfg_needs): measured 150-220 KiB
 * per session with 4 KiB pages (issue 12), rounded up; the coordinator's
 * control area, histograms and bookkeeping. */
#define SESSION_COST_KIB 256
#define COORD_COST_MIB 64
#define NLATCH 4096

struct cfg {
	enum backing backing;
	uint64_t page_size;
	uint64_t size;
	int skewed;
	int sparse;                     /* --touch sparse: one page per 1 GiB slot */
	int priv;                       /* --map private: MAP_PRIVATE, no PMD sharing */
	uint64_t sessions;
	uint64_t active;                /* sessions running transactions, 0: all */
	enum attach_mode attach;
	uint64_t duration_ms;           /* 0: until txn_count */
	uint64_t txn_count;             /* per session, 0: until duration */
	uint64_t write_pct;
	uint64_t buffer_size;
	uint64_t disrupt;               /* mask of enum op */
	uint64_t disrupt_interval_ms;
	uint64_t disrupt_len;
	uint64_t seed;
	uint64_t base;                  /* aligned address */
	const char *hugetlbfs_dir;
	const char *out;
	bool populate;                  /* 4 KiB: sessions MADV_POPULATE_READ (the prefault helper: _WRITE) */
	bool prefault;                  /* helper fills the segment first */
	bool count_faults;              /* tell faulting accesses apart (getrusage) */
	bool quiet;
	bool duration_set;              /* --duration or --duration-ms given */
	uint64_t teardown_timeout_s;    /* bound of every teardown wait */
	bool check;                     /* --check: validate, print needs */
	const char *guest_shape;        /* --check --guest-shape */
	bool help;
};

/* The segment as created by the coordinator. */
struct seg {
	int fd;                 /* hugetlbfs/memfd file, else -1 */
	int shmid;              /* SysV id, else -1 */
	char *addr;             /* where sessions map it */
	char *coord_addr;       /* coordinator's own mapping */
	char hugetlbfs_dir[256];/* directory used (hugetlbfs backing) */
	bool private_mount;     /* we mounted (and detached) it ourselves */
};

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
};

/* options.c: no side effects (no mapping, fork or file) */
void cfg_usage(FILE *f);
void cfg_defaults(struct cfg *c);
/* 0, or -1 with one line (no program name) in err. */
int cfg_parse(int argc, char **argv, struct cfg *c, char *err, size_t errlen);
int cfg_validate(struct cfg *c, char *err, size_t errlen);
/* The model for this segment; pud_counted: PageTables counts PUD pages
 * (model_pud_counted of the running kernel; true for memory needs). */
void cfg_model(const struct cfg *c, uint64_t sessions, bool pud_counted,
	       struct model_res *m);
void cfg_needs(const struct cfg *c, struct needs *n);
/* The options that decide the needs, for messages. */
void cfg_needs_opts(const struct cfg *c, char *buf, size_t len);

/* segment.c */
int seg_create(const struct cfg *c, struct seg *s, char *err, size_t errlen);
/* Map (or shmat) the segment at `at` in the calling process. */
char *seg_map_at(const struct cfg *c, const struct seg *s, char *at);
/* A MAP_SHARED mapping anywhere, even with --map private (the prefault
 * helper fills the file's page cache through it). */
char *seg_map_shared(const struct cfg *c, const struct seg *s);
int seg_unmap(const struct cfg *c, char *p);
void seg_destroy(const struct cfg *c, struct seg *s);
bool seg_file_backed(const struct cfg *c);
/*
 * The pages a session faults: all of them, or with --touch sparse the first
 * page of the segment in every 1 GiB slot of the address range it spans
 * (so every slot gets its page tables: the footprint of a fully touched
 * segment).  seg_touch_offset(c, i) is the i-th page's offset in the
 * segment, i < seg_touch_pages(c).  Pure arithmetic on the configuration.
 */
uint64_t seg_touch_pages(const struct cfg *c);
/*
 * MADV_POPULATE_READ of [base, base + len) in 2 MiB chunks: 0; -EOPNOTSUPP
 * when the first chunk is refused with EINVAL (a kernel before 5.14 has no
 * MADV_POPULATE_READ: the caller faults the pages itself); else -errno.
 */
int seg_populate_read(char *base, uint64_t len);
uint64_t seg_touch_offset(const struct cfg *c, uint64_t i);

/* session.c */
/* Buffers transactions choose from (all, or those of the touched pages). */
uint64_t session_buffers(const struct cfg *c);
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

void prefault_main(const struct cfg *c, const struct seg *s, const struct ctl *ctl)
	__attribute__((noreturn));

/* disrupt.c */
void disrupt_main(const struct cfg *c, const struct seg *s, struct ctl *ctl)
	__attribute__((noreturn));

#endif
