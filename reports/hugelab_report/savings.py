"""Savings report: measured PageTables against the model.

Per guest, page mode and session count: the PageTables delta a shmdb run
measured, the model's figure, bytes per session; savings from sharing
(2 MiB unshared - skewed, or short of a whole slot - minus 2 MiB aligned at
the same session count); the kernel's
own PMD-sharing counters where the kernel has them; least-squares fits of
bytes against sessions per mode, and an extrapolation from those fits.
"""

from collections import defaultdict

from . import fmt, model, stats

# What the extrapolation states: the seed article's claim (1 GB mapping,
# 10,000 processes, "39GB saved") and the configuration it only fits.
ARTICLE = {"size": model.GiB, "processes": 10000, "claimed": 39 * model.GiB}
DEFAULT_TARGETS = ((model.GiB, 10000), (model.TiB, 10000))

# PageTables deltas of real runs stray from the model by up to ~25 pages
# either way whatever the session count (the 2026-12-03 sweep fixture:
# 0 B measured for a model of 1 page at 50 sessions, +24 pages for skewed
# at 50 sessions), so:
# - a pair of runs only tests sharing when the model separates them by at
#   least MIN_PAIR_PAGES pages (noise then stays under ~20 %, broken
#   sharing would be 50 % off);
# - "measured >= model" allows NOISE_PAGES pages below the model.
MIN_PAIR_PAGES = 128
NOISE_PAGES = 32
# What a session costs beyond the model's mapping tables, at most (its own
# upper levels and stack; the sweep fixture: 184-287 B per session at 200
# and 400 sessions, the disruption fixture 389 B at 200 sessions).  An
# unshared PMD page costs 4096 B per session per slot, 8x more.
OVERHEAD_SLACK = 512


# The kernel-build series' /proc/vmstat names (kernel-build/README.md);
# other spellings are recognised by their parts.  The series has no gauge:
# PMD tables saved = share - unshare.  "saved" is the nr_htlb_pmd_saved
# gauge of its earlier revision, still read from older results.
COUNTERS = {"share": "htlb_pmd_share", "unshare": "htlb_pmd_unshare",
            "backout": "htlb_pmd_share_backout",
            "saved": "nr_htlb_pmd_saved"}


def counter_keys(vmstat):
    """Map role (share, unshare, backout, saved) -> vmstat key for the
    PMD-sharing counters present."""
    out = {}
    for role, key in COUNTERS.items():
        if key in (vmstat or {}):
            out[role] = key
    for k in sorted(vmstat or {}):
        lk = k.lower()
        if "pmd" not in lk or k in out.values():
            continue
        if "backout" in lk:
            out.setdefault("backout", k)
        elif "unshare" in lk:
            out.setdefault("unshare", k)
        elif "saved" in lk:
            out.setdefault("saved", k)
        elif "share" in lk:
            out.setdefault("share", k)
    return out


def measured_delta(res):
    """PageTables attached - before, or None when the run never had every
    session attached: its `attached` is null, or 0 in results written
    before shmdb said so (PageTables is never 0 in a running system), and
    such a run's delta of 0 is no measurement."""
    pt = res.get("pagetables") or {}
    if "attached" in pt and not (isinstance(pt["attached"], int) and
                                 pt["attached"] > 0):
        return None
    d = res.get("pagetables_delta")
    if isinstance(d, (int, float)):
        return d
    if isinstance(pt.get("attached"), int) and isinstance(pt.get("before"),
                                                          int):
        return pt["attached"] - pt["before"]
    return None


def rows_of(run):
    rows = []
    for r in run.results("shmdb"):
        cfg = r.config
        mode = model.mode_of(cfg)
        sessions = cfg.get("sessions")
        size = cfg.get("size")
        delta = measured_delta(r)
        if mode is None or not sessions or not size or delta is None:
            continue
        wl = r.get("model") or {}
        exp = model.Expectation(mode, size, sessions,
                                address=model.address_of(cfg),
                                pud_counted=bool(wl.get("pud_counted")))
        vm = r.get("vmstat_delta") or {}
        ck = counter_keys(vm)
        rows.append({
            "guest": r.guest, "experiment": r.name, "mode": mode,
            "page_size": cfg.get("page_size"), "size": size,
            "placement": cfg.get("placement"), "backing": cfg.get("backing"),
            "attach": cfg.get("attach"), "sessions": sessions,
            "disrupt": list(cfg.get("disrupt") or []),
            "fault_lock": r.kernel.get("hugetlb_fault_lock"),
            "measured_bytes": delta,
            "per_session_bytes": delta / sessions,
            "model_bytes": exp.bytes,
            "model_pages": exp.pages,
            "model_per_session_bytes": exp.per_process_bytes,
            "model_sharing": exp.sharing,
            "slots": exp.slots, "full_slots": exp.full_slots,
            "pud_pages": exp.pud_pages, "touch": cfg.get("touch", "all"),
            "overhead_per_session": (delta - exp.bytes) / sessions,
            "workload_model_bytes": wl.get("expected_pagetables_bytes"),
            "vmpte_sum": (r.get("vmpte") or {}).get("sum"),
            "counters": {role: vm[k] for role, k in ck.items()},
            "counter_keys": ck,
            "model_share_events": exp.shared_pmd_events,
        })
    rows.sort(key=lambda x: (x["guest"], model.MODES.index(x["mode"]),
                             x["size"], x["sessions"], x["experiment"]))
    return rows


def _mean(xs):
    return sum(xs) / len(xs)


def fits_of(rows):
    """Least-squares fit of measured bytes against sessions per
    (guest, mode, size), on the mean of repeated runs at each count."""
    groups = defaultdict(lambda: defaultdict(list))
    for r in rows:
        groups[(r["guest"], r["mode"], r["size"])][r["sessions"]].append(
            r["measured_bytes"])
    fits = []
    for (guest, mode, size), pts in sorted(
            groups.items(),
            key=lambda kv: (kv[0][0], model.MODES.index(kv[0][1]), kv[0][2])):
        xs = sorted(pts)
        ys = [_mean(pts[x]) for x in xs]
        f = stats.linear_fit(xs, ys)
        exp = model.Expectation(mode, size, 2)
        item = {"guest": guest, "mode": mode, "size": size,
                "sessions": xs, "bytes": ys,
                "model_marginal_bytes": exp.marginal_pages * model.PT_PAGE}
        if f:
            item.update(f)
            item["slope_per_gib"] = f["slope"] / (size / model.GiB)
        fits.append(item)
    return fits


def pairs_of(rows):
    """Sharing savings at the same guest and session count: each 2 MiB run
    the model says shares (aligned, whole slots) against each 2 MiB run
    that shares less: one that cannot (skewed, or short of a whole slot),
    or an aligned run against a skewed one that shares only its inner
    slots (a skewed 4 GiB segment shares 3 of its 5 slots: the aligned
    one saves its 2 partial slots' PMD pages per session).  The model's
    page difference turns the measured difference into bytes per PMD
    page."""
    by = defaultdict(lambda: defaultdict(list))
    for r in rows:
        if r["mode"] in ("2m-aligned", "2m-skewed"):
            kind = "shared" if r["model_sharing"] else "unshared"
            by[(r["guest"], r["sessions"])][(kind, r["mode"],
                                             r["size"])].append(r)
    pairs = []
    for (guest, n), groups in sorted(by.items()):
        for (kind, mode, size), sh in sorted(groups.items()):
            if kind != "shared":
                continue
            for (ukind, umode, usize), un in sorted(groups.items()):
                partial = (ukind == "shared" and mode == "2m-aligned" and
                           umode == "2m-skewed" and
                           un[0]["model_pages"] > sh[0]["model_pages"])
                if ukind == "unshared" or partial:
                    pairs.append(_pair(guest, n, size, sh, umode, usize, un))
    return pairs


def _undisturbed(runs):
    """The runs without a disruptor when there are any: disruptors unshare
    and re-share, so their counters (and page tables) measure more than
    sharing."""
    quiet = [r for r in runs if not r["disrupt"]]
    return quiet or runs


def _pair(guest, n, size, sh, umode, usize, un):
    sh, un = _undisturbed(sh), _undisturbed(un)
    sh_b = _mean([r["measured_bytes"] for r in sh])
    un_b = _mean([r["measured_bytes"] for r in un])
    dpages = un[0]["model_pages"] - sh[0]["model_pages"]
    saved = un_b - sh_b
    share = [r["counters"]["share"] for r in sh if "share" in r["counters"]]
    gauge = [r["counters"]["saved"] if "saved" in r["counters"]
             else r["counters"]["share"] - r["counters"]["unshare"]
             for r in sh if "saved" in r["counters"]
             or {"share", "unshare"} <= r["counters"].keys()]
    return {
        "guest": guest, "size": size, "sessions": n,
        "shared_experiments": [r["experiment"] for r in sh],
        "unshared_experiments": [r["experiment"] for r in un],
        "unshared_mode": umode, "unshared_size": usize,
        "shared_bytes": sh_b, "unshared_bytes": un_b,
        "saved_bytes": saved, "saved_per_session": saved / n,
        "model_saved_bytes": dpages * model.PT_PAGE,
        "model_saved_pages": dpages,
        "bytes_per_pmd_page": saved / dpages if dpages else None,
        "counter_share": _mean(share) if share else None,
        "counter_saved": _mean(gauge) if gauge else None,
        "model_share_events": sh[0]["model_share_events"],
        "counter_share_bytes": (_mean(share) * model.PT_PAGE
                                if share else None),
    }


def pmd_page_estimates(fits, pairs):
    """Measured bytes per unshared PMD page, per guest.

    From the fits when aligned and skewed both have one at the same size:
    (slope_skewed - slope_aligned) / (marginal model pages skewed -
    aligned); otherwise a least-squares fit through the origin of the
    pairs' measured savings against their model page difference."""
    out = {}
    fit_by = {(f["guest"], f["mode"], f["size"]): f for f in fits
              if "slope" in f}
    for guest in sorted({f["guest"] for f in fits} |
                        {p["guest"] for p in pairs}):
        est = []
        for (g, mode, size), f in sorted(fit_by.items()):
            if g != guest or mode != "2m-skewed":
                continue
            a = fit_by.get((g, "2m-aligned", size))
            if not a:
                continue
            dm = (model.Expectation("2m-skewed", size, 2).marginal_pages -
                  model.Expectation("2m-aligned", size, 2).marginal_pages)
            if dm > 0:
                est.append({"size": size, "value": (f["slope"] - a["slope"])
                            / dm, "points": min(f["n"], a["n"])})
        if est:
            w = sum(e["points"] for e in est)
            value = sum(e["value"] * e["points"] for e in est) / w
            out[guest] = {"method": "fit", "bytes_per_pmd_page": value,
                          "by_size": est}
            continue
        gp = [p for p in pairs if p["guest"] == guest
              and p["model_saved_pages"] > 0]
        if gp:
            beta = stats.fit_through_origin(
                [p["model_saved_pages"] for p in gp],
                [p["saved_bytes"] for p in gp])
            out[guest] = {"method": "pairs", "bytes_per_pmd_page": beta,
                          "pairs": len(gp)}
    return out


def extrapolate(estimates, targets=DEFAULT_TARGETS):
    """Sharing savings for each target (size, processes) from the measured
    bytes per PMD page, and the mapping size the article's claim needs."""
    out = {}
    for guest, e in sorted(estimates.items()):
        beta = e["bytes_per_pmd_page"]
        if beta is None or beta <= 0:
            out[guest] = {"bytes_per_pmd_page": beta, "targets": [],
                          "article": None}
            continue
        tg = [{"size": s, "processes": n,
               "saved_bytes": model.sharing_savings(s, n, beta),
               "model_saved_bytes": model.sharing_savings(s, n)}
              for s, n in targets]
        art = dict(ARTICLE)
        art["measured_saved_bytes"] = model.sharing_savings(
            ARTICLE["size"], ARTICLE["processes"], beta)
        art["size_needed"] = model.size_for_savings(
            ARTICLE["claimed"], ARTICLE["processes"], beta)
        out[guest] = {"bytes_per_pmd_page": beta, "method": e["method"],
                      "targets": tg, "article": art}
    return out


def extrapolate_modes(fits, target=(model.TiB, 10000)):
    """Page-table bytes of each measured mode for the target mapping and
    process count: the model's page count at the target times the measured
    bytes per model page (fitted slope / model marginal cost per session).
    A mode without per-session cost in the model (shared 2 MiB, 1 GiB
    pages) has nothing to scale: it gets the model's one-time cost."""
    size, n = target
    out = []
    for f in fits:
        if "slope" not in f:
            continue
        exp = model.Expectation(f["mode"], size, n)
        item = {"guest": f["guest"], "mode": f["mode"],
                "measured_size": f["size"], "size": size, "processes": n,
                "model_bytes": exp.bytes}
        if f["model_marginal_bytes"]:
            ratio = f["slope"] / f["model_marginal_bytes"]
            item.update(method="fit", measured_over_model=ratio,
                        bytes=exp.bytes * ratio)
        else:
            item.update(method="model", measured_over_model=None,
                        bytes=exp.bytes)
        out.append(item)
    return out


def model_band(model_bytes, sessions, tolerance):
    """(low, high) PageTables delta the model allows for a run: the model
    within `tolerance` (relative), NOISE_PAGES pages either way, and up to
    OVERHEAD_SLACK bytes per session above it."""
    noise = NOISE_PAGES * model.PT_PAGE
    return (model_bytes * (1 - tolerance) - noise,
            model_bytes * (1 + tolerance) + noise + OVERHEAD_SLACK * sessions)


def model_band_check(r, tolerance):
    """Two-sided: the measured delta inside model_band.  For a run the
    model says shares, the message says what a kernel that does not share
    would measure (one PMD page per slot per session) and whether that
    falls outside the band, i.e. whether this run alone catches it."""
    low, high = model_band(r["model_bytes"], r["sessions"], tolerance)
    got = r["measured_bytes"]
    ok = low <= got <= high
    msg = "measured %s, model %s, allowed %s .. %s" % (
        fmt.human_bytes(got), fmt.human_bytes(r["model_bytes"]),
        fmt.human_bytes(max(low, 0)), fmt.human_bytes(high))
    if r["model_sharing"]:
        unshared = r["sessions"] * r["slots"] * model.PT_PAGE
        msg += "; without sharing %s (%s)" % (
            fmt.human_bytes(unshared),
            "outside: detected" if unshared > high else
            "inside: too few sessions to tell")
    return {"suite": "savings",
            "name": "%s/%s pagetables within model" % (r["guest"],
                                                       r["experiment"]),
            "status": "pass" if ok else "fail", "message": msg}


def checks_of(rows, pairs, tolerance):
    """Checks of measured figures against the model.

    - the workload's own model figure equals this model's;
    - a run's PageTables delta is within the model's band both ways
      (model_band_check): a kernel that stops sharing fails it on its
      own, without an unshared run next to it;
    - each aligned/skewed pair the model separates by at least
      MIN_PAIR_PAGES saves 4 KiB per page within `tolerance` (relative);
    - a kernel PMD-share counter, where present and the run had no
      disruptor, matches the model's number of shared PMD pages within
      `tolerance`."""
    checks = []
    for r in rows:
        wl = r["workload_model_bytes"]
        if wl is None:
            continue
        name = "%s/%s workload model agrees" % (r["guest"], r["experiment"])
        checks.append({
            "suite": "savings", "name": name,
            "status": "pass" if wl == r["model_bytes"] else "fail",
            "message": "workload model %s bytes, report model %s bytes" % (
                wl, r["model_bytes"])})
    for r in rows:
        checks.append(model_band_check(r, tolerance))
    for p in pairs:
        name = "%s/%s vs %s sharing saves 4 KiB per PMD page" % (
            p["guest"], "+".join(p["shared_experiments"]),
            "+".join(p["unshared_experiments"]))
        if p["model_saved_pages"] < MIN_PAIR_PAGES:
            checks.append({"suite": "savings", "name": name,
                           "status": "skip",
                           "message": "model separates the pair by %d "
                           "pages only (< %d)" % (p["model_saved_pages"],
                                                  MIN_PAIR_PAGES)})
            continue
        ratio = p["bytes_per_pmd_page"] / model.PT_PAGE
        ok = abs(ratio - 1) <= tolerance
        checks.append({"suite": "savings", "name": name,
                       "status": "pass" if ok else "fail",
                       "message": "measured %.0f bytes per PMD page "
                       "(model %d, tolerance %.0f%%)" % (
                           p["bytes_per_pmd_page"], model.PT_PAGE,
                           tolerance * 100)})
    for r in rows:
        if r["mode"] != "2m-aligned":
            continue
        name = "%s/%s pmd-share counter" % (r["guest"], r["experiment"])
        if "share" not in r["counters"]:
            checks.append({"suite": "savings", "name": name,
                           "status": "skip",
                           "message": "kernel has no PMD-share counter"})
            continue
        if r["disrupt"]:
            checks.append({"suite": "savings", "name": name,
                           "status": "skip",
                           "message": "%s=%s: disruptors (%s) unshare and "
                           "re-share, the count has no model" % (
                               r["counter_keys"]["share"],
                               r["counters"]["share"],
                               ",".join(r["disrupt"]))})
            continue
        got, want = r["counters"]["share"], r["model_share_events"]
        ok = abs(got - want) <= tolerance * max(want, 1)
        checks.append({"suite": "savings", "name": name,
                       "status": "pass" if ok else "fail",
                       "message": "%s=%s, model %d" % (
                           r["counter_keys"]["share"], got, want)})
    return checks


def seed_scale(rows):
    """The seed's "39 GB" measured at its own scale, per guest: a 1 TiB
    mapping of 2 MiB pages unshared (2m-private, shmdb --map private) and
    shared (2m-aligned), e.g. shmdb --touch sparse (inventories/scale).
    The measured bytes per modelled page of the unshared run scale the
    model's 1024 PMD pages x 9,999 extra processes of an aligned 1 TiB."""
    out = []
    big = defaultdict(list)
    for r in rows:
        if r["size"] >= model.TiB and r["page_size"] == 2 * model.MiB:
            big[r["guest"]].append(r)
    for guest, rs in sorted(big.items()):
        un = [r for r in rs if r["mode"] == "2m-private"]
        sh = [r for r in rs if r["mode"] == "2m-aligned"]
        if not un or not sh:
            continue
        u = max(un, key=lambda r: r["sessions"])
        s = max(sh, key=lambda r: r["sessions"])
        if not u["model_per_session_bytes"]:
            continue
        beta = (u["per_session_bytes"] * model.PT_PAGE
                / u["model_per_session_bytes"])
        out.append({
            "guest": guest, "unshared": u["experiment"],
            "unshared_sessions": u["sessions"],
            "unshared_per_session_bytes": u["per_session_bytes"],
            "unshared_model_per_session_bytes":
                u["model_per_session_bytes"],
            "shared": s["experiment"], "shared_sessions": s["sessions"],
            "shared_per_session_bytes": s["per_session_bytes"],
            "shared_model_per_session_bytes": s["model_per_session_bytes"],
            "bytes_per_pmd_page": beta,
            "saved_bytes": model.sharing_savings(model.TiB, 10000, beta),
            "model_saved_bytes": model.sharing_savings(model.TiB, 10000),
        })
    return out


# What a baseline pair must have in common (shmdb and forktouch).
BASELINE_KEYS = ("backing", "page_size", "size", "placement", "touch", "map",
                 "sessions", "attach")
BASELINE_GOAL = 1.5


def baseline_pairs(run):
    """shmdb's attach+fault per session against forktouch's (the bare
    fork-and-touch baseline) for the same segment and process count in the
    same guest: the ratio of the medians over repeated runs of the mean
    per-process CPU time of the window, of the mean per-process window and
    of the whole phase (goal: at most BASELINE_GOAL, on CPU time: what a
    session costs; the wall-clock windows of thousands of processes on a
    few CPUs are mostly time spent waiting for a CPU).  TCG on a busy host
    moves single runs by 3x, so the inventories interleave repeats.  Runs
    written before the CPU time was recorded give cpu_ratio None."""
    def key(r):
        c = r.config
        return (r.guest,) + tuple(c.get(k, d) for k, d in zip(
            BASELINE_KEYS, (None,) * 4 + ("all", "shared", None, None)))

    def attach(r):
        a = r.get("attach") or {}
        per = a.get("per_session") or {}
        cpu = a.get("cpu_per_session") or {}
        return per.get("mean"), a.get("total_s"), cpu.get("mean")

    def median(xs):
        xs = sorted(x for x in xs if x)
        if not xs:
            return None
        m = len(xs) // 2
        return xs[m] if len(xs) % 2 else (xs[m - 1] + xs[m]) / 2

    groups = defaultdict(lambda: {"shmdb": [], "forktouch": []})
    for prog in ("shmdb", "forktouch"):
        for r in run.results(prog):
            groups[key(r)][prog].append(r)
    out = []
    for k, g in groups.items():
        if not g["shmdb"] or not g["forktouch"]:
            continue
        sh = [attach(r) for r in g["shmdb"]]
        ft = [attach(r) for r in g["forktouch"]]
        sm, st, sc = (median(x[i] for x in sh) for i in range(3))
        bm, bt, bc = (median(x[i] for x in ft) for i in range(3))
        c = g["shmdb"][0].config
        out.append({
            "guest": k[0],
            "experiments": [r.name for r in g["shmdb"]],
            "baselines": [r.name for r in g["forktouch"]],
            "sessions": c.get("sessions"), "size": c.get("size"),
            "placement": c.get("placement"), "attach": c.get("attach"),
            "mean_ns": sm, "baseline_mean_ns": bm,
            "total_s": st, "baseline_total_s": bt,
            "cpu_ns": sc, "baseline_cpu_ns": bc,
            "cpu_ratio": sc / bc if sc and bc else None,
            "mean_ratio": sm / bm if sm and bm else None,
            "total_ratio": st / bt if st and bt else None,
            "goal": BASELINE_GOAL,
        })
    out.sort(key=lambda x: (x["guest"], x["sessions"] or 0,
                            x["experiments"]))
    return out


def analyse(run, tolerance=0.25, targets=DEFAULT_TARGETS):
    rows = rows_of(run)
    fits = fits_of(rows)
    pairs = pairs_of(rows)
    est = pmd_page_estimates(fits, pairs)
    return {
        "rows": rows, "fits": fits, "pairs": pairs,
        "pmd_page_estimates": est,
        "extrapolation": extrapolate(est, targets),
        "mode_extrapolation": extrapolate_modes(fits),
        "checks": checks_of(rows, pairs, tolerance),
        "seed_scale": seed_scale(rows),
        "baseline": baseline_pairs(run),
    }
