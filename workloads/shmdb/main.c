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
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fastclock.h"
#include "dbbuf.h"
#include "json.h"
#include "kmsg.h"
#include "model.h"
#include "opts.h"
#include "procfs.h"
#include "shmdb.h"

const char *const backing_names[] = { "shm", "hugetlbfs", "memfd", "anon", NULL };
const char *const attach_names[] = { "fork", "attach", NULL };
const char *const placement_names[] = { "aligned", "skewed", NULL };
const char *const op_names[] = { "punch", "truncate", "mprotect", "munmap",
				 "dontneed", NULL };

#define MAX_SIZES 8
#define MAX_FAILURES 32

static volatile sig_atomic_t got_signal;
static char *failures[MAX_FAILURES];
static int nfailures;

static void usage(FILE *f)
{
	fputs(
"usage: shmdb [options]\n"
"  --backing shm|hugetlbfs|memfd|anon  segment type (default shm; anon = shared\n"
"                                      anonymous, fork only)\n"
"  --page-size 4K|2M|1G                page size (default 2M)\n"
"  --size SIZE                         segment size (default 1G)\n"
"  --placement aligned|skewed          1 GiB-aligned address, or +2 MiB (default aligned)\n"
"  --sessions N                        session processes (default 100)\n"
"  --active N                          only N sessions run transactions; the\n"
"                                      others map and fault the segment, then\n"
"                                      sleep (default 0 = all)\n"
"  --attach fork|attach                inherit the mapping, or attach in each session\n"
"  --duration S | --duration-ms MS     run time (default 5 s; 0 = until --txn-count)\n"
"  --txn-count N                       transactions per session (default 0 = unlimited)\n"
"  --write-pct P                       percent of update transactions (default 20)\n"
"  --buffer-size SIZE                  buffer (power of two, default 8K)\n"
"  --disrupt LIST                      punch,truncate,mprotect,munmap,dontneed\n"
"  --disrupt-interval-ms MS            pause between operations (default 100)\n"
"  --disrupt-len SIZE                  range per operation (default max(page, 2M))\n"
"  --seed N                            random seed (default 1)\n"
"  --address ADDR                      aligned address (default 0x2000000000)\n"
"  --hugetlbfs-dir DIR                 hugetlbfs mount (default: find or mount one)\n"
"  --no-populate                       4K: touch pages instead of MADV_POPULATE_READ\n"
"  --no-prefault                       sessions allocate (zero) the pages themselves\n"
"  --count-faults                      record the latency of first accesses that\n"
"                                      page-faulted (ru_minflt) separately\n"
"  --out FILE                          JSON output (default stdout)\n"
"  --quiet                             no progress lines on stderr\n", f);
}

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

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
	va_list ap;
	char buf[512];

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "shmdb: FAIL: %s\n", buf);
	if (nfailures < MAX_FAILURES)
		failures[nfailures++] = strdup(buf);
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

static uint64_t opt_size(const char *name, const char *v)
{
	uint64_t x;

	if (parse_size(v, &x))
		bad("--%s: invalid size '%s' (e.g. 4096, 4K, 2M, 1G)", name, v);
	return x;
}

static uint64_t opt_u64(const char *name, const char *v, uint64_t min, uint64_t max)
{
	uint64_t x;

	if (parse_u64(v, min, max, &x))
		bad("--%s: '%s' is not an integer in [%" PRIu64 ", %" PRIu64 "]",
		    name, v, min, max);
	return x;
}

static int opt_choice(const char *name, const char *v, const char *const *names)
{
	int i = parse_choice(v, names);

	if (i < 0)
		bad("--%s: unknown value '%s'", name, v);
	return i;
}

static void parse_args(int argc, char **argv, struct cfg *c)
{
	enum { O_BACKING = 256, O_PAGE, O_SIZE, O_PLACE, O_SESS, O_ATTACH,
	       O_DUR, O_DURMS, O_TXN, O_WPCT, O_BUF, O_DIS, O_DISINT, O_DISLEN,
	       O_SEED, O_ACTIVE, O_ADDR, O_HDIR, O_NOPOP, O_NOPRE, O_CNTF, O_OUT, O_QUIET, O_HELP };
	static const struct option lo[] = {
		{ "backing", 1, NULL, O_BACKING }, { "page-size", 1, NULL, O_PAGE },
		{ "size", 1, NULL, O_SIZE }, { "placement", 1, NULL, O_PLACE },
		{ "sessions", 1, NULL, O_SESS }, { "active", 1, NULL, O_ACTIVE }, { "attach", 1, NULL, O_ATTACH },
		{ "duration", 1, NULL, O_DUR }, { "duration-ms", 1, NULL, O_DURMS },
		{ "txn-count", 1, NULL, O_TXN }, { "write-pct", 1, NULL, O_WPCT },
		{ "buffer-size", 1, NULL, O_BUF }, { "disrupt", 1, NULL, O_DIS },
		{ "disrupt-interval-ms", 1, NULL, O_DISINT },
		{ "disrupt-len", 1, NULL, O_DISLEN }, { "seed", 1, NULL, O_SEED },
		{ "address", 1, NULL, O_ADDR }, { "hugetlbfs-dir", 1, NULL, O_HDIR },
		{ "no-populate", 0, NULL, O_NOPOP },
		{ "no-prefault", 0, NULL, O_NOPRE },
		{ "count-faults", 0, NULL, O_CNTF }, { "out", 1, NULL, O_OUT },
		{ "quiet", 0, NULL, O_QUIET }, { "help", 0, NULL, O_HELP },
		{ NULL, 0, NULL, 0 },
	};
	const char *bad_name;
	int o;

	*c = (struct cfg){
		.backing = B_SHM, .page_size = 2ull << 20, .size = 1ull << 30,
		.sessions = 100, .attach = A_FORK, .duration_ms = 5000,
		.write_pct = 20, .buffer_size = 8192, .disrupt_interval_ms = 100,
		.seed = 1, .base = DEFAULT_BASE, .populate = true, .prefault = true,
	};
	opterr = 0;
	while ((o = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (o) {
		case O_BACKING: c->backing = opt_choice("backing", optarg, backing_names); break;
		case O_PAGE: c->page_size = opt_size("page-size", optarg); break;
		case O_SIZE: c->size = opt_size("size", optarg); break;
		case O_PLACE: c->skewed = opt_choice("placement", optarg, placement_names); break;
		case O_SESS: c->sessions = opt_u64("sessions", optarg, 1, 100000); break;
		case O_ACTIVE: c->active = opt_u64("active", optarg, 0, 100000); break;
		case O_ATTACH: c->attach = opt_choice("attach", optarg, attach_names); break;
		case O_DUR: c->duration_ms = 1000 * opt_u64("duration", optarg, 0, 86400); break;
		case O_DURMS: c->duration_ms = opt_u64("duration-ms", optarg, 0, 86400000); break;
		case O_TXN: c->txn_count = opt_u64("txn-count", optarg, 0, UINT32_MAX); break;
		case O_WPCT: c->write_pct = opt_u64("write-pct", optarg, 0, 100); break;
		case O_BUF: c->buffer_size = opt_size("buffer-size", optarg); break;
		case O_DIS:
			if (parse_list(optarg, op_names, &c->disrupt, &bad_name))
				bad("--disrupt: unknown or repeated operation at '%s' (punch,truncate,mprotect,munmap,dontneed)",
				    bad_name);
			break;
		case O_DISINT:
			c->disrupt_interval_ms = opt_u64("disrupt-interval-ms", optarg, 0, 3600000);
			break;
		case O_DISLEN: c->disrupt_len = opt_size("disrupt-len", optarg); break;
		case O_SEED: c->seed = opt_u64("seed", optarg, 0, UINT64_MAX); break;
		case O_ADDR: {
			char *end;

			errno = 0;
			c->base = strtoull(optarg, &end, 0);
			if (errno || *end || !*optarg)
				bad("--address: invalid address '%s'", optarg);
			break;
		}
		case O_HDIR: c->hugetlbfs_dir = optarg; break;
		case O_NOPOP: c->populate = false; break;
		case O_NOPRE: c->prefault = false; break;
		case O_CNTF: c->count_faults = true; break;
		case O_OUT: c->out = optarg; break;
		case O_QUIET: c->quiet = true; break;
		case O_HELP: usage(stdout); exit(0);
		default:
			bad("unknown option or missing value: %s (see --help)",
			    argv[optind - 1]);
		}
	}
	if (optind < argc)
		bad("unexpected argument '%s'", argv[optind]);
	if (c->txn_count && c->duration_ms == 5000)
		c->duration_ms = 0;     /* --txn-count alone: no time limit */
}

static struct hp_counts hp_before[MAX_SIZES];
static uint64_t hp_size[MAX_SIZES];
static int hp_n;

/* Every input check; exits 2 with one line on stderr. */
static void validate(struct cfg *c)
{
	char b1[32], b2[32];
	const uint64_t G = 1ull << 30;
	bool hugetlb = c->page_size != 4096;

	if (c->page_size != 4096 && c->page_size != (2ull << 20) && c->page_size != G)
		bad("--page-size %s: only 4K, 2M and 1G are supported",
		    fmt_size(c->page_size, b1, sizeof(b1)));
	if (c->page_size == G && !cpu_has_flag("pdpe1gb"))
		bad("--page-size 1G: this CPU has no 1 GiB page support (pdpe1gb missing in /proc/cpuinfo)");
	if (c->size == 0 || c->size % c->page_size)
		bad("--size %s: must be a positive multiple of the page size %s",
		    fmt_size(c->size, b1, sizeof(b1)), fmt_size(c->page_size, b2, sizeof(b2)));
	if (c->base % G)
		bad("--address %#" PRIx64 ": must be 1 GiB aligned", c->base);
	if (c->base + c->size + G > (512ull << 30))
		bad("--size %s at %#" PRIx64 ": the segment must end below 511 GiB",
		    fmt_size(c->size, b1, sizeof(b1)), c->base);
	if (c->active > c->sessions)
		bad("--active %" PRIu64 ": more than the %" PRIu64 " sessions", c->active, c->sessions);
	if (c->active && !c->duration_ms)
		bad("--active needs a --duration (mappers sleep until the run's end)");
	if (c->skewed && c->page_size == G)
		bad("--placement skewed needs 2M or 4K pages (a 1G page must be 1 GiB aligned)");
	if (c->buffer_size < 64 || (c->buffer_size & (c->buffer_size - 1)) ||
	    c->buffer_size > c->size)
		bad("--buffer-size %s: must be a power of two from 64 to the segment size",
		    fmt_size(c->buffer_size, b1, sizeof(b1)));
	if (c->backing == B_HUGETLBFS && !hugetlb)
		bad("--backing hugetlbfs needs --page-size 2M or 1G (use memfd or shm for 4K)");
	if (c->backing == B_ANON && c->attach == A_ATTACH)
		bad("--backing anon can only be inherited: use --attach fork");
	if (!seg_file_backed(c) && (c->disrupt & ((1ull << OP_PUNCH) | (1ull << OP_TRUNCATE))))
		bad("--disrupt punch/truncate need a file-backed segment (--backing hugetlbfs or memfd)");
	if (c->backing == B_ANON && (c->disrupt & (1ull << OP_MUNMAP)))
		bad("--disrupt munmap cannot remap --backing anon; use shm, hugetlbfs or memfd");
	if (!c->duration_ms && !c->txn_count)
		bad("--duration 0 needs --txn-count");

	uint64_t align = c->page_size > c->buffer_size ? c->page_size : c->buffer_size;

	if (!c->disrupt_len) {
		c->disrupt_len = align > (2ull << 20) ? align : (2ull << 20);
		if (c->disrupt_len > c->size)
			c->disrupt_len = c->size;
	}
	if (c->disrupt_len % align || c->disrupt_len > c->size)
		bad("--disrupt-len %s: must be a multiple of %s and at most the segment size",
		    fmt_size(c->disrupt_len, b1, sizeof(b1)), fmt_size(align, b2, sizeof(b2)));

	hp_n = hp_sizes(HP_SYSFS, hp_size, MAX_SIZES);
	if (hp_n < 0)
		hp_n = 0;
	for (int i = 0; i < hp_n; i++)
		if (hp_read(HP_SYSFS, hp_size[i], &hp_before[i]))
			memset(&hp_before[i], 0, sizeof(hp_before[i]));

	struct kvlist m = { 0 };

	if (meminfo_read(&m))
		bad("cannot read /proc/meminfo");
	uint64_t avail = kv_get(&m, "MemAvailable", NULL);

	kvlist_free(&m);
	if (hugetlb) {
		struct hp_counts hc;
		char path[128], buf[64];
		uint64_t over = 0, need = c->size / c->page_size;

		if (hp_read(HP_SYSFS, c->page_size, &hc))
			bad("--page-size %s: the kernel has no huge page pool of that size (%s/hugepages-%" PRIu64 "kB)",
			    fmt_size(c->page_size, b1, sizeof(b1)), HP_SYSFS, c->page_size / 1024);
		snprintf(path, sizeof(path), "%s/hugepages-%" PRIu64 "kB/nr_overcommit_hugepages",
			 HP_SYSFS, c->page_size / 1024);
		if (read_text(path, buf, sizeof(buf)) > 0)
			over = strtoull(buf, NULL, 10);

		uint64_t have = hc.free - (hc.rsvd < hc.free ? hc.rsvd : hc.free) +
				(over > hc.surp ? over - hc.surp : 0);

		if (need > have)
			bad("too few %s huge pages: the segment needs %" PRIu64 ", the pool has %" PRIu64
			    " free (%" PRIu64 " free, %" PRIu64 " reserved, %" PRIu64 " overcommit)",
			    fmt_size(c->page_size, b1, sizeof(b1)), need, have, hc.free, hc.rsvd, over);
	} else if (c->size > avail) {
		bad("--size %s: more than MemAvailable (%" PRIu64 " bytes)",
		    fmt_size(c->size, b1, sizeof(b1)), avail);
	}
}

/*
 * Recording cost per call of clock_gettime and of a histogram insert: the
 * best of 5 rounds, so that other load on the machine does not inflate it.
 */
static void measure_overhead(double *clock_ns, double *insert_ns)
{
	const int n = 50000;
	uint64_t acc = 0;
	struct hist h;

	*clock_ns = *insert_ns = 1e9;
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

/* Reap exited children; a non-zero exit is a failure.  Returns reaped count. */
static int reap(int flags)
{
	int st, n = 0;
	pid_t p;

	while ((p = waitpid(-1, &st, flags)) > 0) {
		bool ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
		const char *who = "session";

		n++;
		if (p == disruptor) {
			disruptor_reaped = true;
			who = "disruptor";
		} else {
			int i = child_index(p);

			if (i >= 0)
				reaped[i] = true;
			nreaped++;
		}
		if (!ok) {
			if (WIFSIGNALED(st))
				fail("%s %d killed by signal %d", who, (int)p, WTERMSIG(st));
			else
				fail("%s %d exited with status %d", who, (int)p, WEXITSTATUS(st));
		}
		if (flags & WNOHANG)
			continue;
		break;
	}
	return n;
}

/* Wait until ctl->arrived[ph] reaches n; false on abort (signal, death). */
static bool wait_arrived(struct ctl *ctl, int ph, uint64_t n, uint64_t deadline_ns)
{
	for (;;) {
		uint32_t a = __atomic_load_n(&ctl->arrived[ph], __ATOMIC_ACQUIRE);

		if (a >= n)
			return true;
		if (got_signal || nfailures)
			return false;
		if (deadline_ns && now_ns() >= deadline_ns)
			return true;
		futex_wait(&ctl->arrived[ph], a, 100);
		reap(WNOHANG);
	}
}

static void set_phase(struct ctl *ctl, uint32_t ph)
{
	__atomic_store_n(&ctl->phase, ph, __ATOMIC_RELEASE);
	futex_wake(&ctl->phase, INT_MAX);
}

static void kill_all(void)
{
	for (uint64_t i = 0; i < npids; i++)
		if (!reaped[i])
			kill(pids[i], SIGKILL);
	if (disruptor > 0 && !disruptor_reaped)
		kill(disruptor, SIGKILL);
	while (waitpid(-1, NULL, 0) > 0)
		;
}

static uint64_t pagetables_once(void)
{
	struct kvlist m = { 0 };
	uint64_t v = 0;

	if (meminfo_read(&m) == 0)
		v = kv_get(&m, "PageTables", NULL);
	kvlist_free(&m);
	return v;
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
static double txn_cost_ns(const struct cfg *c)
{
	const uint64_t nbuf = 64, n = 20000;
	size_t nw = c->buffer_size / 8;
	uint64_t *mem = calloc(nbuf, c->buffer_size), rng = 12345, ver;
	uint32_t latch = 0;
	double best = 1e18;

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
	return best;
}

struct vmpte_sum {
	uint64_t min, max, sum, n;
};

struct results {
	char started[32], finished[32];
	const char *status;
	uint64_t pt_start, pt_before, pt_attached, pt_teardown;
	struct vmpte_sum vmpte;
	struct hp_counts hp_after[MAX_SIZES];
	bool hp_returned[MAX_SIZES];
	struct kvlist vm_before, vm_after;
	double prefault_s, attach_s, run_s, stop_s, clock_ns, insert_ns, txn_cost_ns;
	char clocksource[64];
	struct model_res model;
};

static void write_json(FILE *f, const struct cfg *c, const struct seg *s,
		       struct ctl *ctl, struct results *r, struct kmsg_scan *k)
{
	struct json j;
	char b[32];

	json_init(&j, f, 1);
	json_obj_begin(&j);
	json_kv_str(&j, "schema", "hugelab.shmdb/1");
	json_kv_str(&j, "program", "shmdb");
	json_kv_str(&j, "status", r->status);
	json_key(&j, "failures");
	json_arr_begin(&j);
	for (int i = 0; i < nfailures; i++)
		json_str(&j, failures[i]);
	json_arr_end(&j);
	json_kv_str(&j, "started_at", r->started);
	json_kv_str(&j, "finished_at", r->finished);
	envelope_kernel_json(&j);
	envelope_machine_json(&j);

	json_key(&j, "config");
	json_obj_begin(&j);
	json_kv_str(&j, "backing", backing_names[c->backing]);
	json_kv_uint(&j, "page_size", c->page_size);
	json_kv_uint(&j, "size", c->size);
	json_kv_str(&j, "placement", placement_names[c->skewed]);
	json_kv_uint(&j, "sessions", c->sessions);
	json_kv_uint(&j, "active", c->active ? c->active : c->sessions);
	json_kv_str(&j, "attach", attach_names[c->attach]);
	json_kv_double(&j, "duration_s", (double)c->duration_ms / 1000.0);
	json_kv_uint(&j, "txn_count", c->txn_count);
	json_kv_uint(&j, "write_pct", c->write_pct);
	json_kv_uint(&j, "buffer_size", c->buffer_size);
	json_key(&j, "disrupt");
	json_arr_begin(&j);
	for (int i = 0; i < NOPS; i++)
		if (c->disrupt & (1ull << i))
			json_str(&j, op_names[i]);
	json_arr_end(&j);
	json_kv_uint(&j, "disrupt_interval_ms", c->disrupt_interval_ms);
	json_kv_uint(&j, "disrupt_len", c->disrupt_len);
	json_kv_uint(&j, "seed", c->seed);
	snprintf(b, sizeof(b), "%#" PRIxPTR, (uintptr_t)s->addr);
	json_kv_str(&j, "address", b);
	json_kv_bool(&j, "populate", c->populate);
	json_kv_bool(&j, "prefault", c->prefault);
	json_kv_bool(&j, "count_faults", c->count_faults);
	json_kv_str(&j, "hugetlbfs_dir",
		    c->backing == B_HUGETLBFS ? s->hugetlbfs_dir : NULL);
	json_obj_end(&j);

	kmsg_json(&j, k);

	json_key(&j, "pagetables");
	json_obj_begin(&j);
	json_kv_uint(&j, "start", r->pt_start);
	json_kv_uint(&j, "before", r->pt_before);
	json_kv_uint(&j, "attached", r->pt_attached);
	json_kv_uint(&j, "teardown", r->pt_teardown);
	json_obj_end(&j);
	int64_t delta = (int64_t)r->pt_attached - (int64_t)r->pt_before;

	json_kv_int(&j, "pagetables_delta", delta);
	json_kv_double(&j, "pagetables_per_session", (double)delta / (double)c->sessions);

	json_key(&j, "model");
	json_obj_begin(&j);
	json_kv_uint(&j, "expected_pagetables_bytes", r->model.expected_bytes);
	json_kv_double(&j, "per_session_bytes", r->model.per_session_bytes);
	json_kv_uint(&j, "marginal_per_session_bytes", r->model.marginal_bytes);
	json_kv_uint(&j, "shared_bytes", r->model.shared_bytes);
	json_kv_uint(&j, "pmd_pages_per_session", r->model.pmd_pages_per_session);
	json_kv_uint(&j, "pte_pages_per_session", r->model.pte_pages_per_session);
	json_kv_uint(&j, "slots", r->model.slots);
	json_kv_uint(&j, "full_slots", r->model.full_slots);
	json_kv_uint(&j, "shared_slots", r->model.shared_slots);
	json_kv_bool(&j, "sharing", r->model.sharing);
	json_kv_double(&j, "excess_per_session_bytes",
		       ((double)delta - (double)r->model.expected_bytes) / (double)c->sessions);
	json_obj_end(&j);

	json_key(&j, "vmpte");
	json_obj_begin(&j);
	json_kv_uint(&j, "sessions", r->vmpte.n);
	json_kv_uint(&j, "min", r->vmpte.n ? r->vmpte.min : 0);
	json_kv_uint(&j, "max", r->vmpte.max);
	json_kv_double(&j, "mean", r->vmpte.n ? (double)r->vmpte.sum / (double)r->vmpte.n : 0);
	json_kv_uint(&j, "sum", r->vmpte.sum);
	json_obj_end(&j);

	json_key(&j, "hugepages");
	json_obj_begin(&j);
	for (int i = 0; i < hp_n; i++) {
		snprintf(b, sizeof(b), "%" PRIu64, hp_size[i]);
		json_key(&j, b);
		json_obj_begin(&j);
		hp_counts_json(&j, "before", &hp_before[i]);
		hp_counts_json(&j, "after", &r->hp_after[i]);
		json_kv_bool(&j, "returned", r->hp_returned[i]);
		json_obj_end(&j);
	}
	json_obj_end(&j);

	json_key(&j, "vmstat_delta");
	vmstat_delta_json(&j, &r->vm_before, &r->vm_after);

	json_key(&j, "attach");
	json_obj_begin(&j);
	json_kv_double(&j, "total_s", r->attach_s);
	json_kv_double(&j, "prefault_s", r->prefault_s);
	json_key(&j, "per_session");
	hist_json(&j, &ctl->attach);
	json_obj_end(&j);

	json_key(&j, "transactions");
	json_obj_begin(&j);
	json_kv_uint(&j, "count", ctl->txns);
	json_kv_uint(&j, "reads", ctl->reads);
	json_kv_uint(&j, "writes", ctl->writes);
	json_kv_double(&j, "run_s", r->run_s);
	json_kv_double(&j, "stop_s", r->stop_s);
	/* sessions stop at the deadline themselves: rate over the duration */
	double rate_s = c->duration_ms && r->run_s >= (double)c->duration_ms / 1000.0 ?
			(double)c->duration_ms / 1000.0 : r->run_s;

	json_kv_double(&j, "per_s", rate_s > 0 ? (double)ctl->txns / rate_s : 0);
	json_kv_uint(&j, "resets", ctl->resets);
	json_kv_uint(&j, "retries", ctl->retries);
	json_kv_uint(&j, "sigbus", ctl->sigbus);
	json_key(&j, "latency");
	hist_json(&j, &ctl->txn);
	json_obj_end(&j);

	json_key(&j, "faults");
	json_obj_begin(&j);
	bool pop = c->page_size == 4096 && ctl->populate_used == c->sessions;

	json_kv_str(&j, "method", pop ? "populate" : "touch");
	json_kv_uint(&j, "first_touch_unit_bytes", pop ? (2ull << 20) : c->page_size);
	json_key(&j, "first_touch");
	hist_json(&j, &ctl->first_touch);
	json_key(&j, "run_first_access");
	hist_json(&j, &ctl->access);
	if (c->count_faults) {
		json_key(&j, "run_faulting");
		hist_json(&j, &ctl->faulting);
	}
	json_obj_end(&j);

	struct hist dt, da, df;

	hist_init(&dt);
	hist_init(&da);
	hist_init(&df);
	for (int i = 0; i < NOPS; i++) {
		hist_merge(&dt, &ctl->dis_txn[i]);
		hist_merge(&da, &ctl->dis_access[i]);
		hist_merge(&df, &ctl->dis_faulting[i]);
	}
	json_key(&j, "during_disruption");
	json_obj_begin(&j);
	json_key(&j, "transactions");
	hist_json(&j, &dt);
	json_key(&j, "faults");
	hist_json(&j, &da);
	if (c->count_faults) {
		json_key(&j, "faulting");
		hist_json(&j, &df);
	}
	json_key(&j, "by_op");
	json_obj_begin(&j);
	for (int i = 0; i < NOPS; i++) {
		if (!(c->disrupt & (1ull << i)))
			continue;
		json_key(&j, op_names[i]);
		json_obj_begin(&j);
		json_key(&j, "transactions");
		hist_json(&j, &ctl->dis_txn[i]);
		json_key(&j, "faults");
		hist_json(&j, &ctl->dis_access[i]);
		if (c->count_faults) {
			json_key(&j, "faulting");
			hist_json(&j, &ctl->dis_faulting[i]);
		}
		json_obj_end(&j);
	}
	json_obj_end(&j);
	json_obj_end(&j);

	json_key(&j, "disruptor");
	json_obj_begin(&j);
	json_key(&j, "ops");
	json_obj_begin(&j);
	for (int i = 0; i < NOPS; i++) {
		if (!(c->disrupt & (1ull << i)))
			continue;
		json_key(&j, op_names[i]);
		json_obj_begin(&j);
		json_kv_uint(&j, "count", ctl->op_count[i]);
		json_key(&j, "duration");
		hist_json(&j, &ctl->op_dur[i]);
		json_obj_end(&j);
	}
	json_obj_end(&j);
	json_kv_uint(&j, "errors", ctl->op_errors);
	json_kv_str(&j, "first_error", ctl->op_errors ? ctl->op_error_msg : NULL);
	json_obj_end(&j);

	double per_txn = 2 * r->clock_ns + 2 * r->insert_ns;
	double txn_mean = hist_mean(&ctl->txn);

	json_key(&j, "recording_overhead");
	json_obj_begin(&j);
	json_kv_str(&j, "clock", fastclock_source());
	json_kv_str(&j, "clocksource", r->clocksource[0] ? r->clocksource : NULL);
	json_kv_double(&j, "clock_ns", r->clock_ns);
	json_kv_double(&j, "hist_insert_ns", r->insert_ns);
	json_kv_double(&j, "per_txn_ns", per_txn);
	json_kv_double(&j, "txn_cost_ns", r->txn_cost_ns);
	json_kv_double(&j, "pct", r->txn_cost_ns > 0 ?
		       100.0 * per_txn / (r->txn_cost_ns + per_txn) : 0);
	json_kv_double(&j, "txn_mean_ns", txn_mean);
	json_kv_double(&j, "pct_of_mean", txn_mean > 0 ? 100.0 * per_txn / txn_mean : 0);
	json_obj_end(&j);

	json_key(&j, "errors");
	json_obj_begin(&j);
	json_kv_uint(&j, "verify", ctl->verify_errors);
	json_kv_str(&j, "verify_first", ctl->verify_errors ? ctl->verify_msg : NULL);
	json_kv_uint(&j, "sessions", ctl->session_errors);
	json_kv_str(&j, "session_first", ctl->session_errors ? ctl->session_msg : NULL);
	json_obj_end(&j);

	json_obj_end(&j);
	if (json_finish(&j))
		fprintf(stderr, "shmdb: error writing JSON output\n");
}

int main(int argc, char **argv)
{
	struct cfg c;
	struct seg s;
	struct results r;
	struct kmsg_scan k;
	char err[512];
	FILE *out = stdout;

	memset(&r, 0, sizeof(r));
	parse_args(argc, argv, &c);
	quiet = c.quiet;
	validate(&c);
	if (c.out && !(out = fopen(c.out, "we")))
		bad("--out %s: %s", c.out, strerror(errno));

	struct model_cfg mc = {
		.size = c.size, .page_size = c.page_size,
		.start = c.base + (c.skewed ? (2ull << 20) : 0),
		.sessions = c.sessions, .may_share = true,
	};

	model_compute(&mc, &r.model);
	utc_now_iso(r.started, sizeof(r.started));
	kmsg_open(&k);
	fastclock_init(40);
	if (read_text("/sys/devices/system/clocksource/clocksource0/current_clocksource",
		      r.clocksource, sizeof(r.clocksource)) < 0)
		r.clocksource[0] = 0;
	measure_overhead(&r.clock_ns, &r.insert_ns);
	r.txn_cost_ns = txn_cost_ns(&c);
	if (vmstat_read(&r.vm_before))
		bad("cannot read /proc/vmstat");

	size_t ctl_len = (sizeof(struct ctl) + 4095) & ~4095ul;
	struct ctl *ctl = mmap(NULL, ctl_len, PROT_READ | PROT_WRITE,
			       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (ctl == MAP_FAILED)
		bad("mmap control area: %s", strerror(errno));
	hist_init(&ctl->attach);
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

	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	if (seg_create(&c, &s, err, sizeof(err)))
		bad("%s", err);

	if (c.prefault) {
		uint64_t t0 = now_ns();
		int st = 0;
		pid_t p;

		fflush(NULL);
		p = fork();
		if (p == 0)
			prefault_main(&c, &s);
		pid_t w = -1;

		while (p > 0 && (w = waitpid(p, &st, 0)) < 0 && errno == EINTR)
			;
		if (got_signal) {
			seg_destroy(&c, &s);
			return 128 + got_signal;
		}
		if (w != p || !WIFEXITED(st) || WEXITSTATUS(st)) {
			seg_destroy(&c, &s);
			bad("could not fill the segment (prefault process status %#x)", st);
		}
		r.prefault_s = (double)(now_ns() - t0) / 1e9;
		note("segment filled in %.3f s", r.prefault_s);
	}
	pids = calloc(c.sessions, sizeof(*pids));
	reaped = calloc(c.sessions, sizeof(*reaped));
	if (!pids || !reaped) {
		seg_destroy(&c, &s);
		bad("out of memory");
	}
	r.pt_start = pagetables();
	fflush(NULL);
	note("starting %" PRIu64 " sessions", c.sessions);
	for (uint64_t i = 0; i < c.sessions && !got_signal; i++) {
		pid_t p = fork();

		if (p == 0)
			session_main(&c, &s, ctl, (unsigned int)i);
		if (p < 0) {
			fail("fork of session %" PRIu64 ": %s", i, strerror(errno));
			break;
		}
		pids[npids++] = p;
	}

	/* sessions reaped during the fork loop were marked at their index */
	if (!nreaped) {
		qsort(pids, npids, sizeof(*pids), cmp_pid);
		pids_sorted = true;
	}

	uint64_t t;
	bool ok = !nfailures && wait_arrived(ctl, PH_INIT, c.sessions, 0);

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
			while (disruptor > 0 && !got_signal && !nfailures &&
			       !__atomic_load_n(&ctl->disruptor_ready, __ATOMIC_ACQUIRE)) {
				futex_wait(&ctl->disruptor_ready, 0, 100);
				reap(WNOHANG);
			}
		}
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
		if (ok)
			ok = wait_arrived(ctl, PH_RUN, c.sessions, 0);
		r.stop_s = (double)(now_ns() - t) / 1e9 - r.run_s;
	}
	if (ok) {
		while (reap(0) > 0)
			;
	} else {
		/* interrupted while running: let the sessions report (2 s) */
		if (__atomic_load_n(&ctl->phase, __ATOMIC_ACQUIRE) == PH_RUN) {
			uint64_t end = now_ns() + 2000000000ull;

			__atomic_store_n(&ctl->stop, 1, __ATOMIC_RELEASE);
			futex_wake(&ctl->stop, INT_MAX);
			while (__atomic_load_n(&ctl->arrived[PH_RUN], __ATOMIC_ACQUIRE) <
			       c.sessions - nreaped && now_ns() < end)
				usleep(10000);
		}
		set_phase(ctl, PH_ABORT);
		kill_all();
		if (got_signal)
			fail("interrupted by signal %d", (int)got_signal);
		else if (!nfailures)
			fail("aborted");
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
	if (k.findings)
		fail("kernel log: %u findings (see kernel_log.excerpt)", k.findings);
	if (ok && ctl->sessions_done != c.sessions)
		fail("only %" PRIu64 " of %" PRIu64 " sessions finished", ctl->sessions_done, c.sessions);

	r.status = got_signal || !ok ? "error" : nfailures ? "fail" : "ok";
	utc_now_iso(r.finished, sizeof(r.finished));
	write_json(out, &c, &s, ctl, &r, &k);
	if (out != stdout)
		fclose(out);
	note("status %s: %" PRIu64 " transactions in %.2f s, %d failures", r.status,
	     ctl->txns, r.run_s, nfailures);
	kmsg_close(&k);
	if (got_signal)
		return 128 + got_signal;
	return nfailures ? 1 : 0;
}
