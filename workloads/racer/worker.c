// SPDX-License-Identifier: GPL-2.0
/* racer workers: threads that read-check and re-tag random huge pages. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "page.h"
#include "rng.h"
#include "worker.h"

struct wthread {
	struct racer *r;
	uint64_t seed;
};

static void *worker_thread(void *arg)
{
	struct wthread *t = arg;
	struct racer *r = t->r;
	uint64_t rs = t->seed, iter = 0;
	bool dontneed = r->ops & (1u << OP_DONTNEED);

	while (!atomic_load(&r->sh->stop)) {
		uint64_t i = rng_next(&rs) % r->npages;

		if (rng_next(&rs) % 100 < r->write_pct)
			page_write(r, i, false);
		else if (!page_check(r, i, "worker"))
			page_write(r, i, true);
		/* Drop this process' own mapping of a page now and then so the
		 * workers keep faulting (and re-sharing) while others unshare. */
		if (dontneed && ++iter % 64 == 0) {
			void *a = (void *)(uintptr_t)(r->addr + i * r->page_size);

			if (madvise(a, r->page_size, MADV_DONTNEED)) {
				if (!atomic_fetch_add(&r->sh->op_errors[OP_DONTNEED], 1))
					snprintf(r->sh->op_error_msg[OP_DONTNEED],
						 sizeof(r->sh->op_error_msg[0]),
						 "worker madvise: %s", strerror(errno));
			} else {
				atomic_fetch_add(&r->sh->ops[OP_DONTNEED], 1);
			}
		}
	}
	return NULL;
}

void worker_main(struct racer *r, unsigned int idx)
{
	pthread_t tid[64];
	struct wthread t[64];
	unsigned int n = r->threads;
	int err = map_whole(r, true);

	if (err) {
		fprintf(stderr, "racer: worker %u: mmap at %#llx: %s\n", idx,
			(unsigned long long)r->addr, strerror(-err));
		exit(2);
	}
	for (unsigned int k = 0; k < n; k++) {
		t[k] = (struct wthread){ .r = r,
			.seed = rng_seed(r->seed, (uint64_t)idx * 1000 + k) };
		if (k && pthread_create(&tid[k], NULL, worker_thread, &t[k])) {
			fprintf(stderr, "racer: worker %u: pthread_create failed\n", idx);
			exit(2);
		}
	}
	worker_thread(&t[0]);
	for (unsigned int k = 1; k < n; k++)
		pthread_join(tid[k], NULL);
	exit(0);
}
