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
            s = stats.summary(r.get(*path))
            if s:
                metrics[label] = s
        ops = {}
        for op, d in sorted((r.get("disruptor", "ops") or {}).items()):
            s = stats.summary((d or {}).get("duration"))
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
                    "p99_ratio": a["p99"] / b["p99"] if b["p99"] else None,
                    "max_ratio": a["max"] / b["max"] if b["max"] else None,
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
