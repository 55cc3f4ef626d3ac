/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Lock waits from the kernel's lock:contention_begin / lock:contention_end
 * trace events, as tracefs prints them in its "trace" file (trace_clock
 * mono: seconds with microseconds, CLOCK_MONOTONIC), with a stacktrace
 * trigger on contention_begin:
 *
 *   shmdb-812 [001] d..1.  123.456789: contention_begin: 00000000a1b2c3d4 (flags=READ)
 *   shmdb-812 [001] d..1.  123.456790: <stack trace>
 *    => rwsem_down_read_slowpath
 *    => hugetlb_vma_lock_read
 *    => hugetlb_fault
 *   shmdb-990 [001] d..2.  123.500100: sched_wakeup: comm=shmdb pid=812 prio=120 target_cpu=000
 *   shmdb-812 [000] .....  123.501000: contention_end: 00000000a1b2c3d4 (ret=0)
 *
 * lt_feed() takes the lines one by one and calls back once per wait: from
 * a task's first contention_begin on a lock (a mutex emits several while
 * it spins and then sleeps) to the contention_end of the same task and lock
 * address, with the lock named from the first stack of that wait
 * (lt_classify), and the task's last sched:sched_wakeup inside it: a
 * woken waiter has the lock (rwsem) or may take it (mutex), and the rest
 * of the wait is a wait for a CPU, which schedstat counts.  No I/O:
 * tests/test_locktrace.c feeds it fixture text.
 */
#ifndef HUGELAB_LOCKTRACE_H
#define HUGELAB_LOCKTRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* include/trace/events/lock.h */
#define LCB_F_SPIN   (1u << 0)
#define LCB_F_READ   (1u << 1)
#define LCB_F_WRITE  (1u << 2)
#define LCB_F_RT     (1u << 3)
#define LCB_F_PERCPU (1u << 4)
#define LCB_F_MUTEX  (1u << 5)

enum lt_lock {
	LT_VMA,         /* the hugetlb VMA lock (hugetlb_vma_lock_read/write) */
	LT_IMMAP,       /* the file's i_mmap_rwsem, taken in a hugetlb fault */
	LT_FAULT_MUTEX, /* hugetlb_fault_mutex_table[hash] */
	LT_MMAP,        /* the process's mmap_lock, taken by the page fault */
	LT_OTHER,       /* anything else: the site says where */
	LT_NLOCKS,
	/*
	 * A rwsem taken in hugetlb_fault() itself: the VMA lock when the
	 * compiler inlined hugetlb_vma_lock_read() there (6.1.192 does), or
	 * i_mmap_rwsem (hugetlb_fault_lock=i_mmap).  Never in a result: the
	 * join names it by its address (lib/attrib.h, attr_addr_lock).
	 */
	LT_FAULT_RWSEM = LT_NLOCKS
};

extern const char *const lt_lock_names[LT_NLOCKS];

enum lt_kind { LT_L_OTHER, LT_L_BEGIN, LT_L_END, LT_L_STACK, LT_L_FRAME, LT_L_WAKE };

/* One line of the trace file. */
struct lt_line {
	enum lt_kind kind;
	uint32_t pid;           /* the task the line is from (the waker's for WAKE) */
	uint32_t woken;         /* WAKE: the task woken */
	uint64_t ts_ns;         /* BEGIN, END, STACK, WAKE */
	uint64_t addr;          /* BEGIN, END: the (hashed) lock address */
	unsigned int flags;     /* BEGIN: LCB_F_* */
	char frame[64];         /* FRAME: the function, without +off/len */
};

/* The line's kind and fields; LT_L_OTHER for anything it does not know. */
enum lt_kind lt_parse_line(const char *s, struct lt_line *l);

/*
 * The lock of a wait from its flags and its stack (innermost frame first):
 * the first frame that is not the lock's own implementation or the
 * tracing is the site (copied into site, at most len bytes).
 */
enum lt_lock lt_classify(unsigned int flags, const char *const *frames, int n,
			 char *site, size_t len);

/* A completed wait. */
struct lt_wait {
	uint32_t pid;
	enum lt_lock lock;
	uint64_t addr;          /* the lock's address (as printed) */
	uint64_t begin_ns, end_ns;
	uint64_t wake_ns;       /* the last wakeup inside, 0: none seen */
	unsigned int flags;     /* of its first begin */
	bool classified;        /* a stack named it (else LT_OTHER, site "?") */
	const char *site;       /* valid during the callback */
};

typedef void (*lt_wait_fn)(void *arg, const struct lt_wait *w);

#define LT_SLOTS (1u << 17)     /* tasks traced (open addressing; > 100,000 sessions) */
#define LT_MAX_FRAMES 24

struct lt_open {
	uint32_t pid;           /* 0: free */
	bool classified;
	uint64_t addr, begin_ns, wake_ns;
	unsigned int flags;
	enum lt_lock lock;
	char site[48];
};

struct lt_state {
	struct lt_open *slots;  /* LT_SLOTS, calloc'ed by lt_init */
	lt_wait_fn fn;
	void *arg;
	/* the stack being read: its task, frames so far */
	uint32_t stack_pid;
	int nframes;
	char frames[LT_MAX_FRAMES][64];
	/* counts */
	uint64_t begins, ends, waits, unpaired_ends, wakes, full;
};

/* 0, or -1 (out of memory). */
int lt_init(struct lt_state *st, lt_wait_fn fn, void *arg);
void lt_feed(struct lt_state *st, const char *line);
/* The end of the trace: a stack being read is classified. */
void lt_finish(struct lt_state *st);
void lt_free(struct lt_state *st);

#endif
