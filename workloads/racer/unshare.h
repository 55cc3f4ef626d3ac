/* SPDX-License-Identifier: GPL-2.0 */
/* racer unsharer process (unshare.c): one per operation, until stop. */
#ifndef HUGELAB_RACER_UNSHARE_H
#define HUGELAB_RACER_UNSHARE_H

#include "ops.h"
#include "racer.h"

void unsharer_main(struct racer *r, enum wl_op op, unsigned int idx)
	__attribute__((noreturn));

#endif
