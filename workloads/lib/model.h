/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Page-table savings model (x86_64, 4-level paging, 4 KiB table pages).
 *
 * For one mapping of `size` bytes starting at address `start`, mapped by
 * `sessions` processes, per process:
 *   4 KiB pages: one PTE page per 2 MiB region touched, plus one PMD page per
 *                1 GiB slot touched (no PMD sharing for non-hugetlb memory).
 *   2 MiB pages: one PMD page per 1 GiB slot touched.  A slot the mapping
 *                covers completely is shared when the mapping may share
 *                (VM_MAYSHARE): one PMD page for all processes.  A partially
 *                covered slot is never shared.
 *   1 GiB pages: mapped at PUD level: no PMD/PTE pages.
 *   Every page size: one PUD page per 512 GiB region (PGD entry) the
 *                mapping spans, except the first 512 GiB, whose PUD page
 *                every process already has (its program text and heap are
 *                there).  PUD pages are never shared.  A 1 TiB mapping at a
 *                512 GiB-aligned address spans 2 regions; skewed by 2 MiB it
 *                straddles into a third.  Callers keep mappings below the
 *                process's mmap area and stack (shmdb: below 32 TiB), so no
 *                other mapping shares those PUD pages.
 * "Touched" means every 1 GiB slot the mapping spans has at least one
 * faulted page (a full touch, or shmdb --touch sparse: one 2 MiB page per
 * slot), so sparse and full touching have the same page tables.
 *
 * Accounting: /proc/meminfo PageTables counts PTE and PMD pages (their
 * constructors add NR_PAGETABLE); in 6.1 a PUD page has no constructor and
 * is not counted there, while /proc/PID/status VmPTE (mm->pgtables_bytes)
 * counts it (mm_inc_nr_puds).  `pud_counted` says whether the kernel's
 * PageTables includes PUD pages; memory figures always include them.
 */
#ifndef HUGELAB_MODEL_H
#define HUGELAB_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#define MODEL_PT_PAGE 4096ull
#define MODEL_SLOT (1ull << 30)
#define MODEL_PMD_SPAN (2ull << 20)
#define MODEL_PGD_SPAN (512ull << 30)   /* one PUD page maps 512 GiB */

struct model_cfg {
	uint64_t size;          /* bytes, > 0 */
	uint64_t page_size;     /* 4096, 2 MiB or 1 GiB */
	uint64_t start;         /* address */
	uint64_t sessions;
	bool may_share;         /* VM_MAYSHARE hugetlb mapping */
	bool pud_counted;       /* PageTables counts PUD pages (model_pud_counted) */
};

struct model_res {
	uint64_t slots;                 /* 1 GiB slots touched */
	uint64_t full_slots;            /* of those, completely covered */
	uint64_t shared_slots;          /* slots whose PMD page is shared */
	uint64_t pmd_pages_per_session; /* PMD pages each process owns alone */
	uint64_t pte_pages_per_session;
	uint64_t pud_pages_per_session; /* new PUD pages, never shared */
	uint64_t marginal_bytes;        /* PageTables cost of one more session */
	uint64_t shared_bytes;          /* shared PMD pages, paid once */
	uint64_t expected_bytes;        /* PageTables, all sessions together */
	double per_session_bytes;       /* expected_bytes / sessions */
	uint64_t memory_marginal_bytes; /* memory of one more session's tables
					 * (PUD pages included) */
	uint64_t memory_bytes;          /* memory of all sessions' tables */
	uint64_t vmpte_bytes;           /* VmPTE one session gets for the mapping:
					 * shared PMD pages and PUD pages included */
	bool pud_counted;               /* as configured */
	bool sharing;
};

/* 0, or -1 for an invalid configuration (size 0, unknown page size, start
 * not aligned to the page size, a range that wraps past 2^64). */
int model_compute(const struct model_cfg *c, struct model_res *r);

/* Whether a kernel release ("6.1.0-57-amd64", uname -r) counts PUD pages
 * in /proc/meminfo PageTables: from 6.7 (pagetable_pud_ctor, commit
 * 55d2a0bd5ead "mm: add statistics for PUD level pagetable"); false for an
 * unreadable release. */
bool model_pud_counted(const char *release);

#endif
