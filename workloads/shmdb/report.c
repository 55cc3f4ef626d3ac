// SPDX-License-Identifier: GPL-2.0
/* shmdb's result document, see report.h and workloads/SCHEMA.md: one
 * function per top-level section, in the document's order. */
#include <inttypes.h>
#include <stdio.h>

#include "fastclock.h"
#include "json.h"
#include "report.h"

/* What every section reads. */
struct doc {
	struct json *j;
	const struct cfg *c;
	const struct seg *s;
	const struct ctl *ctl;
	const struct results *r;
};

static void config_json(const struct doc *d)
{
	const struct cfg *c = d->c;
	struct json *j = d->j;
	char b[32];

	json_key(j, "config");
	json_obj_begin(j);
	seg_config_json(j, c);
	json_kv_uint(j, "active", c->active ? c->active : c->sessions);
	json_kv_str(j, "attach", attach_names[c->attach]);
	json_kv_double(j, "duration_s", (double)c->duration_ms / 1000.0);
	json_kv_uint(j, "txn_count", c->txn_count);
	json_kv_uint(j, "write_pct", c->write_pct);
	json_kv_uint(j, "buffer_size", c->buffer_size);
	json_key(j, "disrupt");
	json_arr_begin(j);
	for (int i = 0; i < NOPS; i++)
		if (c->disrupt & (1ull << i))
			json_str(j, op_names[i]);
	json_arr_end(j);
	json_kv_uint(j, "disrupt_interval_ms", c->disrupt_interval_ms);
	json_kv_uint(j, "disrupt_len", c->disrupt_len);
	json_kv_bool(j, "disrupt_once", c->disrupt_once);
	json_kv_uint(j, "seed", c->seed);
	snprintf(b, sizeof(b), "%#" PRIxPTR, (uintptr_t)d->s->addr);
	json_kv_str(j, "address", b);
	json_kv_bool(j, "populate", c->populate);
	json_kv_bool(j, "prefault", c->prefault);
	json_kv_bool(j, "count_faults", c->count_faults);
	json_kv_bool(j, "attribute", c->attribute);
	json_kv_str(j, "hugetlbfs_dir", c->backing == B_HUGETLBFS ? d->s->hugetlbfs_dir : NULL);
	json_kv_uint(j, "teardown_timeout_s", c->teardown_timeout_s);
	json_kv_str(j, "shmem_enabled", d->r->shmem_enabled[0] ? d->r->shmem_enabled : NULL);
	json_kv_bool(j, "thp_disabled", c->page_size == 4096);
	json_obj_end(j);
}

/* 0: the run never got every session attached (PageTables is never 0) */
static bool attached(const struct results *r)
{
	return r->pt_attached && r->pt_before;
}

static void pagetables_json(const struct doc *d)
{
	const struct results *r = d->r;
	struct json *j = d->j;
	int64_t delta = (int64_t)r->pt_attached - (int64_t)r->pt_before;

	json_key(j, "pagetables");
	json_obj_begin(j);
	json_kv_uint(j, "start", r->pt_start);
	json_kv_uint(j, "before", r->pt_before);
	if (attached(r))
		json_kv_uint(j, "attached", r->pt_attached);
	else
		json_kv_null(j, "attached");
	json_kv_uint(j, "teardown", r->pt_teardown);
	json_obj_end(j);
	if (attached(r)) {
		json_kv_int(j, "pagetables_delta", delta);
		json_kv_double(j, "pagetables_per_session", (double)delta / (double)d->c->sessions);
	} else {
		json_kv_null(j, "pagetables_delta");
		json_kv_null(j, "pagetables_per_session");
	}
}

static void model_json(const struct doc *d)
{
	const struct model_res *m = &d->r->model;
	struct json *j = d->j;
	double delta = (double)d->r->pt_attached - (double)d->r->pt_before;

	json_key(j, "model");
	json_obj_begin(j);
	json_kv_uint(j, "expected_pagetables_bytes", m->expected_bytes);
	json_kv_double(j, "per_session_bytes", m->per_session_bytes);
	json_kv_uint(j, "marginal_per_session_bytes", m->marginal_bytes);
	json_kv_uint(j, "shared_bytes", m->shared_bytes);
	json_kv_uint(j, "pmd_pages_per_session", m->pmd_pages_per_session);
	json_kv_uint(j, "pte_pages_per_session", m->pte_pages_per_session);
	json_kv_uint(j, "pud_pages_per_session", m->pud_pages_per_session);
	json_kv_bool(j, "pud_counted", m->pud_counted);
	json_kv_uint(j, "memory_bytes", m->memory_bytes);
	json_kv_uint(j, "vmpte_per_session_bytes", m->vmpte_bytes);
	json_kv_uint(j, "slots", m->slots);
	json_kv_uint(j, "full_slots", m->full_slots);
	json_kv_uint(j, "shared_slots", m->shared_slots);
	json_kv_bool(j, "sharing", m->sharing);
	if (attached(d->r))
		json_kv_double(j, "excess_per_session_bytes",
			       (delta - (double)m->expected_bytes) / (double)d->c->sessions);
	else
		json_kv_null(j, "excess_per_session_bytes");
	json_obj_end(j);
}

/*
 * What a session costs in memory besides the segment: MemFree from before
 * the sessions were forked to every session attached, per session (page
 * tables, kernel stack, task and mm, private pages); VmPTE of the sessions.
 */
static void memory_vmpte_json(const struct doc *d)
{
	const struct results *r = d->r;
	struct json *j = d->j;
	int64_t used = (int64_t)r->mem_free_start - (int64_t)r->mem_free_attached;

	json_key(j, "memory");
	json_obj_begin(j);
	json_kv_uint(j, "mem_free_start", r->mem_free_start);
	json_kv_uint(j, "mem_free_attached", r->mem_free_attached);
	if (r->mem_free_attached) {
		json_kv_int(j, "used", used);
		json_kv_double(j, "per_session_bytes", (double)used / (double)d->c->sessions);
	} else {
		json_kv_null(j, "used");
		json_kv_null(j, "per_session_bytes");
	}
	json_obj_end(j);
	json_key(j, "vmpte");
	json_obj_begin(j);
	json_kv_uint(j, "sessions", r->vmpte.n);
	json_kv_uint(j, "min", r->vmpte.n ? r->vmpte.min : 0);
	json_kv_uint(j, "max", r->vmpte.max);
	json_kv_double(j, "mean", r->vmpte.n ? (double)r->vmpte.sum / (double)r->vmpte.n : 0);
	json_kv_uint(j, "sum", r->vmpte.sum);
	json_obj_end(j);
}

static void hugepages_vmstat_json(const struct doc *d)
{
	const struct results *r = d->r;
	struct json *j = d->j;

	hp_run_json(j, r->hp_n, r->hp_size, r->hp_before, r->hp_after,
		    r->hp_returned);
	json_key(j, "vmstat_delta");
	vmstat_delta_json(j, &r->vm_before, &r->vm_after);
	if (r->vm_attached.n) {
		json_key(j, "vmstat_attached");
		vmstat_delta_json(j, &r->vm_before, &r->vm_attached);
	}
}

static void attach_txn_json(const struct doc *d)
{
	const struct results *r = d->r;
	const struct ctl *ctl = d->ctl;
	struct json *j = d->j;
	/* sessions stop at the deadline themselves: rate over the duration */
	double dur = (double)d->c->duration_ms / 1000.0;
	double rate_s = d->c->duration_ms && r->run_s >= dur ? dur : r->run_s;

	json_key(j, "attach");
	json_obj_begin(j);
	json_kv_double(j, "total_s", r->attach_s);
	json_kv_double(j, "prefault_s", r->prefault_s);
	json_key(j, "per_session");
	hist_json(j, &ctl->attach);
	json_key(j, "cpu_per_session");
	hist_json(j, &ctl->attach_cpu);
	json_obj_end(j);
	json_key(j, "transactions");
	json_obj_begin(j);
	json_kv_uint(j, "count", ctl->txns);
	json_kv_uint(j, "reads", ctl->reads);
	json_kv_uint(j, "writes", ctl->writes);
	json_kv_double(j, "run_s", r->run_s);
	json_kv_double(j, "stop_s", r->stop_s);
	json_kv_double(j, "per_s", rate_s > 0 ? (double)ctl->txns / rate_s : 0);
	json_kv_uint(j, "resets", ctl->resets);
	json_kv_uint(j, "retries", ctl->retries);
	json_kv_uint(j, "sigbus", ctl->sigbus);
	json_key(j, "latency");
	hist_json(j, &ctl->txn);
	json_obj_end(j);
}

static void faults_json(const struct doc *d)
{
	const struct cfg *c = d->c;
	const struct ctl *ctl = d->ctl;
	struct json *j = d->j;
	bool pop = c->page_size == 4096 && ctl->populate_used == c->sessions;

	json_key(j, "faults");
	json_obj_begin(j);
	json_kv_str(j, "method", pop ? "populate" : "touch");
	json_kv_uint(j, "first_touch_unit_bytes", pop ? (2ull << 20) : c->page_size);
	json_key(j, "first_touch");
	hist_json(j, &ctl->first_touch);
	json_key(j, "run_first_access");
	hist_json(j, &ctl->access);
	if (c->count_faults) {
		json_key(j, "run_faulting");
		hist_json(j, &ctl->faulting);
	}
	json_obj_end(j);
}

/* {"transactions", "faults"[, "faulting"]} of three histograms */
static void dis_hists_json(const struct doc *d, const struct hist *t, const struct hist *a,
			   const struct hist *f)
{
	json_key(d->j, "transactions");
	hist_json(d->j, t);
	json_key(d->j, "faults");
	hist_json(d->j, a);
	if (d->c->count_faults) {
		json_key(d->j, "faulting");
		hist_json(d->j, f);
	}
}

static void during_disruption_json(const struct doc *d)
{
	const struct ctl *ctl = d->ctl;
	struct json *j = d->j;
	struct hist dt, da, df;

	hist_init(&dt);
	hist_init(&da);
	hist_init(&df);
	for (int i = 0; i < NOPS; i++) {
		hist_merge(&dt, &ctl->dis_txn[i]);
		hist_merge(&da, &ctl->dis_access[i]);
		hist_merge(&df, &ctl->dis_faulting[i]);
	}
	json_key(j, "during_disruption");
	json_obj_begin(j);
	dis_hists_json(d, &dt, &da, &df);
	json_key(j, "by_op");
	json_obj_begin(j);
	for (int i = 0; i < NOPS; i++) {
		if (!(d->c->disrupt & (1ull << i)))
			continue;
		json_key(j, op_names[i]);
		json_obj_begin(j);
		dis_hists_json(d, &ctl->dis_txn[i], &ctl->dis_access[i], &ctl->dis_faulting[i]);
		json_obj_end(j);
	}
	json_obj_end(j);
	json_obj_end(j);
}

static void disruptor_json(const struct doc *d)
{
	const struct ctl *ctl = d->ctl;
	struct json *j = d->j;

	json_key(j, "disruptor");
	json_obj_begin(j);
	json_key(j, "ops");
	json_obj_begin(j);
	for (int i = 0; i < NOPS; i++) {
		if (!(d->c->disrupt & (1ull << i)))
			continue;
		json_key(j, op_names[i]);
		json_obj_begin(j);
		json_kv_uint(j, "count", ctl->op_count[i]);
		json_key(j, "duration");
		hist_json(j, &ctl->op_dur[i]);
		json_obj_end(j);
	}
	json_obj_end(j);
	json_kv_uint(j, "errors", ctl->op_errors);
	json_kv_str(j, "first_error", ctl->op_errors ? ctl->op_error_msg : NULL);
	json_obj_end(j);
}

/*
 * Per transaction: 2 timestamps + 2 inserts (+ 1 when the first access is
 * recorded per disruption op, not counted); --count-faults adds 2
 * getrusage() calls and 2 timestamps, which are kept out of the timed
 * windows but cost CPU (and throughput).
 */
static void overhead_json(const struct doc *d)
{
	const struct results *r = d->r;
	struct json *j = d->j;
	double per_txn_cf = d->c->count_faults ? 2 * r->rusage_ns + 2 * r->clock_ns : 0;
	double per_txn = 2 * r->clock_ns + 2 * r->insert_ns + per_txn_cf;
	double txn_mean = hist_mean(&d->ctl->txn);

	json_key(j, "recording_overhead");
	json_obj_begin(j);
	json_kv_str(j, "clock", fastclock_source());
	json_kv_str(j, "clocksource", r->clocksource[0] ? r->clocksource : NULL);
	json_kv_double(j, "clock_ns", r->clock_ns);
	json_kv_double(j, "hist_insert_ns", r->insert_ns);
	json_kv_double(j, "getrusage_ns", r->rusage_ns);
	json_kv_double(j, "count_faults_per_txn_ns", per_txn_cf);
	json_kv_double(j, "per_txn_ns", per_txn);
	json_kv_uint(j, "txn_cost_sample_bytes", r->txn_cost_sample);
	json_kv_double(j, "txn_cost_ns", r->txn_cost_ns);
	json_kv_double(j, "pct", r->txn_cost_ns > 0 ?
		       100.0 * per_txn / (r->txn_cost_ns + per_txn) : 0);
	json_kv_double(j, "txn_mean_ns", txn_mean);
	json_kv_double(j, "pct_of_mean", txn_mean > 0 ? 100.0 * per_txn / txn_mean : 0);
	json_obj_end(j);
}

static void errors_json(const struct doc *d)
{
	const struct ctl *ctl = d->ctl;
	struct json *j = d->j;

	json_key(j, "errors");
	json_obj_begin(j);
	json_kv_uint(j, "verify", ctl->verify_errors);
	json_kv_str(j, "verify_first", ctl->verify_errors ? ctl->verify_msg : NULL);
	json_kv_uint(j, "sessions", ctl->session_errors);
	json_kv_str(j, "session_first", ctl->session_errors ? ctl->session_msg : NULL);
	json_obj_end(j);
}

bool report_json(FILE *f, const struct cfg *c, const struct seg *s,
		 struct ctl *ctl, struct results *r, struct kmsg_scan *k)
{
	struct json j;
	const struct doc d = { .j = &j, .c = c, .s = s, .ctl = ctl, .r = r };

	json_init(&j, f, 1);
	json_obj_begin(&j);
	json_kv_str(&j, "schema", "hugelab.shmdb/1");
	json_kv_str(&j, "program", "shmdb");
	json_kv_str(&j, "status", r->status);
	failures_json(&j, "failures", r->failures);
	json_kv_str(&j, "started_at", r->started);
	json_kv_str(&j, "finished_at", r->finished);
	envelope_kernel_json(&j);
	envelope_machine_json(&j);
	config_json(&d);
	kmsg_json(&j, k);
	pagetables_json(&d);
	model_json(&d);
	memory_vmpte_json(&d);
	hugepages_vmstat_json(&d);
	attach_txn_json(&d);
	faults_json(&d);
	during_disruption_json(&d);
	disruptor_json(&d);
	overhead_json(&d);
	errors_json(&d);
	if (r->attr_trace)
		attr_json(&j, r->attr_trace, ctl->attr);
	stuck_json(&j, r->stuck);
	json_obj_end(&j);
	return json_finish(&j) != 0;
}
