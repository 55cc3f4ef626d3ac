/* SPDX-License-Identifier: GPL-2.0 */
/* shmdb's result document (report.c): what the coordinator measured, as
 * JSON "hugelab.shmdb/1" (workloads/SCHEMA.md). */
#ifndef SHMDB_REPORT_H
#define SHMDB_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "failures.h"
#include "kmsg.h"
#include "model.h"
#include "procfs.h"
#include "shmdb.h"
#include "stuck.h"

#define MAX_SIZES 8

struct vmpte_sum {
	uint64_t min, max, sum, n;
};

struct results {
	char started[32], finished[32];
	const char *status;
	uint64_t pt_start, pt_before, pt_attached, pt_teardown;
	/* /proc/meminfo MemFree with pt_start (no session yet) and pt_attached */
	uint64_t mem_free_start, mem_free_attached;
	struct vmpte_sum vmpte;
	struct hp_counts hp_after[MAX_SIZES];
	bool hp_returned[MAX_SIZES];
	/* /proc/vmstat at the start, once every session had attached, at the end */
	struct kvlist vm_before, vm_attached, vm_after;
	double prefault_s, attach_s, run_s, stop_s, clock_ns, insert_ns, txn_cost_ns;
	double rusage_ns;               /* one getrusage() call (--count-faults) */
	uint64_t txn_cost_sample;       /* buffer bytes txn_cost_ns measured */
	char clocksource[64];
	char shmem_enabled[32];
	struct model_res model;
	/* filled by the coordinator just before the report */
	int hp_n;                       /* huge page sizes of the machine */
	uint64_t hp_size[MAX_SIZES];
	struct hp_counts hp_before[MAX_SIZES];
	const struct failures *failures;
	const struct stuck *stuck;
	const struct attr_trace *attr_trace;    /* --attribute, else NULL */
};

/* Writes the document to f; true when writing failed. */
bool report_json(FILE *f, const struct cfg *c, const struct seg *s,
		 struct ctl *ctl, struct results *r, struct kmsg_scan *k);

#endif
