/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a workload run needs (huge pages, memory, processes) and whether a
 * machine has it: this host (machine_host, before a real run) or a guest
 * shape given to --check ("mem_mib=M,hugepages_2m=N,hugepages_1g=K,vcpus=V",
 * machine_shape).  Pure parsing and arithmetic apart from machine_host.
 */
#ifndef HUGELAB_NEEDS_H
#define HUGELAB_NEEDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Memory a guest keeps for its own kernel and services (shape check). */
#define GUEST_OS_MIB 256
/* Processes a system keeps besides the workload (pid_max check). */
#define SYSTEM_PROCS 1000

struct needs {
	uint64_t hugepages_2m, hugepages_1g;    /* free pages of each size */
	uint64_t mem_mib;       /* ordinary memory: 4 KiB segment, page tables,
				 * per-process costs (not the huge pages) */
	uint64_t processes;     /* at the peak */
};

struct machine_res {
	const char *what;               /* "this machine" / "the guest shape" */
	bool has_2m, has_1g;            /* pool exists (1G: and pdpe1gb) */
	uint64_t hp_free_2m, hp_free_1g;/* usable free pages */
	uint64_t mem_pool_mib;          /* huge page pools (shape only) */
	uint64_t mem_avail_mib;         /* for the run */
	uint64_t pid_max;               /* 0: unknown */
};

/* --guest-shape value; 0 or -1 with one line in err. */
int machine_shape(const char *s, struct machine_res *r, char *err, size_t errlen);
/* This machine: /sys/kernel/mm/hugepages, /proc/meminfo MemAvailable,
 * /proc/cpuinfo pdpe1gb, /proc/sys/kernel/pid_max. */
int machine_host(struct machine_res *r, char *err, size_t errlen);
/* 0 when n fits r, else -1 and one line in err starting with `opts` (the
 * options that decide the needs, e.g. "--size 1G --sessions 3000"). */
int needs_fit(const char *opts, const struct needs *n,
	      const struct machine_res *r, char *err, size_t errlen);
/* {"ok": true, "needs": {...}} on one line (the --check answer). */
void needs_print_ok(const struct needs *n);

#endif
