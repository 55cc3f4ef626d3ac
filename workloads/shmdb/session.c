// SPDX-License-Identifier: GPL-2.0
/*
 * A session: attach (or inherit) the segment, fault every page once (timed),
 * then run transactions on random fixed-size buffers guarded by latches in
 * the control mapping: read + verify, or read + verify + update.
 *
 * Buffer format (64-bit words): w[0] = index ^ MAGIC, w[1] = version (>= 1),
 * w[2..] = mix(index, version).  Writers commit each version to
 * ctl->committed under the buffer's latch; a reader accepts only the
 * committed version, or all-zero (the "reset" state) when nothing was
 * committed or a punch/truncate has run (session_verify).  Data-loss
 * operations bump ctl->loss_seq (odd while running); a writer that saw it
 * change rewrites its buffer, a reader retries, a SIGBUS (access beyond a
 * shrunk file) jumps back and retries after the file has regrown.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "dbbuf.h"
#include "fastclock.h"
#include "futex.h"
#include "rng.h"
#include "fleet.h"
#include "shmdb.h"

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif


/* Drepper's three-state futex mutex on a shared word. */
static void latch_lock(uint32_t *l)
{
	uint32_t c = 0;

	if (__atomic_compare_exchange_n(l, &c, 1, false, __ATOMIC_ACQUIRE,
					__ATOMIC_RELAXED))
		return;
	if (c != 2)
		c = __atomic_exchange_n(l, 2, __ATOMIC_ACQUIRE);
	while (c != 0) {
		futex_wait(l, 2, -1);
		c = __atomic_exchange_n(l, 2, __ATOMIC_ACQUIRE);
	}
}

static void latch_unlock(uint32_t *l)
{
	if (__atomic_fetch_sub(l, 1, __ATOMIC_RELEASE) != 1) {
		__atomic_store_n(l, 0, __ATOMIC_RELEASE);
		futex_wake(l, 1);
	}
}

/* Process-local state: in .bss, touched before the baseline is measured. */
static struct {
	struct hist first_touch, txn, access, faulting;
	struct hist dis_txn[NOPS], dis_access[NOPS], dis_faulting[NOPS];
	uint64_t txns, reads, writes, resets, retries, sigbus, verify_errors;
	uint32_t id;                    /* this session */
} L;

static sigjmp_buf jb;
static volatile sig_atomic_t jb_armed;

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	(void)si;
	(void)uc;
	if (jb_armed)
		siglongjmp(jb, 1);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void session_fail(struct ctl *ctl, const char *msg)
{
	if (__atomic_fetch_add(&ctl->session_errors, 1, __ATOMIC_RELAXED) == 0)
		snprintf(ctl->session_msg, sizeof(ctl->session_msg), "%s", msg);
	_exit(3);
}

/* No polling of the parent: PR_SET_PDEATHSIG ends us with the coordinator.
 * The coordinator's abort (lib/fleet.h) ends a waiting session at once. */
static void wait_phase(struct ctl *ctl, uint32_t want)
{
	if (!fleet_await(ctl->fleet, want))
		_exit(FLEET_EXIT_ABORT);
}

static void arrive(struct ctl *ctl, int ph, unsigned int id)
{
	fleet_arrive(ctl->fleet, id, ph);
}

static void wait_loss_done(struct ctl *ctl)
{
	struct timespec ts = { 0, 100000 };

	while (__atomic_load_n(&ctl->loss_seq, __ATOMIC_ACQUIRE) & 1)
		nanosleep(&ts, NULL);
}

/*
 * 4 KiB pages: MADV_POPULATE_READ per 2 MiB chunk, each timed.  READ: on
 * shmem a read fault maps up to 16 pages around the address (fault-around)
 * with writable PTEs (no dirty tracking on shmem): the same page tables as
 * WRITE with 1/16 of the faults, which matters under TCG.  false: a kernel
 * before 5.14 (no MADV_POPULATE_READ), the caller touches the pages.
 */
static bool populate_all(const struct cfg *c, struct ctl *ctl, char *base)
{
	const uint64_t chunk = 2ull << 20;

	for (uint64_t off = 0; off < c->size; off += chunk) {
		uint64_t len = c->size - off < chunk ? c->size - off : chunk;
		uint64_t t0 = fast_ns();

		if (madvise(base + off, len, MADV_POPULATE_READ)) {
			if (off == 0 && errno == EINVAL)
				return false;   /* kernel < 5.14 */
			session_fail(ctl, "madvise(MADV_POPULATE_READ) failed");
		}
		hist_insert(&L.first_touch, fast_ns() - t0);
	}
	__atomic_fetch_add(&ctl->populate_used, 1, __ATOMIC_RELAXED);
	return true;
}

/* Fault every page of the segment once; first write to each page timed. */
static void fault_all(const struct cfg *c, struct ctl *ctl, char *base,
		      unsigned int id)
{
	if (c->page_size == 4096 && c->populate && populate_all(c, ctl, base))
		return;
	/*
	 * Each session starts its sweep at its own page: sessions that all
	 * walked the pages in the same order would queue behind one another on
	 * the kernel's per-page fault mutex (a convoy: 10,000 sessions took
	 * 250 s under TCG, with hung-task reports), which is not how database
	 * sessions touch a segment.
	 */
	uint64_t npages = seg_touch_pages(c);
	uint64_t first = (id * 2654435761ull) % npages;

	for (uint64_t i = 0; i < npages; i++) {
		uint64_t off = seg_touch_offset(c, (first + i) % npages);
		uint64_t *p = (uint64_t *)(base + off);
		uint64_t t0 = fast_ns();

		if (c->priv)
			(void)*(volatile uint64_t *)p;  /* a write would copy it */
		else    /* a write that keeps the content: faults the page writable */
			__atomic_fetch_add(p, 0, __ATOMIC_RELAXED);
		hist_insert(&L.first_touch, fast_ns() - t0);
	}
}

/*
 * Offset of the i-th buffer transactions may use: all buffers of the
 * segment, or with --touch sparse only those inside the touched pages (the
 * pool holds nothing else; buffer_size <= page_size there).
 */
static uint64_t buf_offset(const struct cfg *c, uint64_t i)
{
	uint64_t per = c->page_size / c->buffer_size;

	if (!c->sparse)
		return i * c->buffer_size;
	return seg_touch_offset(c, i / per) + (i % per) * c->buffer_size;
}

/* Buffers transactions choose from (see buf_offset). */
enum dbbuf_state session_verify(const struct ctl *ctl, const volatile uint64_t *w,
				size_t nw, uint64_t idx, uint64_t slot,
				uint64_t *ver, char *msg, size_t len)
{
	enum dbbuf_state vr = dbbuf_verify(w, nw, idx, ver);
	uint32_t cv = ctl->committed[slot];

	if (vr == DBBUF_OK && (uint32_t)*ver == cv)
		return vr;
	if (vr == DBBUF_ZERO &&
	    (!cv || __atomic_load_n(&ctl->loss_seq, __ATOMIC_ACQUIRE)))
		return vr;
	if (vr == DBBUF_BAD)
		snprintf(msg, len, "buffer %llu: header %#llx version %llu is neither valid nor reset",
			 (unsigned long long)idx, (unsigned long long)w[0],
			 (unsigned long long)w[1]);
	else if (vr == DBBUF_OK)
		snprintf(msg, len, "buffer %llu: version %llu, committed %u (stale view or lost write)",
			 (unsigned long long)idx, (unsigned long long)*ver, cv);
	else
		snprintf(msg, len, "buffer %llu: all zero, committed %u, no punch or truncate ran",
			 (unsigned long long)idx, cv);
	return DBBUF_BAD;
}

/* Minor faults of this process so far (sessions are single-threaded);
 * *cs its context switches (voluntary and not). */
static long minflt_cs(long *cs)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	if (cs)
		*cs = ru.ru_nvcsw + ru.ru_nivcsw;
	return ru.ru_minflt;
}

static long minflt(void)
{
	return minflt_cs(NULL);
}

/*
 * --attribute: schedstat as of the last read, and the context switches
 * then.  A thread not switched out since has not waited on a run queue
 * (run_delay grows only when it is switched back in) and has been on its
 * CPU all along, so the read is skipped: one pread per switch, not per
 * transaction.
 */
static struct {
	long cs;
	uint64_t cpu, rq, t;
} S = { .cs = -1 };

static void sched_at_start(uint64_t *cpu0, uint64_t *rq0, long cs)
{
	uint64_t now = fast_ns();

	if (cs != S.cs) {
		attr_sched(&S.cpu, &S.rq);
		S.cs = cs;
		S.t = now;
	}
	*rq0 = S.rq;
	*cpu0 = S.cpu + (now - S.t);
}

/*
 * The transaction in progress.  What must survive the SIGBUS siglongjmp
 * lives here, in static (process-local) memory, not in automatic variables
 * a longjmp leaves indeterminate: no volatile locals.
 */
static struct {
	uint64_t slot, idx, ver, wver;
	volatile uint64_t *w;
	uint32_t *lat;
	bool wr, locked;
	bool rewrite;                   /* our own write was disrupted */
	uint64_t s0;                    /* ctl->op_seq at the start */
	uint32_t op0;                   /* ctl->op_cur at the start */
	uint64_t t0, t1;                /* start, first access */
	long mf0;                       /* --count-faults: minor faults at tf0 */
	uint64_t tf0, excl;             /* its start; getrusage time inside [t0, t2] */
	bool faulted;
	uint64_t rq0, cpu0;             /* --attribute: schedstat before tf0 */
} T;

enum { TXN_DONE, TXN_RETRY, TXN_WRITE };

static void txn_begin(const struct cfg *c, struct ctl *ctl, char *base, uint64_t *rng,
		      uint64_t nbuf, uint64_t tprev)
{
	uint64_t r = rng_next(rng);

	memset(&T, 0, sizeof(T));
	T.slot = (r >> 8) % nbuf;
	T.idx = buf_offset(c, T.slot) / c->buffer_size;
	T.wr = (r & 0xff) * 100 < c->write_pct * 256;
	T.w = (volatile uint64_t *)(base + T.idx * c->buffer_size);
	T.lat = &ctl->latch[T.idx % NLATCH];
	T.s0 = __atomic_load_n(&ctl->op_seq, __ATOMIC_ACQUIRE);
	T.op0 = __atomic_load_n(&ctl->op_cur, __ATOMIC_RELAXED);
	T.t0 = tprev;
	if (c->count_faults) {
		/*
		 * getrusage() is kept out of every timed window: the transaction
		 * starts after this call (t0 = tf0), and the second call, after
		 * the first access, is subtracted (excl).
		 */
		long cs;

		T.mf0 = minflt_cs(&cs);
		if (ctl->attr)
			sched_at_start(&T.cpu0, &T.rq0, cs);
		T.tf0 = fast_ns();
		T.t0 = T.tf0;
	}
}

/*
 * --attribute: a first access of ATTR_MIN_NS or more reads schedstat at
 * once (the window's run-queue wait and CPU time: against the values at
 * tf0, sched_at_start) and, if it faulted, is kept with its CLOCK_MONOTONIC start
 * (clock_gettime only here: the TSC's calibration drifts over a run) and
 * the disruptor's op_seq.
 */
static void txn_keep_fault(struct ctl *ctl, uint64_t cpu1, uint64_t rq1)
{
	struct attr_fault f = { .session = L.id, .pid = (uint32_t)getpid(), .op = -1 };
	uint64_t mono = now_ns();

	f.latency_ns = T.t1 - T.tf0;
	f.start_ns = mono - (fast_ns() - T.t1) - f.latency_ns;
	/* cpu0 is an estimate (the last read plus the time since): never
	 * below 0 */
	f.runqueue_ns = rq1 > T.rq0 ? rq1 - T.rq0 : 0;
	f.cpu_ns = cpu1 > T.cpu0 ? cpu1 - T.cpu0 : 0;
	f.op_seq_start = T.s0;
	f.op_seq_end = __atomic_load_n(&ctl->op_seq, __ATOMIC_ACQUIRE);
	if (f.op_seq_start & 1)
		f.op = (int32_t)T.op0;
	else if (f.op_seq_end != f.op_seq_start)
		f.op = (int32_t)__atomic_load_n(&ctl->op_cur, __ATOMIC_RELAXED);
	attr_keep(ctl->attr, &f);
}

/* The first access (may fault); only the first counts (the buffer is in one page). */
static void txn_first_access(const struct cfg *c, struct ctl *ctl)
{
	uint64_t cpu1 = 0, rq1 = 0;
	bool keep;

	(void)T.w[0];
	if (T.t1)
		return;
	T.t1 = fast_ns();
	if (c->count_faults) {
		keep = ctl->attr && T.t1 - T.tf0 >= ATTR_MIN_NS;
		if (keep) {
			attr_sched(&cpu1, &rq1);
			S.cs = -1;      /* the start of the next must read it */
		}
		T.faulted = minflt() != T.mf0;
		if (keep && T.faulted)
			txn_keep_fault(ctl, cpu1, rq1);
		T.excl = fast_ns() - T.t1;
	}
}

/* Verify under the latch: TXN_RETRY while a punch or truncate overlapped. */
static int txn_verify(struct ctl *ctl, size_t nw, uint64_t ls)
{
	char msg[sizeof(ctl->verify_msg)];
	enum dbbuf_state vr = session_verify(ctl, T.w, nw, T.idx, T.slot, &T.ver,
					     msg, sizeof(msg));

	if (vr == DBBUF_BAD) {
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if ((ls & 1) || __atomic_load_n(&ctl->loss_seq, __ATOMIC_ACQUIRE) != ls) {
			L.retries++;
			wait_loss_done(ctl);
			return TXN_RETRY;
		}
		if (L.verify_errors++ == 0 &&
		    !__atomic_exchange_n(&ctl->verify_msg_taken, 1, __ATOMIC_RELAXED))
			memcpy(ctl->verify_msg, msg, sizeof(msg));
		return TXN_DONE;
	}
	if (vr == DBBUF_ZERO)
		L.resets++;
	return T.wr ? TXN_WRITE : TXN_DONE;
}

/* Write version T.wver and commit it; false: a data loss overlapped, again. */
static bool txn_write(struct ctl *ctl, size_t nw, uint64_t ls)
{
	dbbuf_fill(T.w, nw, T.idx, T.wver);
	/* stores visible before we check that no data loss overlapped */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&ctl->loss_seq, __ATOMIC_ACQUIRE) == ls && !(ls & 1)) {
		ctl->committed[T.slot] = (uint32_t)T.wver;
		return true;
	}
	L.retries++;
	T.rewrite = true;
	wait_loss_done(ctl);
	return false;
}

/* Verify, then for a write the next version; a disrupted own write is
 * written again without a verify (it may be torn). */
static void txn_locked(struct ctl *ctl, size_t nw)
{
	for (;;) {
		uint64_t ls = __atomic_load_n(&ctl->loss_seq, __ATOMIC_ACQUIRE);

		if (!T.rewrite) {
			int v = txn_verify(ctl, nw, ls);

			if (v == TXN_RETRY)
				continue;
			if (v == TXN_DONE)
				return;
			T.wver = T.ver + 1;
		}
		if (txn_write(ctl, nw, ls))
			return;
	}
}

/* The latencies, also per disruption op when one ran during the transaction. */
static void txn_record(struct ctl *ctl, uint64_t *tprev)
{
	uint64_t t2 = fast_ns();
	uint64_t s1 = __atomic_load_n(&ctl->op_seq, __ATOMIC_ACQUIRE);

	*tprev = t2;
	hist_insert(&L.txn, t2 - T.t0 - T.excl);
	hist_insert(&L.access, T.t1 - T.t0);
	if (T.faulted)
		hist_insert(&L.faulting, T.t1 - T.tf0);
	if ((T.s0 & 1) || s1 != T.s0) {
		uint32_t op = (T.s0 & 1) ? T.op0 : __atomic_load_n(&ctl->op_cur, __ATOMIC_RELAXED);

		if (op < NOPS) {
			hist_insert(&L.dis_txn[op], t2 - T.t0 - T.excl);
			hist_insert(&L.dis_access[op], T.t1 - T.t0);
			if (T.faulted)
				hist_insert(&L.dis_faulting[op], T.t1 - T.tf0);
		}
	}
	L.txns++;
	if (T.wr)
		L.writes++;
	else
		L.reads++;
}

/*
 * One transaction.  *tprev is the end of the previous one (closed loop: the
 * next transaction starts right away), so two clock reads per transaction:
 * after the first access to the buffer and at the end.
 */
static void txn(const struct cfg *c, struct ctl *ctl, char *base,
		uint64_t *rng, size_t nw, uint64_t nbuf, uint64_t *tprev)
{
	txn_begin(c, ctl, base, rng, nbuf, *tprev);
	if (sigsetjmp(jb, 0)) {
		/* SIGBUS: the file was shrunk under us; wait until it regrows */
		L.sigbus++;
		if (T.wver)
			T.rewrite = true;
		wait_loss_done(ctl);
	}
	jb_armed = 1;
	txn_first_access(c, ctl);
	if (!T.locked) {
		latch_lock(T.lat);
		T.locked = true;
	}
	txn_locked(ctl, nw);
	latch_unlock(T.lat);
	jb_armed = 0;
	txn_record(ctl, tprev);
}

static void publish(struct ctl *ctl)
{
	if (ctl->attr)
		attr_publish(ctl->attr);
	hist_merge_atomic(&ctl->first_touch, &L.first_touch);
	hist_merge_atomic(&ctl->txn, &L.txn);
	hist_merge_atomic(&ctl->access, &L.access);
	hist_merge_atomic(&ctl->faulting, &L.faulting);
	for (int i = 0; i < NOPS; i++) {
		hist_merge_atomic(&ctl->dis_txn[i], &L.dis_txn[i]);
		hist_merge_atomic(&ctl->dis_access[i], &L.dis_access[i]);
		hist_merge_atomic(&ctl->dis_faulting[i], &L.dis_faulting[i]);
	}
	__atomic_fetch_add(&ctl->txns, L.txns, __ATOMIC_RELAXED);
	__atomic_fetch_add(&ctl->reads, L.reads, __ATOMIC_RELAXED);
	__atomic_fetch_add(&ctl->writes, L.writes, __ATOMIC_RELAXED);
	__atomic_fetch_add(&ctl->resets, L.resets, __ATOMIC_RELAXED);
	__atomic_fetch_add(&ctl->retries, L.retries, __ATOMIC_RELAXED);
	__atomic_fetch_add(&ctl->sigbus, L.sigbus, __ATOMIC_RELAXED);
	__atomic_fetch_add(&ctl->verify_errors, L.verify_errors, __ATOMIC_RELAXED);
	__atomic_fetch_add(&ctl->sessions_done, 1, __ATOMIC_RELEASE);
}

/* Signals and the process-local state (now, so the baseline includes it). */
static void session_init(struct ctl *ctl)
{
	struct sigaction sa;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != ctl->coordinator)
		_exit(4);               /* it died before the prctl */
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigaction(SIGBUS, &sa, NULL);
	signal(SIGINT, SIG_IGN);        /* the coordinator handles ^C */
	if (ctl->attr)
		attr_session_init();
	hist_init(&L.first_touch);
	hist_init(&L.txn);
	hist_init(&L.access);
	hist_init(&L.faulting);
	for (int i = 0; i < NOPS; i++) {
		hist_init(&L.dis_txn[i]);
		hist_init(&L.dis_access[i]);
		hist_init(&L.dis_faulting[i]);
	}
	(void)fast_ns();
}

/* Attach (or inherit) and fault the segment, timed; its address. */
static char *session_attach(const struct cfg *c, const struct seg *s, struct ctl *ctl,
			    unsigned int id)
{
	uint64_t t0 = fast_ns(), cpu0 = thread_cpu_ns();
	struct hist h, hc;
	char *base = s->addr;

	if (c->attach == A_ATTACH) {
		base = seg_map_at(c, s, s->addr);
		if (!base)
			session_fail(ctl, "session could not attach the segment at its address");
	}
	fault_all(c, ctl, base, id);
	hist_init(&h);
	hist_insert(&h, fast_ns() - t0);
	hist_init(&hc);
	hist_insert(&hc, thread_cpu_ns() - cpu0);
	hist_merge_atomic(&ctl->attach, &h);
	hist_merge_atomic(&ctl->attach_cpu, &hc);
	return base;
}

/* A mapper only (--active): sleep until the stop or the deadline. */
static void mapper_sleep(struct ctl *ctl, uint64_t deadline)
{
	while (!__atomic_load_n(&ctl->stop, __ATOMIC_ACQUIRE)) {
		uint64_t now = fast_ns();

		if (deadline && now >= deadline)
			break;
		futex_wait(&ctl->stop, 0, deadline ? (long)((deadline - now) / 1000000 + 1) : -1);
	}
}

/* Transactions until the stop, --txn-count or the deadline. */
static void session_run(const struct cfg *c, struct ctl *ctl, char *base, unsigned int id)
{
	uint64_t rng = rng_seed(c->seed, (uint64_t)id + 1);
	size_t nw = c->buffer_size / 8;
	uint64_t nbuf = session_buffers(c);
	uint64_t tprev = fast_ns();
	uint64_t deadline = __atomic_load_n(&ctl->deadline_ns, __ATOMIC_RELAXED);

	if (c->active && id >= c->active) {
		mapper_sleep(ctl, deadline);
		return;
	}
	/* stop on our own at the deadline: the coordinator may not get the CPU */
	while (!__atomic_load_n(&ctl->stop, __ATOMIC_RELAXED) &&
	       (!c->txn_count || L.txns < c->txn_count) &&
	       (!deadline || tprev < deadline))
		txn(c, ctl, base, &rng, nw, nbuf, &tprev);
}

void session_main(const struct cfg *c, const struct seg *s, struct ctl *ctl,
		  unsigned int id)
{
	char *base;

	L.id = id;
	session_init(ctl);
	arrive(ctl, PH_INIT, id);
	wait_phase(ctl, PH_ATTACH);
	base = session_attach(c, s, ctl, id);
	arrive(ctl, PH_ATTACH, id);
	if (id == 0) {
		/* test-only hook (README.md): a session that never exits */
		const char *e = getenv("HUGELAB_TEST_STUCK_SESSION");

		if (e && !strcmp(e, "1"))
			for (;;)
				pause();
	}
	wait_phase(ctl, PH_RUN);
	session_run(c, ctl, base, id);
	publish(ctl);
	arrive(ctl, PH_RUN, id);
	_exit(0);
}
