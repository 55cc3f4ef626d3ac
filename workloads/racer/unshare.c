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

void unsharer_main(struct racer *r, enum wl_op op, unsigned int idx)
{
	const char *name = op_names[op];
	uint64_t rs = rng_seed(r->seed, 1000000 + idx);
	uint64_t per_slot = SLOT >= r->page_size ? SLOT / r->page_size : 1;
	struct hist lat;
	int err = map_whole(r, true);

	if (err) {
		fprintf(stderr, "racer: %s: mmap at %#llx: %s\n", name,
			(unsigned long long)r->addr, strerror(-err));
		exit(2);
	}
	if (per_slot > r->npages)
		per_slot = r->npages;
	hist_init(&lat);
	while (!atomic_load(&r->sh->stop)) {
		uint64_t slot_first = (rng_next(&rs) % (r->npages / per_slot)) * per_slot;
		uint64_t n = 1 + rng_next(&rs) % 4, first, t0;
		bool done;
		void *a;
		size_t len;

		if (n >= per_slot)
			n = per_slot > 1 ? per_slot - 1 : 1;
		first = slot_first + rng_next(&rs) % (per_slot - n + 1);
		a = (void *)(uintptr_t)(r->addr + first * r->page_size);
		len = n * r->page_size;

		page_check(r, slot_first + rng_next(&rs) % per_slot, name);
		t0 = now_ns();
		done = false;
		switch (op) {
		case OP_DONTNEED:
			if (madvise(a, len, MADV_DONTNEED)) {
				op_error(r, op, "madvise");
				break;
			}
			hist_insert(&lat, now_ns() - t0);
			check_range(r, first, n, name);
			done = true;
			break;
		case OP_MPROTECT:
			if (mprotect(a, len, PROT_READ)) {
				op_error(r, op, "mprotect(PROT_READ)");
				break;
			}
			hist_insert(&lat, now_ns() - t0);
			check_range(r, first, n, name);
			if (mprotect(a, len, PROT_READ | PROT_WRITE))
				op_error(r, op, "mprotect(PROT_READ|PROT_WRITE)");
			else
				done = true;
			break;
		case OP_MUNMAP:
			if (munmap(a, len)) {
				op_error(r, op, "munmap");
				break;
			}
			hist_insert(&lat, now_ns() - t0);
			if (mmap(a, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
				 r->fd, (off_t)(first * r->page_size)) == MAP_FAILED) {
				op_error(r, op, "mmap part");
				break;
			}
			check_range(r, first, n, name);
			done = true;
			break;
		case OP_PUNCH:
			err = racer_punch(r, first, n);
			if (err == -1)
				continue;       /* stopped while waiting for locks */
			if (err)
				break;
			hist_insert(&lat, now_ns() - t0);
			check_range(r, first, n, name);
			done = true;
			break;
		default:
			break;
		}
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
