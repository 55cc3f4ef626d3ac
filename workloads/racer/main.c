// SPDX-License-Identifier: GPL-2.0
/*
 * racer: correctness stressor for hugetlb PMD sharing.
 *
 * Worker processes (threads each) read-check and re-tag huge pages of one
 * shared hugetlb file (memfd MFD_HUGETLB, or a file in a hugetlbfs mount)
 * mapped MAP_SHARED at the same 1 GiB-aligned address in every process, so
 * their PMD pages are shared, while one unsharer process per operation
 * unshares the same slots (MADV_DONTNEED, partial mprotect, partial munmap
 * + remap, fallocate punch hole).  Tags: racer/tag.h.  At the end: huge
 * page accounting must return to its start values and the kernel log must
 * show no WARNING/BUG/Oops/Bad page/lockdep/RCU stall since the start.
 * Result: JSON "hugelab.racer/1" (workloads/SCHEMA.md).
 * Exit: 0 ok, 1 a check failed, 2 bad usage or setup failure, 128+N signal N.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/memfd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <linux/magic.h>
#include <sys/resource.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "failures.h"
#include "fleet.h"
#include "json.h"
#include "kmsg.h"
#include "opts.h"
#include "procfs.h"
#include "outfile.h"
#include "page.h"
#include "racer.h"
#include "stuck.h"
#include "tag.h"
#include "unshare.h"
#include "worker.h"



/* Printed at the end (after the summary line), not as they happen. */
static struct failures failures;
#define fail(...) failures_add(&failures, __VA_ARGS__)

static int open_file(struct racer *r)
{
	if (r->path) {
		char p[4096];
		struct statfs sf;

		/* hugetlbfs reports its huge page size as the block size. */
		if (statfs(r->path, &sf))
			return -errno;
		if (sf.f_type != HUGETLBFS_MAGIC || (uint64_t)sf.f_bsize != r->page_size)
			return -EINVAL;
		snprintf(p, sizeof(p), "%s/racer.XXXXXX", r->path);
		r->fd = mkstemp(p);
		if (r->fd >= 0)
			unlink(p);
	} else {
		unsigned int shift = (unsigned int)__builtin_ctzll(r->page_size);

		r->fd = memfd_create("racer", MFD_HUGETLB |
				     (shift << MFD_HUGE_SHIFT));
	}
	if (r->fd < 0)
		return -errno;
	if (ftruncate(r->fd, (off_t)r->size))
		return -errno;
	return 0;
}

static void *shared_anon(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static int init_ctl(struct racer *r)
{
	pthread_mutexattr_t a;

	r->npages = r->size / r->page_size;
	r->ctl = shared_anon(r->npages * sizeof(*r->ctl));
	r->sh = shared_anon(sizeof(*r->sh));
	if (!r->ctl || !r->sh)
		return -ENOMEM;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	for (uint64_t i = 0; i < r->npages; i++)
		pthread_mutex_init(&r->ctl[i].lock, &a);
	pthread_mutexattr_destroy(&a);
	for (int op = 0; op < NOPS; op++)
		hist_init(&r->sh->op_lat[op]);
	return 0;
}

/* Tag every page (generation 1) through a temporary mapping. */
static int fill(struct racer *r)
{
	int err = map_whole(r, true);

	if (err)
		return err;
	for (uint64_t i = 0; i < r->npages; i++)
		page_write(r, i, false);
	for (uint64_t k = 0; k < r->inject; k++)
		page_inject_stale(r, k * r->npages / r->inject);
	munmap((void *)(uintptr_t)r->addr, r->size);
	return 0;
}

static volatile sig_atomic_t got_signal;

/*
 * Test-only (README.md, "Test hooks"): HUGELAB_TEST_STUCK_WORKER=1 makes
 * worker 0 never exit and the parent spare it from SIGKILL, standing for a
 * task stuck in the kernel; it dies with the parent (PR_SET_PDEATHSIG).
 */
static bool test_stuck_worker(void)
{
	const char *e = getenv("HUGELAB_TEST_STUCK_WORKER");

	return e && !strcmp(e, "1");
}
static struct stuck stuck;

static void on_signal(int sig)
{
	got_signal = sig;
}

/* Member idx of the fleet: the workers first, then one unsharer per op. */
static void child_main(void *arg, uint32_t idx)
{
	struct racer *r = arg;
	uint32_t k = idx - (uint32_t)r->procs;

	if (idx < r->procs) {
		if (idx == 0 && test_stuck_worker())
			for (;;)
				pause();        /* test-only: never exits */
		worker_main(r, idx);
	}
	for (int op = 0; op < NOPS; op++)
		if ((r->ops & (1u << op)) && k-- == 0)
			unsharer_main(r, (enum wl_op)op, (unsigned int)op);
	_exit(2);
}

/* Fork the workers and the unsharers; the counts forked. */
static void spawn_all(struct racer *r, struct fleet *f, int *workers, int *unsharers)
{
	for (unsigned int i = 0; i < r->procs; i++)
		if (fleet_spawn(f, "worker", child_main, r) < 0)
			break;
	*workers = (int)f->n;
	for (int op = 0; op < NOPS && *workers == (int)r->procs; op++)
		if ((r->ops & (1u << op)) && fleet_spawn(f, op_names[op], child_main, r) < 0)
			break;
	*unsharers = (int)f->n - *workers;
	fleet_seal(f);
	if (test_stuck_worker() && f->n)
		fleet_spare(f, 0);
}

/*
 * Run for duration_s (a signal ends it early), stop, wait for every child
 * at most teardown_s; then SIGKILL those still alive and wait up to 10 s
 * more; any still there is stuck (a task blocked in the kernel): recorded
 * with its stack for the JSON, and the run fails.
 */
static void run_and_reap(struct racer *r, struct fleet *f)
{
	if (!f->failures->n)
		fleet_wait_gone(f, now_ns() + r->duration_s * 1000000000ull);
	atomic_store(&r->sh->stop, 1);
	if (fleet_wait_exit(f, now_ns() + r->teardown_s * 1000000000ull))
		return;
	for (uint32_t k = 0; k < f->n; k++)
		if (f->m[k].end == FLEET_RUNNING)
			fail("%s %u (pid %d) still running %" PRIu64 " s after stop: killed",
			     f->m[k].role, k, (int)f->m[k].pid, r->teardown_s);
	fleet_stop(f, now_ns() + 10000000000ull, "10 s after SIGKILL");
}

static bool hp_equal(const struct hp_counts *a, const struct hp_counts *b)
{
	return a->nr == b->nr && a->free == b->free && a->rsvd == b->rsvd &&
	       a->surp == b->surp;
}

struct outcome {
	const char *status;
	char started[32], finished[32];
	double elapsed_s;
	bool hp_ok, hp_after_ok;
	struct hp_counts hp_before, hp_after;
	long minflt, majflt;
	int workers, unsharers;
	struct kvlist vm_before, vm_after;
	bool vm_ok;
};

static void config_json(struct json *j, const struct racer *r)
{
	char buf[32];

	json_key(j, "config");
	json_obj_begin(j);
	json_kv_uint(j, "duration_s", r->duration_s);
	json_kv_uint(j, "procs", r->procs);
	json_kv_uint(j, "threads", r->threads);
	json_kv_uint(j, "size", r->size);
	json_kv_uint(j, "page_size", r->page_size);
	json_key(j, "ops");
	json_arr_begin(j);
	for (int op = 0; op < NOPS; op++)
		if (r->ops & (1u << op))
			json_str(j, op_names[op]);
	json_arr_end(j);
	json_kv_uint(j, "write_pct", r->write_pct);
	json_kv_uint(j, "inject_errors", r->inject);
	json_kv_str(j, "backing", r->path ? "hugetlbfs" : "memfd");
	snprintf(buf, sizeof(buf), "%#" PRIx64, r->addr);
	json_kv_str(j, "address", buf);
	json_kv_uint(j, "seed", r->seed);
	json_kv_uint(j, "teardown_timeout_s", r->teardown_s);
	json_obj_end(j);
}

static void counters_json(struct json *j, const struct racer *r, const struct outcome *o)
{
	const struct racer_shared *sh = r->sh;

	json_kv_double(j, "elapsed_s", o->elapsed_s);
	json_key(j, "processes");
	json_obj_begin(j);
	json_kv_int(j, "workers", o->workers);
	json_kv_int(j, "unsharers", o->unsharers);
	json_obj_end(j);
	json_kv_uint(j, "pages", r->npages);
	json_kv_uint(j, "reads", sh ? sh->reads : 0);
	json_kv_uint(j, "strict_reads", sh ? sh->strict_reads : 0);
	json_kv_uint(j, "weak_reads", sh ? sh->weak_reads : 0);
	json_kv_uint(j, "file_words", sh ? sh->file_words : 0);
	json_kv_uint(j, "zero_reads", sh ? sh->zero_reads : 0);
	json_kv_uint(j, "writes", sh ? sh->writes : 0);
	json_kv_uint(j, "retags_after_punch", sh ? sh->retags_after_punch : 0);
	json_kv_uint(j, "tag_errors", sh ? sh->tag_errors : 0);
}

static void samples_json(struct json *j, const struct racer *r)
{
	const struct racer_shared *sh = r->sh;
	/* tag words per page: one per TAG_BLOCK, at most 512 */
	uint64_t words = r->page_size / TAG_BLOCK > 512 ? 512 : r->page_size / TAG_BLOCK;
	char buf[32];

	json_key(j, "tag_error_samples");
	json_arr_begin(j);
	for (uint32_t s = 0; sh && s < sh->nsamples && s < MAX_SAMPLES; s++) {
		const struct tag_sample *t = &sh->samples[s];

		json_obj_begin(j);
		json_kv_uint(j, "page", t->page);
		json_kv_uint(j, "file_offset", t->page * r->page_size + t->word * (r->page_size / words));
		snprintf(buf, sizeof(buf), "%#018" PRIx64, t->found);
		json_kv_str(j, "found", buf);
		snprintf(buf, sizeof(buf), "%#018" PRIx64, t->expect);
		json_kv_str(j, "expected", buf);
		json_kv_int(j, "pid", t->pid);
		json_kv_str(j, "role", t->role);
		json_kv_str(j, "check", t->check);
		json_obj_end(j);
	}
	json_arr_end(j);
}

/* key: {op: count} of the configured ops */
static void per_op_json(struct json *j, const struct racer *r, const char *key,
			const _Atomic uint64_t *count)
{
	json_key(j, key);
	json_obj_begin(j);
	for (int op = 0; op < NOPS; op++)
		if (r->ops & (1u << op))
			json_kv_uint(j, op_names[op], r->sh ? count[op] : 0);
	json_obj_end(j);
}

static void ops_json(struct json *j, const struct racer *r, const struct outcome *o)
{
	const struct racer_shared *sh = r->sh;

	per_op_json(j, r, "unshare_ops", sh ? sh->ops : NULL);
	per_op_json(j, r, "unshare_op_errors", sh ? sh->op_errors : NULL);
	json_key(j, "unshare_latency");
	json_obj_begin(j);
	for (int op = 0; op < NOPS; op++)
		if (sh && (r->ops & (1u << op))) {
			json_key(j, op_names[op]);
			hist_json(j, &sh->op_lat[op]);
		}
	json_obj_end(j);
	json_key(j, "vmstat_delta");
	if (o->vm_ok)
		vmstat_delta_json(j, &o->vm_before, &o->vm_after);
	else
		json_null(j);
	json_key(j, "faults");
	json_obj_begin(j);
	json_kv_int(j, "minor", o->minflt);
	json_kv_int(j, "major", o->majflt);
	json_obj_end(j);
}

static void hugepages_json(struct json *j, const struct racer *r, const struct outcome *o)
{
	char buf[32];

	json_key(j, "hugepages");
	json_obj_begin(j);
	snprintf(buf, sizeof(buf), "%" PRIu64, r->page_size);
	json_key(j, buf);
	json_obj_begin(j);
	if (o->hp_ok) {
		hp_counts_json(j, "before", &o->hp_before);
		if (o->hp_after_ok)
			hp_counts_json(j, "after", &o->hp_after);
		else
			json_kv_null(j, "after");
		json_kv_bool(j, "returned", o->hp_after_ok && hp_equal(&o->hp_before, &o->hp_after));
	} else {
		json_kv_null(j, "before");
		json_kv_null(j, "after");
		json_kv_bool(j, "returned", false);
	}
	json_obj_end(j);
	json_obj_end(j);
}

/* true when writing failed */
static bool write_json(FILE *f, const struct racer *r, const struct outcome *o,
		       const struct kmsg_scan *k)
{
	struct json j;

	json_init(&j, f, 1);
	json_obj_begin(&j);
	json_kv_str(&j, "schema", "hugelab.racer/1");
	json_kv_str(&j, "program", "racer");
	json_kv_str(&j, "status", o->status);
	failures_json(&j, "failures", &failures);
	json_kv_str(&j, "started_at", o->started);
	json_kv_str(&j, "finished_at", o->finished);
	envelope_kernel_json(&j);
	envelope_machine_json(&j);
	config_json(&j, r);
	counters_json(&j, r, o);
	samples_json(&j, r);
	ops_json(&j, r, o);
	hugepages_json(&j, r, o);
	kmsg_json(&j, k);
	stuck_json(&j, &stuck);
	json_obj_end(&j);
	return json_finish(&j) != 0;
}

static int refuse(const char *msg)
{
	fprintf(stderr, "racer: %s\n", msg);
	return 2;
}

/* --check: the needs, against --guest-shape when given; 0 or 2. */
static int check_mode(const struct racer *r)
{
	struct needs n;
	struct machine_res m;
	char opts[160], msg[512];

	racer_needs(r, &n);
	if (r->guest_shape) {
		if (machine_shape(r->guest_shape, &m, msg, sizeof(msg)))
			return refuse(msg);
		racer_needs_opts(r, opts, sizeof(opts));
		if (needs_fit(opts, &n, &m, msg, sizeof(msg)))
			return refuse(msg);
	}
	needs_print_ok(&n);
	return 0;
}

/* --path must be a hugetlbfs mount of --page-size: said before the pool is
 * looked at (a run on /tmp said "pool too small"); 0 or -errno/-EINVAL. */
static int check_path(const struct racer *r)
{
	struct statfs sf;

	if (!r->path)
		return 0;
	if (statfs(r->path, &sf))
		return -errno;
	return sf.f_type == HUGETLBFS_MAGIC && (uint64_t)sf.f_bsize == r->page_size ? 0 : -EINVAL;
}

/* Parse, validate, --help, --check, --path, the output: -1 to go on, else the exit code. */
static int parse_and_check(int argc, char **argv, struct racer *r, struct outfile *outf)
{
	char msg[600];
	int err;

	if (racer_parse(argc, argv, r, msg, sizeof(msg)) ||
	    (!r->help && racer_validate(r, msg, sizeof(msg))))
		return refuse(msg);
	if (r->help) {
		racer_usage(stdout);
		return 0;
	}
	if (r->check)
		return check_mode(r);
	if ((err = check_path(r))) {
		snprintf(msg, sizeof(msg), "--path %s: %s", r->path, err == -EINVAL ?
			 "not a hugetlbfs mount of --page-size" : strerror(-err));
		return refuse(msg);
	}
	/* fail fast on an unwritable --json, without truncating it yet */
	if ((err = outfile_open(outf, r->json))) {
		snprintf(msg, sizeof(msg), "--json %s: %s", r->json, strerror(-err));
		return refuse(msg);
	}
	return -1;
}

/* Pool, control memory, the file, its tags; false (a failure) on error. */
static bool prepare(struct racer *r, struct outcome *o)
{
	uint64_t needed;
	int err;

	o->hp_ok = hp_read(HP_SYSFS, r->page_size, &o->hp_before) == 0;
	if (!o->hp_ok) {
		fail("no %" PRIu64 "-byte huge page pool on this kernel", r->page_size);
		return false;
	}
	/* A punched page can stay allocated while its index faults again, and
	 * re-mapping a punched range reserves anew: punch needs slack of one
	 * punch range (up to 4 pages within a 1 GiB slot). */
	needed = r->size / r->page_size;
	if (r->ops & (1u << OP_PUNCH))
		needed += r->page_size >= (1ull << 30) ? 1 : 4;
	if (o->hp_before.free < needed) {
		fail("huge page pool too small: %" PRIu64 " free, %" PRIu64
		     " needed (file + punch slack)", o->hp_before.free, needed);
		return false;
	}
	o->vm_ok = vmstat_read(&o->vm_before) == 0;
	if ((err = init_ctl(r))) {
		fail("shared control memory: %s", strerror(-err));
		return false;
	}
	if ((err = open_file(r))) {
		fail("hugetlb file%s%s: %s", r->path ? " in " : "",
		     r->path ? r->path : "", err == -EINVAL ?
		     "not a hugetlbfs mount of --page-size" : strerror(-err));
		return false;
	}
	if ((err = fill(r))) {
		fail("mmap at %#" PRIx64 ": %s", r->addr, strerror(-err));
		return false;
	}
	return true;
}

/* After the run: the pool, the counters, the kernel log. */
static void evaluate(const struct racer *r, struct outcome *o, struct kmsg_scan *k)
{
	bool returned, back = fleet_hp_wait(HP_SYSFS, 1, &r->page_size, &o->hp_before,
					    &o->hp_after, &returned, 5000);

	/* an unreadable pool reads as zeros: not returned */
	o->hp_after_ok = true;
	o->vm_ok = o->vm_ok && vmstat_read(&o->vm_after) == 0;
	if (!back)
		fail("huge pages not returned: free %" PRIu64 " -> %" PRIu64
		     ", rsvd %" PRIu64 " -> %" PRIu64 ", nr %" PRIu64 " -> %" PRIu64
		     ", surp %" PRIu64 " -> %" PRIu64,
		     o->hp_before.free, o->hp_after.free, o->hp_before.rsvd,
		     o->hp_after.rsvd, o->hp_before.nr, o->hp_after.nr,
		     o->hp_before.surp, o->hp_after.surp);
	if (r->sh->tag_errors)
		fail("%" PRIu64 " tag errors", (uint64_t)r->sh->tag_errors);
	for (int op = 0; op < NOPS; op++)
		if (r->sh->op_errors[op])
			fail("%s: %" PRIu64 " failed calls, first: %s",
			     op_names[op], (uint64_t)r->sh->op_errors[op],
			     r->sh->op_error_msg[op]);
	for (int op = 0; op < NOPS; op++)
		if ((r->ops & (1u << op)) && !r->sh->ops[op])
			fail("%s: no operation completed", op_names[op]);
	if (!r->sh->reads)
		fail("no page was read");
	kmsg_poll(k);
	if (!k->available)
		fail("/dev/kmsg unavailable: kernel log not checked");
	else if (k->findings)
		fail("kernel log: %u findings since start", k->findings);
}

/* The summary line and the failures on stderr. */
static void summary(const struct racer *r, const struct outcome *o, const struct kmsg_scan *k)
{
	fprintf(stderr, "racer: %s: %" PRIu64 " reads, %" PRIu64 " writes, %"
		PRIu64 " tag errors, ops", o->status, r->sh ? r->sh->reads : 0,
		r->sh ? r->sh->writes : 0, r->sh ? r->sh->tag_errors : 0);
	for (int op = 0; op < NOPS; op++)
		if (r->ops & (1u << op))
			fprintf(stderr, " %s=%" PRIu64, op_names[op],
				r->sh ? r->sh->ops[op] : 0);
	fprintf(stderr, ", %u kernel log findings\n", k->findings);
	for (int i = 0; i < failures.n; i++)
		fprintf(stderr, "racer: FAIL: %s\n", failures.msg[i]);
}

/* The JSON document and the exit code. */
static int report(struct racer *r, struct outcome *o, struct kmsg_scan *k,
		  struct outfile *outf)
{
	struct rusage ru;
	int rc;
	FILE *out;

	if (getrusage(RUSAGE_CHILDREN, &ru) == 0) {
		o->minflt = ru.ru_minflt;
		o->majflt = ru.ru_majflt;
	}
	utc_now_iso(o->finished, sizeof(o->finished));
	rc = got_signal ? 128 + got_signal : !strcmp(o->status, "ok") ? 0 :
	     !strcmp(o->status, "fail") ? 1 : 2;
	out = outfile_begin(outf);
	if (!out || outfile_end(outf, out, !write_json(out, r, o, k))) {
		fprintf(stderr, "racer: error writing the JSON document%s%s\n",
			r->json ? " to " : "", r->json ? r->json : "");
		rc = rc ? rc : 1;
	}
	summary(r, o, k);
	return rc;
}

int main(int argc, char **argv)
{
	static struct outfile outf;
	static struct fleet f;
	struct racer r;
	struct outcome o = { .status = "ok" };
	struct kmsg_scan k;
	struct sigaction sa;
	uint64_t t0;
	int rc = parse_and_check(argc, argv, &r, &outf);

	if (rc >= 0)
		return rc;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	utc_now_iso(o.started, sizeof(o.started));
	t0 = now_ns();
	kmsg_open(&k);
	if (!prepare(&r, &o) ||
	    fleet_init(&f, (uint32_t)(r.procs + NOPS), &failures, &stuck, &got_signal)) {
		o.status = "error";
		o.vm_ok = false;
		kmsg_poll(&k);
		if (r.fd >= 0)
			close(r.fd);
	} else {
		spawn_all(&r, &f, &o.workers, &o.unsharers);
		run_and_reap(&r, &f);
		close(r.fd);
		r.fd = -1;
		evaluate(&r, &o, &k);
		o.status = got_signal ? "error" : failures.n ? "fail" : "ok";
		if (got_signal)
			fail("interrupted by signal %d", (int)got_signal);
	}
	o.elapsed_s = (double)(now_ns() - t0) / 1e9;
	rc = report(&r, &o, &k, &outf);
	kmsg_close(&k);
	kvlist_free(&o.vm_before);
	kvlist_free(&o.vm_after);
	return rc;
}
