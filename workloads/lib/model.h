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
 * PUD/P4D/PGD pages are not modelled: shmdb places segments in the first
 * 512 GiB, whose PUD page every process already has.
 */
#ifndef HUGELAB_MODEL_H
#define HUGELAB_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#define MODEL_PT_PAGE 4096ull
#define MODEL_SLOT (1ull << 30)
#define MODEL_PMD_SPAN (2ull << 20)

struct model_cfg {
	uint64_t size;          /* bytes, > 0 */
	uint64_t page_size;     /* 4096, 2 MiB or 1 GiB */
	uint64_t start;         /* address (only start mod 1 GiB matters) */
	uint64_t sessions;
	bool may_share;         /* VM_MAYSHARE hugetlb mapping */
};

struct model_res {
	uint64_t slots;                 /* 1 GiB slots touched */
	uint64_t full_slots;            /* of those, completely covered */
	uint64_t shared_slots;          /* slots whose PMD page is shared */
	uint64_t pmd_pages_per_session; /* PMD pages each process owns alone */
	uint64_t pte_pages_per_session;
	uint64_t marginal_bytes;        /* cost of one more session */
	uint64_t shared_bytes;          /* shared PMD pages, paid once */
	uint64_t expected_bytes;        /* all sessions together */
	double per_session_bytes;       /* expected_bytes / sessions */
	bool sharing;
};

/* 0, or -1 for an invalid configuration (size 0, unknown page size, start
 * not aligned to the page size). */
int model_compute(const struct model_cfg *c, struct model_res *r);

#endif
