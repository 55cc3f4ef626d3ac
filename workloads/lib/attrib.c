// SPDX-License-Identifier: GPL-2.0
/* Attribution of long faults: the pure joins, see attrib.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attrib.h"

bool schedstat_parse(const char *s, uint64_t *cpu_ns, uint64_t *wait_ns)
{
	unsigned long long run, wait;

	if (sscanf(s, "%llu %llu", &run, &wait) != 2)
		return false;
	*cpu_ns = run;
	*wait_ns = wait;
	return true;
}

static uint64_t clip(uint64_t v, uint64_t lo, uint64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

bool attr_add_wait(struct attr_fault *f, const struct lt_wait *w)
{
	uint64_t end = f->start_ns + f->latency_ns;
	uint64_t b = clip(w->begin_ns, f->start_ns, end);
	uint64_t e = clip(w->end_ns, f->start_ns, end);
	uint64_t k = w->wake_ns >= w->begin_ns && w->wake_ns ? clip(w->wake_ns, b, e) : e;
	/* no stack: a mutex that only spun (LCB_F_MUTEX, printed as
	 * nothing by 6.1.192: flags 0; every other begin gets a stack) */
	bool spin = !w->classified && (!w->flags || (w->flags & LCB_F_MUTEX));
	enum lt_lock lock = spin ? LT_FAULT_MUTEX : w->lock;

	if (w->pid != f->pid || e <= b)
		return false;
	f->lock_ns[lock] += k - b;
	f->lock_runnable_ns += e - k;
	if (f->nwaits < ATTR_MAX_WAITS) {
		struct attr_wait *a = &f->waits[f->nwaits];

		a->lock = lock;
		a->addr = w->addr;
		a->start_ns = b;
		a->ns = k - b;
		a->runnable_ns = e - k;
		snprintf(a->site, sizeof(a->site), "%s",
			 spin ? ATTR_SPIN_SITE : w->site ? w->site : "?");
	}
	f->nwaits++;
	return true;
}

static const struct attr_fault *sort_base;

static int by_pid_start(const void *a, const void *b)
{
	const struct attr_fault *x = &sort_base[*(const uint32_t *)a];
	const struct attr_fault *y = &sort_base[*(const uint32_t *)b];

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

void attr_index(const struct attr_fault *f, uint32_t *idx, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		idx[i] = i;
	sort_base = f;
	qsort(idx, n, sizeof(*idx), by_pid_start);
}

/* The first of idx's faults of w's task (n if none). */
static uint32_t first_of(const struct attr_fault *f, const uint32_t *idx, uint32_t n,
			 uint32_t pid)
{
	uint32_t lo = 0, hi = n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (f[idx[mid]].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

bool attr_overlaps(const struct attr_fault *f, const uint32_t *idx, uint32_t n,
		   const struct lt_wait *w)
{
	for (uint32_t i = first_of(f, idx, n, w->pid); i < n && f[idx[i]].pid == w->pid; i++) {
		const struct attr_fault *x = &f[idx[i]];

		if (w->begin_ns < x->start_ns + x->latency_ns && w->end_ns > x->start_ns)
			return true;
	}
	return false;
}

uint32_t attr_match(struct attr_fault *f, const uint32_t *idx, uint32_t n,
		    const struct lt_wait *w)
{
	uint32_t got = 0;

	for (uint32_t i = first_of(f, idx, n, w->pid); i < n && f[idx[i]].pid == w->pid; i++)
		got += attr_add_wait(&f[idx[i]], w);
	return got;
}

bool attr_op_wanted(const struct attr_op *op, const struct attr_fault *f, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (op->start_ns < f[i].start_ns + f[i].latency_ns && op->end_ns > f[i].start_ns)
			return true;
	return false;
}

/* addr's slot, or the free slot it would take; ATTR_ADDRS: table full. */
static uint32_t addr_index(const struct attr_addrs *t, uint64_t addr)
{
	uint32_t h = (uint32_t)((addr * 0x9E3779B97F4A7C15ull) >> 40);

	for (uint32_t i = 0; i < ATTR_ADDRS; i++) {
		uint32_t k = (h + i) & (ATTR_ADDRS - 1);

		if (t->a[k].addr == addr || !t->a[k].addr)
			return k;
	}
	return ATTR_ADDRS;
}

void attr_addr_note(struct attr_addrs *t, const struct lt_wait *w)
{
	uint32_t k = w->addr ? addr_index(t, w->addr) : ATTR_ADDRS;
	struct attr_addr *a;

	if (k == ATTR_ADDRS) {
		t->full += w->addr != 0;
		return;
	}
	a = &t->a[k];
	if (!a->addr)
		*a = (struct attr_addr){ .addr = w->addr, .pid = w->pid, .named = -1 };
	else if (a->pid != w->pid)
		a->shared = true;
	if (w->lock == LT_VMA || w->lock == LT_IMMAP)
		a->named = (int)w->lock;
}

enum lt_lock attr_addr_lock(const struct attr_addrs *t, const struct lt_wait *w)
{
	uint32_t k = addr_index(t, w->addr);
	const struct attr_addr *a = k < ATTR_ADDRS && t->a[k].addr ? &t->a[k] : NULL;

	if (w->lock != LT_FAULT_RWSEM)
		return w->lock;
	if (a && a->named >= 0)
		return (enum lt_lock)a->named;
	return a && a->shared ? LT_IMMAP : LT_VMA;
}
