"""compare --baseline RUN... --candidate RUN...: regression rules by kind.

Each side is R run directories of the same fleet (R repeats; the old
`compare BASELINE CANDIDATE` is R = 1 a side).  Results are matched by
guest and experiment name; every figure is first reduced per run, then
compared run against run (reports/README.md, "compare"):

- latency (mmtests-style): per run and experiment, p50 / p99 (interpolated
  inside their bucket) / max of each latency histogram and the number of
  fault samples over 100 ms, 1 s and 2 s.  A metric regresses when EVERY
  candidate run's value exceeds EVERY baseline run's value by more than
  `threshold` (and, for stall counts, by more than `count_slack`
  samples); it improved when the reverse holds;
  otherwise no change.  With fewer than two runs on a side the verdict is
  "inconclusive (R=1)": one run pair says nothing about latency under TCG.
- deterministic: page-table bytes per session and, for runs without a
  disruptor, the kernel's PMD-sharing counters: the median of the
  candidate runs against the median of the baseline runs, two-sided, with
  the noise floor max(relative tolerance, `noise_pages` page-table pages,
  the spread (max - min) of the baseline runs).  Page tables up beyond it
  is a regression, down an improvement; a counter changed either way is a
  regression.  The measured bytes per PMD page saved may not fall by more
  than the check tolerance.
- a kernel finding count above every baseline run's, a check failing in a
  candidate run but in no baseline run, and an experiment of the baseline
  that no candidate run has are regressions.
"""

import math
import statistics

from . import latency, model, stats, summary
from .savings import NOISE_PAGES, counter_keys

SCHEMA = "hugelab.compare/2"
MIN_SAMPLES = 20            # p99 of a run needs this many samples
LATENCY_STATS = ("p50", "p99", "max")
COUNT_METRICS = ("faults", "faults_disrupted", "faulting_disrupted")
DEFAULT_THRESHOLD = 0.25
DEFAULT_COUNT_SLACK = 1


def _item(kind, key, metric, verdict, base=None, cand=None, detail="",
          **extra):
    d = {"kind": kind, "key": key, "metric": metric, "verdict": verdict,
         "baseline": base, "candidate": cand, "detail": detail}
    d.update(extra)
    return d


def deterministic(kind, key, metric, base, cand, tol, direction,
                  abs_slack=0.0):
    """One figure a side. direction: 'higher_worse', 'lower_worse' or
    'any'.  A change within tol (relative) or within abs_slack (absolute)
    is no change."""
    rd = stats.rel_diff(cand, base)
    if abs(rd) <= tol or abs(cand - base) <= abs_slack:
        verdict = "ok"
    elif direction == "any":
        verdict = "regression"
    elif (cand > base) == (direction == "higher_worse"):
        verdict = "regression"
    else:
        verdict = "improved"
    detail = ("relative change %+.2f%% (tolerance %.2f%%)" % (
        rd * 100, tol * 100) if rd != float("inf") else
        "baseline 0, candidate %s" % cand)
    if abs_slack:
        detail += ", absolute slack %.6g" % abs_slack
    return _item(kind, key, metric, verdict, base, cand, detail, rel_diff=rd)


def deterministic_runs(kind, key, metric, bvals, cvals, tol, direction,
                       abs_slack=0.0):
    """Several runs a side: the medians, with the noise floor widened to
    the spread of the baseline runs (what repeats of one kernel moved; the
    candidate's spread would grow with the very change it measures)."""
    mb, mc = statistics.median(bvals), statistics.median(cvals)
    spread = max(bvals) - min(bvals)
    it = deterministic(kind, key, metric, mb, mc, tol, direction,
                       max(abs_slack, spread))
    if len(bvals) > 1 or len(cvals) > 1:
        it["detail"] = "medians of %d / %d runs; %s; run spread %.6g" % (
            len(bvals), len(cvals), it["detail"], spread)
        it["baseline_runs"], it["candidate_runs"] = bvals, cvals
    return it


def separation_chance(nb, nc):
    """Chance that nc candidate values all exceed nb baseline values when
    all runs come from one distribution (exchangeable, no ties): the
    false-alarm bound of one latency item before the threshold."""
    return 1.0 / math.comb(nb + nc, nb)


def latency_verdict(key, metric, bvals, cvals, threshold, slack=0.0):
    """Run-against-run verdict of one per-run latency figure."""
    nb, nc = len(bvals), len(cvals)
    if not nb and not nc:
        return None
    if nb < 2 or nc < 2:
        return _item("latency", key, metric, "inconclusive", bvals, cvals,
                     "inconclusive (R=%d): one run a side cannot tell a "
                     "kernel from the host's noise" % min(nb, nc) if
                     min(nb, nc) == 1 else
                     "recorded in %d baseline and %d candidate runs" % (
                         nb, nc))
    lo_c, hi_c = min(cvals), max(cvals)
    lo_b, hi_b = min(bvals), max(bvals)
    if lo_c > hi_b * (1 + threshold) + slack:
        verdict, how = "regression", "every candidate run above every " \
            "baseline run"
    elif hi_c * (1 + threshold) + slack < lo_b:
        verdict, how = "improved", "every candidate run below every " \
            "baseline run"
    else:
        verdict, how = "ok", "runs overlap"
    ratio = (statistics.median(cvals) / statistics.median(bvals)
             if statistics.median(bvals) else None)
    detail = "%s (threshold x%.2f%s); median ratio %s" % (
        how, 1 + threshold, ", +%g" % slack if slack else "",
        "%.3g" % ratio if ratio is not None else "n/a")
    return _item("latency", key, metric, verdict, bvals, cvals, detail,
                 runs=[nb, nc], median_ratio=ratio,
                 separation_chance=separation_chance(nb, nc))


def _counters(r):
    vm = r.get("vmstat_delta") or {}
    return {k: vm[k] for k in counter_keys(vm).values()}


def run_figures(run):
    """Per (guest, experiment) of one run: the figures compare reduces the
    run to."""
    out = {}
    for r in run.results():
        f = {"program": r.program, "config": r.config, "latency": {}}
        out[(r.guest, r.name)] = f
        if r.program != "shmdb":
            continue
        f["sessions"] = r.config.get("sessions") or 1
        f["disrupt"] = list(r.config.get("disrupt") or [])
        pt = r.get("pagetables_per_session")
        if isinstance(pt, (int, float)):
            f["pagetables_per_session"] = pt
        f["counters"] = _counters(r)
        hists = [(label, r.get(*path)) for label, path in latency.METRICS]
        for op, d in sorted((r.get("disruptor", "ops") or {}).items()):
            hists.append(("disruptor." + op, (d or {}).get("duration")))
        for label, h in hists:
            n = stats.hist_count(h)
            s = stats.summary(h)
            if not s:
                continue
            lat = f["latency"]
            lat[(label, "p50")] = stats.percentile_interp(h, 50)
            lat[(label, "max")] = s["max"]
            if n >= MIN_SAMPLES:
                lat[(label, "p99")] = stats.percentile_interp(h, 99)
            if label in COUNT_METRICS:
                for t, name in stats.STALL_THRESHOLDS:
                    lat[(label, "over_" + name)] = stats.count_over(h, t)[0]
    return out


def _by_key(figs):
    """[{key: figures}] of the runs of a side -> {key: [figures...]}."""
    out = {}
    for runfig in figs:
        for k, f in runfig.items():
            out.setdefault(k, []).append(f)
    return out


def _values(fs, get):
    return [v for v in (get(f) for f in fs) if v is not None]


def experiment_items(k, bf, cf, tolerance, threshold, count_slack,
                     noise_pages):
    items = []
    if bf[0]["program"] != "shmdb":
        return items
    bp = _values(bf, lambda f: f.get("pagetables_per_session"))
    cp = _values(cf, lambda f: f.get("pagetables_per_session"))
    n = cf[0].get("sessions") or 1
    if bp and cp:
        items.append(deterministic_runs(
            "deterministic", k, "pagetables_per_session", bp, cp, tolerance,
            "higher_worse", noise_pages * model.PT_PAGE / n))
    disrupt = sorted({d for f in bf + cf for d in f.get("disrupt") or []})
    names = sorted({c for f in bf + cf for c in f.get("counters") or {}})
    for name in names:
        vb = _values(bf, lambda f: (f.get("counters") or {}).get(name))
        vc = _values(cf, lambda f: (f.get("counters") or {}).get(name))
        if not vb or not vc:
            items.append(_item("deterministic", k, name, "changed",
                               vb or None, vc or None,
                               "counter present in one side only"))
        elif disrupt:
            items.append(_item(
                "deterministic", k, name, "skipped", vb, vc,
                "not compared: disruptor (%s) operations unshare and "
                "re-share, the count depends on how many ran" %
                ",".join(disrupt)))
        else:
            items.append(deterministic_runs("deterministic", k, name, vb,
                                            vc, tolerance, "any"))
    keys = sorted({lk for f in bf + cf for lk in f["latency"]},
                  key=lambda x: (x[0], x[1]))
    for label, stat in keys:
        vb = _values(bf, lambda f: f["latency"].get((label, stat)))
        vc = _values(cf, lambda f: f["latency"].get((label, stat)))
        counting = stat.startswith("over_")
        it = latency_verdict(k, "%s %s" % (label, stat), vb, vc,
                             threshold, count_slack if counting else 0.0)
        if it is not None:
            items.append(it)
    return items


def check_items(base_checks, cand_checks):
    """Render's checks of each side (lists of check lists, one per run): a
    check failing in some candidate run but in no baseline run (passing,
    skipped or absent there) is a regression; one failing in a baseline
    run too is a known failure; one failing only in the baseline runs is
    fixed (improved).  Checks are matched by suite and name."""
    def failing(runs):
        out = {}
        for checks in runs:
            for x in checks:
                if x["status"] == "fail":
                    out.setdefault((x["suite"], x["name"]), x["message"])
        return out
    fb, fc = failing(base_checks), failing(cand_checks)
    seen_c = {(x["suite"], x["name"]) for checks in cand_checks
              for x in checks}
    out = []
    for (suite, name), msg in sorted(fc.items()):
        if (suite, name) in fb:
            out.append(_item("checks", name, suite, "known-failure", "fail",
                             "fail", msg))
        else:
            out.append(_item("checks", name, suite, "regression",
                             "not failing", "fail", msg))
    for (suite, name), msg in sorted(fb.items()):
        if (suite, name) not in fc and (suite, name) in seen_c:
            out.append(_item("checks", name, suite, "improved", "fail",
                             "not failing", msg))
    return out


def warning_items(ab, ac):
    """A guest whose kernel findings in some candidate run exceed every
    baseline run's (guests expected to warn are exempt)."""
    out = []
    guests = sorted({g for a in ac for g in a["correctness"]["guests"]})
    for g in guests:
        gc = [a["correctness"]["guests"][g] for a in ac
              if g in a["correctness"]["guests"]]
        if any(x["expect_warnings"] for x in gc):
            continue
        wb = [a["correctness"]["guests"][g]["kernel_warnings"]
              for a in ab if g in a["correctness"]["guests"]] or [0]
        wc = [x["kernel_warnings"] for x in gc]
        worst = max(gc, key=lambda x: x["kernel_warnings"])
        new = max(wc) > max(wb)
        out.append(_item("warnings", g, "kernel_warnings",
                         "regression" if new else "ok", wb, wc,
                         "\n".join(worst["warning_excerpt"][:20])
                         if new else ""))
    return out


def estimate_items(ab, ac, check_tolerance):
    out = []
    eb = _by_key([{g: e for g, e in a["savings"]["pmd_page_estimates"]
                   .items()} for a in ab])
    ec = _by_key([{g: e for g, e in a["savings"]["pmd_page_estimates"]
                   .items()} for a in ac])
    for g in sorted(set(eb) & set(ec)):
        vb = _values(eb[g], lambda e: e["bytes_per_pmd_page"])
        vc = _values(ec[g], lambda e: e["bytes_per_pmd_page"])
        if vb and vc:
            out.append(deterministic_runs(
                "deterministic", g, "sharing_bytes_per_pmd_page", vb, vc,
                check_tolerance, "lower_worse"))
    return out


def compare(base, cand, tolerance=0.02, threshold=DEFAULT_THRESHOLD,
            check_tolerance=0.25, noise_pages=NOISE_PAGES,
            count_slack=DEFAULT_COUNT_SLACK):
    """Compare baseline run(s) with candidate run(s): a Run or a list of
    Runs a side."""
    bases = base if isinstance(base, (list, tuple)) else [base]
    cands = cand if isinstance(cand, (list, tuple)) else [cand]
    items = []
    rb = _by_key([run_figures(r) for r in bases])
    rc = _by_key([run_figures(r) for r in cands])
    for key in sorted(set(rc) - set(rb)):
        items.append(_item("coverage", "%s/%s" % key, "result", "new",
                           detail="experiment only in the candidate"))
    for key in sorted(rb):
        k = "%s/%s" % key
        if key not in rc:
            items.append(_item("coverage", k, "result", "regression",
                               detail="experiment missing in candidate"))
            continue
        items.extend(experiment_items(k, rb[key], rc[key], tolerance,
                                      threshold, count_slack, noise_pages))
    ab = [summary.analyse(r, tolerance=check_tolerance) for r in bases]
    ac = [summary.analyse(r, tolerance=check_tolerance) for r in cands]
    items.extend(estimate_items(ab, ac, check_tolerance))
    items.extend(warning_items(ab, ac))
    items.extend(check_items([a["checks"] for a in ab],
                             [a["checks"] for a in ac]))
    regressions = [i for i in items if i["verdict"] in ("regression",
                                                        "changed")]
    lat = [i for i in items if i["kind"] == "latency" and
           i["verdict"] != "inconclusive"]
    # Figures equal in every run of both sides (mostly zero stall counts)
    # cannot separate: they do not count towards the false-alarm bound.
    varying = [i for i in lat
               if len(set(i["baseline"]) | set(i["candidate"])) > 1]
    nb, nc = len(bases), len(cands)
    return summary.clean({
        "schema": SCHEMA,
        "baseline": {"run_ids": [r.run_id for r in bases],
                     "paths": [r.path for r in bases]},
        "candidate": {"run_ids": [r.run_id for r in cands],
                      "paths": [r.path for r in cands]},
        "runs": {"baseline": nb, "candidate": nc},
        "settings": {"tolerance": tolerance,
                     "latency_threshold": threshold,
                     "count_slack": count_slack,
                     "check_tolerance": check_tolerance,
                     "noise_pages": noise_pages,
                     "min_samples": MIN_SAMPLES},
        "status": "regression" if regressions else "ok",
        "latency_verdict": (
            "inconclusive (R=%d)" % min(nb, nc) if min(nb, nc) < 2 else
            "regression" if any(i["verdict"] == "regression" for i in lat)
            else "ok"),
        # Chance that an A/A comparison flags one given latency item, and
        # the number of items: their product bounds the expected number
        # of false alarms (before the threshold, which only lowers it).
        "false_alarm": {
            "per_item": separation_chance(nb, nc) if min(nb, nc) > 1
            else None,
            "items": len(lat), "varying_items": len(varying),
            "expected_bound": separation_chance(nb, nc) * len(varying)
            if min(nb, nc) > 1 else None},
        "provenance": {"baseline": [a["provenance"] for a in ab],
                       "candidate": [a["provenance"] for a in ac]},
        "parameters": parameters([a["provenance"] for a in ab],
                                 [a["provenance"] for a in ac]),
        "counts": {"items": len(items), "regressions": len(regressions),
                   "new": sum(i["verdict"] == "new" for i in items),
                   "improved": sum(i["verdict"] == "improved"
                                   for i in items),
                   "known_failures": sum(i["verdict"] == "known-failure"
                                         for i in items),
                   "inconclusive": sum(i["verdict"] == "inconclusive"
                                       for i in items),
                   "skipped": sum(i["verdict"] == "skipped"
                                  for i in items)},
        "items": items,
    })


def parameters(pbs, pcs):
    """Workload parameters of both sides per guest/experiment (from the
    first run of a side that has it), and whether they are the same in
    every run of both sides."""
    def by(ps):
        out = {}
        for p in ps:
            for g, gd in p["guests"].items():
                for w in gd["workloads"]:
                    out.setdefault("%s/%s" % (g, w["experiment"]),
                                   []).append(w["config"])
        return out
    b, c = by(pbs), by(pcs)
    rows = []
    for k in sorted(set(b) | set(c)):
        allc = b.get(k, []) + c.get(k, [])
        same = (k in b and k in c and all(x == allc[0] for x in allc))
        rows.append({"key": k, "baseline": (b.get(k) or [None])[0],
                     "candidate": (c.get(k) or [None])[0], "same": same})
    return rows


def checks_of(cmp):
    """The comparison as JUnit checks."""
    out = []
    for i in cmp["items"]:
        status = {"ok": "pass", "improved": "pass", "new": "pass",
                  "skipped": "skip", "known-failure": "skip",
                  "inconclusive": "skip"}.get(i["verdict"], "fail")
        out.append({"suite": i["kind"],
                    "name": "%s %s" % (i["key"], i["metric"]),
                    "status": status,
                    "message": "%s: %s" % (i["verdict"], i["detail"] or
                                           "%s -> %s" % (i["baseline"],
                                                         i["candidate"]))})
    return out
