/* SPDX-License-Identifier: GPL-2.0 */
/* futex(2) wait/wake on a 32-bit word of shared memory. */
#ifndef HUGELAB_FUTEX_H
#define HUGELAB_FUTEX_H

#include <linux/futex.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Sleep while *addr == val, at most timeout_ms (< 0: no limit); returns on
 * any wake-up, signal or timeout: callers re-check their condition. */
static inline void futex_wait(uint32_t *addr, uint32_t val, long timeout_ms)
{
	struct timespec ts = {
		.tv_sec = timeout_ms / 1000,
		.tv_nsec = (timeout_ms % 1000) * 1000000L,
	};

	syscall(SYS_futex, addr, FUTEX_WAIT, val, timeout_ms >= 0 ? &ts : NULL,
		NULL, 0);
}

static inline void futex_wake(uint32_t *addr, int n)
{
	syscall(SYS_futex, addr, FUTEX_WAKE, n, NULL, NULL, 0);
}

#endif
