// SPDX-License-Identifier: GPL-2.0
/*
 * forktouch: fork N processes that attach (or inherit) one shared segment
 * and fault its pages, and time each: the bare baseline of shmdb's attach
 * phase (forktouch.h).  One JSON document, "hugelab.forktouch/1"
 * (workloads/SCHEMA.md).
 *
 * Phases: the segment is created (and filled by shmdb's prefault helper);
 * the processes are forked and wait; PageTables "before"; one start signal;
 * each process attaches, faults its pages (shmdb's order: its own first
 * page, lib-free loop), records its time and waits; PageTables "attached";
 * all exit; teardown bounded by --teardown-timeout-s.
 *
 * Exit: 0 ok, 1 fail, 2 bad input or setup failure, 128+N signal N.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "forktouch.h"
#include "futex.h"
#include "failures.h"
#include "hist.h"
#include "json.h"
#include "kmsg.h"
#include "needs.h"
#include "outfile.h"
#include "procfs.h"
#include "stuck.h"

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
#define MAX_SIZES 8

/* Shared with the children: latches and one time per process. */
struct shared {
	uint32_t ready, go, arrived, done;
	uint32_t errors;
	struct {
		uint64_t ns;            /* attach+fault time of process i */
		uint64_t cpu_ns;        /* its CPU time in that window */
	} t[];
};

static volatile sig_atomic_t got_signal;
static struct failures failures = { .prog = "forktouch" };
#define fail(...) failures_add(&failures, __VA_ARGS__)
static bool quiet;

static void on_signal(int sig) { got_signal = sig; }

static void bad(const char *msg)
{
	fprintf(stderr, "forktouch: %s\n", msg);
	exit(2);
}

/* PageTables once three readings 50 ms apart agree (at most 3 s). */
static uint64_t pagetables(void)
{
	uint64_t v = UINT64_MAX;
	int same = 0;

	for (int i = 0; i < 60 && same < 2; i++) {
		struct kvlist m = { 0 };
		uint64_t n = 0;

		if (i)
			usleep(50000);
		if (meminfo_read(&m) == 0)
			n = kv_get(&m, "PageTables", NULL);
		kvlist_free(&m);
		same = n == v ? same + 1 : 0;
		v = n;
	}
	return v;
}

static void wait_word(uint32_t *w, uint32_t want)
{
	uint32_t v;

	while ((v = __atomic_load_n(w, __ATOMIC_ACQUIRE)) < want)
		futex_wait(w, v, -1);
}

static void bump(uint32_t *w, uint64_t n)
{
	if (__atomic_add_fetch(w, 1, __ATOMIC_ACQ_REL) == n)
		futex_wake(w, INT_MAX);
}

/* A process: attach, fault shmdb's pages in shmdb's order, report. */
static void child(const struct cfg *c, const struct seg *s, struct shared *sh,
		  pid_t parent, unsigned int id)
{
	uint64_t n = seg_touch_pages(c), first = (id * 2654435761ull) % n;
	char *base;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(4);
	signal(SIGINT, SIG_IGN);
	bump(&sh->ready, c->sessions);
	wait_word(&sh->go, 1);

	uint64_t t0 = now_ns(), cpu0 = thread_cpu_ns();

	base = c->attach == A_ATTACH ? seg_map_at(c, s, s->addr) : s->addr;
	if (!base) {
		__atomic_fetch_add(&sh->errors, 1, __ATOMIC_RELAXED);
		_exit(3);
	}
	if (c->page_size == 4096 && c->populate) {
		for (uint64_t off = 0; off < c->size; off += 2ull << 20)
			madvise(base + off, c->size - off < (2ull << 20) ? c->size - off : 2ull << 20,
				MADV_POPULATE_READ);
	} else {
		for (uint64_t i = 0; i < n; i++) {
			uint64_t *p = (uint64_t *)(base + seg_touch_offset(c, (first + i) % n));

			if (c->priv)
				(void)*(volatile uint64_t *)p;
			else
				__atomic_fetch_add(p, 0, __ATOMIC_RELAXED);
		}
	}
	sh->t[id].ns = now_ns() - t0;
	sh->t[id].cpu_ns = thread_cpu_ns() - cpu0;
	bump(&sh->arrived, c->sessions);
	wait_word(&sh->done, 1);
	_exit(0);
}

/* Wait until *w reaches n; false on a signal or a failure. */
static bool wait_all(uint32_t *w, uint64_t n, uint64_t *reaped_bad)
{
	for (;;) {
		uint32_t v = __atomic_load_n(w, __ATOMIC_ACQUIRE);
		int st;
		pid_t p;

		if (v >= n)
			return true;
		if (got_signal || failures.n)
			return false;
		futex_wait(w, v, 100);
		while ((p = waitpid(-1, &st, WNOHANG)) > 0) {
			(*reaped_bad)++;
			fail("process %d ended early (%s %d)", (int)p,
			     WIFSIGNALED(st) ? "signal" : "exit status",
			     WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
		}
	}
}

int main(int argc, char **argv)
{
	static struct ctl pctl;         /* prefault_main reads the coordinator */
	struct hp_counts hp_before[MAX_SIZES], hp_after[MAX_SIZES];
	uint64_t hp_size[MAX_SIZES];
	struct machine_res m;
	struct needs need;
	struct outfile outf;
	struct kmsg_scan k;
	struct stuck stuck;
	struct cfg c;
	struct seg s;
	char err[512], opts[128], started[32], finished[32];
	uint64_t pt_before = 0, pt_attached = 0, npids = 0, bad_exits = 0;
	double prefault_s = 0, total_s = 0;
	pid_t *pids;
	int hp_n, e;

	memset(&stuck, 0, sizeof(stuck));
	if (ft_parse(argc, argv, &c, err, sizeof(err)))
		bad(err);
	if (c.help) {
		ft_usage(stdout);
		return 0;
	}
	cfg_needs(&c, &need);
	cfg_needs_opts(&c, opts, sizeof(opts));
	if (c.check) {
		if (c.guest_shape && (machine_shape(c.guest_shape, &m, err, sizeof(err)) ||
				      needs_fit(opts, &need, &m, err, sizeof(err))))
			bad(err);
		needs_print_ok(&need);
		return 0;
	}
	quiet = c.quiet;
	if (machine_host(&m, err, sizeof(err)) || needs_fit(opts, &need, &m, err, sizeof(err)))
		bad(err);
	/* as shmdb: 4 KiB pages never become shmem THP (children inherit) */
	if (c.page_size == 4096 && prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0))
		bad("prctl(PR_SET_THP_DISABLE) failed");
	if ((e = outfile_open(&outf, c.out))) {
		snprintf(err, sizeof(err), "--out %s: %s", c.out, strerror(-e));
		bad(err);
	}
	hp_n = hp_sizes(HP_SYSFS, hp_size, MAX_SIZES);
	for (int i = 0; i < hp_n; i++)
		if (hp_read(HP_SYSFS, hp_size[i], &hp_before[i]))
			memset(&hp_before[i], 0, sizeof(hp_before[i]));
	utc_now_iso(started, sizeof(started));
	kmsg_open(&k);

	struct shared *sh = mmap(NULL, sizeof(*sh) + c.sessions * sizeof(sh->t[0]),
				 PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	pids = calloc(c.sessions, sizeof(*pids));
	if (sh == MAP_FAILED || !pids)
		bad("out of memory");

	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	if (seg_create(&c, &s, err, sizeof(err))) {
		outfile_abandon(&outf);
		bad(err);
	}
	pctl.coordinator = getpid();
	if (c.prefault) {
		uint64_t t0 = now_ns();
		int st;
		pid_t p;

		fflush(NULL);
		p = fork();
		if (p == 0)
			prefault_main(&c, &s, &pctl);
		while (p > 0 && waitpid(p, &st, 0) < 0 && errno == EINTR && !got_signal)
			;
		if (p < 0 || got_signal || !WIFEXITED(st) || WEXITSTATUS(st))
			fail("could not fill the segment (prefault process)");
		prefault_s = (double)(now_ns() - t0) / 1e9;
	}
	fflush(NULL);
	for (uint64_t i = 0; i < c.sessions && !failures.n && !got_signal; i++) {
		pid_t p = fork();

		if (p == 0)
			child(&c, &s, sh, pctl.coordinator, (unsigned int)i);
		if (p < 0) {
			int e = errno;
			char why[1200];

			pids_limit_read(why, sizeof(why));
			fail("fork of process %" PRIu64 ": %s%s", i, strerror(e),
			     e == EAGAIN ? why : "");
			break;
		}
		pids[npids++] = p;
	}
	if (!quiet)
		fprintf(stderr, "forktouch: %" PRIu64 " processes forked\n", npids);
	if (!failures.n && wait_all(&sh->ready, c.sessions, &bad_exits)) {
		pt_before = pagetables();

		uint64_t t0 = now_ns();

		__atomic_store_n(&sh->go, 1, __ATOMIC_RELEASE);
		futex_wake(&sh->go, INT_MAX);
		if (wait_all(&sh->arrived, c.sessions, &bad_exits)) {
			total_s = (double)(now_ns() - t0) / 1e9;
			pt_attached = pagetables();
		}
	}
	/* teardown: release, reap until the deadline, SIGKILL, reap, list */
	__atomic_store_n(&sh->done, 1, __ATOMIC_RELEASE);
	futex_wake(&sh->done, INT_MAX);
	uint64_t reaped = bad_exits;

	for (int round = 0; round < 2 && reaped < npids; round++) {
		uint64_t end = now_ns() + c.teardown_timeout_s * 1000000000ull;

		if (round)
			for (uint64_t i = 0; i < npids; i++)
				if (pids[i] > 0)
					kill(pids[i], SIGKILL);
		while (reaped < npids && now_ns() < end) {
			int st;
			pid_t p = waitpid(-1, &st, WNOHANG);

			if (p <= 0) {
				usleep(10000);
				continue;
			}
			for (uint64_t i = 0; i < npids; i++)
				if (pids[i] == p) {
					pids[i] = 0;
					reaped++;
					if (!round && !(WIFEXITED(st) && !WEXITSTATUS(st)))
						fail("process %d: %s %d", (int)p,
						     WIFSIGNALED(st) ? "killed by signal" : "exit status",
						     WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
				}
		}
	}
	for (uint64_t i = 0; i < npids; i++)
		if (pids[i] > 0)
			stuck_add(&stuck, pids[i], "process");
	if (stuck.count)
		fail("%u processes still there after the teardown deadline (see stuck)", stuck.count);
	if (sh->errors)
		fail("%u processes could not attach the segment", sh->errors);
	seg_destroy(&c, &s);
	for (int tries = 0; tries < 50; tries++) {
		bool all = true;

		for (int i = 0; i < hp_n; i++) {
			if (hp_read(HP_SYSFS, hp_size[i], &hp_after[i]))
				memset(&hp_after[i], 0, sizeof(hp_after[i]));
			all &= hp_after[i].free == hp_before[i].free &&
			       hp_after[i].rsvd == hp_before[i].rsvd &&
			       hp_after[i].nr == hp_before[i].nr;
		}
		if (all)
			break;
		usleep(20000);
	}
	for (int i = 0; i < hp_n; i++)
		if (hp_after[i].free != hp_before[i].free || hp_after[i].rsvd != hp_before[i].rsvd ||
		    hp_after[i].nr != hp_before[i].nr)
			fail("huge pages of size %" PRIu64 " not returned", hp_size[i]);
	kmsg_poll(&k);
	if (!k.available)
		fail("/dev/kmsg could not be read: kernel log not checked");
	else if (k.findings)
		fail("kernel log: %u findings (see kernel_log.excerpt)", k.findings);
	if (got_signal)
		fail("interrupted by signal %d", (int)got_signal);

	struct hist h, hc;
	struct model_res model;
	struct json j;
	const char *status = got_signal ? "error" : failures.n ? "fail" : "ok";
	int rc = got_signal ? 128 + got_signal : failures.n ? 1 : 0;
	char b[32];

	hist_init(&h);
	hist_init(&hc);
	for (uint64_t i = 0; i < c.sessions && total_s > 0; i++) {
		hist_insert(&h, sh->t[i].ns);
		hist_insert(&hc, sh->t[i].cpu_ns);
	}
	cfg_model(&c, c.sessions, false, &model);
	utc_now_iso(finished, sizeof(finished));

	FILE *out = outfile_begin(&outf);

	if (!out) {
		fprintf(stderr, "forktouch: --out: %s: no JSON written\n", strerror(errno));
		return rc ? rc : 1;
	}
	json_init(&j, out, 1);
	json_obj_begin(&j);
	json_kv_str(&j, "schema", "hugelab.forktouch/1");
	json_kv_str(&j, "program", "forktouch");
	json_kv_str(&j, "status", status);
	failures_json(&j, "failures", &failures);
	json_kv_str(&j, "started_at", started);
	json_kv_str(&j, "finished_at", finished);
	envelope_kernel_json(&j);
	envelope_machine_json(&j);
	json_key(&j, "config");
	json_obj_begin(&j);
	json_kv_str(&j, "backing", backing_names[c.backing]);
	json_kv_uint(&j, "page_size", c.page_size);
	json_kv_uint(&j, "size", c.size);
	json_kv_str(&j, "placement", placement_names[c.skewed]);
	json_kv_str(&j, "touch", touch_names[c.sparse]);
	json_kv_str(&j, "map", map_names[c.priv]);
	json_kv_uint(&j, "touched_pages", seg_touch_pages(&c));
	json_kv_uint(&j, "sessions", c.sessions);
	json_kv_str(&j, "attach", attach_names[c.attach]);
	snprintf(b, sizeof(b), "%#" PRIxPTR, (uintptr_t)s.addr);
	json_kv_str(&j, "address", b);
	json_kv_bool(&j, "populate", c.populate);
	json_kv_bool(&j, "prefault", c.prefault);
	json_kv_str(&j, "hugetlbfs_dir", c.backing == B_HUGETLBFS ? s.hugetlbfs_dir : NULL);
	json_kv_uint(&j, "teardown_timeout_s", c.teardown_timeout_s);
	json_obj_end(&j);
	kmsg_json(&j, &k);
	json_key(&j, "attach");
	json_obj_begin(&j);
	json_kv_double(&j, "total_s", total_s);
	json_kv_double(&j, "prefault_s", prefault_s);
	json_key(&j, "per_session");
	hist_json(&j, &h);
	json_key(&j, "cpu_per_session");
	hist_json(&j, &hc);
	json_obj_end(&j);
	json_key(&j, "pagetables");
	json_obj_begin(&j);
	json_kv_uint(&j, "before", pt_before);
	/* 0: not every process attached (PageTables is never 0) */
	bool attached = pt_attached && pt_before;

	if (attached)
		json_kv_uint(&j, "attached", pt_attached);
	else
		json_kv_null(&j, "attached");
	json_obj_end(&j);
	if (attached) {
		json_kv_int(&j, "pagetables_delta",
			    (int64_t)pt_attached - (int64_t)pt_before);
		json_kv_double(&j, "pagetables_per_session",
			       ((double)pt_attached - (double)pt_before) /
			       (double)c.sessions);
	} else {
		json_kv_null(&j, "pagetables_delta");
		json_kv_null(&j, "pagetables_per_session");
	}
	json_key(&j, "model");
	json_obj_begin(&j);
	json_kv_uint(&j, "memory_bytes", model.memory_bytes);
	json_kv_uint(&j, "pud_pages_per_session", model.pud_pages_per_session);
	json_kv_uint(&j, "pmd_pages_per_session", model.pmd_pages_per_session);
	json_kv_uint(&j, "shared_slots", model.shared_slots);
	json_obj_end(&j);
	json_key(&j, "hugepages");
	json_obj_begin(&j);
	for (int i = 0; i < hp_n; i++) {
		snprintf(b, sizeof(b), "%" PRIu64, hp_size[i]);
		json_key(&j, b);
		json_obj_begin(&j);
		hp_counts_json(&j, "before", &hp_before[i]);
		hp_counts_json(&j, "after", &hp_after[i]);
		json_kv_bool(&j, "returned", hp_after[i].free == hp_before[i].free &&
			     hp_after[i].rsvd == hp_before[i].rsvd &&
			     hp_after[i].nr == hp_before[i].nr);
		json_obj_end(&j);
	}
	json_obj_end(&j);
	stuck_json(&j, &stuck);
	json_obj_end(&j);
	if (outfile_end(&outf, out, !json_finish(&j))) {
		fprintf(stderr, "forktouch: error writing the JSON document\n");
		rc = rc ? rc : 1;
	}
	kmsg_close(&k);
	return rc;
}
