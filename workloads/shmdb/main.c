// SPDX-License-Identifier: GPL-2.0
/*
 * shmdb: a database-like workload on one huge shared-memory segment.
 *
 * The coordinator creates the segment, starts N sessions (fork), measures
 * PageTables before the sessions touch the segment, after all of them have
 * attached and faulted it, and at teardown; then lets them run transactions
 * (optionally while a disruptor process punches, truncates, mprotects,
 * unmaps and MADV_DONTNEEDs the segment) and writes one JSON document
 * (workloads/SCHEMA.md, "hugelab.shmdb/1").
 *
 * Exit: 0 ok, 1 a check failed, 2 bad input or setup failure (before any
 * session starts), 128+N killed by signal N (after cleanup).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fastclock.h"
#include "futex.h"
#include "rng.h"
#include "dbbuf.h"
#include "json.h"
#include "kmsg.h"
#include "model.h"
#include "opts.h"
#include "procfs.h"
#include "outfile.h"
#include "report.h"
#include "shmdb.h"
#include "stuck.h"

#define TXN_COST_MAX_BUF (1ull << 20)

static volatile sig_atomic_t got_signal;
static struct failures failures = { .prog = "shmdb" };
#define fail(...) failures_add(&failures, __VA_ARGS__)

static void bad(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void bad(const char *fmt, ...)
{
	va_list ap;

	fputs("shmdb: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static bool quiet;

static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char *fmt, ...)
{
	va_list ap;

	if (quiet)
		return;
	fputs("shmdb: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static struct hp_counts hp_before[MAX_SIZES];
static uint64_t hp_size[MAX_SIZES];
static int hp_n;

/*
 * The checks that need this machine: 1 GiB page support, the huge page pool,
 * memory for the segment, page tables and processes (cfg_needs).  Exits 2
 * with one line on stderr.
 */
static void host_checks(const struct cfg *c)
{
	struct machine_res m;
	struct needs n;
	char err[512], opts[128];

	if (c->page_size == (1ull << 30) && !cpu_has_flag("pdpe1gb"))
		bad("--page-size 1G: this CPU has no 1 GiB page support (pdpe1gb missing in /proc/cpuinfo)");
	if (c->page_size != 4096 && hp_read(HP_SYSFS, c->page_size, &hp_before[0]))
		bad("--page-size %" PRIu64 "K: the kernel has no huge page pool of that size (%s/hugepages-%" PRIu64 "kB)",
		    c->page_size >> 10, HP_SYSFS, c->page_size / 1024);
	hp_n = hp_sizes(HP_SYSFS, hp_size, MAX_SIZES);
	if (hp_n < 0)
		hp_n = 0;
	for (int i = 0; i < hp_n; i++)
		if (hp_read(HP_SYSFS, hp_size[i], &hp_before[i]))
			memset(&hp_before[i], 0, sizeof(hp_before[i]));
	if (machine_host(&m, err, sizeof(err)))
		bad("%s", err);
	cfg_needs(c, &n);
	cfg_needs_opts(c, opts, sizeof(opts));
	if (needs_fit(opts, &n, &m, err, sizeof(err)))
		bad("%s", err);
}

/*
 * Recording cost per call of clock_gettime and of a histogram insert: the
 * best of 5 rounds, so that other load on the machine does not inflate it.
 */
static void measure_overhead(double *clock_ns, double *insert_ns, double *rusage_ns)
{
	struct rusage ru;

	const int n = 50000;
	uint64_t acc = 0;
	struct hist h;

	*clock_ns = *insert_ns = *rusage_ns = 1e9;
	hist_init(&h);
	for (int round = 0; round < 5; round++) {
		uint64_t t0 = fast_ns();

		for (int i = 0; i < n; i++)
			acc += fast_ns();

		double cn = (double)(fast_ns() - t0) / n;

		t0 = fast_ns();
		for (int i = 0; i < n; i++)
			hist_insert(&h, (acc + (uint64_t)i * 2654435761u) & 0xfffffff);

		double in = (double)(fast_ns() - t0) / n;

		t0 = fast_ns();
		for (int i = 0; i < n / 10; i++)
			getrusage(RUSAGE_SELF, &ru);

		double rn = (double)(fast_ns() - t0) / (n / 10);

		if (rn < *rusage_ns)
			*rusage_ns = rn;
		if (cn < *clock_ns)
			*clock_ns = cn;
		if (in < *insert_ns)
			*insert_ns = in;
	}
	__asm__ volatile("" : : "r"(h.count) : "memory");
}

static void on_signal(int sig) { got_signal = sig; }

static pid_t *pids;
static uint64_t npids, nreaped;
static pid_t disruptor = -1;
static bool disruptor_reaped;

static bool *reaped;
static bool pids_sorted;

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return x < y ? -1 : x > y;
}

/* pids[] is sorted once every session is forked: bsearch, not a scan */
static int child_index(pid_t p)
{
	if (pids_sorted) {
		pid_t *e = bsearch(&p, pids, npids, sizeof(*pids), cmp_pid);

		return e ? (int)(e - pids) : -1;
	}
	for (uint64_t i = 0; i < npids; i++)
		if (pids[i] == p)
			return (int)i;
	return -1;
}

static uint64_t nsess_failed;      /* sessions reaped with a non-zero status */
/* The coordinator is ending the run (PH_ABORT, then SIGKILL): children that
 * exit 5 (wait_phase saw the abort) or die of its SIGKILL are that abort's
 * consequence, counted here, not failures of their own: listed one by one
 * they filled the failure list and pushed its cause out into "<N more>". */
static bool aborting;
static uint64_t n_aborted;
static pid_t prefault_pid = -1;
static struct stuck stuck;
static pid_t spared_pid = -1;           /* test hook: not SIGKILLed */
static uint64_t teardown_s;

/* Reap exited children (WNOHANG); a non-zero exit is a failure.  Returns
 * the number reaped. */
static int reap(void)
{
	int st, n = 0;
	pid_t p;

	while ((p = waitpid(-1, &st, WNOHANG)) > 0) {
		bool ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
		const char *who = "session";

		n++;
		if (p == disruptor) {
			disruptor_reaped = true;
			who = "disruptor";
		} else {
			int i = child_index(p);

			if (i >= 0) {
				reaped[i] = true;
				nreaped++;
				if (!ok)
					nsess_failed++;
			} else {
				who = p == prefault_pid ? "prefault process" : "process";
			}
		}
		if (!ok && aborting && p != prefault_pid &&
		    ((WIFEXITED(st) && WEXITSTATUS(st) == 5) ||
		     (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL))) {
			n_aborted++;
			continue;
		}
		if (!ok) {
			if (WIFSIGNALED(st))
				fail("%s %d killed by signal %d (%s)", who, (int)p, WTERMSIG(st),
				     strsignal(WTERMSIG(st)));
			else
				fail("%s %d exited with status %d", who, (int)p, WEXITSTATUS(st));
		}
	}
	return n;
}

static bool all_reaped(void)
{
	return nreaped >= npids && (disruptor <= 0 || disruptor_reaped);
}

/* Reap until every child is gone or the deadline (now_ns) passes. */
static bool reap_until(uint64_t deadline)
{
	for (;;) {
		reap();
		if (all_reaped())
			return true;
		if (now_ns() >= deadline)
			return false;
		usleep(10000);
	}
}

/* Wait until ctl->arrived[ph] reaches n; false on abort (signal, death). */
static bool wait_arrived(struct ctl *ctl, int ph, uint64_t n, uint64_t deadline_ns)
{
	for (;;) {
		uint32_t a = __atomic_load_n(&ctl->arrived[ph], __ATOMIC_ACQUIRE);

		if (a >= n)
			return true;
		if (got_signal || failures.n)
			return false;
		if (deadline_ns && now_ns() >= deadline_ns)
			return true;
		futex_wait(&ctl->arrived[ph], a, 100);
		reap();
	}
}

static void set_phase(struct ctl *ctl, uint32_t ph)
{
	__atomic_store_n(&ctl->phase, ph, __ATOMIC_RELEASE);
	futex_wake(&ctl->phase, INT_MAX);
}

/*
 * Test-only (README.md, "Test hooks"): HUGELAB_TEST_STUCK_SESSION=1 makes
 * session 0 never exit after attaching and stands for a task stuck in the
 * kernel, which SIGKILL does not end: the coordinator does not SIGKILL it.
 * It dies with the coordinator (PR_SET_PDEATHSIG).
 */
static bool test_stuck_session(void)
{
	const char *e = getenv("HUGELAB_TEST_STUCK_SESSION");

	return e && !strcmp(e, "1");
}

/*
 * SIGKILL every child and reap them until the deadline; those still there
 * are recorded as stuck (their PIDs, stacks and the kernel log go into the
 * JSON) and fail the run.
 */
static void kill_all(uint64_t deadline)
{
	for (uint64_t i = 0; i < npids; i++)
		if (!reaped[i] && pids[i] != spared_pid)
			kill(pids[i], SIGKILL);
	if (disruptor > 0 && !disruptor_reaped)
		kill(disruptor, SIGKILL);
	if (reap_until(deadline))
		return;
	for (uint64_t i = 0; i < npids; i++)
		if (!reaped[i])
			stuck_add(&stuck, pids[i], "session");
	if (disruptor > 0 && !disruptor_reaped)
		stuck_add(&stuck, disruptor, "disruptor");
	fail("%u processes still there %" PRIu64 " s after teardown began (see stuck)",
	     stuck.count, teardown_s);
}

static uint64_t meminfo_once(const char *key)
{
	struct kvlist m = { 0 };
	uint64_t v = 0;

	if (meminfo_read(&m) == 0)
		v = kv_get(&m, key, NULL);
	kvlist_free(&m);
	return v;
}

static uint64_t pagetables_once(void)
{
	return meminfo_once("PageTables");
}

/*
 * PageTables once it is stable: page tables of exited processes are freed
 * after an RCU grace period (x86 with paravirt), which takes a while under
 * TCG.  Three equal readings 50 ms apart, at most 3 s.
 */
static uint64_t pagetables(void)
{
	uint64_t v = pagetables_once();
	int same = 0;

	for (int i = 0; i < 60 && same < 2; i++) {
		usleep(50000);

		uint64_t n = pagetables_once();

		same = n == v ? same + 1 : 0;
		v = n;
	}
	return v;
}

/*
 * CPU cost of one transaction without latency recording, for the overhead
 * ratio: verify (+ update for write_pct) of buffers in private memory with
 * an uncontended latch, as the sessions do.
 */
static double txn_cost_ns(const struct cfg *c, uint64_t *sample_bytes)
{
	/*
	 * Bounded: at most TXN_COST_MEM of buffers and TXN_COST_WORK bytes
	 * verified per round (1 MiB buffers took 17 s, --buffer-size 1G asked
	 * for 64 GiB).  Buffers above TXN_COST_MAX_BUF are measured at that
	 * size and scaled linearly (verify and fill are linear in the size).
	 */
	const uint64_t mem_cap = 16ull << 20, work_cap = 64ull << 20;
	uint64_t bsz = c->buffer_size < TXN_COST_MAX_BUF ? c->buffer_size : TXN_COST_MAX_BUF;
	uint64_t nbuf = mem_cap / bsz < 64 ? mem_cap / bsz : 64;
	uint64_t n = work_cap / bsz;
	size_t nw = bsz / 8;
	uint64_t *mem, rng = rng_seed(12345, 0), ver;
	uint32_t latch = 0;
	double best = 1e18;

	if (n > 20000)
		n = 20000;
	*sample_bytes = bsz;
	mem = calloc(nbuf, bsz);
	if (!mem)
		return 0;
	for (int round = 0; round < 3; round++) {
		uint64_t t0 = fast_ns();

		for (uint64_t i = 0; i < n; i++) {
			uint64_t r = rng_next(&rng), idx = (r >> 8) % nbuf;
			volatile uint64_t *w = mem + idx * nw;
			uint32_t z = 0;

			__atomic_compare_exchange_n(&latch, &z, 1, false,
						    __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
			if (dbbuf_verify(w, nw, idx, &ver) != DBBUF_BAD &&
			    (r & 0xff) * 100 < c->write_pct * 256)
				dbbuf_fill(w, nw, idx, ver + 1);
			__atomic_store_n(&latch, 0, __ATOMIC_RELEASE);
		}

		double t = (double)(fast_ns() - t0) / (double)n;

		if (t < best)
			best = t;
	}
	free(mem);
	return best * (double)c->buffer_size / (double)bsz;
}

static struct outfile outf;

static void abandon_out(void)
{
	outfile_abandon(&outf);        /* a begun, unfinished JSON: its temporary file */
}

/* --check: the options as a run would take them, the needs, the shape. */
static int check_mode(const struct cfg *c)
{
	struct machine_res m;
	struct needs n;
	char err[512], opts[128];

	cfg_needs(c, &n);
	if (c->guest_shape) {
		if (machine_shape(c->guest_shape, &m, err, sizeof(err)))
			bad("%s", err);
		cfg_needs_opts(c, opts, sizeof(opts));
		if (needs_fit(opts, &n, &m, err, sizeof(err)))
			bad("%s", err);
	}
	needs_print_ok(&n);
	return 0;
}

static void describe_status(int st, char *buf, size_t len)
{
	if (WIFSIGNALED(st))
		snprintf(buf, len, "killed by signal %d (%s)", WTERMSIG(st),
			 strsignal(WTERMSIG(st)));
	else
		snprintf(buf, len, "exit status %d", WEXITSTATUS(st));
}

int main(int argc, char **argv)
{
	struct cfg c;
	struct seg s;
	struct results r;
	struct kmsg_scan k;
	char err[512];
	FILE *out;
	int e;

	memset(&r, 0, sizeof(r));
	if (cfg_parse(argc, argv, &c, err, sizeof(err)))
		bad("%s", err);
	if (c.help) {
		cfg_usage(stdout);
		return 0;
	}
	if (cfg_validate(&c, err, sizeof(err)))
		bad("%s", err);
	if (c.check)
		return check_mode(&c);
	quiet = c.quiet;
	teardown_s = c.teardown_timeout_s;
	host_checks(&c);
	if ((e = outfile_open(&outf, c.out)))
		bad("--out %s: %s", c.out, strerror(-e));
	atexit(abandon_out);

	{
		struct utsname u;

		/* does this kernel's PageTables count PUD pages (lib/model.h) */
		cfg_model(&c, c.sessions, uname(&u) == 0 && model_pud_counted(u.release),
			  &r.model);
	}
	{
		char b[128];
		const char *w = NULL;

		if (read_text("/sys/kernel/mm/transparent_hugepage/shmem_enabled",
			      b, sizeof(b)) > 0)
			w = sysfs_selected_word(b);
		snprintf(r.shmem_enabled, sizeof(r.shmem_enabled), "%s", w ? w : "");
	}
	/* 4 KiB pages: no shmem THP whatever shmem_enabled says (inherited by
	 * every child; the mappings also get MADV_NOHUGEPAGE) */
	if (c.page_size == 4096 && prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0))
		bad("prctl(PR_SET_THP_DISABLE): %s", strerror(errno));
	utc_now_iso(r.started, sizeof(r.started));
	kmsg_open(&k);
	fastclock_init(40);
	if (read_text("/sys/devices/system/clocksource/clocksource0/current_clocksource",
		      r.clocksource, sizeof(r.clocksource)) < 0)
		r.clocksource[0] = 0;
	measure_overhead(&r.clock_ns, &r.insert_ns, &r.rusage_ns);
	r.txn_cost_ns = txn_cost_ns(&c, &r.txn_cost_sample);
	if (vmstat_read(&r.vm_before))
		bad("cannot read /proc/vmstat");

	size_t ctl_len = (sizeof(struct ctl) + 4095) & ~4095ul;
	struct ctl *ctl = mmap(NULL, ctl_len, PROT_READ | PROT_WRITE,
			       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (ctl == MAP_FAILED)
		bad("mmap control area: %s", strerror(errno));
	ctl->coordinator = getpid();
	ctl->committed = mmap(NULL, session_buffers(&c) * sizeof(*ctl->committed),
			      PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (ctl->committed == MAP_FAILED)
		bad("mmap committed versions: %s", strerror(errno));
	hist_init(&ctl->attach);
	hist_init(&ctl->attach_cpu);
	hist_init(&ctl->faulting);
	hist_init(&ctl->first_touch);
	hist_init(&ctl->txn);
	hist_init(&ctl->access);
	for (int i = 0; i < NOPS; i++) {
		hist_init(&ctl->dis_txn[i]);
		hist_init(&ctl->dis_access[i]);
		hist_init(&ctl->dis_faulting[i]);
		hist_init(&ctl->op_dur[i]);
	}
	pids = calloc(c.sessions, sizeof(*pids));
	reaped = calloc(c.sessions, sizeof(*reaped));
	if (!pids || !reaped)
		bad("out of memory");

	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	if (seg_create(&c, &s, err, sizeof(err)))
		bad("%s", err);
	/* from here on every exit path writes the JSON */

	if (c.prefault && !got_signal) {
		uint64_t t0 = now_ns();
		int st = 0;
		pid_t w = 0;

		fflush(NULL);
		prefault_pid = fork();
		if (prefault_pid == 0)
			prefault_main(&c, &s, ctl);
		if (prefault_pid < 0)
			fail("fork of the prefault process: %s", strerror(errno));
		while (prefault_pid > 0 && !got_signal &&
		       (w = waitpid(prefault_pid, &st, 0)) < 0 && errno == EINTR)
			;
		if (prefault_pid > 0 && w != prefault_pid) {
			/* interrupted: stop it, bounded */
			uint64_t end = now_ns() + teardown_s * 1000000000ull;

			kill(prefault_pid, SIGKILL);
			while ((w = waitpid(prefault_pid, &st, WNOHANG)) == 0 && now_ns() < end)
				usleep(10000);
			if (w != prefault_pid) {
				stuck_add(&stuck, prefault_pid, "prefault");
				fail("prefault process %d still there %" PRIu64 " s after SIGKILL (see stuck)",
				     (int)prefault_pid, teardown_s);
			}
		} else if (prefault_pid > 0 && (!WIFEXITED(st) || WEXITSTATUS(st))) {
			char b[64];

			describe_status(st, b, sizeof(b));
			fail("could not fill the segment: prefault process %s", b);
		} else if (prefault_pid > 0) {
			r.prefault_s = (double)(now_ns() - t0) / 1e9;
			note("segment filled in %.3f s", r.prefault_s);
		}
	}
	r.pt_start = pagetables();
	r.mem_free_start = meminfo_once("MemFree");
	if (!failures.n && !got_signal) {
		fflush(NULL);
		note("starting %" PRIu64 " sessions", c.sessions);
	}
	for (uint64_t i = 0; i < c.sessions && !got_signal && !failures.n; i++) {
		pid_t p = fork();

		if (p == 0)
			session_main(&c, &s, ctl, (unsigned int)i);
		if (p < 0) {
			int e = errno;
			char why[1200];

			pids_limit_read(why, sizeof(why));
			fail("fork of session %" PRIu64 ": %s%s", i, strerror(e),
			     e == EAGAIN ? why : "");
			break;
		}
		if (i == 0 && test_stuck_session())
			spared_pid = p;
		pids[npids++] = p;
	}

	/* sessions reaped during the fork loop were marked at their index */
	if (!nreaped) {
		qsort(pids, npids, sizeof(*pids), cmp_pid);
		pids_sorted = true;
	}

	uint64_t t;
	bool ok = !failures.n && !got_signal && wait_arrived(ctl, PH_INIT, c.sessions, 0);

	/* the coordinator must get the CPU among thousands of sessions */
	setpriority(PRIO_PROCESS, 0, -5);

	if (ok) {
		r.pt_before = pagetables();
		t = now_ns();
		ctl->attach_start_ns = t;
		set_phase(ctl, PH_ATTACH);
		ok = wait_arrived(ctl, PH_ATTACH, c.sessions, 0);
		r.attach_s = (double)(now_ns() - t) / 1e9;
	}
	if (ok) {
		r.pt_attached = pagetables();
		r.mem_free_attached = meminfo_once("MemFree");
		/* the sharing counters at the same moment (a shell polling the
		 * progress line from outside can see the sessions' teardown) */
		vmstat_read(&r.vm_attached);
		r.vmpte.min = UINT64_MAX;
		for (uint64_t i = 0; i < npids; i++) {
			int64_t v = reaped[i] ? -1 : status_vmpte_read(pids[i]);

			if (v < 0)
				continue;
			r.vmpte.n++;
			r.vmpte.sum += (uint64_t)v;
			if ((uint64_t)v < r.vmpte.min)
				r.vmpte.min = (uint64_t)v;
			if ((uint64_t)v > r.vmpte.max)
				r.vmpte.max = (uint64_t)v;
		}
		note("%" PRIu64 " sessions attached and faulted %" PRIu64 " MiB in %.3f s; PageTables +%" PRId64 " bytes (model %" PRIu64 ")",
		     c.sessions, c.size >> 20, r.attach_s,
		     (int64_t)r.pt_attached - (int64_t)r.pt_before, r.model.expected_bytes);
		if (c.disrupt) {
			fflush(NULL);
			disruptor = fork();
			if (disruptor == 0)
				disrupt_main(&c, &s, ctl);
			if (disruptor < 0)
				fail("fork of disruptor: %s", strerror(errno));
			/* it maps and faults the segment before the run starts */
			while (disruptor > 0 && !got_signal && !failures.n &&
			       !__atomic_load_n(&ctl->disruptor_ready, __ATOMIC_ACQUIRE)) {
				futex_wait(&ctl->disruptor_ready, 0, 100);
				reap();
			}
			ok = !got_signal && !failures.n;
		}
	}
	if (ok) {
		t = now_ns();
		if (c.duration_ms)
			ctl->deadline_ns = fast_ns() + c.duration_ms * 1000000ull;
		set_phase(ctl, PH_RUN);
		ok = wait_arrived(ctl, PH_RUN, c.sessions,
				  c.duration_ms ? t + c.duration_ms * 1000000ull : 0);
		/* the rate is over the run until stop, not the sessions' exit */
		r.run_s = (double)(now_ns() - t) / 1e9;
		__atomic_store_n(&ctl->stop, 1, __ATOMIC_RELEASE);
		futex_wake(&ctl->stop, INT_MAX);
		if (ok) {
			ok = wait_arrived(ctl, PH_RUN, c.sessions,
					  now_ns() + teardown_s * 1000000000ull);
			if (__atomic_load_n(&ctl->arrived[PH_RUN], __ATOMIC_ACQUIRE) < c.sessions) {
				fail("%" PRIu64 " of %" PRIu64 " sessions did not report within %" PRIu64
				     " s of the stop", c.sessions - ctl->arrived[PH_RUN], c.sessions,
				     teardown_s);
				ok = false;
			}
		}
		r.stop_s = (double)(now_ns() - t) / 1e9 - r.run_s;
	}

	uint64_t td_end = now_ns() + teardown_s * 1000000000ull;

	if (ok) {
		/* every session reported: they exit on their own */
		if (!reap_until(td_end))
			kill_all(now_ns() + 2000000000ull);
	} else {
		/* the cause first, before what the abort does to the children */
		if (got_signal)
			fail("interrupted by signal %d", (int)got_signal);
		else if (!failures.n)
			fail("aborted");
		/* interrupted while running: let the sessions report (2 s) */
		if (__atomic_load_n(&ctl->phase, __ATOMIC_ACQUIRE) == PH_RUN) {
			uint64_t end = now_ns() + 2000000000ull;

			__atomic_store_n(&ctl->stop, 1, __ATOMIC_RELEASE);
			futex_wake(&ctl->stop, INT_MAX);
			/* those that failed will never report */
			while (__atomic_load_n(&ctl->arrived[PH_RUN], __ATOMIC_ACQUIRE) +
			       nsess_failed < npids && now_ns() < end) {
				usleep(10000);
				reap();
			}
		}
		aborting = true;
		set_phase(ctl, PH_ABORT);
		kill_all(td_end);
		if (n_aborted)
			note("%" PRIu64 " processes ended by the abort", n_aborted);
	}

	seg_destroy(&c, &s);
	r.pt_teardown = pagetables();
	/* pages of exited sessions are freed synchronously; allow a short grace */
	for (int tries = 0; tries < 50; tries++) {
		bool all = true;

		for (int i = 0; i < hp_n; i++) {
			if (hp_read(HP_SYSFS, hp_size[i], &r.hp_after[i]))
				memset(&r.hp_after[i], 0, sizeof(r.hp_after[i]));
			r.hp_returned[i] = r.hp_after[i].free == hp_before[i].free &&
					   r.hp_after[i].rsvd == hp_before[i].rsvd &&
					   r.hp_after[i].nr == hp_before[i].nr;
			all &= r.hp_returned[i];
		}
		if (all)
			break;
		usleep(20000);
	}
	for (int i = 0; i < hp_n; i++)
		if (!r.hp_returned[i])
			fail("huge pages of size %" PRIu64 " not returned: free %" PRIu64 " -> %" PRIu64
			     ", rsvd %" PRIu64 " -> %" PRIu64 ", nr %" PRIu64 " -> %" PRIu64,
			     hp_size[i], hp_before[i].free, r.hp_after[i].free,
			     hp_before[i].rsvd, r.hp_after[i].rsvd, hp_before[i].nr, r.hp_after[i].nr);
	vmstat_read(&r.vm_after);
	kmsg_poll(&k);

	if (ctl->verify_errors)
		fail("%" PRIu64 " data verification errors (%s)", ctl->verify_errors, ctl->verify_msg);
	if (ctl->op_errors)
		fail("%" PRIu64 " disruptor operation errors (%s)", ctl->op_errors, ctl->op_error_msg);
	if (ctl->session_errors)
		fail("%" PRIu64 " session errors (%s)", ctl->session_errors, ctl->session_msg);
	if (!k.available)
		fail("/dev/kmsg could not be read: kernel log not checked");
	else if (k.findings)
		fail("kernel log: %u findings (see kernel_log.excerpt)", k.findings);
	if (ok && ctl->sessions_done != c.sessions)
		fail("only %" PRIu64 " of %" PRIu64 " sessions finished", ctl->sessions_done, c.sessions);

	/* error: interrupted (SIGINT/TERM/HUP); fail: any check or process */
	r.status = got_signal ? "error" : failures.n ? "fail" : "ok";
	utc_now_iso(r.finished, sizeof(r.finished));

	int rc = got_signal ? 128 + got_signal : failures.n ? 1 : 0;

	out = outfile_begin(&outf);
	if (!out) {
		fprintf(stderr, "shmdb: --out %s: %s: no JSON written\n", c.out, strerror(errno));
		rc = rc ? rc : 1;
	} else {
		bool werr;

		r.hp_n = hp_n;
		memcpy(r.hp_size, hp_size, sizeof(hp_size));
		memcpy(r.hp_before, hp_before, sizeof(hp_before));
		r.failures = &failures;
		r.stuck = &stuck;
		werr = report_json(out, &c, &s, ctl, &r, &k);

		if (outfile_end(&outf, out, !werr)) {
			fprintf(stderr, "shmdb: error writing the JSON document%s%s\n",
				c.out ? " to " : "", c.out ? c.out : "");
			rc = rc ? rc : 1;
		}
	}
	note("status %s: %" PRIu64 " transactions in %.2f s, %d failures", r.status,
	     ctl->txns, r.run_s, failures.n);
	kmsg_close(&k);
	return rc;
}
