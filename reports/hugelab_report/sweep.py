"""Mapper sweeps: fault latency against the number of mappers.

A sweep is a set of shmdb results with a disruptor that differ only in the
session count (and the fault-lock mode): same page mode, segment size,
disruptors, disruptor interval, attach mode and active sessions.  Per
sweep, fault-lock mode and session count it gives the median, p99 and
maximum fault latency and the faults over 100 ms, 1 s and 2 s; per session
count measured in both modes the i_mmap / vma ratios; per mode the
smallest session count at which a fault certainly took more than 2 s (the
seed article's stall).

Under TCG absolute times are inflated; the ratio between the modes at
equal mappers is the figure to trust (both modes run the same emulated
machine).
"""

from collections import defaultdict
import statistics

from . import stats

# The fault histogram of a sweep: the first of these every result has.
SWEEP_METRICS = ("faulting_disrupted", "faults_disrupted", "faults")
SEED_STALL = 2_000_000_000


def sweep_key(row):
    """What a sweep holds fixed: the latency config key without the
    session count (latency.config_key: mode, size, sessions, disrupt,
    interval, attach, active, the other configuration values, kernel
    release)."""
    k = row["key"]
    return (k[0], k[1]) + tuple(k[3:])


def _ratio(a, b):
    return a / b if a is not None and b else None


def _median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def point(row, metric, hist):
    """One result's figures for a sweep."""
    m = row["metrics"][metric]
    return {"guest": row["guest"], "experiment": row["experiment"],
            "lock": row["lock"], "sessions": row["sessions"],
            "count": m["count"], "p50": m["p50"], "p99": m["p99"],
            "max": m["max"],
            "over": {name: list(stats.count_over(hist, t))
                     for t, name in stats.STALL_THRESHOLDS}}


def sweeps_of(rows, metrics_path):
    """Sweeps among latency rows (latency.rows_of).  `metrics_path` maps a
    metric label to its path in the result (latency.METRICS)."""
    groups = defaultdict(list)
    for r in rows:
        if r["sessions"] and r["disrupt"]:
            groups[sweep_key(r)].append(r)
    out = []
    for key, rs in groups.items():
        if len({r["sessions"] for r in rs}) < 2:
            continue
        metric = next((m for m in SWEEP_METRICS
                       if all(m in r["metrics"] for r in rs)), None)
        if metric is None:
            continue
        pts = [point(r, metric, r["_result"].get(*metrics_path[metric]))
               for r in rs]
        pts.sort(key=lambda p: (p["sessions"], p["lock"], p["guest"],
                                p["experiment"]))
        out.append(summarise(key, metric, pts))
    out.sort(key=lambda s: (s["mode"] or "", s["disrupt"], s["size"] or 0))
    return out


def summarise(key, metric, pts):
    """Ratios per session count (medians over repeated runs of a mode) and
    the first session count with a certain >2 s fault, per mode."""
    by = defaultdict(lambda: defaultdict(list))
    for p in pts:
        by[p["sessions"]][p["lock"]].append(p)
    ratios = []
    for n in sorted(by):
        im, vm = by[n].get("i_mmap"), by[n].get("vma")
        if not im or not vm:
            continue
        fig = {f: (_median(p[f] for p in im), _median(p[f] for p in vm))
               for f in ("p50", "p99", "max")}
        ratios.append({"sessions": n,
                       "runs": [len(im), len(vm)],
                       **{f + "_ratio": _ratio(*fig[f]) for f in fig}})
    first = {}
    for lock in sorted({p["lock"] for p in pts}):
        mine = [p for p in pts if p["lock"] == lock]
        over = [p["sessions"] for p in mine if p["over"]["2s"][0] > 0]
        first[lock] = {
            "sessions_measured": sorted({p["sessions"] for p in mine}),
            "first_over_2s": min(over) if over else None,
            "worst": max(p["max"] for p in mine),
        }
    return {"mode": key[0], "size": key[1], "disrupt": list(key[2]),
            "disrupt_interval_ms": key[3], "attach": key[4],
            "active": key[5], "metric": metric, "points": pts,
            "ratios": ratios, "stall_2s": first}
