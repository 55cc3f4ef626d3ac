"""PostgreSQL (hugelab.pgbench/1): page tables per backend against the
model for its mapping and against shmdb at the same count; TPS and latency.

Per client level of every pgbench result:
- measured: PageTables (warm - before) / backends, every page-table page a
  warm backend costs, its private mappings included;
- model: what the main shared mapping costs a backend by model.py, at the
  mapping's real address (PostgreSQL does not choose it): 2 MiB pages one
  PMD page per partial 1 GiB slot, 4 KiB pages one PTE page per 2 MiB and
  one PMD page per slot, 1 GiB pages nothing;
- baseline: a backend's own page tables besides the mapping, taken from
  the 1 GiB-page run of the same guest at the same count (whose mapping
  costs no page-table page), so that mapping = measured - baseline can be
  set against the model;
- shmdb: pagetables_per_session of the same guest's or run's shmdb results
  with the same page size at the same count (shmdb's figure excludes each
  session's own page tables: its `before` is taken after the fork).
"""

from . import model

PAGE_MODES = {4096: "4k", 2 * model.MiB: "2m-aligned", model.GiB: "1g"}
MODE_TITLES = {"4k": "4 KiB (huge_pages=off)", "2m-aligned": "2 MiB",
               "1g": "1 GiB"}


def mapping_model(page_size, address, size):
    """Bytes the mapping costs one more backend by the model (None for an
    unknown page size)."""
    mode = PAGE_MODES.get(page_size)
    if mode is None or size is None or address is None:
        return None
    exp = model.Expectation(mode, size, 2, address=address)
    return exp.marginal_pages * model.PT_PAGE


def _shmdb_by_count(run):
    """{(page_size, sessions): [(placement, size, per_session, guest,
    name)]} of the run's undisturbed shmdb results."""
    out = {}
    for r in run.results("shmdb"):
        c = r.config
        pt = r.get("pagetables_per_session")
        if c.get("disrupt") or not isinstance(pt, (int, float)):
            continue
        key = (c.get("page_size"), c.get("sessions"))
        out.setdefault(key, []).append({
            "placement": c.get("placement"), "size": c.get("size"),
            "map": c.get("map") or "shared", "per_session": pt,
            "model": (r.get("model") or {}).get("per_session_bytes"),
            "guest": r.guest, "name": r.name})
    for v in out.values():
        v.sort(key=lambda x: (x["guest"], x["name"]))
    return out


def _counter(vm, name):
    v = (vm or {}).get(name)
    return v if isinstance(v, int) else None


def level_rows(run):
    """One row per (pgbench result, client level) that was measured."""
    rows = []
    for r in run.results("pgbench"):
        mp = r.get("mapping") or {}
        page = mp.get("page_size")
        for lvl in r.get("levels") or []:
            hold = lvl.get("hold")
            if not hold:
                continue
            n = lvl.get("clients")
            per = hold.get("per_backend") or {}
            warm_vm = hold.get("vmstat_warm") or {}
            rows.append({
                "guest": r.guest, "experiment": r.name,
                "huge_pages": r.config.get("huge_pages"),
                "page_size": page, "mode": PAGE_MODES.get(page),
                "shared_buffers": r.config.get("shared_buffers"),
                "address": mp.get("address"), "size": mp.get("size"),
                "slots": mp.get("slots"), "full_slots": mp.get("full_slots"),
                "backends": n,
                "measured": per.get("total"),
                "connected": per.get("connected"),
                "warm_increment": per.get("warm_increment"),
                "vmpte_warm": ((hold.get("vmpte") or {}).get("warm") or {})
                .get("mean"),
                "memory_per_backend": (hold.get("memory") or {})
                .get("per_backend"),
                "model": mapping_model(page, model.address_of(mp),
                                       mp.get("size")),
                "pmd_share": _counter(warm_vm, "htlb_pmd_share"),
                "pmd_unshare": _counter(warm_vm, "htlb_pmd_unshare"),
                "pmd_backout": _counter(warm_vm, "htlb_pmd_share_backout"),
                "model_shares": (mp.get("full_slots") or 0) * max(0, n - 1)
                if PAGE_MODES.get(page) == "2m-aligned" else 0,
                "touch_errors": hold.get("touch_errors"),
            })
    return rows


def with_baseline(rows):
    """Each row's baseline (the same guest's 1 GiB-page measurement at the
    same count) and the mapping's measured share."""
    base = {(r["guest"], r["backends"]): r["measured"] for r in rows
            if r["mode"] == "1g" and isinstance(r["measured"], (int, float))}
    for r in rows:
        b = base.get((r["guest"], r["backends"]))
        r["baseline"] = b
        ok = isinstance(r["measured"], (int, float)) and b is not None
        r["mapping_measured"] = r["measured"] - b if ok else None
        r["unexplained"] = (r["mapping_measured"] - r["model"]
                            if ok and r["model"] is not None else None)
    return rows


def with_shmdb(rows, run):
    by = _shmdb_by_count(run)
    for r in rows:
        r["shmdb"] = by.get((r["page_size"], r["backends"]), [])
    return rows


def explain(r):
    """Sentences that account for the row's figures (from its data)."""
    out = []
    slots, full = r.get("slots"), r.get("full_slots")
    if r["mode"] == "2m-aligned" and slots is not None:
        part = slots - full
        out.append(
            "the mapping at %s touches %d 1 GiB slots, %d of them full: "
            "the full ones are shared by every backend, each partial one "
            "costs every backend its own PMD page (%s); a 1 GiB-aligned "
            "mapping of whole GiB (shmdb aligned) has none"
            % (r["address"], slots, full,
               model.human_bytes(part * model.PT_PAGE)))
    elif r["mode"] == "4k":
        out.append("4 KiB pages: every warm backend maps the whole segment "
                   "with its own PTE pages (%s by the model); no sharing"
                   % model.human_bytes(r["model"]))
    elif r["mode"] == "1g":
        out.append("1 GiB pages are mapped at the PUD level: the mapping "
                   "costs no page-table page, so this row is the "
                   "backends' own baseline")
    if r.get("baseline") is not None and r["mode"] != "1g":
        out.append("a PostgreSQL backend's own page tables (%s at this "
                   "count, measured with 1 GiB pages) are in its figure; "
                   "shmdb's per-session figure excludes them"
                   % model.human_bytes(r["baseline"]))
    elif (r["mode"] != "1g" and r.get("model") is not None
          and isinstance(r.get("measured"), (int, float))):
        out.append("measured - model = %s per backend: the backends' own "
                   "page tables and whatever the model does not explain "
                   "(no 1 GiB-page run at this count to tell them apart)"
                   % model.human_bytes(r["measured"] - r["model"]))
    if r.get("unexplained") is not None and r["mode"] != "1g":
        out.append("measured - baseline - model = %s per backend"
                   % model.human_bytes(r["unexplained"]))
    return out


def run_rows(run):
    """TPS and latency of every pgbench run."""
    rows = []
    for r in run.results("pgbench"):
        for lvl in r.get("levels") or []:
            for b in lvl.get("runs") or []:
                s = b.get("summary") or {}
                st = b.get("steady") or {}
                lat = st.get("latency_ms") or b.get("latency_ms") or {}
                vm = b.get("vmstat_delta") or {}
                rows.append({
                    "guest": r.guest, "experiment": r.name,
                    "huge_pages": r.config.get("huge_pages"),
                    "page_size": (r.get("mapping") or {}).get("page_size"),
                    "clients": b.get("clients"), "mode": b.get("mode"),
                    "churn": bool(b.get("churn")), "exit": b.get("exit"),
                    "tps": st.get("tps", s.get("tps")),
                    "transactions": st.get("transactions",
                                           s.get("transactions")),
                    "steady_s": st.get("seconds"),
                    "failed": s.get("failed"),
                    "p50_ms": lat.get("p50"), "p99_ms": lat.get("p99"),
                    "p999_ms": lat.get("p999"), "max_ms": lat.get("max"),
                    "connection_ms": s.get("average_connection_ms",
                                           s.get("initial_connection_ms")),
                    "pagetables_max": b.get("pagetables_max"),
                    "pmd_share": _counter(vm, "htlb_pmd_share"),
                    "pmd_unshare": _counter(vm, "htlb_pmd_unshare"),
                })
    return rows


def failures(run):
    """pgbench results that did not measure (e.g. PostgreSQL did not
    start), with their first failure line."""
    out = []
    for r in run.results("pgbench"):
        if r.get("status") != "ok":
            out.append({"guest": r.guest, "experiment": r.name,
                        "status": r.get("status"),
                        "failure": (r.get("failures") or [""])[0]})
    return out


def versions(run):
    return sorted({(r.get("postgres", "version") or "unknown")
                   for r in run.results("pgbench")})


# Processes of a cluster besides its client backends that may fault a
# full slot while the warm phase is measured (postmaster, checkpointer,
# background writer, walwriter, autovacuum launcher and workers, logical
# replication launcher; pgbench's AUX_PROCS).
AUX_PROCS = 9


def share_check(r):
    """The kernel's PMD-share counter of a 2 MiB level against the model:
    every backend shares each full slot once (the first process to fault a
    slot allocates its PMD page), so full x (N - 1) to full x (N + the
    cluster's other processes); a mapping without a full slot shares
    nothing.  Skipped without the counter (stock kernels) or for other
    page sizes."""
    name = "%s/%s %d backends PMD shares" % (
        r["guest"], r["experiment"], r["backends"])
    check = {"suite": "postgres", "name": name}
    if r["mode"] != "2m-aligned" or r["pmd_share"] is None:
        why = ("no htlb_pmd_share counter" if r["mode"] == "2m-aligned"
               else "not 2 MiB pages")
        return dict(check, status="skip", message=why)
    full = r["full_slots"] or 0
    lo = full * max(0, r["backends"] - 1)
    hi = full * (r["backends"] + AUX_PROCS)
    ok = lo <= r["pmd_share"] <= hi
    return dict(check, status="pass" if ok else "fail", message=(
        "htlb_pmd_share %d while %d backends warmed, model %d-%d (%d full "
        "1 GiB slots of the mapping at %s)" % (
            r["pmd_share"], r["backends"], lo, hi, full, r["address"])))


def analyse(run):
    rows = with_shmdb(with_baseline(level_rows(run)), run)
    for r in rows:
        r["explanation"] = explain(r)
    return {"levels": rows, "runs": run_rows(run),
            "failures": failures(run), "versions": versions(run),
            "checks": [share_check(r) for r in rows]}
