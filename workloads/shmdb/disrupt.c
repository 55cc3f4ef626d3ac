// SPDX-License-Identifier: GPL-2.0
/*
 * The disruptor: maintenance on the segment while sessions run, one operation
 * every --disrupt-interval-ms, round robin over the enabled operations:
 *   punch     fallocate(PUNCH_HOLE) of a range (file-backed only)
 *   truncate  ftruncate shrink by a tail range, then regrow (file-backed only)
 *   mprotect  PROT_READ on a range of its own mapping and back (VMA split)
 *   munmap    munmap a range of its own mapping and map it again
 *   dontneed  MADV_DONTNEED of a range of its own mapping
 * It maps the segment like a session (and faults it, so it takes part in
 * PMD sharing).  ctl->op_seq is odd while an operation runs (ctl->op_cur says
 * which); ctl->loss_seq is odd while data may be lost (punch, truncate).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/shm.h>
#include <time.h>
#include <unistd.h>

#include "fastclock.h"
#include "futex.h"
#include "rng.h"
#include "shmdb.h"

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
#ifndef SHM_REMAP
#define SHM_REMAP 040000
#endif

static void op_error(struct ctl *ctl, const char *what)
{
	if (__atomic_fetch_add(&ctl->op_errors, 1, __ATOMIC_RELAXED) == 0)
		snprintf(ctl->op_error_msg, sizeof(ctl->op_error_msg), "%s: %s",
			 what, strerror(errno));
}

static int remap(const struct cfg *c, const struct seg *s, char *base,
		 uint64_t off, uint64_t len)
{
	if (c->backing == B_SHM)        /* SysV: re-attach the whole segment */
		return shmat(s->shmid, base, SHM_REMAP) == (void *)-1 ? -1 : 0;
	void *p = mmap(base + off, len, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_FIXED, s->fd, (off_t)off);

	if (p != MAP_FAILED && c->page_size == 4096)
		madvise(p, len, MADV_NOHUGEPAGE);
	return p == MAP_FAILED ? -1 : 0;
}

static void do_op(const struct cfg *c, const struct seg *s, struct ctl *ctl,
		  char *base, int op, uint64_t off, uint64_t len)
{
	bool loss = op == OP_PUNCH || op == OP_TRUNCATE;

	if (loss)
		__atomic_add_fetch(&ctl->loss_seq, 1, __ATOMIC_SEQ_CST);
	switch (op) {
	case OP_PUNCH:
		if (fallocate(s->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			      (off_t)off, (off_t)len))
			op_error(ctl, "fallocate(PUNCH_HOLE)");
		break;
	case OP_TRUNCATE:
		if (ftruncate(s->fd, (off_t)(c->size - len)))
			op_error(ctl, "ftruncate(shrink)");
		if (ftruncate(s->fd, (off_t)c->size))
			op_error(ctl, "ftruncate(regrow)");
		break;
	case OP_MPROTECT:
		if (mprotect(base + off, len, PROT_READ))
			op_error(ctl, "mprotect(PROT_READ)");
		if (mprotect(base + off, len, PROT_READ | PROT_WRITE))
			op_error(ctl, "mprotect(PROT_READ|PROT_WRITE)");
		break;
	case OP_MUNMAP:
		if (munmap(base + off, len))
			op_error(ctl, "munmap");
		if (remap(c, s, base, off, len))
			op_error(ctl, "remap");
		break;
	case OP_DONTNEED:
		if (madvise(base + off, len, MADV_DONTNEED))
			op_error(ctl, "madvise(MADV_DONTNEED)");
		break;
	}
	if (loss)
		__atomic_add_fetch(&ctl->loss_seq, 1, __ATOMIC_SEQ_CST);
}

/*
 * Sleep ms, but return as soon as the coordinator sets ctl->stop (it wakes
 * the futex) or the run's deadline passes: a 15 s interval must not hold a
 * 1 s run for 15 s.
 */
static void pause_ms(struct ctl *ctl, uint64_t ms)
{
	uint64_t end = now_ns() + ms * 1000000ull;

	for (;;) {
		uint64_t now = now_ns(), dl = __atomic_load_n(&ctl->deadline_ns, __ATOMIC_RELAXED);

		if (__atomic_load_n(&ctl->stop, __ATOMIC_ACQUIRE) || now >= end ||
		    (dl && fast_ns() >= dl))
			return;

		uint64_t left = (end - now) / 1000000 + 1;

		futex_wait(&ctl->stop, 0, (long)(left < 1000 ? left : 1000));
	}
}

/* Map (or inherit) and fault the segment like a session, then tell the
 * coordinator; its address. */
static char *disrupt_attach(const struct cfg *c, const struct seg *s, struct ctl *ctl)
{
	char *base = s->addr;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != ctl->coordinator)
		_exit(4);
	signal(SIGINT, SIG_IGN);
	/* a maintenance process must get the CPU among thousands of sessions
	 * to keep its rate: above the sessions (nice 0), like the coordinator */
	setpriority(PRIO_PROCESS, 0, -10);
	if (c->attach == A_ATTACH) {
		base = seg_map_at(c, s, s->addr);
		if (!base) {
			op_error(ctl, "disruptor attach");
			_exit(3);
		}
	}
	if (c->page_size != 4096 || madvise(base, c->size, MADV_POPULATE_READ))
		for (uint64_t o = 0; o < c->size; o += c->page_size)
			__atomic_fetch_add((uint64_t *)(base + o), 0, __ATOMIC_RELAXED);
	__atomic_store_n(&ctl->disruptor_ready, 1, __ATOMIC_RELEASE);
	futex_wake(&ctl->disruptor_ready, 1);
	return base;
}

/*
 * --disrupt-once: the segment's disrupt_len ranges in a random order, each
 * handed out once; with truncate the tail is its own (taken once) and not
 * in the order.
 */
struct once {
	uint32_t *order;
	uint64_t n, next;
	bool tail_left;
};

static int once_init(const struct cfg *c, uint64_t *rng, struct once *o)
{
	uint64_t slots = c->size / c->disrupt_len;
	bool trunc = c->disrupt & (1ull << OP_TRUNCATE);

	*o = (struct once){ .n = slots - (trunc ? 1 : 0), .tail_left = trunc };
	o->order = malloc((o->n ? o->n : 1) * sizeof(*o->order));
	if (!o->order)
		return -1;
	for (uint64_t i = 0; i < o->n; i++)
		o->order[i] = (uint32_t)i;
	for (uint64_t i = o->n; i > 1; i--) {   /* Fisher-Yates */
		uint64_t j = rng_next(rng) % i;
		uint32_t t = o->order[i - 1];

		o->order[i - 1] = o->order[j];
		o->order[j] = t;
	}
	return 0;
}

/* The offset of op's next range: 0 with *off set, -1 when none is left. */
static int next_offset(const struct cfg *c, uint64_t *rng, struct once *o,
		       int op, uint64_t *off)
{
	uint64_t len = c->disrupt_len;

	if (!o) {       /* a random range (the draw also for truncate, as ever) */
		uint64_t r = rng_next(rng) % (c->size / len);

		*off = op == OP_TRUNCATE ? c->size - len : r * len;
		return 0;
	}
	if (op == OP_TRUNCATE) {
		*off = c->size - len;
		if (!o->tail_left)
			return -1;
		o->tail_left = false;
		return 0;
	}
	if (o->next >= o->n)
		return -1;
	*off = (uint64_t)o->order[o->next++] * len;
	return 0;
}

/* One operation at off (truncate: the end), timed; odd op_seq while it
 * runs. */
static void disrupt_one(const struct cfg *c, const struct seg *s, struct ctl *ctl,
			char *base, int op, uint64_t off, struct hist *dur)
{
	uint64_t len = c->disrupt_len;
	uint64_t t0, m0, seq;

	__atomic_store_n(&ctl->op_cur, (uint32_t)op, __ATOMIC_RELAXED);
	seq = __atomic_add_fetch(&ctl->op_seq, 1, __ATOMIC_SEQ_CST);
	m0 = ctl->attr ? now_ns() : 0;  /* --attribute: the log, CLOCK_MONOTONIC */
	t0 = fast_ns();
	do_op(c, s, ctl, base, op, off, len);
	hist_insert(dur, fast_ns() - t0);
	if (ctl->attr)
		attr_log_op(ctl->attr, (uint32_t)op, seq, m0, now_ns());
	__atomic_add_fetch(&ctl->op_seq, 1, __ATOMIC_SEQ_CST);
}

/* Until the run ends: the next operation that has a range, then the pause;
 * with --disrupt-once, once every range is spent, only the wait for the end. */
static void disrupt_loop(const struct cfg *c, const struct seg *s, struct ctl *ctl,
			 char *base, struct once *once, uint64_t *count, struct hist *dur)
{
	uint64_t rng = rng_seed(c->seed, 0xD15B0B7ull);
	int ops[NOPS], nops = 0, next = 0, spent = 0;

	for (int i = 0; i < NOPS; i++)
		if (c->disrupt & (1ull << i))
			ops[nops++] = i;
	if (once && once_init(c, &rng, once))
		op_error(ctl, "--disrupt-once: malloc");
	while (!__atomic_load_n(&ctl->stop, __ATOMIC_RELAXED) && nops) {
		uint64_t dl = __atomic_load_n(&ctl->deadline_ns, __ATOMIC_RELAXED);
		int op = ops[next++ % nops];
		uint64_t off;

		if (dl && fast_ns() >= dl)
			break;          /* the run is over even if stop is late */
		if (spent >= nops || (once && !once->order)) {
			pause_ms(ctl, 1000);
			continue;
		}
		if (next_offset(c, &rng, once, op, &off)) {
			spent++;        /* this op has no range left */
			continue;
		}
		spent = 0;
		disrupt_one(c, s, ctl, base, op, off, &dur[op]);
		count[op]++;
		pause_ms(ctl, c->disrupt_interval_ms);
	}
}

void disrupt_main(const struct cfg *c, const struct seg *s, struct ctl *ctl)
{
	struct hist dur[NOPS];
	uint64_t count[NOPS] = { 0 };
	struct once once;
	char *base;

	for (int i = 0; i < NOPS; i++)
		hist_init(&dur[i]);
	base = disrupt_attach(c, s, ctl);
	disrupt_loop(c, s, ctl, base, c->disrupt_once ? &once : NULL, count, dur);
	for (int i = 0; i < NOPS; i++) {
		hist_merge_atomic(&ctl->op_dur[i], &dur[i]);
		ctl->op_count[i] = count[i];
	}
	_exit(0);
}
