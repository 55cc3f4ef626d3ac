// SPDX-License-Identifier: GPL-2.0
/*
 * forktouch: fork N processes that attach (or inherit) one shared segment
 * and fault its pages, and time each: the bare baseline of shmdb's attach
 * phase (forktouch.h).  One JSON document, "hugelab.forktouch/1"
 * (workloads/SCHEMA.md).
 *
 * Phases (lib/fleet.h): the segment is created (and filled by shmdb's
 * prefault helper); the processes are forked and report ready (FT_READY);
 * PageTables "before"; one start (FT_GO): each process attaches, faults its
 * pages (shmdb's order: its own first page, lib-free loop), records its
 * time and reports (FT_GO); PageTables "attached"; FT_DONE: all exit.  Every
 * wait ends after --teardown-timeout-s without progress, naming the
 * processes that did not arrive; an abort ends the waiting processes at
 * once.
 *
 * Exit: 0 ok, 1 fail, 2 bad input or setup failure, 128+N signal N.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "forktouch.h"
#include "failures.h"
#include "fleet.h"
#include "hist.h"
#include "json.h"
#include "kmsg.h"
#include "needs.h"
#include "outfile.h"
#include "procfs.h"
#include "stuck.h"

#define MAX_SIZES 8
#define NS 1000000000ull

enum { FT_READY, FT_GO, FT_DONE };

/* Shared with the children: one time per process. */
struct shared {
	uint32_t errors;
	struct {
		uint64_t ns;            /* attach+fault time of process i */
		uint64_t cpu_ns;        /* its CPU time in that window */
	} t[];
};

/* The run: what main's phases fill in and the JSON reports. */
struct run {
	struct cfg c;
	struct seg s;
	pid_t coordinator;              /* the prefault helper's parent */
	struct fleet f;
	struct shared *sh;
	struct outfile outf;
	struct kmsg_scan k;
	struct stuck stuck;
	struct hp_counts hp_before[MAX_SIZES], hp_after[MAX_SIZES];
	bool hp_returned[MAX_SIZES];
	uint64_t hp_size[MAX_SIZES];
	int hp_n;
	char started[32], finished[32];
	uint64_t pt_before, pt_attached;
	double prefault_s, total_s;
};

static volatile sig_atomic_t got_signal;
static struct failures failures = { .prog = "forktouch" };
#define fail(...) failures_add(&failures, __VA_ARGS__)

static void on_signal(int sig) { got_signal = sig; }

static void bad(const char *msg)
{
	fprintf(stderr, "forktouch: %s\n", msg);
	exit(2);
}

/* Fault the pages by touching them, in shmdb's order from the process's own page. */
static void touch_all(const struct cfg *c, char *base, unsigned int id)
{
	uint64_t n = seg_touch_pages(c), first = (id * 2654435761ull) % n;

	for (uint64_t i = 0; i < n; i++) {
		uint64_t *p = (uint64_t *)(base + seg_touch_offset(c, (first + i) % n));

		if (c->priv)
			(void)*(volatile uint64_t *)p;
		else
			__atomic_fetch_add(p, 0, __ATOMIC_RELAXED);
	}
}

/* A process: attach, fault shmdb's pages in shmdb's order, report. */
static void child(void *arg, uint32_t id)
{
	struct run *r = arg;
	const struct cfg *c = &r->c;
	struct shared *sh = r->sh;
	char *base;
	int e;

	fleet_arrive(r->f.sh, id, FT_READY);
	if (!fleet_await(r->f.sh, FT_GO))
		_exit(FLEET_EXIT_ABORT);

	uint64_t t0 = now_ns(), cpu0 = thread_cpu_ns();

	base = c->attach == A_ATTACH ? seg_map_at(c, &r->s, r->s.addr) : r->s.addr;
	if (!base) {
		__atomic_fetch_add(&sh->errors, 1, __ATOMIC_RELAXED);
		_exit(3);
	}
	e = c->page_size == 4096 && c->populate ? seg_populate_read(base, c->size) : -EOPNOTSUPP;
	if (e == -EOPNOTSUPP)
		touch_all(c, base, id);         /* or a kernel before 5.14 */
	else if (e) {
		__atomic_fetch_add(&sh->errors, 1, __ATOMIC_RELAXED);
		_exit(3);
	}
	sh->t[id].ns = now_ns() - t0;
	sh->t[id].cpu_ns = thread_cpu_ns() - cpu0;
	fleet_arrive(r->f.sh, id, FT_GO);
	_exit(fleet_await(r->f.sh, FT_DONE) ? 0 : FLEET_EXIT_ABORT);
}

/* Options, --check, host needs: exits 2 (or 0 for --help and --check). */
static void parse_and_check(int argc, char **argv, struct cfg *c)
{
	struct machine_res m;
	struct needs need;
	char err[512], opts[128];

	if (ft_parse(argc, argv, c, err, sizeof(err)))
		bad(err);
	if (c->help) {
		ft_usage(stdout);
		exit(0);
	}
	cfg_needs(c, &need);
	cfg_needs_opts(c, opts, sizeof(opts));
	if (c->check) {
		if (c->guest_shape && (machine_shape(c->guest_shape, &m, err, sizeof(err)) ||
				      needs_fit(opts, &need, &m, err, sizeof(err))))
			bad(err);
		needs_print_ok(&need);
		exit(0);
	}
	if (machine_host(&m, err, sizeof(err)) || needs_fit(opts, &need, &m, err, sizeof(err)))
		bad(err);
}

/* Output, pools, kernel log, shared memory, signals, the segment; exits 2. */
static void setup(struct run *r)
{
	const struct cfg *c = &r->c;
	struct sigaction sa;
	char err[512];
	int e;

	/* as shmdb: 4 KiB pages never become shmem THP (children inherit) */
	if (c->page_size == 4096 && prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0))
		bad("prctl(PR_SET_THP_DISABLE) failed");
	if ((e = outfile_open(&r->outf, c->out))) {
		snprintf(err, sizeof(err), "--out %s: %s", c->out, strerror(-e));
		bad(err);
	}
	r->hp_n = hp_sizes(HP_SYSFS, r->hp_size, MAX_SIZES);
	for (int i = 0; i < r->hp_n; i++)
		if (hp_read(HP_SYSFS, r->hp_size[i], &r->hp_before[i]))
			memset(&r->hp_before[i], 0, sizeof(r->hp_before[i]));
	utc_now_iso(r->started, sizeof(r->started));
	kmsg_open(&r->k);
	r->sh = mmap(NULL, sizeof(*r->sh) + c->sessions * sizeof(r->sh->t[0]),
		     PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (r->sh == MAP_FAILED || fleet_init(&r->f, (uint32_t)c->sessions, &failures,
					      &r->stuck, &got_signal))
		bad("out of memory");
	r->f.stall_ns = c->teardown_timeout_s * NS;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	if (seg_create(c, &r->s, err, sizeof(err))) {
		outfile_abandon(&r->outf);
		bad(err);
	}
	r->coordinator = getpid();
}

static void prefault_fn(void *arg, uint32_t idx)
{
	struct run *r = arg;

	(void)idx;
	prefault_main(&r->c, &r->s, r->coordinator);
}

/* shmdb's prefault helper fills the segment; false: it failed (recorded). */
static bool prefault(struct run *r)
{
	struct fleet pf;
	uint64_t t0 = now_ns();
	int e;

	if (fleet_init(&pf, 1, &failures, &r->stuck, &got_signal)) {
		fail("prefault: out of memory");
		return false;
	}
	e = fleet_run_one(&pf, "prefault", prefault_fn, r, r->c.teardown_timeout_s * NS);
	fleet_free(&pf);
	if (e) {
		fail("could not fill the segment (prefault process)");
		return false;
	}
	r->prefault_s = (double)(now_ns() - t0) / 1e9;
	return true;
}

/* Fork, wait ready, PageTables before, start, wait attached, PageTables. */
static bool attach_phase(struct run *r)
{
	uint32_t n = (uint32_t)r->c.sessions;
	uint64_t t0;

	for (uint32_t i = 0; i < n && !failures.n && !got_signal; i++)
		if (fleet_spawn(&r->f, "process", child, r) < 0)
			break;
	fleet_seal(&r->f);
	if (!r->c.quiet)
		fprintf(stderr, "forktouch: %u processes forked\n", r->f.n);
	if (failures.n || fleet_wait(&r->f, FT_READY, n, 0, "get ready") != FLEET_ARRIVED)
		return false;
	r->pt_before = fleet_meminfo_settled("PageTables");
	t0 = now_ns();
	fleet_release(&r->f, FT_GO);
	if (fleet_wait(&r->f, FT_GO, n, 0, "attach and fault the segment") != FLEET_ARRIVED)
		return false;
	r->total_s = (double)(now_ns() - t0) / 1e9;
	r->pt_attached = fleet_meminfo_settled("PageTables");
	return true;
}

/* Release (or abort) the processes, reap them, bounded; list the stuck. */
static void teardown(struct run *r, bool ok)
{
	uint64_t td = r->c.teardown_timeout_s * NS;
	char when[64];

	if (ok)
		fleet_release(&r->f, FT_DONE);
	else
		fleet_abort(&r->f);
	if (!fleet_wait_exit(&r->f, now_ns() + td)) {
		snprintf(when, sizeof(when), "%" PRIu64 " s after SIGKILL", r->c.teardown_timeout_s);
		fleet_stop(&r->f, now_ns() + td, when);
	}
	if (r->f.n_aborted && !r->c.quiet)
		fprintf(stderr, "forktouch: %" PRIu64 " processes ended by the abort\n",
			r->f.n_aborted);
	if (r->sh->errors)
		fail("%u processes could not attach the segment", r->sh->errors);
	seg_destroy(&r->c, &r->s);
	if (!fleet_hp_wait(HP_SYSFS, r->hp_n, r->hp_size, r->hp_before, r->hp_after,
			   r->hp_returned, 1000))
		for (int i = 0; i < r->hp_n; i++)
			if (!r->hp_returned[i])
				fail("huge pages of size %" PRIu64 " not returned", r->hp_size[i]);
	kmsg_poll(&r->k);
	if (!r->k.available)
		fail("/dev/kmsg could not be read: kernel log not checked");
	else if (r->k.findings)
		fail("kernel log: %u findings (see kernel_log.excerpt)", r->k.findings);
	if (got_signal)
		fail("interrupted by signal %d", (int)got_signal);
}

static void config_json(struct json *j, const struct run *r)
{
	const struct cfg *c = &r->c;
	char b[32];

	json_key(j, "config");
	json_obj_begin(j);
	seg_config_json(j, c);
	json_kv_str(j, "attach", attach_names[c->attach]);
	snprintf(b, sizeof(b), "%#" PRIxPTR, (uintptr_t)r->s.addr);
	json_kv_str(j, "address", b);
	json_kv_bool(j, "populate", c->populate);
	json_kv_bool(j, "prefault", c->prefault);
	json_kv_str(j, "hugetlbfs_dir", c->backing == B_HUGETLBFS ? r->s.hugetlbfs_dir : NULL);
	json_kv_uint(j, "teardown_timeout_s", c->teardown_timeout_s);
	json_obj_end(j);
}

static void attach_json(struct json *j, const struct run *r)
{
	struct hist h, hc;

	hist_init(&h);
	hist_init(&hc);
	for (uint64_t i = 0; i < r->c.sessions && r->total_s > 0; i++) {
		hist_insert(&h, r->sh->t[i].ns);
		hist_insert(&hc, r->sh->t[i].cpu_ns);
	}
	json_key(j, "attach");
	json_obj_begin(j);
	json_kv_double(j, "total_s", r->total_s);
	json_kv_double(j, "prefault_s", r->prefault_s);
	json_key(j, "per_session");
	hist_json(j, &h);
	json_key(j, "cpu_per_session");
	hist_json(j, &hc);
	json_obj_end(j);
}

static void pagetables_json(struct json *j, const struct run *r)
{
	/* 0: not every process attached (PageTables is never 0) */
	bool attached = r->pt_attached && r->pt_before;
	double delta = (double)r->pt_attached - (double)r->pt_before;

	json_key(j, "pagetables");
	json_obj_begin(j);
	json_kv_uint(j, "before", r->pt_before);
	if (attached)
		json_kv_uint(j, "attached", r->pt_attached);
	else
		json_kv_null(j, "attached");
	json_obj_end(j);
	if (attached) {
		json_kv_int(j, "pagetables_delta", (int64_t)r->pt_attached - (int64_t)r->pt_before);
		json_kv_double(j, "pagetables_per_session", delta / (double)r->c.sessions);
	} else {
		json_kv_null(j, "pagetables_delta");
		json_kv_null(j, "pagetables_per_session");
	}
}

static void model_hugepages_json(struct json *j, const struct run *r)
{
	struct model_res model;

	cfg_model(&r->c, r->c.sessions, false, &model);
	json_key(j, "model");
	json_obj_begin(j);
	json_kv_uint(j, "memory_bytes", model.memory_bytes);
	json_kv_uint(j, "pud_pages_per_session", model.pud_pages_per_session);
	json_kv_uint(j, "pmd_pages_per_session", model.pmd_pages_per_session);
	json_kv_uint(j, "shared_slots", model.shared_slots);
	json_obj_end(j);
	hp_run_json(j, r->hp_n, r->hp_size, r->hp_before, r->hp_after,
		    r->hp_returned);
}

/* The document; true when writing failed. */
static bool write_json(FILE *out, const struct run *r, const char *status)
{
	struct json j;

	json_init(&j, out, 1);
	json_obj_begin(&j);
	json_kv_str(&j, "schema", "hugelab.forktouch/1");
	json_kv_str(&j, "program", "forktouch");
	json_kv_str(&j, "status", status);
	failures_json(&j, "failures", &failures);
	json_kv_str(&j, "started_at", r->started);
	json_kv_str(&j, "finished_at", r->finished);
	envelope_kernel_json(&j);
	envelope_machine_json(&j);
	config_json(&j, r);
	kmsg_json(&j, &r->k);
	attach_json(&j, r);
	pagetables_json(&j, r);
	model_hugepages_json(&j, r);
	stuck_json(&j, &r->stuck);
	json_obj_end(&j);
	return json_finish(&j) != 0;
}

int main(int argc, char **argv)
{
	static struct run r;
	const char *status;
	bool ok;
	int rc;
	FILE *out;

	parse_and_check(argc, argv, &r.c);
	setup(&r);
	ok = (!r.c.prefault || prefault(&r)) && attach_phase(&r);
	teardown(&r, ok);
	status = got_signal ? "error" : failures.n ? "fail" : "ok";
	rc = got_signal ? 128 + got_signal : failures.n ? 1 : 0;
	utc_now_iso(r.finished, sizeof(r.finished));
	out = outfile_begin(&r.outf);
	if (!out) {
		fprintf(stderr, "forktouch: --out: %s: no JSON written\n", strerror(errno));
		return rc ? rc : 1;
	}
	if (outfile_end(&r.outf, out, !write_json(out, &r, status))) {
		fprintf(stderr, "forktouch: error writing the JSON document\n");
		rc = rc ? rc : 1;
	}
	kmsg_close(&r.k);
	return rc;
}
