/* SPDX-License-Identifier: GPL-2.0 */
/* racer pages (page.c): the file mapping and per-page lock, re-tag, check. */
#ifndef HUGELAB_RACER_PAGE_H
#define HUGELAB_RACER_PAGE_H

#include <stdbool.h>
#include <stdint.h>

#include "racer.h"

/* Map the whole file at r->addr (MAP_FIXED_NOREPLACE or MAP_FIXED). */
int map_whole(const struct racer *r, bool noreplace);
/* Re-tag page i with the next generation under its lock. */
void page_write(const struct racer *r, uint64_t i, bool after_punch);
/* --inject-errors: plant a stale tag and check it under the lock. */
void page_inject_stale(const struct racer *r, uint64_t i);
/* false when stopped while waiting */
bool page_lock(const struct racer *r, uint64_t i);
void page_unlock(const struct racer *r, uint64_t i);
/*
 * Check page i through the mapping, and a few words against the page cache
 * (pread); tag errors are recorded in r->sh.  Returns false if it read all
 * zero.
 */
bool page_check(const struct racer *r, uint64_t i, const char *role);

#endif
