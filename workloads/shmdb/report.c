// SPDX-License-Identifier: GPL-2.0
/* shmdb's result document, see report.h and workloads/SCHEMA.md. */
#include <inttypes.h>
#include <stdio.h>

#include "fastclock.h"
#include "json.h"
#include "report.h"

bool report_json(FILE *f, const struct cfg *c, const struct seg *s,
		 struct ctl *ctl, struct results *r, struct kmsg_scan *k)
{
	struct json j;
	char b[32];

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

	json_key(&j, "config");
	json_obj_begin(&j);
	json_kv_str(&j, "backing", backing_names[c->backing]);
	json_kv_uint(&j, "page_size", c->page_size);
	json_kv_uint(&j, "size", c->size);
	json_kv_str(&j, "placement", placement_names[c->skewed]);
	json_kv_str(&j, "touch", touch_names[c->sparse]);
	json_kv_str(&j, "map", map_names[c->priv]);
	json_kv_uint(&j, "touched_pages", seg_touch_pages(c));
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
	json_kv_uint(&j, "teardown_timeout_s", c->teardown_timeout_s);
	json_kv_str(&j, "shmem_enabled", r->shmem_enabled[0] ? r->shmem_enabled : NULL);
	json_kv_bool(&j, "thp_disabled", c->page_size == 4096);
	json_obj_end(&j);

	kmsg_json(&j, k);

	json_key(&j, "pagetables");
	json_obj_begin(&j);
	json_kv_uint(&j, "start", r->pt_start);
	json_kv_uint(&j, "before", r->pt_before);
	/* 0: the run never got every session attached (PageTables is never 0) */
	bool attached = r->pt_attached && r->pt_before;

	if (attached)
		json_kv_uint(&j, "attached", r->pt_attached);
	else
		json_kv_null(&j, "attached");
	json_kv_uint(&j, "teardown", r->pt_teardown);
	json_obj_end(&j);
	int64_t delta = (int64_t)r->pt_attached - (int64_t)r->pt_before;

	if (attached) {
		json_kv_int(&j, "pagetables_delta", delta);
		json_kv_double(&j, "pagetables_per_session",
			       (double)delta / (double)c->sessions);
	} else {
		json_kv_null(&j, "pagetables_delta");
		json_kv_null(&j, "pagetables_per_session");
	}

	json_key(&j, "model");
	json_obj_begin(&j);
	json_kv_uint(&j, "expected_pagetables_bytes", r->model.expected_bytes);
	json_kv_double(&j, "per_session_bytes", r->model.per_session_bytes);
	json_kv_uint(&j, "marginal_per_session_bytes", r->model.marginal_bytes);
	json_kv_uint(&j, "shared_bytes", r->model.shared_bytes);
	json_kv_uint(&j, "pmd_pages_per_session", r->model.pmd_pages_per_session);
	json_kv_uint(&j, "pte_pages_per_session", r->model.pte_pages_per_session);
	json_kv_uint(&j, "pud_pages_per_session", r->model.pud_pages_per_session);
	json_kv_bool(&j, "pud_counted", r->model.pud_counted);
	json_kv_uint(&j, "memory_bytes", r->model.memory_bytes);
	json_kv_uint(&j, "vmpte_per_session_bytes", r->model.vmpte_bytes);
	json_kv_uint(&j, "slots", r->model.slots);
	json_kv_uint(&j, "full_slots", r->model.full_slots);
	json_kv_uint(&j, "shared_slots", r->model.shared_slots);
	json_kv_bool(&j, "sharing", r->model.sharing);
	if (attached)
		json_kv_double(&j, "excess_per_session_bytes",
			       ((double)delta - (double)r->model.expected_bytes) /
			       (double)c->sessions);
	else
		json_kv_null(&j, "excess_per_session_bytes");
	json_obj_end(&j);

	/*
	 * What a session costs in memory besides the segment: MemFree from
	 * before the sessions were forked to every session attached, per
	 * session (page tables, kernel stack, task and mm, private pages).
	 */
	json_key(&j, "memory");
	json_obj_begin(&j);
	json_kv_uint(&j, "mem_free_start", r->mem_free_start);
	json_kv_uint(&j, "mem_free_attached", r->mem_free_attached);
	if (r->mem_free_attached) {
		int64_t used = (int64_t)r->mem_free_start - (int64_t)r->mem_free_attached;

		json_kv_int(&j, "used", used);
		json_kv_double(&j, "per_session_bytes", (double)used / (double)c->sessions);
	} else {
		json_kv_null(&j, "used");
		json_kv_null(&j, "per_session_bytes");
	}
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
	for (int i = 0; i < r->hp_n; i++) {
		snprintf(b, sizeof(b), "%" PRIu64, r->hp_size[i]);
		json_key(&j, b);
		json_obj_begin(&j);
		hp_counts_json(&j, "before", &r->hp_before[i]);
		hp_counts_json(&j, "after", &r->hp_after[i]);
		json_kv_bool(&j, "returned", r->hp_returned[i]);
		json_obj_end(&j);
	}
	json_obj_end(&j);

	json_key(&j, "vmstat_delta");
	vmstat_delta_json(&j, &r->vm_before, &r->vm_after);
	if (r->vm_attached.n) {
		json_key(&j, "vmstat_attached");
		vmstat_delta_json(&j, &r->vm_before, &r->vm_attached);
	}

	json_key(&j, "attach");
	json_obj_begin(&j);
	json_kv_double(&j, "total_s", r->attach_s);
	json_kv_double(&j, "prefault_s", r->prefault_s);
	json_key(&j, "per_session");
	hist_json(&j, &ctl->attach);
	json_key(&j, "cpu_per_session");
	hist_json(&j, &ctl->attach_cpu);
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

	/*
	 * Per transaction: 2 timestamps + 2 inserts (+ 1 when the first access
	 * is recorded per disruption op, not counted); --count-faults adds 2
	 * getrusage() calls and 2 timestamps, which are kept out of the timed
	 * windows but cost CPU (and throughput).
	 */
	double per_txn = 2 * r->clock_ns + 2 * r->insert_ns;
	double per_txn_cf = c->count_faults ? 2 * r->rusage_ns + 2 * r->clock_ns : 0;
	double txn_mean = hist_mean(&ctl->txn);

	per_txn += per_txn_cf;
	json_key(&j, "recording_overhead");
	json_obj_begin(&j);
	json_kv_str(&j, "clock", fastclock_source());
	json_kv_str(&j, "clocksource", r->clocksource[0] ? r->clocksource : NULL);
	json_kv_double(&j, "clock_ns", r->clock_ns);
	json_kv_double(&j, "hist_insert_ns", r->insert_ns);
	json_kv_double(&j, "getrusage_ns", r->rusage_ns);
	json_kv_double(&j, "count_faults_per_txn_ns", per_txn_cf);
	json_kv_double(&j, "per_txn_ns", per_txn);
	json_kv_uint(&j, "txn_cost_sample_bytes", r->txn_cost_sample);
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

	stuck_json(&j, r->stuck);

	json_obj_end(&j);
	return json_finish(&j) != 0;
}

