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
#include "fleet.h"
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

#define NS 1000000000ull

/* The coordinator's state: what the phases below fill in. */
static struct cfg c;
static struct seg s;
static struct results r;
static struct kmsg_scan k;
static struct ctl *ctl;
static struct fleet fleet;              /* the sessions, then the disruptor */
static struct stuck stuck;
static uint32_t disruptor_idx = UINT32_MAX;
static struct attr_trace atrace;        /* --attribute */

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

/* Options, --help, --check, this host, the output file: exits 0 or 2. */
static void parse_and_check(int argc, char **argv)
{
	char err[512];
	int e;

	if (cfg_parse(argc, argv, &c, err, sizeof(err)))
		bad("%s", err);
	if (c.help) {
		cfg_usage(stdout);
		exit(0);
	}
	if (cfg_validate(&c, err, sizeof(err)))
		bad("%s", err);
	if (c.check)
		exit(check_mode(&c));
	quiet = c.quiet;
	host_checks(&c);
	if ((e = outfile_open(&outf, c.out)))
		bad("--out %s: %s", c.out, strerror(-e));
	atexit(abandon_out);
}

/* The model, the machine's settings and the recording costs. */
static void measure_setup(void)
{
	struct utsname u;
	char b[128];
	const char *w = NULL;

	/* does this kernel's PageTables count PUD pages (lib/model.h) */
	cfg_model(&c, c.sessions, uname(&u) == 0 && model_pud_counted(u.release), &r.model);
	if (read_text("/sys/kernel/mm/transparent_hugepage/shmem_enabled", b, sizeof(b)) > 0)
		w = sysfs_selected_word(b);
	snprintf(r.shmem_enabled, sizeof(r.shmem_enabled), "%s", w ? w : "");
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
}

/* The shared control area, the fleet, the signal handlers: exits 2. */
static void make_ctl(void)
{
	size_t ctl_len = (sizeof(struct ctl) + 4095) & ~4095ul;
	struct sigaction sa;

	ctl = mmap(NULL, ctl_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (ctl == MAP_FAILED)
		bad("mmap control area: %s", strerror(errno));
	ctl->coordinator = getpid();
	ctl->committed = mmap(NULL, session_buffers(&c) * sizeof(*ctl->committed),
			      PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (ctl->committed == MAP_FAILED)
		bad("mmap committed versions: %s", strerror(errno));
	if (c.attribute && !(ctl->attr = attr_shared_new()))
		bad("mmap the attribution records: %s", strerror(errno));
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
	if (fleet_init(&fleet, (uint32_t)c.sessions + 1, &failures, &stuck, &got_signal))
		bad("out of memory");
	ctl->fleet = fleet.sh;
	fleet.stall_ns = c.teardown_timeout_s * NS;     /* the ready and attach waits */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

static void prefault_fn(void *arg, uint32_t idx)
{
	(void)arg;
	(void)idx;
	prefault_main(&c, &s, ctl->coordinator);
}

/* The helper fills the segment (default); a failure is recorded. */
static void prefault(void)
{
	struct fleet pf;
	uint64_t t0 = now_ns();

	if (fleet_init(&pf, 1, &failures, &stuck, &got_signal)) {
		fail("prefault: out of memory");
		return;
	}
	if (fleet_run_one(&pf, "prefault", prefault_fn, NULL, c.teardown_timeout_s * NS)) {
		if (!got_signal)
			fail("could not fill the segment (prefault process)");
	} else {
		r.prefault_s = (double)(now_ns() - t0) / 1e9;
		note("segment filled in %.3f s", r.prefault_s);
	}
	fleet_free(&pf);
}

static void session_fn(void *arg, uint32_t idx)
{
	(void)arg;
	session_main(&c, &s, ctl, idx);
}

static void disruptor_fn(void *arg, uint32_t idx)
{
	(void)arg;
	(void)idx;
	disrupt_main(&c, &s, ctl);
}

static void start_sessions(void)
{
	if (!failures.n && !got_signal) {
		fflush(NULL);
		note("starting %" PRIu64 " sessions", c.sessions);
	}
	for (uint64_t i = 0; i < c.sessions && !got_signal && !failures.n; i++)
		if (fleet_spawn(&fleet, "session", session_fn, NULL) < 0)
			break;
	fleet_seal(&fleet);
	if (test_stuck_session())
		fleet_spare(&fleet, 0);
}

/* VmPTE of every session still there. */
static void read_vmpte(void)
{
	r.vmpte.min = UINT64_MAX;
	for (uint32_t i = 0; i < fleet.n; i++) {
		int64_t v = fleet.m[i].end != FLEET_RUNNING ? -1 : status_vmpte_read(fleet.m[i].pid);

		if (v < 0)
			continue;
		r.vmpte.n++;
		r.vmpte.sum += (uint64_t)v;
		if ((uint64_t)v < r.vmpte.min)
			r.vmpte.min = (uint64_t)v;
		if ((uint64_t)v > r.vmpte.max)
			r.vmpte.max = (uint64_t)v;
	}
}

/* The disruptor maps and faults the segment before the run starts. */
static bool start_disruptor(void)
{
	uint64_t end = now_ns() + c.teardown_timeout_s * NS;

	if (fleet_spawn(&fleet, "disruptor", disruptor_fn, NULL) < 0)
		return false;
	disruptor_idx = fleet.n - 1;
	fleet_seal(&fleet);
	while (!got_signal && !failures.n &&
	       !__atomic_load_n(&ctl->disruptor_ready, __ATOMIC_ACQUIRE)) {
		if (now_ns() >= end) {
			fail("the disruptor (pid %d) did not map and fault the segment within %" PRIu64 " s",
			     (int)fleet.m[disruptor_idx].pid, c.teardown_timeout_s);
			return false;
		}
		futex_wait(&ctl->disruptor_ready, 0, 100);
		fleet_reap(&fleet);
	}
	return !got_signal && !failures.n;
}

/*
 * Every session ready, PageTables before, attach and fault, PageTables
 * attached.  Each wait ends after --teardown-timeout-s without an arrival,
 * naming the sessions that did not arrive.
 */
static bool attach_phase(void)
{
	uint32_t n = (uint32_t)c.sessions;
	bool ok = !failures.n && !got_signal &&
		  fleet_wait(&fleet, PH_INIT, n, 0, "get ready") == FLEET_ARRIVED;
	uint64_t t;

	/* the coordinator must get the CPU among thousands of sessions */
	setpriority(PRIO_PROCESS, 0, -5);
	if (!ok)
		return false;
	r.pt_before = fleet_meminfo_settled("PageTables");
	t = now_ns();
	ctl->attach_start_ns = t;
	fleet_release(&fleet, PH_ATTACH);
	ok = fleet_wait(&fleet, PH_ATTACH, n, 0, "attach and fault the segment") == FLEET_ARRIVED;
	r.attach_s = (double)(now_ns() - t) / 1e9;
	if (!ok)
		return false;
	r.pt_attached = fleet_meminfo_settled("PageTables");
	r.mem_free_attached = meminfo_once("MemFree");
	/* the sharing counters at the same moment (a shell polling the
	 * progress line from outside can see the sessions' teardown) */
	vmstat_read(&r.vm_attached);
	read_vmpte();
	note("%" PRIu64 " sessions attached and faulted %" PRIu64 " MiB in %.3f s; PageTables +%" PRId64 " bytes (model %" PRIu64 ")",
	     c.sessions, c.size >> 20, r.attach_s,
	     (int64_t)r.pt_attached - (int64_t)r.pt_before, r.model.expected_bytes);
	return !c.disrupt || start_disruptor();
}

static void stop_sessions(void)
{
	__atomic_store_n(&ctl->stop, 1, __ATOMIC_RELEASE);
	futex_wake(&ctl->stop, INT_MAX);
}

/*
 * Until every session finished its transactions: --duration, then the stop
 * and --teardown-timeout-s for the reports; or --txn-count alone, with no
 * limit until one session finished, then --teardown-timeout-s at most
 * between two finishing.
 */
static bool run_phase(void)
{
	uint32_t n = (uint32_t)c.sessions;
	uint64_t t = now_ns(), td = c.teardown_timeout_s * NS;
	bool ok;

	if (c.duration_ms)
		ctl->deadline_ns = fast_ns() + c.duration_ms * 1000000ull;
	if (ctl->attr)
		attr_trace_start(&atrace);
	note("run started: %" PRIu64 " ms", c.duration_ms);
	fleet_release(&fleet, PH_RUN);
	fleet.stall_ns = c.duration_ms ? 0 : td;
	ok = fleet_wait(&fleet, PH_RUN, n, c.duration_ms ? t + c.duration_ms * 1000000ull : 0,
			c.duration_ms ? NULL : "finish its transactions") != FLEET_INTERRUPTED;
	/* the rate is over the run until stop, not the sessions' exit */
	r.run_s = (double)(now_ns() - t) / 1e9;
	stop_sessions();
	if (ctl->attr)
		attr_trace_stop(&atrace);
	fleet.stall_ns = 0;
	if (ok)
		ok = fleet_wait(&fleet, PH_RUN, n, now_ns() + td,
				"report after the stop") == FLEET_ARRIVED;
	r.stop_s = (double)(now_ns() - t) / 1e9 - r.run_s;
	return ok;
}

/* Sessions that can no longer report: reaped before they arrived at PH_RUN. */
static uint32_t gone_unreported(void)
{
	uint32_t g = 0;

	for (uint32_t i = 0; i < fleet.n && i < c.sessions; i++)
		g += fleet.m[i].end != FLEET_RUNNING && fleet.sh->mark[i] <= PH_RUN;
	return g;
}

/* A failed or interrupted run: the cause first, let running sessions
 * report (2 s), then the abort. */
static void abort_run(void)
{
	if (got_signal)
		fail("interrupted by signal %d", (int)got_signal);
	else if (!failures.n)
		fail("aborted");
	if (__atomic_load_n(&fleet.sh->phase, __ATOMIC_ACQUIRE) == PH_RUN) {
		uint64_t end = now_ns() + 2 * NS;

		stop_sessions();
		while (__atomic_load_n(&fleet.sh->arrived[PH_RUN], __ATOMIC_ACQUIRE) +
		       gone_unreported() < fleet.n - (disruptor_idx < fleet.n) && now_ns() < end) {
			usleep(10000);
			fleet_reap(&fleet);
		}
	}
	fleet_abort(&fleet);
}

/* Reap every child, bounded by --teardown-timeout-s; SIGKILL, list the stuck. */
static void reap_all(bool ok)
{
	uint64_t td_end = now_ns() + c.teardown_timeout_s * NS;
	char when[64];

	snprintf(when, sizeof(when), "%" PRIu64 " s after teardown began", c.teardown_timeout_s);
	if (!ok) {
		/* a session that died may hold a latch the others wait on: SIGKILL */
		abort_run();
		fleet_stop(&fleet, td_end, when);
	} else if (!fleet_wait_exit(&fleet, td_end)) {
		/* every session reported: they exit on their own, or are stuck */
		fleet_stop(&fleet, now_ns() + 2 * NS, when);
	}
	if (fleet.n_aborted)
		note("%" PRIu64 " processes ended by the abort", fleet.n_aborted);
}

/* The segment gone: PageTables, the pools, the counters, the kernel log. */
static void teardown_checks(bool ok)
{
	seg_destroy(&c, &s);
	r.pt_teardown = fleet_meminfo_settled("PageTables");
	/* pages of exited sessions are freed synchronously; allow a short grace */
	fleet_hp_wait(HP_SYSFS, hp_n, hp_size, hp_before, r.hp_after, r.hp_returned, 1000);
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
}

/* The JSON document; the exit code. */
static int write_report(void)
{
	/* error: interrupted (SIGINT/TERM/HUP); fail: any check or process */
	int rc = got_signal ? 128 + got_signal : failures.n ? 1 : 0;
	FILE *out;

	r.status = got_signal ? "error" : failures.n ? "fail" : "ok";
	utc_now_iso(r.finished, sizeof(r.finished));
	out = outfile_begin(&outf);
	if (!out) {
		fprintf(stderr, "shmdb: --out %s: %s: no JSON written\n", c.out, strerror(errno));
		return rc ? rc : 1;
	}
	r.hp_n = hp_n;
	memcpy(r.hp_size, hp_size, sizeof(hp_size));
	memcpy(r.hp_before, hp_before, sizeof(hp_before));
	r.failures = &failures;
	r.stuck = &stuck;
	r.attr_trace = ctl->attr ? &atrace : NULL;
	if (outfile_end(&outf, out, !report_json(out, &c, &s, ctl, &r, &k))) {
		fprintf(stderr, "shmdb: error writing the JSON document%s%s\n",
			c.out ? " to " : "", c.out ? c.out : "");
		rc = rc ? rc : 1;
	}
	return rc;
}

int main(int argc, char **argv)
{
	char err[512];
	bool ok;
	int rc;

	parse_and_check(argc, argv);
	measure_setup();
	make_ctl();
	if (seg_create(&c, &s, err, sizeof(err)))
		bad("%s", err);
	/* from here on every exit path writes the JSON */
	if (ctl->attr) {        /* before any fork: traces our descendants */
		attr_trace_setup(&atrace, getpid());
		attr_measure(&atrace);
	}
	if (c.prefault && !got_signal)
		prefault();
	r.pt_start = fleet_meminfo_settled("PageTables");
	r.mem_free_start = meminfo_once("MemFree");
	start_sessions();
	ok = attach_phase() && run_phase();
	reap_all(ok);
	teardown_checks(ok);
	if (ctl->attr)
		attr_trace_collect(&atrace, ctl->attr);
	rc = write_report();
	note("status %s: %" PRIu64 " transactions in %.2f s, %d failures", r.status,
	     ctl->txns, r.run_s, failures.n);
	kmsg_close(&k);
	return rc;
}
