/* SPDX-License-Identifier: GPL-2.0 */
/* racer unsharer process (unshare.c): one per operation, until stop. */
#ifndef HUGELAB_RACER_UNSHARE_H
#define HUGELAB_RACER_UNSHARE_H

#include "ops.h"
#include "racer.h"

/*
 * Punch pages [first, first + n) out of the file under their page locks,
 * marking them "may read as zero"; 0, -1 if stopped while taking the
 * locks, -2 if fallocate failed.
 */
int racer_punch(struct racer *r, uint64_t first, uint64_t n);
void unsharer_main(struct racer *r, enum wl_op op, unsigned int idx)
	__attribute__((noreturn));

#endif
