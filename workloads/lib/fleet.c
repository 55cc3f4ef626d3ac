// SPDX-License-Identifier: GPL-2.0
/* A fleet of child processes: see fleet.h. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fleet.h"
#include "futex.h"
#include "hist.h"
#include "procfs.h"

#define fail(f, ...) failures_add((f)->failures, __VA_ARGS__)

int fleet_init(struct fleet *f, uint32_t cap, struct failures *fl,
	       struct stuck *st, volatile sig_atomic_t *got_signal)
{
	memset(f, 0, sizeof(*f));
	f->sh_len = (sizeof(*f->sh) + cap + 4095) & ~(size_t)4095;
	f->sh = mmap(NULL, f->sh_len, PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	f->m = calloc(cap ? cap : 1, sizeof(*f->m));
	if (f->sh == MAP_FAILED || !f->m) {
		if (f->sh != MAP_FAILED)
			munmap(f->sh, f->sh_len);
		free(f->m);
		f->sh = NULL;
		f->m = NULL;
		return -ENOMEM;
	}
	f->cap = cap;
	f->parent = getpid();
	f->failures = fl;
	f->stuck = st;
	f->got_signal = got_signal;
	f->waiting_ph = -1;
	return 0;
}

void fleet_free(struct fleet *f)
{
	if (f->sh)
		munmap(f->sh, f->sh_len);
	free(f->m);
	free(f->by_pid);
	f->sh = NULL;
	f->m = NULL;
	f->by_pid = NULL;
}

static void member_start(struct fleet *f)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != f->parent)
		_exit(4);               /* the parent died before the prctl */
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGTERM, SIG_DFL);
}

pid_t fleet_spawn(struct fleet *f, const char *role, fleet_fn fn, void *arg)
{
	uint32_t idx = f->n;
	pid_t p;

	if (idx >= f->cap) {
		fail(f, "fork of %s %u: more than the %u processes planned", role, idx, f->cap);
		return -1;
	}
	fflush(NULL);
	p = fork();
	if (p == 0) {
		member_start(f);
		fn(arg, idx);
		_exit(2);
	}
	if (p < 0) {
		int e = errno;
		char why[1200] = "";

		if (e == EAGAIN)
			pids_limit_read(why, sizeof(why));
		fail(f, "fork of %s %u: %s%s", role, idx, strerror(e), why);
		errno = e;
		return -1;
	}
	f->m[idx] = (struct fleet_member){ .pid = p };
	snprintf(f->m[idx].role, sizeof(f->m[idx].role), "%s", role);
	f->n++;
	return p;
}

static int cmp_idx_pid(const void *a, const void *b, void *arg)
{
	const struct fleet_member *m = arg;
	pid_t x = m[*(const uint32_t *)a].pid, y = m[*(const uint32_t *)b].pid;

	return x < y ? -1 : x > y;
}

void fleet_seal(struct fleet *f)
{
	free(f->by_pid);
	f->by_pid = malloc((f->n ? f->n : 1) * sizeof(*f->by_pid));
	if (!f->by_pid)
		return;                 /* linear lookups */
	for (uint32_t i = 0; i < f->n; i++)
		f->by_pid[i] = i;
	qsort_r(f->by_pid, f->n, sizeof(*f->by_pid), cmp_idx_pid, f->m);
}

void fleet_spare(struct fleet *f, uint32_t idx)
{
	if (idx < f->n)
		f->m[idx].spared = true;
}

int fleet_index(const struct fleet *f, pid_t pid)
{
	if (f->by_pid) {
		uint32_t lo = 0, hi = f->n;

		while (lo < hi) {
			uint32_t mid = lo + (hi - lo) / 2;
			pid_t q = f->m[f->by_pid[mid]].pid;

			if (q == pid)
				return (int)f->by_pid[mid];
			if (q < pid)
				lo = mid + 1;
			else
				hi = mid;
		}
		return -1;
	}
	for (uint32_t i = 0; i < f->n; i++)
		if (f->m[i].pid == pid)
			return (int)i;
	return -1;
}

void fleet_describe(int st, char *buf, size_t len)
{
	if (WIFSIGNALED(st))
		snprintf(buf, len, "killed by signal %d (%s)", WTERMSIG(st),
			 strsignal(WTERMSIG(st)));
	else
		snprintf(buf, len, "exit status %d", WEXITSTATUS(st));
}

static enum fleet_end classify(const struct fleet *f, int st)
{
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return FLEET_OK;
	if (f->aborting && ((WIFEXITED(st) && WEXITSTATUS(st) == FLEET_EXIT_ABORT) ||
			    (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)))
		return FLEET_ABORTED;
	return WIFSIGNALED(st) ? FLEET_SIGNALED : FLEET_EXITED;
}

static void reaped(struct fleet *f, uint32_t i, int st)
{
	struct fleet_member *m = &f->m[i];
	char how[96];

	m->status = st;
	m->end = classify(f, st);
	f->nreaped++;
	if (m->end == FLEET_ABORTED)
		f->n_aborted++;
	/* gone before it arrived where the parent waits: never "stuck" */
	m->early = !f->aborting && f->waiting_ph >= 0 && i < f->waiting_n &&
		   f->sh->mark[i] <= f->waiting_ph;
	if (!m->early && (m->end == FLEET_OK || m->end == FLEET_ABORTED))
		return;
	fleet_describe(st, how, sizeof(how));
	if (m->early)
		fail(f, "%s %u (pid %d) died before it could %s: %s", m->role, i,
		     (int)m->pid, f->waiting_for ? f->waiting_for : "arrive", how);
	else
		fail(f, "%s %u (pid %d) %s", m->role, i, (int)m->pid, how);
}

int fleet_reap(struct fleet *f)
{
	int st, n = 0;
	pid_t p;

	while ((p = waitpid(-1, &st, WNOHANG)) > 0) {
		int i = fleet_index(f, p);

		n++;
		if (i < 0) {
			char how[96];

			fleet_describe(st, how, sizeof(how));
			if (!(WIFEXITED(st) && !WEXITSTATUS(st)))
				fail(f, "process %d (not a member) %s", (int)p, how);
			continue;
		}
		reaped(f, (uint32_t)i, st);
	}
	return n;
}

static bool interrupted(const struct fleet *f)
{
	return (f->got_signal && *f->got_signal) || (f->failures && f->failures->n);
}

/* One failure naming (the first few of) the members that did not arrive. */
static void name_missing(struct fleet *f, int ph, uint32_t n, uint64_t waited_ms,
			 const char *what)
{
	char list[512] = "";
	size_t len = 0;
	uint32_t missing = 0, shown = 0;

	for (uint32_t i = 0; i < f->n && i < n; i++) {
		if (f->sh->mark[i] > ph)
			continue;
		missing++;
		if (shown < 8 && len < sizeof(list) - 64) {
			len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s %u (pid %d%s)",
						shown ? ", " : "", f->m[i].role, i, (int)f->m[i].pid,
						f->m[i].end == FLEET_RUNNING ? "" : ", gone");
			shown++;
		}
	}
	missing += n > f->n ? n - f->n : 0;     /* never forked */
	fail(f, "%u of %u processes did not %s within %.1f s: %s%s", missing, n, what,
	     (double)waited_ms / 1000, list, missing > shown ? ", ..." : "");
}

/* Timed out: past the deadline, or no arrival for f->stall_ns since the
 * last one (last_ns 0: none yet). */
static bool timed_out(const struct fleet *f, uint64_t deadline_ns, uint64_t last_ns)
{
	uint64_t now = now_ns();

	return (deadline_ns && now >= deadline_ns) ||
	       (f->stall_ns && last_ns && now - last_ns >= f->stall_ns);
}

enum fleet_wait_res fleet_wait(struct fleet *f, int ph, uint32_t n,
			       uint64_t deadline_ns, const char *what)
{
	uint64_t t0 = now_ns(), last = 0;
	uint32_t seen = 0;
	enum fleet_wait_res r;

	f->waiting_ph = ph;
	f->waiting_n = n;
	f->waiting_for = what;
	__atomic_store_n(&f->sh->expect[ph], n, __ATOMIC_RELEASE);
	for (;;) {
		uint32_t a = __atomic_load_n(&f->sh->arrived[ph], __ATOMIC_ACQUIRE);

		if (a >= n) {
			r = FLEET_ARRIVED;
			break;
		}
		if (interrupted(f)) {
			r = FLEET_INTERRUPTED;
			break;
		}
		if (a != seen) {
			seen = a;
			last = now_ns();
		}
		if (timed_out(f, deadline_ns, last)) {
			if (what)
				name_missing(f, ph, n, (now_ns() - t0) / 1000000, what);
			r = FLEET_TIMEOUT;
			break;
		}
		futex_wait(&f->sh->arrived[ph], a, 100);
		fleet_reap(f);
	}
	f->waiting_ph = -1;
	return r;
}

enum fleet_wait_res fleet_wait_gone(struct fleet *f, uint64_t deadline_ns)
{
	for (;;) {
		fleet_reap(f);
		if (f->nreaped >= f->n)
			return FLEET_ARRIVED;
		if (f->got_signal && *f->got_signal)
			return FLEET_INTERRUPTED;
		if (deadline_ns && now_ns() >= deadline_ns)
			return FLEET_TIMEOUT;
		usleep(10000);
	}
}

int fleet_run_one(struct fleet *f, const char *role, fleet_fn fn, void *arg,
		  uint64_t stop_ns)
{
	char when[64];

	if (fleet_spawn(f, role, fn, arg) < 0)
		return -1;
	if (fleet_wait_gone(f, 0) == FLEET_ARRIVED)
		return f->m[f->n - 1].end == FLEET_OK ? 0 : -1;
	snprintf(when, sizeof(when), "%.0f s after SIGKILL", (double)stop_ns / 1e9);
	fleet_abort(f);
	fleet_stop(f, now_ns() + stop_ns, when);
	return -1;
}

void fleet_release(struct fleet *f, uint32_t ph)
{
	__atomic_store_n(&f->sh->phase, ph, __ATOMIC_RELEASE);
	futex_wake(&f->sh->phase, INT_MAX);
}

void fleet_abort(struct fleet *f)
{
	f->aborting = true;
	fleet_release(f, FLEET_ABORT);
}

bool fleet_wait_exit(struct fleet *f, uint64_t deadline_ns)
{
	for (;;) {
		fleet_reap(f);
		if (f->nreaped >= f->n)
			return true;
		if (now_ns() >= deadline_ns)
			return false;
		usleep(10000);
	}
}

uint32_t fleet_stop(struct fleet *f, uint64_t deadline_ns, const char *when)
{
	uint32_t nstuck = 0;

	for (uint32_t i = 0; i < f->n; i++)
		if (f->m[i].end == FLEET_RUNNING && !f->m[i].spared)
			kill(f->m[i].pid, SIGKILL);
	if (fleet_wait_exit(f, deadline_ns))
		return 0;
	for (uint32_t i = 0; i < f->n; i++) {
		if (f->m[i].end != FLEET_RUNNING)
			continue;
		f->m[i].end = FLEET_STUCK;
		nstuck++;
		if (f->stuck)
			stuck_add(f->stuck, f->m[i].pid, f->m[i].role);
	}
	fail(f, "%u processes still there %s (see stuck)", nstuck, when);
	return nstuck;
}

void fleet_arrive(struct fleet_shared *sh, uint32_t idx, int ph)
{
	__atomic_store_n(&sh->mark[idx], (uint8_t)(ph + 1), __ATOMIC_RELAXED);
	uint32_t a = __atomic_add_fetch(&sh->arrived[ph], 1, __ATOMIC_ACQ_REL);
	uint32_t want = __atomic_load_n(&sh->expect[ph], __ATOMIC_ACQUIRE);

	/* one wake-up for the parent, not one per member of thousands */
	if (!want || a >= want)
		futex_wake(&sh->arrived[ph], INT_MAX);
}

int fleet_await_ms(struct fleet_shared *sh, uint32_t ph, long timeout_ms)
{
	uint32_t p = __atomic_load_n(&sh->phase, __ATOMIC_ACQUIRE);

	if (p < ph)
		futex_wait(&sh->phase, p, timeout_ms);
	p = __atomic_load_n(&sh->phase, __ATOMIC_ACQUIRE);
	if (p == FLEET_ABORT)
		return 0;
	return p >= ph ? 1 : -1;
}

bool fleet_await(struct fleet_shared *sh, uint32_t ph)
{
	int r;

	while ((r = fleet_await_ms(sh, ph, -1)) < 0)
		;
	return r == 1;
}

uint64_t fleet_meminfo_settled(const char *key)
{
	uint64_t v = meminfo_once(key);
	int same = 0;

	for (int i = 0; i < 60 && same < 2; i++) {
		usleep(50000);

		uint64_t n = meminfo_once(key);

		same = n == v ? same + 1 : 0;
		v = n;
	}
	return v;
}

bool fleet_hp_wait(const char *root, int n, const uint64_t *size,
		   const struct hp_counts *before, struct hp_counts *after,
		   bool *returned, unsigned int timeout_ms)
{
	uint64_t end = now_ns() + (uint64_t)timeout_ms * 1000000;

	for (;;) {
		bool all = true;

		for (int i = 0; i < n; i++) {
			if (hp_read(root, size[i], &after[i]))
				memset(&after[i], 0, sizeof(after[i]));
			returned[i] = after[i].nr == before[i].nr && after[i].free == before[i].free &&
				      after[i].rsvd == before[i].rsvd && after[i].surp == before[i].surp;
			all &= returned[i];
		}
		if (all || now_ns() >= end)
			return all;
		usleep(20000);
	}
}
