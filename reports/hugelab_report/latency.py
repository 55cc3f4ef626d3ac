"""Latency report: fault and transaction latency percentiles, disruptor
operation durations, per hugetlb_fault_lock mode and session count, and the
i_mmap / vma ratio of worst-case and p99 stalls."""

from collections import defaultdict

from . import model, stats, sweep

# (label, path in the shmdb result) of every latency histogram reported.
METRICS = (
    ("transactions", ("transactions", "latency")),
    ("faults", ("faults", "first_touch")),
    ("transactions_disrupted", ("during_disruption", "transactions")),
    ("faults_disrupted", ("during_disruption", "faults")),
    ("faulting_disrupted", ("during_disruption", "faulting")),
    ("attach", ("attach", "per_session")),
)
METRIC_TITLES = {
    "transactions": "transaction latency",
    "faults": "first-touch fault latency",
    "transactions_disrupted": "transaction latency during disruption",
    "faults_disrupted": "fault latency during disruption",
    "faulting_disrupted": "page-fault latency during disruption (only the "
                          "reads that faulted, shmdb --count-faults)",
    "attach": "attach time per session",
}
# The stall ratio uses the first of these a pair of results both have.
STALL_METRICS = ("faulting_disrupted", "faults_disrupted",
                 "transactions_disrupted", "faults",
                 "transactions")


# Samples a percentile needs to be shown as a figure of its own: with
# fewer than 100 the nearest-rank p99 is the maximum itself (and p99.9
# below 1,000), so an interpolated value would look like a difference
# from the max that no sample shows.
PERCENTILE_MIN_SAMPLES = {50: 1, 99: 100, 99.9: 1000}


def percentile(hist, q):
    """The reports' one percentile of a log2 histogram (render's tables,
    the headline and compare's figures all use this function): rank
    q/100 x N, interpolated linearly inside the log2 bucket holding it
    (its samples taken as spread evenly over [upper/2, upper],
    stats.bucket_lower), clamped to the histogram's min and max.  Not the
    bucket upper bound the workloads print as their own p50/p99 keys
    (workloads/SCHEMA.md): that jumps 2x when a distribution moves a few
    percent across a bucket boundary, and it made render and compare
    disagree on one run.  None for an empty histogram.  Whether the
    sample count supports q is summary's business
    (PERCENTILE_MIN_SAMPLES)."""
    bs = stats.buckets(hist)
    n = sum(k for _, k in bs)
    if not n:
        return None
    rank = q / 100.0 * n
    seen = 0
    value = bs[-1][0]
    for u, k in bs:
        if seen + k >= rank:
            lo = stats.bucket_lower(u)
            value = lo + (u - lo) * max(0.0, rank - seen) / k
            break
        seen += k
    mn, mx = hist.get("min"), hist.get("max")
    if isinstance(mx, (int, float)):
        value = min(value, mx)
    if isinstance(mn, (int, float)):
        value = max(value, mn)
    return value


def summary(hist):
    """count, mean, p50, p99, p999 and max of a histogram (None when it is
    empty), percentiles by `percentile`; p99 is None with fewer than 100
    samples and p999 with fewer than 1,000 (PERCENTILE_MIN_SAMPLES; the
    report then shows the maximum in their place)."""
    if not isinstance(hist, dict) or not stats.hist_count(hist):
        return None
    n = stats.hist_count(hist)
    out = {"count": n, "mean": stats.hist_mean(hist)}
    for key, q in (("p50", 50), ("p99", 99), ("p999", 99.9)):
        out[key] = (percentile(hist, q) if n >= PERCENTILE_MIN_SAMPLES[q]
                    else None)
    mx = hist.get("max")
    out["max"] = (mx if isinstance(mx, (int, float))
                  else stats.buckets(hist)[-1][0])
    return out


def lock_family(mode):
    """'i_mmap', 'vma' or the mode itself ('none' for no knob)."""
    if not mode:
        return "none"
    m = str(mode).lower()
    if "i_mmap" in m or "immap" in m:
        return "i_mmap"
    if "vma" in m:
        return "vma"
    return m


# Configuration keys that do not change what a latency result measures:
# the random seed and where the hugetlbfs file lives.
KEY_IGNORED = frozenset(("seed", "hugetlbfs_dir"))
# Keys with a fixed place at the start of the key (sweep.sweep_key drops
# the session count, index 2).
KEY_FIXED = ("size", "sessions", "disrupt", "disrupt_interval_ms", "attach",
             "active")


def _hashable(v):
    if isinstance(v, list):
        return tuple(_hashable(x) for x in v)
    if isinstance(v, dict):
        return tuple(sorted((k, _hashable(x)) for k, x in v.items()))
    return v


def config_key(cfg, release=None):
    """What must match for two results to be compared across lock modes:
    the page mode, then KEY_FIXED, then every other configuration value
    (disruptor length, backing, touch pattern, private or shared map,
    write share, duration, ...; not KEY_IGNORED) and the kernel release
    (the same build in both modes: another line or flavour is another
    comparison)."""
    fixed = (model.mode_of(cfg), cfg.get("size"), cfg.get("sessions"),
             tuple(sorted(cfg.get("disrupt") or [])),
             cfg.get("disrupt_interval_ms"), cfg.get("attach"),
             cfg.get("active"))
    rest = tuple(sorted((k, _hashable(v)) for k, v in cfg.items()
                        if k not in KEY_IGNORED and k not in KEY_FIXED))
    return fixed + (rest, release)


def rows_of(run):
    rows = []
    for r in run.results("shmdb"):
        cfg = r.config
        metrics = {}
        for label, path in METRICS:
            s = summary(r.get(*path))
            if s:
                metrics[label] = s
        ops = {}
        for op, d in sorted((r.get("disruptor", "ops") or {}).items()):
            s = summary((d or {}).get("duration"))
            ops[op] = {"count": (d or {}).get("count", 0), "duration": s}
        if not metrics and not ops:
            continue
        rows.append({
            "guest": r.guest, "experiment": r.name,
            "fault_lock": r.kernel.get("hugetlb_fault_lock"),
            "lock": lock_family(r.kernel.get("hugetlb_fault_lock")),
            "mode": model.mode_of(cfg), "size": cfg.get("size"),
            "sessions": cfg.get("sessions"),
            "disrupt": list(cfg.get("disrupt") or []),
            "txn_per_s": r.get("transactions", "per_s"),
            "metrics": metrics, "ops": ops,
            "key": config_key(cfg, r.kernel.get("release")),
            "_result": r,
        })
    rows.sort(key=lambda x: (x["guest"], x["lock"], x["sessions"] or 0,
                             x["experiment"]))
    return rows


def _ratio(a, b):
    """a / b; None when either is missing (a p99 of fewer than 100
    samples) or b is 0."""
    return a / b if a is not None and b else None


def ratios_of(rows):
    """i_mmap / vma ratio of p99 and max stall for results that differ
    only in the fault-lock mode (any guests)."""
    by = defaultdict(lambda: defaultdict(list))
    for r in rows:
        by[r["key"]][r["lock"]].append(r)
    out = []
    for key, locks in by.items():
        if "i_mmap" not in locks or "vma" not in locks:
            continue
        for im in locks["i_mmap"]:
            for vm in locks["vma"]:
                metric = next((m for m in STALL_METRICS
                               if m in im["metrics"] and m in vm["metrics"]),
                              None)
                if metric is None:
                    continue
                a, b = im["metrics"][metric], vm["metrics"][metric]
                out.append({
                    "i_mmap": "%s/%s" % (im["guest"], im["experiment"]),
                    "vma": "%s/%s" % (vm["guest"], vm["experiment"]),
                    "mode": key[0], "sessions": key[2],
                    "disrupt": list(key[3]), "metric": metric,
                    "p99_i_mmap": a["p99"], "p99_vma": b["p99"],
                    "max_i_mmap": a["max"], "max_vma": b["max"],
                    "p99_ratio": _ratio(a["p99"], b["p99"]),
                    "max_ratio": _ratio(a["max"], b["max"]),
                })
    out.sort(key=lambda x: (x["mode"] or "", x["sessions"] or 0, x["i_mmap"],
                            x["vma"]))
    return out


def analyse(run):
    rows = rows_of(run)
    return {"rows": rows, "ratios": ratios_of(rows),
            "sweeps": sweep.sweeps_of(rows, dict(METRICS))}


def public(lat):
    """The latency analysis without internal references (for JSON)."""
    rows = [{k: v for k, v in r.items() if not k.startswith("_")
             and k != "key"} for r in lat["rows"]]
    return {"rows": rows, "ratios": lat["ratios"],
            "sweeps": lat.get("sweeps", [])}
