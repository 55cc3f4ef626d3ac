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
- own: the model less the page-table pages of the partial slots (and, with
  4 KiB pages, the 2 MiB spans at the mapping's edges) that also hold the
  postmaster's other mappings (libraries, locale files, other segments:
  mmap grows down, so they sit directly above the segment), from the
  result's mapping.neighbour_slots / neighbour_pte_spans: every backend has
  those pages with or without the segment, the baseline included, so
  mapping is set against `own` when the result has the fields;
- shmdb: pagetables_per_session of the same guest's or run's shmdb results
  with the same page size at the same count (shmdb's figure excludes each
  session's own page tables: its `before` is taken after the fork).
"""

from . import fmt, model

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


def _int(v):
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def partial_spans(address, size, span):
    """How many `span`-aligned ranges [address, address + size) touches
    but does not cover whole (0, 1 or 2: its edges)."""
    if address is None or not size or size <= 0:
        return 0
    end = address + size
    edges = {address - address % span, (end - 1) - (end - 1) % span}
    return sum(1 for lo in edges if lo < address or lo + span > end)


def shared_pages(mode, mp):
    """Page-table pages of the mapping's partial slots and edge spans that
    also hold other mappings of the postmaster (mapping.neighbour_slots,
    neighbour_pte_spans), which a backend has without the mapping too;
    None for a result without the fields."""
    slots_n = _int(mp.get("neighbour_slots"))
    spans_n = _int(mp.get("neighbour_pte_spans"))
    if slots_n is None or spans_n is None:
        return None
    return {"4k": slots_n + spans_n, "2m-aligned": slots_n}.get(mode, 0)


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
            mode = PAGE_MODES.get(page)
            full_model = mapping_model(page, model.address_of(mp),
                                       mp.get("size"))
            shared = shared_pages(mode, mp)
            own = (max(0, full_model - shared * model.PT_PAGE)
                   if full_model is not None and shared is not None
                   else None)
            rows.append({
                "guest": r.guest, "experiment": r.name,
                "huge_pages": r.config.get("huge_pages"),
                "page_size": page, "mode": mode,
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
                "model": full_model,
                "neighbour_slots": _int(mp.get("neighbour_slots")),
                "neighbour_pte_spans": _int(mp.get("neighbour_pte_spans")),
                "partial_pte_spans": partial_spans(
                    model.address_of(mp), mp.get("size"), model.PTE_SPAN),
                # the model less what the baseline has anyway (None for a
                # result without the neighbour fields)
                "model_own": own,
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
    base_vmpte = {(r["guest"], r["backends"]): r["vmpte_warm"] for r in rows
                  if r["mode"] == "1g"}
    for r in rows:
        b = base.get((r["guest"], r["backends"]))
        r["baseline"] = b
        r["baseline_vmpte"] = base_vmpte.get((r["guest"], r["backends"]))
        ok = isinstance(r["measured"], (int, float)) and b is not None
        r["mapping_measured"] = r["measured"] - b if ok else None
        cmp = compared_model(r)
        r["unexplained"] = (r["mapping_measured"] - cmp
                            if ok and cmp is not None else None)
    return rows


def compared_model(r):
    """The model `mapping` is set against: the segment's own cost when the
    result says which slots it shares, else the whole model."""
    return r["model_own"] if r.get("model_own") is not None else r["model"]


def with_shmdb(rows, run):
    by = _shmdb_by_count(run)
    for r in rows:
        r["shmdb"] = by.get((r["page_size"], r["backends"]), [])
    return rows


# measured - baseline - model within this of a whole number of page-table
# pages is taken as those pages (measured is an average over backends)
WHOLE_PAGES_SLACK = model.PT_PAGE / 4


def _plural(n, one, many):
    return one if n == 1 else many


def _neighbours_sentence(r):
    """What the neighbour counts take off the model, for a result that has
    them."""
    ns, nps = r["neighbour_slots"], r["neighbour_pte_spans"]
    part = (r["slots"] or 0) - (r["full_slots"] or 0)
    kinds = []
    held = []
    if ns:
        held.append("%d of the %d partial 1 GiB slots" % (ns, part))
        kinds.append("PMD")
    if r["mode"] == "4k" and nps:
        held.append("%d of the %d partial 2 MiB spans at its edges"
                    % (nps, r["partial_pte_spans"]))
        kinds.append("PTE")
    if not held:
        where = ("partial slots" if r["mode"] == "2m-aligned"
                 else "partial slots or edge 2 MiB spans")
        return ("no other mapping of the postmaster lies in the segment's "
                "%s: the model is the segment's own cost" % where)
    many = ns + (nps if r["mode"] == "4k" else 0) > 1
    return ("%s also %s the postmaster's other mappings (libraries, locale "
            "files, other segments mapped next to the segment), so %s %s "
            "%s in the baseline too: the segment's own cost is %s"
            % (" and ".join(held), "hold" if many else "holds",
               "their" if many else "its", " and ".join(kinds),
               "pages are" if many else "page is",
               fmt.human_bytes(r["model_own"])))


def _whole_pages_sentence(r):
    """For a result without the neighbour counts: measured - baseline -
    model short by about whole page-table pages, no more than the
    mapping's edges could share, is what neighbours would take off."""
    u = r.get("unexplained")
    if u is None or u >= 0 or r["mode"] not in ("2m-aligned", "4k"):
        return None
    pages = round(-u / model.PT_PAGE)
    edges = (r["slots"] or 0) - (r["full_slots"] or 0)
    if r["mode"] == "4k":
        edges += r["partial_pte_spans"]
    if pages < 1 or pages > edges or \
            abs(u + pages * model.PT_PAGE) > WHOLE_PAGES_SLACK:
        return None
    return ("that is about %d page-table %s short of the model: the %s at "
            "the segment's edges may also hold the backend's other mappings "
            "(libraries mapped next to the segment), whose page-table pages "
            "the baseline already counts (this result does not record "
            "mapping.neighbour_slots to tell)"
            % (pages, _plural(pages, "page", "pages"),
               "slots" if r["mode"] == "2m-aligned"
               else "1 GiB slots and 2 MiB spans"))


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
               fmt.human_bytes(part * model.PT_PAGE)))
    elif r["mode"] == "4k":
        out.append("4 KiB pages: every warm backend maps the whole segment "
                   "with its own PTE pages (%s by the model); no sharing"
                   % fmt.human_bytes(r["model"]))
    elif r["mode"] == "1g":
        out.append("1 GiB pages are mapped at the PUD level: the mapping "
                   "costs no page-table page, so this row is the "
                   "backends' own baseline")
    own = r.get("model_own") is not None and r["mode"] != "1g"
    if own:
        out.append(_neighbours_sentence(r))
    cmp = "the segment's own cost" if own else "model"
    if r.get("baseline") is not None and r["mode"] != "1g":
        out.append("a PostgreSQL backend's own page tables (%s at this "
                   "count, measured with 1 GiB pages) are in its figure; "
                   "shmdb's per-session figure excludes them"
                   % fmt.human_bytes(r["baseline"]))
    elif (r["mode"] != "1g" and r.get("model") is not None
          and isinstance(r.get("measured"), (int, float))):
        out.append("measured - %s = %s per backend: the backends' own "
                   "page tables and whatever the model does not explain "
                   "(no 1 GiB-page run at this count to tell them apart)"
                   % (cmp, fmt.human_bytes(
                       r["measured"] - compared_model(r))))
    if r.get("unexplained") is not None and r["mode"] != "1g":
        out.append("measured - baseline - %s = %s per backend"
                   % (cmp, fmt.human_bytes(r["unexplained"])))
        whole = None if own else _whole_pages_sentence(r)
        if whole:
            out.append(whole)
        elif own and abs(r["unexplained"]) > WHOLE_PAGES_SLACK:
            out.append(_layout_sentence(r))
    return out


def _layout_sentence(r):
    """measured - baseline - own cost away from 0 by page-table pages: the
    baseline is another cluster's address layout."""
    pages = r["unexplained"] / model.PT_PAGE
    s = ("that is %s page-table pages per backend %s the model; the "
         "baseline comes from another cluster (1 GiB pages), and where a "
         "backend's other mappings (heap, libraries, dynamic shared memory) "
         "fall against 1 GiB slots and 2 MiB spans differs between "
         "clusters, which moves its own page tables by whole pages either "
         "way (the result records the postmaster's maps, not a backend's, "
         "so this is the likely cause, not a measured one)"
         % (fmt.sig3(abs(pages)), "over" if pages > 0 else "under"))
    if r.get("vmpte_warm") and r.get("baseline_vmpte"):
        s += ("; VmPTE of a warm backend: %s here, %s in the baseline "
              "(VmPTE also counts every shared PMD page for each sharer, "
              "and PUD pages that this kernel's PageTables leaves out)"
              % (fmt.human_bytes(r["vmpte_warm"]),
                 fmt.human_bytes(r["baseline_vmpte"])))
    return s


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


def placements(run):
    """Where each result's pgbench tables sat in the buffer pool
    (database.placement, absent in older results)."""
    out = []
    for r in run.results("pgbench"):
        pl = (r.get("database") or {}).get("placement")
        if not isinstance(pl, dict):
            continue
        per = pl.get("data_buffers_per_slot") or {}
        out.append({"guest": r.guest, "experiment": r.name,
                    "mode": pl.get("mode"),
                    "filler_blocks": pl.get("filler_blocks"),
                    "slots": sorted(int(k) for k in per),
                    "buffers": pl.get("data_buffers"),
                    "in_full_slots": pl.get("data_buffers_in_full_slots")})
    return out


def analyse(run):
    rows = with_shmdb(with_baseline(level_rows(run)), run)
    for r in rows:
        r["explanation"] = explain(r)
    return {"levels": rows, "runs": run_rows(run),
            "placements": placements(run),
            "failures": failures(run), "versions": versions(run),
            "checks": [share_check(r) for r in rows]}
