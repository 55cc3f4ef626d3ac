// SPDX-License-Identifier: GPL-2.0
/*
 * shmdb --attribute: the I/O around lib/attrib.h and lib/locktrace.h, see
 * attribute.h.  Tracing lives here, in the coordinator, not in a helper
 * program: the coordinator knows the processes to trace (its descendants:
 * set_event_pid with event-fork, set before the sessions are forked), the
 * run's start and end (events on only then), the faults kept and the
 * disruptor's log, and writes the one result document.
 */
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <unistd.h>

#include "attribute.h"
#include "hist.h"
#include "ops.h"
#include "procfs.h"

#define TRACEFS "/sys/kernel/tracing"
#define TRACE_KB 16384                  /* ring buffer per CPU */
/* sleeping locks only: a pure spinlock's contention is not traced */
#define TRACE_FILTER "flags != 1"
/*
 * Stacks only where a wait sleeps: a lockdep kernel's every mutex_lock()
 * emits contention_begin(MUTEX|SPIN) before its trylock (no fast path
 * there), and a stack each would cost more than the waits; a mutex that
 * goes to sleep emits contention_begin(MUTEX) with its stack.
 */
#define STACK_FILTER "flags != 1 && flags != 33"

struct attr_shared *attr_shared_new(void)
{
	struct attr_shared *a = mmap(NULL, sizeof(*a), PROT_READ | PROT_WRITE,
				     MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return a == MAP_FAILED ? NULL : a;
}

static int schedstat_fd = -1;
static uint64_t schedstat_reads;

void attr_session_init(void)
{
	schedstat_fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
}

void attr_sched(uint64_t *cpu_ns, uint64_t *rq_ns)
{
	char b[96];
	ssize_t n = schedstat_fd < 0 ? -1 : pread(schedstat_fd, b, sizeof(b) - 1, 0);

	*cpu_ns = *rq_ns = 0;
	schedstat_reads++;
	if (n <= 0)
		return;
	b[n] = 0;
	schedstat_parse(b, cpu_ns, rq_ns);
}

void attr_keep(struct attr_shared *a, const struct attr_fault *f)
{
	uint32_t i = __atomic_fetch_add(&a->nfaults, 1, __ATOMIC_RELAXED);

	if (i < ATTR_MAX_FAULTS)
		a->faults[i] = *f;
}

void attr_publish(struct attr_shared *a)
{
	__atomic_fetch_add(&a->schedstat_reads, schedstat_reads, __ATOMIC_RELAXED);
}

static int tw(struct attr_trace *t, const char *rel, const char *val);

/* One schedstat read, best of 5 rounds of 200. */
static double read_cost(void)
{
	double best = 1e18;
	uint64_t cpu, rq;

	for (int round = 0; round < 5; round++) {
		uint64_t t0 = now_ns();

		for (int i = 0; i < 200; i++)
			attr_sched(&cpu, &rq);

		double d = (double)(now_ns() - t0) / 200;

		if (d < best)
			best = d;
	}
	return best;
}

/*
 * The cost of a schedstat read, and of the same read traced: on a lockdep
 * kernel its seq_file mutex emits a contention_begin/end pair (no stack),
 * so the difference is what two trace events cost.
 */
void attr_measure(struct attr_trace *t)
{
	uint64_t reads = schedstat_reads;

	attr_session_init();
	t->schedstat_ns = read_cost();
	if (t->available && !tw(t, "tracing_on", "1")) {
		t->traced_read_ns = read_cost();
		tw(t, "tracing_on", "0");
		tw(t, "trace", "");
	}
	close(schedstat_fd);
	schedstat_fd = -1;
	schedstat_reads = reads;
}

void attr_log_op(struct attr_shared *a, uint32_t op, uint64_t seq,
		 uint64_t start_ns, uint64_t end_ns)
{
	uint32_t i = __atomic_fetch_add(&a->nops, 1, __ATOMIC_RELAXED);

	if (i < ATTR_MAX_OPS)
		a->ops[i] = (struct attr_op){ .seq = seq, .op = op,
					      .start_ns = start_ns, .end_ns = end_ns };
}

/* Write val to TRACEFS/rel (truncating); the first failure in t->error. */
static int tw(struct attr_trace *t, const char *rel, const char *val)
{
	char path[160];
	int fd, e = 0;

	snprintf(path, sizeof(path), TRACEFS "/%s", rel);
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0 || (*val && write(fd, val, strlen(val)) < 0))
		e = errno;
	if (fd >= 0)
		close(fd);
	if (e && !t->error[0])
		snprintf(t->error, sizeof(t->error), "%s: %s", path, strerror(e));
	return e ? -1 : 0;
}

/* The clock in use: "[mono] local ..." -> mono. */
static void current_clock(char *b, size_t len)
{
	char txt[256], *o, *c;

	b[0] = 0;
	if (read_text(TRACEFS "/trace_clock", txt, sizeof(txt)) < 0)
		return;
	o = strchr(txt, '[');
	c = o ? strchr(o, ']') : NULL;
	if (c)
		snprintf(b, len, "%.*s", (int)(c - o - 1), o + 1);
}

void attr_trace_setup(struct attr_trace *t, pid_t self)
{
	char kb[16], pid[16];

	memset(t, 0, sizeof(*t));
	if (access(TRACEFS "/trace", F_OK) &&
	    mount("nodev", TRACEFS, "tracefs", 0, NULL) && errno != EBUSY) {
		snprintf(t->error, sizeof(t->error), "mount tracefs on " TRACEFS ": %s",
			 strerror(errno));
		return;
	}
	if (access(TRACEFS "/events/lock/contention_begin", F_OK)) {
		snprintf(t->error, sizeof(t->error),
			 "this kernel has no lock:contention_begin event (" TRACEFS "/events/lock)");
		return;
	}
	current_clock(t->saved_clock, sizeof(t->saved_clock));
	if (read_text(TRACEFS "/buffer_size_kb", t->saved_kb, sizeof(t->saved_kb)) < 0)
		t->saved_kb[0] = 0;
	t->buffer_kb = TRACE_KB;
	snprintf(kb, sizeof(kb), "%d", TRACE_KB);
	snprintf(pid, sizeof(pid), "%d", (int)self);
	if (read_text(TRACEFS "/options/hash-ptr", t->saved_hash, sizeof(t->saved_hash)) < 0)
		t->saved_hash[0] = 0;
	if (read_text(TRACEFS "/tracing_on", t->saved_on, sizeof(t->saved_on)) < 0)
		t->saved_on[0] = 0;
	/* raw lock addresses: hashing prints "(____ptrval____)" until the
	 * kernel's random key is ready, for a while after boot in a guest */
	t->available = !tw(t, "tracing_on", "0") && !tw(t, "trace", "") &&
		       (!t->saved_hash[0] || !tw(t, "options/hash-ptr", "0")) &&
		       !tw(t, "trace_clock", "mono") && !tw(t, "buffer_size_kb", kb) &&
		       !tw(t, "options/event-fork", "1") && !tw(t, "set_event_pid", pid) &&
		       !tw(t, "events/lock/contention_begin/filter", TRACE_FILTER) &&
		       !tw(t, "events/lock/contention_begin/trigger",
			   "stacktrace if " STACK_FILTER) &&
		       !tw(t, "events/lock/contention_begin/enable", "1") &&
		       !tw(t, "events/lock/contention_end/enable", "1") &&
		       !tw(t, "events/sched/sched_wakeup/enable", "1");
}

void attr_trace_start(struct attr_trace *t)
{
	/*
	 * Only the ring buffer's switch here: enabling an event patches
	 * kernel text (static keys, int3 breakpoints on every CPU), done in
	 * attr_trace_setup before any fork, on a quiet guest.  Patching the
	 * lock functions while 300 sessions ran ended a TCG guest with
	 * "int3: 0000 [#1]" in __schedule (run 20261207T090736Z-overhead4).
	 */
	if (t->available)
		t->available = !tw(t, "trace", "") && !tw(t, "tracing_on", "1");
}

void attr_trace_stop(struct attr_trace *t)
{
	if (t->available)
		tw(t, "tracing_on", "0");
}

/* overrun + dropped events of every CPU's buffer */
static uint64_t lost_events(void)
{
	uint64_t lost = 0;

	for (int cpu = 0;; cpu++) {
		char path[96], line[128];
		unsigned long long v;
		FILE *f;

		snprintf(path, sizeof(path), TRACEFS "/per_cpu/cpu%d/stats", cpu);
		f = fopen(path, "re");
		if (!f)
			return lost;
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "overrun: %llu", &v) == 1 ||
			    sscanf(line, "dropped events: %llu", &v) == 1)
				lost += v;
		fclose(f);
	}
}

#define MAX_PENDING (1u << 16)

/* A wait inside a kept fault, kept until every lock address is known. */
struct pending {
	struct lt_wait w;
	char site[40];
};

struct join {
	struct attr_trace *t;
	struct attr_shared *a;
	uint32_t n, *idx;
	struct attr_addrs *addrs;
	struct pending *p;
	uint32_t np;
};

/* First pass: every wait's address; the waits inside kept faults kept. */
static void on_wait(void *arg, const struct lt_wait *w)
{
	struct join *j = arg;

	attr_addr_note(j->addrs, w);
	if (!attr_overlaps(j->a->faults, j->idx, j->n, w))
		return;
	if (j->np == MAX_PENDING) {
		j->t->unjoined++;
		return;
	}
	j->p[j->np].w = *w;
	snprintf(j->p[j->np].site, sizeof(j->p[0].site), "%s", w->site ? w->site : "?");
	j->p[j->np].w.site = j->p[j->np].site;
	j->np++;
}

/* Second pass: each kept wait named by its address, added to its faults. */
static void join_waits(struct join *j)
{
	for (uint32_t i = 0; i < j->np; i++) {
		struct lt_wait w = j->p[i].w;

		w.lock = attr_addr_lock(j->addrs, &w);
		j->t->waits_by_lock[w.lock]++;
		j->t->matched += attr_match(j->a->faults, j->idx, j->n, &w) > 0;
	}
}

/* Leave tracefs as we found it (but for the events' contents). */
static void restore(struct attr_trace *t)
{
	char e[sizeof(t->error)];

	memcpy(e, t->error, sizeof(e));
	tw(t, "events/lock/contention_begin/enable", "0");
	tw(t, "events/lock/contention_end/enable", "0");
	tw(t, "events/sched/sched_wakeup/enable", "0");
	tw(t, "events/lock/contention_begin/trigger", "!stacktrace if " STACK_FILTER);
	tw(t, "events/lock/contention_begin/filter", "0");
	tw(t, "set_event_pid", "");
	tw(t, "options/event-fork", "0");
	if (t->saved_clock[0])
		tw(t, "trace_clock", t->saved_clock);
	if (t->saved_hash[0])
		tw(t, "options/hash-ptr", t->saved_hash);
	tw(t, "trace", "");
	if (t->saved_kb[0]) {
		/* "1408" or, before first use, "7 (expanded: 1408)" */
		const char *x = strstr(t->saved_kb, "expanded: ");
		char kb[24];

		snprintf(kb, sizeof(kb), "%lu", strtoul(x ? x + 10 : t->saved_kb, NULL, 10));
		tw(t, "buffer_size_kb", kb);
	}
	if (t->saved_on[0])
		tw(t, "tracing_on", t->saved_on);
	memcpy(t->error, e, sizeof(e));
}

/* The trace file through lib/locktrace.c; 0, or -1 when unreadable. */
static int read_trace(struct attr_trace *t, struct join *j)
{
	FILE *f = fopen(TRACEFS "/trace", "re");
	struct lt_state st;
	char *line = NULL;
	size_t cap = 0;

	if (!f || lt_init(&st, on_wait, j)) {
		if (f)
			fclose(f);
		return -1;
	}
	while (getline(&line, &cap, f) > 0) {
		t->lines++;
		lt_feed(&st, line);
	}
	lt_finish(&st);
	t->begins = st.begins;
	t->ends = st.ends;
	t->unpaired_ends = st.unpaired_ends;
	t->wakes = st.wakes;
	t->waits = st.waits;
	lt_free(&st);
	fclose(f);
	free(line);
	return 0;
}

void attr_trace_collect(struct attr_trace *t, struct attr_shared *a)
{
	struct join j = { .t = t, .a = a };

	if (!t->available)
		return;
	j.n = a->nfaults < ATTR_MAX_FAULTS ? a->nfaults : ATTR_MAX_FAULTS;
	j.idx = calloc(j.n + 1, sizeof(*j.idx));
	j.addrs = calloc(1, sizeof(*j.addrs));
	j.p = calloc(MAX_PENDING, sizeof(*j.p));
	if (j.idx && j.addrs && j.p)
		attr_index(a->faults, j.idx, j.n);
	if (!j.idx || !j.addrs || !j.p || read_trace(t, &j)) {
		snprintf(t->error, sizeof(t->error), "cannot read " TRACEFS "/trace: %s",
			 strerror(errno));
		t->available = false;
	} else {
		join_waits(&j);
		t->lost = lost_events();
		t->addrs_full = j.addrs->full;
	}
	free(j.idx);
	free(j.addrs);
	free(j.p);
	restore(t);
}

static void trace_json(struct json *j, const struct attr_trace *t)
{
	json_key(j, "trace");
	json_obj_begin(j);
	json_kv_bool(j, "available", t->available);
	json_kv_str(j, "error", t->error[0] ? t->error : NULL);
	json_kv_str(j, "clock", "mono");
	json_kv_str(j, "filter", TRACE_FILTER);
	json_kv_str(j, "stack_filter", STACK_FILTER);
	json_kv_uint(j, "buffer_kb", t->buffer_kb);
	json_kv_uint(j, "lost_events", t->lost);
	json_kv_uint(j, "lines", t->lines);
	json_kv_uint(j, "begins", t->begins);
	json_kv_uint(j, "ends", t->ends);
	json_kv_uint(j, "unpaired_ends", t->unpaired_ends);
	json_kv_uint(j, "wakeups", t->wakes);
	json_kv_uint(j, "waits", t->waits);
	json_kv_uint(j, "waits_matched", t->matched);
	json_kv_uint(j, "waits_unjoined", t->unjoined);
	json_kv_uint(j, "addresses_unrecorded", t->addrs_full);
	json_key(j, "waits_by_lock");
	json_obj_begin(j);
	for (int i = 0; i < LT_NLOCKS; i++)
		json_kv_uint(j, lt_lock_names[i], t->waits_by_lock[i]);
	json_obj_end(j);
	json_obj_end(j);
}

static void waits_json(struct json *j, const struct attr_fault *f)
{
	char addr[24];

	json_key(j, "lock_ns");
	json_obj_begin(j);
	for (int i = 0; i < LT_NLOCKS; i++)
		json_kv_uint(j, lt_lock_names[i], f->lock_ns[i]);
	json_obj_end(j);
	json_kv_uint(j, "lock_runnable_ns", f->lock_runnable_ns);
	json_kv_uint(j, "waits_total", f->nwaits);
	json_key(j, "waits");
	json_arr_begin(j);
	for (uint32_t i = 0; i < f->nwaits && i < ATTR_MAX_WAITS; i++) {
		json_obj_begin(j);
		json_kv_str(j, "lock", lt_lock_names[f->waits[i].lock]);
		json_kv_str(j, "site", f->waits[i].site);
		snprintf(addr, sizeof(addr), "%#" PRIx64, f->waits[i].addr);
		json_kv_str(j, "addr", addr);
		json_kv_uint(j, "start_ns", f->waits[i].start_ns);
		json_kv_uint(j, "ns", f->waits[i].ns);
		json_kv_uint(j, "runnable_ns", f->waits[i].runnable_ns);
		json_obj_end(j);
	}
	json_arr_end(j);
}

static void fault_json(struct json *j, const struct attr_fault *f, bool traced)
{
	json_obj_begin(j);
	json_kv_uint(j, "session", f->session);
	json_kv_uint(j, "pid", f->pid);
	json_kv_uint(j, "start_ns", f->start_ns);
	json_kv_uint(j, "latency_ns", f->latency_ns);
	json_kv_uint(j, "runqueue_ns", f->runqueue_ns);
	json_kv_uint(j, "cpu_ns", f->cpu_ns);
	json_kv_uint(j, "op_seq_start", f->op_seq_start);
	json_kv_uint(j, "op_seq_end", f->op_seq_end);
	json_kv_str(j, "op", f->op >= 0 && f->op < NOPS ? op_names[f->op] : NULL);
	if (traced) {
		waits_json(j, f);
	} else {
		json_kv_null(j, "lock_ns");
		json_kv_null(j, "lock_runnable_ns");
		json_kv_null(j, "waits");
	}
	json_obj_end(j);
}

void attr_json(struct json *j, const struct attr_trace *t, const struct attr_shared *a)
{
	uint32_t n = a->nfaults < ATTR_MAX_FAULTS ? a->nfaults : ATTR_MAX_FAULTS;
	uint32_t nops = a->nops < ATTR_MAX_OPS ? a->nops : ATTR_MAX_OPS;

	json_key(j, "attribution");
	json_obj_begin(j);
	json_kv_uint(j, "min_latency_ns", ATTR_MIN_NS);
	json_kv_uint(j, "faults_kept", n);
	json_kv_uint(j, "faults_dropped", a->nfaults - n);
	json_kv_uint(j, "schedstat_reads", a->schedstat_reads);
	json_kv_double(j, "schedstat_read_ns", t->schedstat_ns);
	json_kv_double(j, "traced_read_ns", t->traced_read_ns);
	trace_json(j, t);
	json_key(j, "faults");
	json_arr_begin(j);
	for (uint32_t i = 0; i < n; i++)
		fault_json(j, &a->faults[i], t->available);
	json_arr_end(j);
	json_kv_uint(j, "ops_logged", nops);
	json_kv_uint(j, "ops_dropped", a->nops - nops);
	json_key(j, "ops");
	json_arr_begin(j);
	for (uint32_t i = 0; i < nops; i++) {
		const struct attr_op *o = &a->ops[i];

		if (!attr_op_wanted(o, a->faults, n))
			continue;
		json_obj_begin(j);
		json_kv_uint(j, "seq", o->seq);
		json_kv_str(j, "op", o->op < NOPS ? op_names[o->op] : NULL);
		json_kv_uint(j, "start_ns", o->start_ns);
		json_kv_uint(j, "end_ns", o->end_ns);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_obj_end(j);
}
