/* SPDX-License-Identifier: GPL-2.0 */
/* racer: state shared between the parent, the workers and the unsharers. */
#ifndef HUGELAB_RACER_H
#define HUGELAB_RACER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <stdio.h>

#include "hist.h"
#include "needs.h"
#include "ops.h"

/* racer's unshare operations (lib/ops.h numbering) */
#define RACER_OPS ((1u << OP_DONTNEED) | (1u << OP_MPROTECT) | \
		   (1u << OP_MUNMAP) | (1u << OP_PUNCH))

#define MAX_SAMPLES 16
#define RACER_MAX_CHILDREN 1024
#define RACER_MIN_ADDR 0x100000000ull   /* 4 GiB */
#define RACER_MAX_END 0x8000000000ull    /* 512 GiB */
/* Memory besides the huge pages (racer_needs): per process, per thread
 * stack, and the parent (estimates, rounded up generously). */
#define RACER_PROC_COST_KIB 512
#define RACER_THREAD_COST_KIB 8192
#define RACER_PARENT_COST_MIB 32

/* Per huge page control block (shared anonymous memory). */
struct page_ctl {
	pthread_mutex_t lock;       /* serialises writers and punchers */
	_Atomic uint64_t seq;       /* odd while a writer/puncher runs */
	_Atomic uint64_t gen;       /* last committed generation */
	_Atomic uint32_t zero_ok;   /* punched since the last re-tag */
	_Atomic uint32_t punched;   /* ever punched */
};

struct tag_sample {
	uint64_t page, word, found, expect;
	int32_t pid;
	char role[12];
	char check[8];              /* strict / weak / file */
};

struct racer_shared {
	_Atomic int stop;
	_Atomic uint64_t reads, strict_reads, weak_reads, zero_reads;
	_Atomic uint64_t file_words;    /* words compared with pread() */
	_Atomic uint64_t writes, retags_after_punch;
	_Atomic uint64_t tag_errors;
	_Atomic uint64_t ops[NOPS], op_errors[NOPS];
	_Atomic uint32_t nsamples;
	struct tag_sample samples[MAX_SAMPLES];
	char op_error_msg[NOPS][96];
	struct hist op_lat[NOPS];
};

struct racer {
	/* configuration */
	uint64_t size, page_size, addr, ops, seed;
	uint64_t duration_s, procs, threads, write_pct, inject;
	const char *path;           /* hugetlbfs dir, NULL: memfd */
	const char *json;           /* --json, NULL: stdout */
	uint64_t teardown_s;        /* bound of the wait for the children */
	bool check, help;
	const char *guest_shape;
	/* runtime */
	int fd;
	uint64_t npages;
	struct page_ctl *ctl;
	struct racer_shared *sh;
};

/* options.c: no side effects */
void racer_usage(FILE *f);
int racer_parse(int argc, char **argv, struct racer *r, char *err, size_t errlen);
int racer_validate(const struct racer *r, char *err, size_t errlen);
void racer_needs(const struct racer *r, struct needs *n);
void racer_needs_opts(const struct racer *r, char *buf, size_t len);

#endif
