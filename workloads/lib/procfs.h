/* SPDX-License-Identifier: GPL-2.0 */
/*
 * /proc and /sys parsers.  Every parser takes a FILE* (or a directory root)
 * so unit tests can feed fixture text; the *_read() helpers open the real file.
 */
#ifndef HUGELAB_PROCFS_H
#define HUGELAB_PROCFS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "json.h"

/* A "name value" list: /proc/meminfo (kB converted to bytes) or /proc/vmstat. */
struct kv {
	char name[64];
	uint64_t val;
};

struct kvlist {
	size_t n, cap;
	struct kv *v;
};

void kvlist_free(struct kvlist *l);
/* Returns 0, or -1 on a malformed line / allocation failure. */
int meminfo_parse(FILE *f, struct kvlist *l);     /* "Name:  123 kB" */
int vmstat_parse(FILE *f, struct kvlist *l);      /* "name 123" */
int meminfo_read(struct kvlist *l);               /* /proc/meminfo */
/* One /proc/meminfo field (e.g. "MemFree", kB as read); 0 if unreadable. */
uint64_t meminfo_once(const char *key);
int vmstat_read(struct kvlist *l);                /* /proc/vmstat */
/* Value of name; 0 and *found=false when absent (found may be NULL). */
uint64_t kv_get(const struct kvlist *l, const char *name, bool *found);

/*
 * Writes an object of counters of `after` that differ from `before` (value
 * after - before, signed), plus every key containing "htlb" or "hugetlb" or
 * starting with "thp" even when unchanged.  A key absent before counts as 0.
 */
void vmstat_delta_json(struct json *j, const struct kvlist *before,
		       const struct kvlist *after);

/* VmPTE of /proc/PID/status in bytes; -1 if absent. */
int64_t status_vmpte_parse(FILE *f);
int64_t status_vmpte_read(pid_t pid);

/* true if `flag` is in the first "flags" line of /proc/cpuinfo text. */
bool cpuinfo_has_flag(FILE *f, const char *flag);
bool cpu_has_flag(const char *flag);              /* /proc/cpuinfo */

/* Huge page pool counters of one size under ROOT (/sys/kernel/mm/hugepages). */
#define HP_SYSFS "/sys/kernel/mm/hugepages"
struct hp_counts {
	uint64_t nr, free, rsvd, surp;
};

/* "hugepages-2048kB" -> 2097152; 0 if the name does not match. */
uint64_t hp_dirname_size(const char *name);
/* Fills sizes (ascending) with at most max entries; returns count or -1. */
int hp_sizes(const char *root, uint64_t *sizes, int max);
/* 0, or -1 if this size has no directory (no pool support). */
int hp_read(const char *root, uint64_t size, struct hp_counts *c);
/* Write key k as {"free","nr","rsvd","surp"} (workloads/SCHEMA.md). */
void hp_counts_json(struct json *j, const char *k, const struct hp_counts *c);
/* {"<size>": {"nr","free","rsvd","surp"}, ...} for every size under root */
void hp_json(struct json *j, const char *root);
/*
 * Key "hugepages": {"<size>": {"before": {...}, "after": {...},
 * "returned": bool}, ...} for the n sizes of a run (workloads/SCHEMA.md).
 */
void hp_run_json(struct json *j, int n, const uint64_t *size,
		 const struct hp_counts *before, const struct hp_counts *after,
		 const bool *returned);

/*
 * Reads a small text file into buf (NUL-terminated, trailing newline removed).
 * Returns length, or -1 when the file cannot be read.
 */
ssize_t read_text(const char *path, char *buf, size_t size);

/*
 * Why a fork may have failed with EAGAIN: " (cgroup PATH: pids.current N,
 * pids.max M)" for the caller's cgroup v2 pids controller, read from
 * proc_cgroup text (/proc/self/cgroup) and files under cgroot
 * (/sys/fs/cgroup); "" when there is nothing to say.
 */
void pids_limit_describe(FILE *proc_cgroup, const char *cgroot, char *buf,
			 size_t size);
void pids_limit_read(char *buf, size_t size);

/* "[vma] i_mmap" style or plain "vma": the selected word; NULL if none. */
const char *sysfs_selected_word(char *text);

/*
 * The common envelope objects of workloads/SCHEMA.md:
 *   "kernel": {release, version, cmdline, hugetlb_fault_lock}
 *   "machine": {cpus, mem_total, hugepages}
 * Each writes key and object.
 */
/* The patched kernel's hugetlb_fault_lock= mode (read-only module parameter) */
#define HUGETLB_FAULT_LOCK_PATH "/sys/module/hugetlb/parameters/fault_lock"
void envelope_kernel_json(struct json *j);
void envelope_machine_json(struct json *j);
/* Current UTC time as ISO 8601 ("2026-12-03T05:07:56Z") into buf[32]. */
void utc_now_iso(char *buf, size_t size);

#endif
