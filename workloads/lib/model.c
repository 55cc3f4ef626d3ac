// SPDX-License-Identifier: GPL-2.0
/* Page-table savings model, see model.h. */
#include <stdio.h>
#include <string.h>

#include "model.h"

static uint64_t spans(uint64_t start, uint64_t size, uint64_t unit)
{
	uint64_t first = start / unit, last = (start + (size - 1)) / unit;

	return last - first + 1;
}

int model_compute(const struct model_cfg *c, struct model_res *r)
{
	memset(r, 0, sizeof(*r));
	if (c->size == 0 || c->size > UINT64_MAX - c->start)
		return -1;      /* empty, or the range would wrap past 2^64 */
	if (c->page_size != 4096 && c->page_size != MODEL_PMD_SPAN &&
	    c->page_size != MODEL_SLOT)
		return -1;
	if (c->start % c->page_size || c->size % c->page_size)
		return -1;

	/*
	 * Slot numbers, not addresses: no product can wrap.  Full slots are
	 * [ceil(start / SLOT), floor(end / SLOT)), with end = start + size
	 * computed as last byte + 1 in slot units.
	 */
	uint64_t last = c->start + (c->size - 1);
	uint64_t first_full = c->start / MODEL_SLOT + (c->start % MODEL_SLOT != 0);
	uint64_t end_full = last / MODEL_SLOT + (last % MODEL_SLOT == MODEL_SLOT - 1);

	r->slots = spans(c->start, c->size, MODEL_SLOT);
	r->full_slots = end_full > first_full ? end_full - first_full : 0;
	/* PUD pages: 512 GiB regions spanned, the first one already present */
	r->pud_pages_per_session = spans(c->start, c->size, MODEL_PGD_SPAN) -
				   (c->start < MODEL_PGD_SPAN ? 1 : 0);

	switch (c->page_size) {
	case 4096:
		r->pte_pages_per_session = spans(c->start, c->size, MODEL_PMD_SPAN);
		r->pmd_pages_per_session = r->slots;
		break;
	case MODEL_PMD_SPAN:
		r->shared_slots = c->may_share ? r->full_slots : 0;
		r->pmd_pages_per_session = r->slots - r->shared_slots;
		break;
	default:
		break;          /* 1 GiB pages: PUD entries only */
	}
	r->sharing = r->shared_slots > 0;
	r->pud_counted = c->pud_counted;

	uint64_t own = r->pte_pages_per_session + r->pmd_pages_per_session;

	r->memory_marginal_bytes = (own + r->pud_pages_per_session) * MODEL_PT_PAGE;
	r->marginal_bytes = c->pud_counted ? r->memory_marginal_bytes :
			    own * MODEL_PT_PAGE;
	r->shared_bytes = c->sessions ? r->shared_slots * MODEL_PT_PAGE : 0;
	r->expected_bytes = c->sessions * r->marginal_bytes + r->shared_bytes;
	r->memory_bytes = c->sessions * r->memory_marginal_bytes + r->shared_bytes;
	r->vmpte_bytes = r->memory_marginal_bytes + r->shared_slots * MODEL_PT_PAGE;
	r->per_session_bytes = c->sessions ?
		(double)r->expected_bytes / (double)c->sessions : 0.0;
	return 0;
}

bool model_pud_counted(const char *release)
{
	unsigned int major, minor;

	if (!release || sscanf(release, "%u.%u", &major, &minor) != 2)
		return false;
	return major > 6 || (major == 6 && minor >= 7);
}
