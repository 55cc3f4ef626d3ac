/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The shared segment of shmdb and forktouch: shmdb's options (struct cfg,
 * segopts.c: parsing, input checks, needs, the model; both programs take
 * them), the segment (segment.c: create, map, the pages a process faults,
 * the prefault helper).  shmdb's sessions, transactions and disruptor are
 * in shmdb/shmdb.h.
 */
#ifndef HUGELAB_SEGMENT_H
#define HUGELAB_SEGMENT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

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
/* Memory besides the segment (segopts.c cfg_needs): measured 150-220 KiB
 * per session with 4 KiB pages (issue 12), rounded up; the coordinator's
 * control area, histograms and bookkeeping. */
#define SESSION_COST_KIB 256
#define COORD_COST_MIB 64
#define NLATCH 4096
/* --disrupt-once keeps the order of the ranges (4 bytes each) */
#define DISRUPT_ONCE_MAX_SLOTS (1u << 22)

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
	bool disrupt_once;              /* each range once, in a random order */
	uint64_t seed;
	uint64_t base;                  /* aligned address */
	const char *hugetlbfs_dir;
	const char *out;
	bool populate;                  /* 4 KiB: sessions MADV_POPULATE_READ (the prefault helper: _WRITE) */
	bool prefault;                  /* helper fills the segment first */
	bool count_faults;              /* tell faulting accesses apart (getrusage) */
	bool attribute;                 /* --attribute: where long faults' time went */
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

/* segopts.c: no side effects (no mapping, fork or file) */
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
struct json;
/*
 * The segment's keys of a program's "config" object (backing, page_size,
 * size, placement, touch, map, touched_pages, sessions), in that order;
 * shmdb and forktouch write them alike (workloads/SCHEMA.md).
 */
void seg_config_json(struct json *j, const struct cfg *c);
/*
 * MADV_POPULATE_READ of [base, base + len) in 2 MiB chunks: 0; -EOPNOTSUPP
 * when the first chunk is refused with EINVAL (a kernel before 5.14 has no
 * MADV_POPULATE_READ: the caller faults the pages itself); else -errno.
 */
int seg_populate_read(char *base, uint64_t len);
uint64_t seg_touch_offset(const struct cfg *c, uint64_t i);

/* Buffers transactions choose from (all, or those of the touched pages). */
uint64_t session_buffers(const struct cfg *c);

/*
 * Fill the segment before the processes start (a member of a lib/fleet.h
 * fleet; the coordinator's pid checked as the parent).
 */
void prefault_main(const struct cfg *c, const struct seg *s, pid_t coordinator)
	__attribute__((noreturn));

#endif
