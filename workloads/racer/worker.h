/* SPDX-License-Identifier: GPL-2.0 */
/* racer worker process (worker.c): r->threads threads checking and
 * re-tagging random pages until r->sh->stop. */
#ifndef HUGELAB_RACER_WORKER_H
#define HUGELAB_RACER_WORKER_H

#include "racer.h"

void worker_main(struct racer *r, unsigned int idx) __attribute__((noreturn));

#endif
