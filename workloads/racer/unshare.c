// SPDX-License-Identifier: GPL-2.0
/*
 * racer unsharers: one process per operation, each with its own mapping of
 * the whole file at the shared address, looping until stop:
 *   dontneed  MADV_DONTNEED of 1-4 huge pages, then re-read them;
 *   mprotect  PROT_READ on 1-4 huge pages inside a fully covered 1 GiB slot
 *             (splits the VMA: hugetlb_split() unshares the slot), re-read,
 *             restore PROT_READ|PROT_WRITE, then map the whole file again;
 *   munmap    unmap 1-4 huge pages (split), map them back alone, re-read,
 *             then map the whole file again;
 *   punch     fallocate(PUNCH_HOLE) of 1-4 huge pages under their page
 *             locks (marks them "may read as zero"; workers re-tag them).
 * Before each operation the process touches a page of the slot so its PUD
 * entry points at the (shared) PMD page the operation has to unshare.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "page.h"
#include "rng.h"
#include "tag.h"
#include "unshare.h"

#define SLOT (1ull << 30)

static void op_error(struct racer *r, enum wl_op op, const char *what)
{
	if (!atomic_fetch_add(&r->sh->op_errors[op], 1))
		snprintf(r->sh->op_error_msg[op], sizeof(r->sh->op_error_msg[0]),
			 "%s: %s", what, strerror(errno));
}

static void check_range(struct racer *r, uint64_t first, uint64_t n,
			const char *role)
{
	for (uint64_t i = first; i < first + n; i++)
		page_check(r, i, role);
}

int racer_punch(struct racer *r, uint64_t first, uint64_t n)
{
	uint64_t locked = 0;
	int ret = -1;

	for (; locked < n; locked++)
		if (!page_lock(r, first + locked))
			goto out;
	for (uint64_t i = first; i < first + n; i++) {
		atomic_fetch_add(&r->ctl[i].seq, 1);
		atomic_store(&r->ctl[i].zero_ok, 1);
		atomic_store(&r->ctl[i].punched, 1);
	}
	if (fallocate(r->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
		      (off_t)(first * r->page_size), (off_t)(n * r->page_size))) {
		op_error(r, OP_PUNCH, "fallocate");
		ret = -2;
	} else {
		ret = 0;
	}
	for (uint64_t i = first; i < first + n; i++)
		atomic_fetch_add(&r->ctl[i].seq, 1);
out:
	while (locked)
		page_unlock(r, first + --locked);
	return ret;
}

/* One operation on pages [first, first + n) at a, len bytes. */
struct unshare {
	struct racer *r;
	enum wl_op op;
	const char *name;
	uint64_t first, n;
	void *a;
	size_t len;
	struct hist *lat;
};

/* The operation's latency and the re-read of its pages; 1 (done). */
static int unshare_done(const struct unshare *u, uint64_t t0)
{
	hist_insert(u->lat, now_ns() - t0);
	check_range(u->r, u->first, u->n, u->name);
	return 1;
}

static int op_dontneed(const struct unshare *u)
{
	uint64_t t0 = now_ns();

	if (madvise(u->a, u->len, MADV_DONTNEED)) {
		op_error(u->r, u->op, "madvise");
		return 0;
	}
	return unshare_done(u, t0);
}

static int op_mprotect(const struct unshare *u)
{
	uint64_t t0 = now_ns();

	if (mprotect(u->a, u->len, PROT_READ)) {
		op_error(u->r, u->op, "mprotect(PROT_READ)");
		return 0;
	}
	unshare_done(u, t0);
	if (mprotect(u->a, u->len, PROT_READ | PROT_WRITE)) {
		op_error(u->r, u->op, "mprotect(PROT_READ|PROT_WRITE)");
		return 0;
	}
	return 1;
}

static int op_munmap(const struct unshare *u)
{
	uint64_t t0 = now_ns();

	if (munmap(u->a, u->len)) {
		op_error(u->r, u->op, "munmap");
		return 0;
	}
	hist_insert(u->lat, now_ns() - t0);
	if (mmap(u->a, u->len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
		 u->r->fd, (off_t)(u->first * u->r->page_size)) == MAP_FAILED) {
		op_error(u->r, u->op, "mmap part");
		return 0;
	}
	check_range(u->r, u->first, u->n, u->name);
	return 1;
}

static int op_punch(const struct unshare *u)
{
	uint64_t t0 = now_ns();
	int err = racer_punch(u->r, u->first, u->n);

	if (err == -1)
		return -1;              /* stopped while waiting for locks */
	return err ? 0 : unshare_done(u, t0);
}

/* 1 done, 0 failed (recorded in op_errors), -1 stopped before it ran. */
static int unshare_once(const struct unshare *u)
{
	switch (u->op) {
	case OP_DONTNEED: return op_dontneed(u);
	case OP_MPROTECT: return op_mprotect(u);
	case OP_MUNMAP: return op_munmap(u);
	case OP_PUNCH: return op_punch(u);
	default: return 0;
	}
}

/*
 * The next range: 1-4 pages (fewer than a slot's) inside one random slot
 * of per_slot pages; then touch a page of that slot so its PUD entry
 * points at the PMD page the operation has to unshare.
 */
static void pick_range(struct unshare *u, uint64_t *rs, uint64_t per_slot)
{
	struct racer *r = u->r;
	uint64_t slot_first = (rng_next(rs) % (r->npages / per_slot)) * per_slot;

	u->n = 1 + rng_next(rs) % 4;
	if (u->n >= per_slot)
		u->n = per_slot > 1 ? per_slot - 1 : 1;
	u->first = slot_first + rng_next(rs) % (per_slot - u->n + 1);
	u->a = (void *)(uintptr_t)(r->addr + u->first * r->page_size);
	u->len = u->n * r->page_size;
	page_check(r, slot_first + rng_next(rs) % per_slot, u->name);
}

void unsharer_main(struct racer *r, enum wl_op op, unsigned int idx)
{
	uint64_t rs = rng_seed(r->seed, 1000000 + idx);
	uint64_t per_slot = SLOT >= r->page_size ? SLOT / r->page_size : 1;
	struct hist lat;
	struct unshare u = { .r = r, .op = op, .name = op_names[op], .lat = &lat };
	int err = map_whole(r, true);

	if (err) {
		fprintf(stderr, "racer: %s: mmap at %#llx: %s\n", u.name,
			(unsigned long long)r->addr, strerror(-err));
		exit(2);
	}
	if (per_slot > r->npages)
		per_slot = r->npages;
	hist_init(&lat);
	while (!atomic_load(&r->sh->stop)) {
		int done;

		pick_range(&u, &rs, per_slot);
		done = unshare_once(&u);
		if (done < 0)
			continue;
		if (done)
			atomic_fetch_add(&r->sh->ops[op], 1);
		/* Restore one VMA over every slot so the next split starts from
		 * a fully covered, shareable slot again. */
		if ((op == OP_MPROTECT || op == OP_MUNMAP) && (err = map_whole(r, false))) {
			errno = -err;
			op_error(r, op, "mmap whole");
			break;
		}
	}
	hist_merge_atomic(&r->sh->op_lat[op], &lat);
	exit(0);
}
