"""The latency map (issue 31): the writer's hold and the faults' stall
against mappers x range, both fault-lock modes, a fit and a prediction.

A map run (workloads/smoke/latency-map) holds one shmdb result per mode,
round and point: MAPPERS sessions that fault the whole segment, a
disruptor punching RANGE-sized holes, each range once (--disrupt-once:
every punch finds its range mapped by every session), faults of 10 ms or
more attributed (--attribute).  Per result:

- hold: the punch's duration (disruptor.ops.punch.duration: mean, max):
  i_mmap_rwsem is held for write across the walk of every mapper's VMA
  (hugetlb_vmdelete_list), in both modes;
- stall: the worst fault during a disruption (during_disruption.faulting
  max), and of the attributed faults the worst one's run-queue wait, its
  wait per lock and the remainder; `net` = latency - run-queue wait, the
  part a CPU cannot explain.  The headline reads the seed's claim on the
  median over rounds of `net` (never on one run, never on time spent
  waiting for a CPU).

The fits, per mode (the faults that a writer's walk blocks, and that
refault pages it must then unmap again, differ between the modes): the
linear hold = a + b V + c V P (V: VMAs walked = mappers + the
disruptor's; P: 2 MiB pages per range; least squares on relative error)
and the power law hold = k V^alpha P^beta (least squares of the logs);
the one with the smaller median relative residual is chosen.  The
prediction: per range, the fewest mappers at which the i_mmap fit's hold
reaches STALL_NS (a fault that arrives as the writer starts waits the
whole hold in i_mmap mode); the smallest configuration overall is the
one with the fewest mappers.

Per point, the modes' worst stalls are compared by the regression run's
rule (maxt.judge: per-direction max-T permutation test over the rounds,
vma the baseline), so one run never decides; fewer than 3 rounds a side
is inconclusive.
"""

import json
import math
import os
import re
import statistics

import numpy as np

from . import maxt, rundir

STALL_NS = 2_000_000_000
PAGE = 2 << 20
NAME_RE = re.compile(r"map-n(\d+)-l(\d+[KMG])-r(\d+)$")
MIN_ROUNDS = 3
# The modes' comparison reads a stall under 1 ms (or none: no faulting
# access during a punch) as 1 ms: the map asks about stalls of
# milliseconds to seconds, and the regression run's scores are gaps in
# log(1 + ns), where a 0 against 0.3 ms is a gap of 12.6: with such
# values in a family, shuffled rounds out-score a 1,000x separation
# (run 20261207T121533Z: 3,000 mappers x 1G, 1.0-1.5 s against
# 0.05-1.0 ms, was 'not shown').
STALL_FLOOR_NS = 1_000_000
THRESHOLD = 0.25
ALPHA = 0.05
LOCKS = ("i_mmap_rwsem", "hugetlb VMA lock", "fault mutex", "mmap_lock",
         "other")


def _worst_attributed(doc):
    """The attributed fault with the longest latency: its parts, or None."""
    faults = (doc.get("attribution") or {}).get("faults") or []
    if not faults:
        return None
    f = max(faults, key=lambda x: x["latency_ns"])
    locks = {k: v for k, v in (f.get("lock_ns") or {}).items() if v}
    waited = sum(locks.values())
    return {"latency_ns": f["latency_ns"], "runqueue_ns": f["runqueue_ns"],
            "cpu_ns": f["cpu_ns"], "lock_ns": locks, "lock_total_ns": waited,
            "net_ns": max(f["latency_ns"] - f["runqueue_ns"], 0),
            "unexplained_ns": max(f["latency_ns"] - f["runqueue_ns"] -
                                  f["cpu_ns"] - waited, 0),
            "op": f.get("op")}


def _lock_max(doc, lock):
    faults = (doc.get("attribution") or {}).get("faults") or []
    return max([(f.get("lock_ns") or {}).get(lock) or 0 for f in faults],
               default=0)


def result_row(doc, name):
    """One map result as a row, or None when the name is not a map point."""
    m = NAME_RE.match(name)
    if not m:
        return None
    cfg = doc["config"]
    punch = (doc.get("disruptor") or {}).get("ops", {}).get("punch") or {}
    dur = punch.get("duration") or {}
    dd = (doc.get("during_disruption") or {}).get("faulting") or {}
    trace = (doc.get("attribution") or {}).get("trace") or {}
    return {
        "name": name, "mode": doc["kernel"].get("hugetlb_fault_lock"),
        "mappers": cfg["sessions"], "range": m.group(2),
        "range_bytes": cfg["disrupt_len"],
        "pages": cfg["disrupt_len"] // PAGE, "round": int(m.group(3)),
        "status": doc["status"], "ops": punch.get("count", 0),
        "hold_mean_ns": dur.get("mean"), "hold_max_ns": dur.get("max"),
        "faults": dd.get("count", 0), "stall_ns": dd.get("max"),
        "worst": _worst_attributed(doc),
        "i_mmap_wait_ns": _lock_max(doc, "i_mmap_rwsem"),
        "vma_lock_wait_ns": _lock_max(doc, "hugetlb VMA lock"),
        "lost_events": trace.get("lost_events"),
        "once": cfg.get("disrupt_once", False),
    }


def run_rows(run):
    """The map results of a run (rundir.Run), with the guest that ran
    them."""
    rows = []
    for r in run.results("shmdb"):
        row = result_row(r.doc, r.name)
        if row:
            row["guest"] = r.guest
            rows.append(row)
    return rows


def rows_of(run_dir):
    """The map results of a run directory."""
    return run_rows(rundir.load(run_dir))


def usable(row):
    """A run the fit and the map may read: ok, each range once, at least
    one punch timed."""
    return (row["status"] == "ok" and row["once"] and row["ops"] > 0 and
            row["hold_mean_ns"])


def _matrix(rows):
    pts = [r for r in rows if usable(r)]
    v = np.array([r["mappers"] + 1 for r in pts], dtype=float)
    p = np.array([r["pages"] for r in pts], dtype=float)
    y = np.array([r["hold_mean_ns"] for r in pts], dtype=float)
    return pts, v, p, y


def _residuals(y, pred):
    rel = np.abs(y - pred) / y
    return {"rel_residual_median": float(np.median(rel)),
            "rel_residual_max": float(np.max(rel))}


def fit_linear(v, p, y):
    """hold = a + b V + c V P, least squares on relative error (weights
    1 / hold): a per VMA and a per VMA-page cost."""
    a = np.column_stack([np.ones_like(v), v, v * p])
    w = 1.0 / y
    coef, *_ = np.linalg.lstsq(a * w[:, None], y * w, rcond=None)
    return {"model": "linear", "formula": "hold = a + b V + c V P",
            "a_ns": float(coef[0]), "b_ns_per_vma": float(coef[1]),
            "c_ns_per_vma_page": float(coef[2])} | \
        _residuals(y, a @ coef)


def fit_power(v, p, y):
    """hold = k V^alpha P^beta, least squares of the logarithms: the
    growth with mappers and pages when the cost of one VMA-page is not
    constant (a writer's walk that outgrows the caches)."""
    a = np.column_stack([np.ones_like(v), np.log(v), np.log(p)])
    coef, *_ = np.linalg.lstsq(a, np.log(y), rcond=None)
    return {"model": "power", "formula": "hold = k V^alpha P^beta",
            "k_ns": float(math.exp(coef[0])), "alpha": float(coef[1]),
            "beta": float(coef[2])} | _residuals(y, np.exp(a @ coef))


def fit(rows):
    """Both models over the usable runs (V = mappers + 1: the disruptor
    maps the segment too; P = 2 MiB pages per range); 'chosen' is the one
    with the smaller median relative residual.  None with fewer than 4
    runs or fewer than 2 distinct mapper counts and ranges."""
    pts, v, p, y = _matrix(rows)
    if len(pts) < 4 or len(set(v)) < 2 or len(set(p)) < 2:
        return None
    lin, pw = fit_linear(v, p, y), fit_power(v, p, y)
    best = min((lin, pw), key=lambda f: f["rel_residual_median"])
    return {"runs": len(pts), "linear": lin, "power": pw,
            "chosen": best["model"]}


def predict_hold(f, mappers, pages):
    """The chosen model's hold for mappers x pages."""
    v = mappers + 1
    if f["chosen"] == "power":
        m = f["power"]
        return m["k_ns"] * v ** m["alpha"] * pages ** m["beta"]
    m = f["linear"]
    return m["a_ns"] + m["b_ns_per_vma"] * v + \
        m["c_ns_per_vma_page"] * v * pages


def mappers_for(f, pages, stall_ns=STALL_NS):
    """The fewest mappers at which the chosen model's hold reaches
    stall_ns, or None when it does not grow with mappers at that range."""
    if f["chosen"] == "power":
        m = f["power"]
        if m["alpha"] <= 0:
            return None
        v = (stall_ns / (m["k_ns"] * pages ** m["beta"])) ** \
            (1 / m["alpha"])
        n = max(math.ceil(v) - 1, 1)
    else:
        m = f["linear"]
        slope = m["b_ns_per_vma"] + m["c_ns_per_vma_page"] * pages
        if slope <= 0:
            return None
        n = max(math.ceil((stall_ns - m["a_ns"]) / slope) - 1, 1)
    while n > 1 and predict_hold(f, n - 1, pages) >= stall_ns:
        n -= 1          # rounding: the fewest
    while predict_hold(f, n, pages) < stall_ns:
        n += 1
    return n


def prediction(f, ranges):
    """Per range (name, bytes) the mappers for a STALL_NS hold; the
    smallest configuration is the one with the fewest mappers (at equal
    mappers the smaller range)."""
    if not f:
        return None
    per = []
    for name, nbytes in ranges:
        n = mappers_for(f, nbytes // PAGE)
        per.append({"range": name, "range_bytes": nbytes, "mappers": n})
    cands = [x for x in per if x["mappers"]]
    best = min(cands, key=lambda x: (x["mappers"], x["range_bytes"])) \
        if cands else None
    return {"stall_ns": STALL_NS, "per_range": per, "smallest": best}


def points(rows):
    """Per (mode, mappers, range): the rounds' holds and stalls and their
    medians; the worst attributed fault of the worst round."""
    groups = {}
    for r in rows:
        groups.setdefault((r["mode"], r["mappers"], r["range_bytes"]),
                          []).append(r)
    out = []
    for (mode, n, nb), rs in sorted(groups.items(),
                                    key=lambda kv: (kv[0][1], kv[0][2],
                                                    kv[0][0])):
        ok = [r for r in rs if usable(r)]
        stalls = [r["stall_ns"] or 0 for r in ok]
        worst = max(ok, key=lambda r: r["stall_ns"] or 0) if ok else None
        out.append({
            "mode": mode, "mappers": n, "range": rs[0]["range"],
            "range_bytes": nb, "rounds": len(ok), "failed": len(rs) - len(ok),
            "hold_ns": [r["hold_mean_ns"] for r in ok],
            "hold_max_ns": [r["hold_max_ns"] for r in ok],
            "stall_ns": stalls,
            "i_mmap_wait_ns": [r["i_mmap_wait_ns"] for r in ok],
            "vma_lock_wait_ns": [r["vma_lock_wait_ns"] for r in ok],
            "hold_median_ns": statistics.median([r["hold_mean_ns"]
                                                 for r in ok]) if ok else None,
            "stall_median_ns": statistics.median(stalls) if ok else None,
            "net_ns": [(r["worst"] or {}).get("net_ns") or 0 for r in ok],
            "net_median_ns": statistics.median(
                (r["worst"] or {}).get("net_ns") or 0 for r in ok)
            if ok else None,
            "stall_max_ns": max(stalls) if ok else None,
            "over_stall": sum(1 for s in stalls if s >= STALL_NS),
            "worst": worst["worst"] if worst else None,
        })
    return out


def compare_modes(pts):
    """The regression run's rule on each point's worst stall: i_mmap
    (candidate) against vma (baseline), rounds as runs.  Per point:
    'longer' (declared a regression), 'not shown', or 'inconclusive'
    (fewer than MIN_ROUNDS a side)."""
    by = {}
    for p in pts:
        by.setdefault((p["mappers"], p["range_bytes"]), {})[p["mode"]] = p
    figures, verdicts, sizes = {}, {}, set()
    for key, modes in sorted(by.items()):
        b, c = modes.get("vma"), modes.get("i_mmap")
        name = "%d/%d" % key
        if not b or not c or min(b["rounds"], c["rounds"]) < MIN_ROUNDS:
            verdicts[name] = "inconclusive"
            continue
        nb = nc = min(b["rounds"], c["rounds"])
        sizes.add(nb)
        figures[name] = ([max(v, STALL_FLOOR_NS) for v in
                          b["stall_ns"][:nb] + c["stall_ns"][:nc]], 0.0)
    if figures and len(sizes) == 1:
        n = sizes.pop()
        j = maxt.judge(figures, n, n, THRESHOLD, ALPHA)
        for name in figures:
            verdicts[name] = "longer" if name in j["regression"]["declared"] \
                else ("shorter" if name in j["improved"]["declared"]
                      else "not shown")
    elif figures:
        verdicts.update({k: "inconclusive" for k in figures})
    return verdicts


def headline(pts, pred):
    """The answer to the seed's '>2 s' claim, from the map."""
    over = [p for p in pts if p["mode"] == "i_mmap" and
            p["rounds"] >= MIN_ROUNDS and
            (p["net_median_ns"] or 0) >= STALL_NS]
    if over:
        p = min(over, key=lambda x: (x["mappers"], x["range_bytes"]))
        vma = next((q for q in pts if q["mode"] == "vma" and
                    q["mappers"] == p["mappers"] and
                    q["range_bytes"] == p["range_bytes"]), None)
        return (">2 s reproduced at %d mappers and %s per disruption "
                "(i_mmap: median worst fault %.2f s over %d rounds, %.2f s "
                "of it off the run queue); per-VMA lock at the same "
                "point: %s" % (
                    p["mappers"], p["range"], p["stall_median_ns"] / 1e9,
                    p["rounds"], p["net_median_ns"] / 1e9,
                    "%.2g ms" % (vma["stall_median_ns"] / 1e6)
                    if vma and vma["stall_median_ns"] is not None
                    else "not measured"))
    top = max((p for p in pts if p["mode"] == "i_mmap" and
               p["stall_median_ns"]), key=lambda x: x["stall_median_ns"],
              default=None)
    s = "not reproduced up to %s" % (
        "%d mappers x %s (median worst fault %.0f ms)" % (
            top["mappers"], top["range"], top["stall_median_ns"] / 1e6)
        if top else "any point")
    if pred and pred["smallest"]:
        s += "; the fit predicts it at %d mappers x %s" % (
            pred["smallest"]["mappers"], pred["smallest"]["range"])
    return s


def analyse(rows, ranges=None):
    """The map of rows: per mode the fits, the points with the modes
    compared, the prediction from the i_mmap fit, the headline."""
    fits = {m: fit([r for r in rows if r["mode"] == m])
            for m in sorted({r["mode"] for r in rows})}
    if ranges is None:
        ranges = sorted({(r["range"], r["range_bytes"]) for r in rows},
                        key=lambda x: x[1])
    pts = points(rows)
    pred = prediction(fits.get("i_mmap"), ranges)
    verdicts = compare_modes(pts)
    for p in pts:
        p["modes_verdict"] = verdicts.get("%d/%d" % (p["mappers"],
                                                     p["range_bytes"]))
        f = fits.get(p["mode"])
        if f:
            p["hold_fit_ns"] = predict_hold(f, p["mappers"],
                                            p["range_bytes"] // PAGE)
    return {"schema": "hugelab.latency-map/1", "fits": fits,
            "prediction": pred, "points": pts,
            "headline": headline(pts, pred), "runs": len(rows),
            "runs_usable": sum(map(usable, rows))}


def prediction_test(map_doc, rows):
    """The predicted configuration run (rows: its results, both modes)
    against the map's fit: the hold the fit predicts, the hold and the
    stalls measured (medians over rounds), and whether a fault waited
    2 s in i_mmap mode (the median round's worst fault, net of its
    run-queue wait)."""
    best = (map_doc.get("prediction") or {}).get("smallest")
    f = (map_doc.get("fits") or {}).get("i_mmap")
    if not best or not f:
        return None
    pts = {p["mode"]: p for p in points(rows)
           if p["mappers"] == best["mappers"] and
           p["range_bytes"] == best["range_bytes"]}
    imm, vma = pts.get("i_mmap"), pts.get("vma")
    nets = sorted((r["worst"] or {}).get("net_ns") or 0 for r in rows
                  if usable(r) and r["mode"] == "i_mmap" and
                  r["mappers"] == best["mappers"] and
                  r["range_bytes"] == best["range_bytes"])
    out = {"mappers": best["mappers"], "range": best["range"],
           "predicted_hold_ns": predict_hold(f, best["mappers"],
                                             best["range_bytes"] // PAGE),
           "rounds": imm["rounds"] if imm else 0,
           "hold_median_ns": imm["hold_median_ns"] if imm else None,
           "stall_median_ns": imm["stall_median_ns"] if imm else None,
           "net_median_ns": statistics.median(nets) if nets else None,
           "vma_stall_median_ns": vma["stall_median_ns"] if vma else None,
           "modes_verdict": compare_modes(list(pts.values())).get(
               "%d/%d" % (best["mappers"], best["range_bytes"]))}
    if out["rounds"] < MIN_ROUNDS:
        out["verdict"] = "inconclusive: %d of %d rounds" % (
            out["rounds"], MIN_ROUNDS)
    elif out["net_median_ns"] >= STALL_NS:
        out["verdict"] = "confirmed: a fault waited 2 s"
    else:
        out["verdict"] = "not confirmed: the median round's worst fault " \
            "waited %.2f s net of its run-queue wait" % (
                out["net_median_ns"] / 1e9)
    return out


def analyse_dir(run_dir):
    return analyse(rows_of(run_dir))


def analyse_run(run):
    """The map of a run (rundir.Run) holding map results, else None."""
    rows = run_rows(run)
    return analyse(rows) if rows else None


def fit_text(mode, f):
    lin, pw = f["linear"], f["power"]
    return ("%s: %d runs; linear a %.3g ms + b %.3g us/VMA + c %.3g "
            "us/VMA-page (residual median %.0f %%, max %.0f %%); power "
            "%.3g ns V^%.2f P^%.2f (residual median %.0f %%, max %.0f %%); "
            "chosen: %s" % (
                mode, f["runs"], lin["a_ns"] / 1e6, lin["b_ns_per_vma"] / 1e3,
                lin["c_ns_per_vma_page"] / 1e3,
                100 * lin["rel_residual_median"],
                100 * lin["rel_residual_max"], pw["k_ns"], pw["alpha"],
                pw["beta"], 100 * pw["rel_residual_median"],
                100 * pw["rel_residual_max"], f["chosen"]))


def _ms(ns):
    return "-" if ns is None else "%.1f" % (ns / 1e6)


def table(doc):
    lines = ["%-7s %7s %6s %6s %10s %10s %10s %10s %10s  %s" % (
        "mode", "mappers", "range", "rounds", "hold ms", "fit ms",
        "stall ms", "max ms", "i_mmap ms", "i_mmap vs vma")]
    for p in doc["points"]:
        lines.append("%-7s %7d %6s %6d %10s %10s %10s %10s %10s  %s" % (
            p["mode"], p["mappers"], p["range"], p["rounds"],
            _ms(p["hold_median_ns"]), _ms(p.get("hold_fit_ns")),
            _ms(p["stall_median_ns"]), _ms(p["stall_max_ns"]),
            _ms(max(p["i_mmap_wait_ns"], default=None)),
            p["modes_verdict"] or "-"))
    for mode, f in sorted((doc.get("fits") or {}).items()):
        if f:
            lines.append(fit_text(mode, f))
    pr = doc["prediction"]
    if pr:
        lines.append("prediction (hold >= 2 s): " + ", ".join(
            "%s: %s mappers" % (x["range"], x["mappers"])
            for x in pr["per_range"]))
    lines.append("headline: " + doc["headline"])
    return "\n".join(lines)
