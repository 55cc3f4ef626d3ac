// SPDX-License-Identifier: GPL-2.0
/*
 * racer pages: map the file, lock, re-tag and check one huge page (tags:
 * tag.h), shared by the workers and the unsharers (page.h).
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "page.h"
#include "tag.h"

#define MAX_WORDS 512u
#define FILE_WORDS 4u

static unsigned int page_words(const struct racer *r)
{
	uint64_t n = r->page_size / TAG_BLOCK;

	return n < MAX_WORDS ? (unsigned int)n : MAX_WORDS;
}

static uint64_t page_stride(const struct racer *r)
{
	return r->page_size / page_words(r);
}

int map_whole(const struct racer *r, bool noreplace)
{
	int flags = MAP_SHARED | (noreplace ? MAP_FIXED_NOREPLACE : MAP_FIXED);
	void *p = mmap((void *)(uintptr_t)r->addr, r->size,
		       PROT_READ | PROT_WRITE, flags, r->fd, 0);

	if (p == MAP_FAILED)
		return -errno;
	if ((uintptr_t)p != r->addr) {
		munmap(p, r->size);
		return -EEXIST;
	}
	return 0;
}

bool page_lock(const struct racer *r, uint64_t i)
{
	while (pthread_mutex_trylock(&r->ctl[i].lock)) {
		if (atomic_load(&r->sh->stop))
			return false;
		sched_yield();
	}
	return true;
}

void page_unlock(const struct racer *r, uint64_t i)
{
	pthread_mutex_unlock(&r->ctl[i].lock);
}

void page_write(const struct racer *r, uint64_t i, bool after_punch)
{
	struct page_ctl *c = &r->ctl[i];
	volatile uint64_t *p = (volatile uint64_t *)(uintptr_t)(r->addr + i * r->page_size);
	unsigned int n = page_words(r);
	uint64_t stride = page_stride(r), off = i * r->page_size, g;

	if (!page_lock(r, i))
		return;
	atomic_fetch_add(&c->seq, 1);
	g = (atomic_load(&c->gen) + 1) & TAG_GEN_MASK;
	for (unsigned int k = 0; k < n; k++)
		p[k * stride / 8] = tag_make(off + k * stride, g);
	atomic_store(&c->gen, g);
	atomic_store(&c->zero_ok, 0);
	atomic_fetch_add(&c->seq, 1);
	page_unlock(r, i);
	atomic_fetch_add(&r->sh->writes, 1);
	if (after_punch)
		atomic_fetch_add(&r->sh->retags_after_punch, 1);
}

/*
 * Self-test of the checker (--inject-errors): under the page lock, put the
 * previous generation's tag into one block, as a lost write would, then
 * check the page while still holding the lock (a stable window, so the
 * strict check must report it), and repair it.
 */
void page_inject_stale(const struct racer *r, uint64_t i)
{
	struct page_ctl *c = &r->ctl[i];
	volatile uint64_t *p = (volatile uint64_t *)(uintptr_t)(r->addr + i * r->page_size);
	uint64_t stride = page_stride(r), off = i * r->page_size;
	unsigned int k = page_words(r) / 2;
	uint64_t g = atomic_load(&c->gen);

	if (!page_lock(r, i))
		return;
	p[k * stride / 8] = tag_make(off + k * stride, g - 1);
	page_check(r, i, "inject");
	p[k * stride / 8] = tag_make(off + k * stride, g);
	page_unlock(r, i);
}

static void record_error(const struct racer *r, uint64_t i, unsigned int k,
			 uint64_t found, uint64_t expect, const char *role,
			 const char *check)
{
	struct racer_shared *sh = r->sh;
	uint32_t s;

	atomic_fetch_add(&sh->tag_errors, 1);
	s = atomic_fetch_add(&sh->nsamples, 1);
	if (s >= MAX_SAMPLES)
		return;
	sh->samples[s] = (struct tag_sample){
		.page = i, .word = k, .found = found, .expect = expect,
		.pid = getpid(),
	};
	snprintf(sh->samples[s].role, sizeof(sh->samples[s].role), "%s", role);
	snprintf(sh->samples[s].check, sizeof(sh->samples[s].check), "%s", check);
}

/*
 * pread FILE_WORDS words of page i (the first, the last and spread between)
 * into f[], their word indexes into fk[]; returns how many were read.
 */
static unsigned int file_words(const struct racer *r, uint64_t i, uint64_t off,
			       uint64_t stride, unsigned int n, uint64_t *f,
			       unsigned int *fk)
{
	unsigned int m = 0;

	(void)i;
	for (unsigned int q = 0; q < FILE_WORDS && q < n; q++) {
		unsigned int k = n == 1 ? 0 : (unsigned int)((uint64_t)q * (n - 1) / (FILE_WORDS - 1));

		if (pread(r->fd, &f[m], sizeof(f[m]), (off_t)(off + k * stride)) != sizeof(f[m]))
			continue;
		fk[m++] = k;
	}
	atomic_fetch_add(&r->sh->file_words, m);
	return m;
}

/* One reading of page i: its tag words through the mapping and some of the file's. */
struct page_snap {
	uint64_t w[MAX_WORDS], f[FILE_WORDS];
	unsigned int fk[FILE_WORDS], nf, n;
	uint64_t g0, stride, off;
	bool z0;
};

/* Read page i; true when no writer or puncher ran meanwhile (seq unchanged, even). */
static bool page_read(const struct racer *r, uint64_t i, struct page_snap *sn)
{
	struct page_ctl *c = &r->ctl[i];
	const volatile uint64_t *p =
		(const volatile uint64_t *)(uintptr_t)(r->addr + i * r->page_size);
	uint64_t s0 = atomic_load(&c->seq), s1;

	sn->g0 = atomic_load(&c->gen);
	sn->z0 = atomic_load(&c->zero_ok);
	for (unsigned int k = 0; k < sn->n; k++)
		sn->w[k] = p[k * sn->stride / 8];
	/*
	 * The same words read from the page cache with pread(): no page
	 * tables involved.  A stale or foreign PMD (a shared PMD page freed
	 * or reused under us) maps other pages than the file's: tags read
	 * through it can look right while the file holds something else (and
	 * writes through it are lost).
	 */
	sn->nf = file_words(r, i, sn->off, sn->stride, sn->n, sn->f, sn->fk);
	atomic_thread_fence(memory_order_acquire);
	s1 = atomic_load(&c->seq);
	return !(s0 & 1) && s0 == s1;
}

/* A consistent reading: the file's words, then every tag against gen. */
static bool page_strict(const struct racer *r, uint64_t i, const char *role,
			const struct page_snap *sn)
{
	unsigned int bad = 0;
	enum tag_verdict v;

	atomic_fetch_add(&r->sh->strict_reads, 1);
	for (unsigned int q = 0; q < sn->nf; q++)
		if (sn->f[q] != sn->w[sn->fk[q]]) {
			record_error(r, i, sn->fk[q], sn->w[sn->fk[q]], sn->f[q], role, "file");
			return true;
		}
	v = tag_check_page(sn->w, sn->n, sn->off, sn->stride, sn->g0, sn->z0, &bad);
	if (v == TAG_BAD)
		record_error(r, i, bad, sn->w[bad],
			     sn->w[0] ? tag_make(sn->off + bad * sn->stride, sn->g0) : 0,
			     role, "strict");
	if (v == TAG_ZERO)
		atomic_fetch_add(&r->sh->zero_reads, 1);
	return v != TAG_ZERO;
}

/* A writer or puncher kept running: check every word on its own. */
static bool page_weak(const struct racer *r, uint64_t i, const char *role,
		      const struct page_snap *sn)
{
	struct page_ctl *c = &r->ctl[i];
	uint64_t g1 = atomic_load(&c->gen);
	bool punched = atomic_load(&c->punched) != 0, zero = true;

	atomic_fetch_add(&r->sh->weak_reads, 1);
	for (unsigned int k = 0; k < sn->n; k++) {
		uint64_t off = sn->off + k * sn->stride;
		enum tag_verdict v = tag_check_word(sn->w[k], off, sn->g0, g1 + 1, punched);

		if (v == TAG_BAD) {
			record_error(r, i, k, sn->w[k], tag_make(off, g1), role, "weak");
			return true;
		}
		zero = zero && v == TAG_ZERO;
	}
	return !zero;
}

bool page_check(const struct racer *r, uint64_t i, const char *role)
{
	struct page_snap sn = {
		.n = page_words(r), .stride = page_stride(r), .off = i * r->page_size,
	};

	atomic_fetch_add(&r->sh->reads, 1);
	for (int attempt = 0; attempt < 3; attempt++)
		if (page_read(r, i, &sn))
			return page_strict(r, i, role, &sn);
	return page_weak(r, i, role, &sn);
}

