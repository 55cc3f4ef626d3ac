"""compare --baseline RUN... --candidate RUN...: regression rules by kind.

Each side is R run directories of the same fleet (R repeats; the old
`compare BASELINE CANDIDATE` is R = 1 a side).  Results are matched by
guest and experiment name; every figure is first reduced per run, then
compared run against run (reports/README.md, "compare"):

- latency (mmtests-style): per run and experiment, p50 / p99
  (interpolated inside their bucket, latency.percentile) / max of each
  latency histogram and the number of fault samples over 100 ms, 1 s and
  2 s.  A p99 is compared only when every run of both sides has at least
  latency.PERCENTILE_MIN_SAMPLES[99] (100) samples of its histogram, the
  rule render shows p99 by: below that it is the maximum, so it is
  listed as skipped ("not compared"), neither judged nor missing.  A
  figure separates when EVERY candidate run's value exceeds EVERY
  baseline run's value by more than `threshold` (and, for stall counts,
  by more than `count_slack` samples), or the reverse.  A separated
  figure is a regression (or an improvement) only when the per-direction
  step-down max-T permutation test over the assignments of the runs to
  the sides declares it (maxt.py): at most ALPHA false alarms per
  direction for the whole comparison, and a change declared in one
  direction does not raise the bar of the others.  Runs that cannot reach
  ALPHA (1 / C(2R, R) > ALPHA: fewer than 3 + 3) and figures missing
  from a run are inconclusive.  Every verdict states its power (the
  chance a 2x / 10x / 30x change of each figure would have been caught
  with these runs' noise).
- deterministic: page-table bytes per session and, for runs without a
  disruptor, the kernel's PMD-sharing counters: the median of the
  candidate runs against the median of the baseline runs, with the noise
  floor max(relative tolerance, `noise_pages` page-table pages, the
  spread (max - min) of the baseline runs).  Page tables up beyond it is
  a regression, down an improvement; fewer PMD shares is a regression,
  more an improvement (counter_direction).  The measured bytes per PMD
  page saved may not fall by more than the check tolerance.
- a kernel finding count above every baseline run's, a check newly
  failing in every candidate run (in some only: inconclusive), and an
  experiment of the baseline that no candidate run has are regressions.

Runs that are not comparable and figures that are not measurements are
refused before (comparable.py).
"""

import math
import re
import statistics

import numpy as np

from . import comparable, latency, maxt, model, stats, summary
from .savings import NOISE_PAGES, counter_keys

SCHEMA = "hugelab.compare/3"
# A run's p99 needs this many samples (render's rule, one for both).
P99_MIN_SAMPLES = latency.PERCENTILE_MIN_SAMPLES[99]
LATENCY_STATS = ("p50", "p99", "max")
COUNT_METRICS = ("faults", "faults_disrupted", "faulting_disrupted")
DEFAULT_THRESHOLD = 0.25
DEFAULT_COUNT_SLACK = 1
# Family-wise false-alarm bound of the latency verdict, per direction.
ALPHA = 0.05


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


def separates(bvals, cvals, threshold, slack=0.0):
    """'regression' when every candidate value is above every baseline
    value x (1 + threshold) + slack, 'improved' for the reverse, else
    None."""
    if min(cvals) > max(bvals) * (1 + threshold) + slack:
        return "regression"
    if max(cvals) * (1 + threshold) + slack < min(bvals):
        return "improved"
    return None


# The least width separation_score divides by (log(1 + value) units).
MIN_WIDTH = 1e-9


def separation_score(bvals, cvals, direction, threshold):
    """How clearly a separated figure separates: the gap between the two
    sides over their spreads, in log(1 + value) (values are ns or
    counts), the spreads at least log(1 + threshold).  Scale-free, so a
    figure that varies 70x between runs and one that varies 10 % compare
    on one footing."""
    ub = [math.log1p(max(v, 0)) for v in bvals]
    uc = [math.log1p(max(v, 0)) for v in cvals]
    if direction == "regression":
        gap = min(uc) - max(ub)
    else:
        gap = min(ub) - max(uc)
    spread = (max(ub) - min(ub)) + (max(uc) - min(uc))
    # --threshold 0 and runs that repeat a value exactly (stall counts do)
    # leave no spread at all: a gap over a tiny width, not a division by 0
    return gap / max(spread, math.log1p(threshold), MIN_WIDTH)


def _figure_name(it):
    return "%s %s" % (it["key"], it["metric"])


def _floor_of(judged, direction, items, exclude):
    """The largest score a figure still judged reaches under an assignment
    other than the observed one: what these runs' noise can produce."""
    best = None
    table = judged["tables"][direction]
    byname = {_figure_name(i): i for i in items}
    for f, sc in table.items():
        if f in exclude or len(sc) < 2 or not np.isfinite(sc[1:]).any():
            continue
        j = int(np.argmax(sc[1:])) + 1
        if best is None or sc[j] > best["score"]:
            best = {"score": float(sc[j]), "key": byname[f]["key"],
                    "metric": byname[f]["metric"],
                    "candidate_runs": judged["cand_idx"][j].tolist()}
    return best


def apply_noise_floor(items, nb, nc, threshold, alpha=ALPHA):
    """Judge the separated latency figures with a value in every run by
    the per-direction step-down max-T permutation test (maxt.judge): a
    separated figure not declared is 'noise' (listed, passes).  Sets each
    judged item's `score` and `p_adjusted`; returns the test's summary
    (per direction the declared figures and the noise floor; the
    assignments tried)."""
    lat = [i for i in items if i["kind"] == "latency" and
           i["verdict"] not in ("inconclusive", "skipped") and
           len(i["baseline"]) == nb and len(i["candidate"]) == nc]
    figures = {_figure_name(i): (list(i["baseline"]) + list(i["candidate"]),
                                 i.get("slack") or 0.0) for i in lat}
    judged = maxt.judge(figures, nb, nc, threshold, alpha)
    declared = {d: set(judged[d]["declared"]) for d in maxt.DIRECTIONS}
    for it in lat:
        d = it["verdict"]
        if d not in maxt.DIRECTIONS:
            continue
        name = _figure_name(it)
        s = separation_score(it["baseline"], it["candidate"], d, threshold)
        p = judged[d]["adjusted"].get(name)
        it["score"], it["p_adjusted"] = s, p
        if name in declared[d]:
            it["detail"] += ("; declared by the step-down max-T test "
                             "(separation score %.3g, adjusted p %.3g <= "
                             "%.3g)" % (s, p, alpha))
        else:
            it["verdict"] = "noise"
            it["detail"] += (
                "; within the noise floor: separation score %.3g, "
                "adjusted p %.3g > %.3g (other assignments of these runs "
                "to the sides separate as clearly)" % (
                    s, p if p is not None else 1.0, alpha))
    out = {"assignments": judged["assignments"],
           "labelings": judged["assignments"] - 1,
           "sampled": judged["sampled"], "figures": len(figures),
           "alpha": alpha, "method": "per-direction step-down max-T"}
    for d in maxt.DIRECTIONS:
        other = "improved" if d == "regression" else "regression"
        out[d] = _floor_of(judged, d, lat, declared[d] | declared[other])
        out[d + "_declared"] = sorted(declared[d])
    out["_judged"], out["_figures"] = judged, figures
    return out


def resolution_reaches(nb, nc, alpha=ALPHA):
    """Whether nb + nc runs can reach the false-alarm bound at all: the
    observed assignment is one of C(nb + nc, nc), so no test on them can
    claim less than 1 / C(nb + nc, nc) (16.7 % at 2 + 2, 5 % at 3 + 3)."""
    return min(nb, nc) >= 1 and separation_chance(nb, nc) <= alpha + 1e-12


def latency_verdict(key, metric, bvals, cvals, threshold, slack=0.0,
                    runs=None):
    """Run-against-run verdict of one per-run latency figure (before the
    step-down test of the comparison, apply_noise_floor).  runs: (nb, nc)
    of the comparison; a figure missing from some run is inconclusive
    (the test's bound holds only for figures with a value in every run)."""
    nb, nc = len(bvals), len(cvals)
    if not nb and not nc:
        return None
    rb, rc = runs or (nb, nc)
    if not resolution_reaches(rb, rc):
        return _item("latency", key, metric, "inconclusive", bvals, cvals,
                     "inconclusive (R=%d+%d): the best these runs can show "
                     "is 1 in %d assignments, above the %.0f %% bound" % (
                         rb, rc, math.comb(rb + rc, rc), ALPHA * 100),
                     runs=[nb, nc])
    if nb < rb or nc < rc:
        return _item("latency", key, metric, "inconclusive", bvals, cvals,
                     "inconclusive: recorded in %d of %d baseline and %d "
                     "of %d candidate runs; the bound holds only for "
                     "figures of every run" % (nb, rb, nc, rc),
                     runs=[nb, nc])
    verdict = separates(bvals, cvals, threshold, slack) or "ok"
    how = {"regression": "every candidate run above every baseline run",
           "improved": "every candidate run below every baseline run",
           "ok": "runs overlap"}[verdict]
    ratio = (statistics.median(cvals) / statistics.median(bvals)
             if statistics.median(bvals) else None)
    detail = "%s (threshold x%.2f%s); median ratio %s" % (
        how, 1 + threshold, ", +%g" % slack if slack else "",
        "%.3g" % ratio if ratio is not None else "n/a")
    return _item("latency", key, metric, verdict, bvals, cvals, detail,
                 runs=[nb, nc], median_ratio=ratio, slack=slack,
                 separation_chance=separation_chance(nb, nc),
                 change_pct=(ratio - 1) * 100 if ratio is not None
                 else None, spread=spread_of(bvals, cvals))


def spread_of(bvals, cvals):
    """max / min of each side's runs (how much repeats moved)."""
    def one(v):
        lo, hi = min(v), max(v)
        return hi / lo if lo > 0 else None
    return {"baseline": one(bvals), "candidate": one(cvals)}


def unshared_rise(r):
    """Bytes per session a kernel that does not share would add to this
    run's page tables, by the model (one 4 KiB PMD page per shared 1 GiB
    slot per session beyond the shared tables); None when the model says
    the run does not share."""
    cfg = r.config
    mode, size, n = model.mode_of(cfg), cfg.get("size"), cfg.get("sessions")
    if mode is None or not isinstance(size, int) or not isinstance(n, int) \
            or n < 1:
        return None
    exp = model.Expectation(mode, size, n, address=model.address_of(cfg),
                            pud_counted=bool((r.get("model") or {})
                                             .get("pud_counted")))
    if not exp.sharing:
        return None
    return (n * exp.slots * model.PT_PAGE - exp.bytes) / n


def counter_direction(name):
    """Which way a PMD-sharing counter gets worse: fewer shares (and the
    unshares and saved tables that follow them) is a kernel that stopped
    sharing; more is one that shares more, an improvement.  A share
    backout is a failed attempt: more is worse."""
    return "higher_worse" if "backout" in name else "lower_worse"


def _counters(r):
    vm = r.get("vmstat_delta") or {}
    return {k: vm[k] for k in counter_keys(vm).values()}


def run_figures(run):
    """Per (guest, experiment) of one run: the figures compare reduces the
    run to."""
    out = {}
    for r in run.results():
        f = {"program": r.program, "config": r.config, "latency": {},
             "samples": {}}
        out[(r.guest, r.name)] = f
        if r.program != "shmdb":
            continue
        f["sessions"] = r.config.get("sessions") or 1
        f["disrupt"] = list(r.config.get("disrupt") or [])
        pt = r.get("pagetables_per_session")
        if isinstance(pt, (int, float)):
            f["pagetables_per_session"] = pt
        f["unshared_rise"] = unshared_rise(r)
        f["counters"] = _counters(r)
        hists = [(label, r.get(*path)) for label, path in latency.METRICS]
        for op, d in sorted((r.get("disruptor", "ops") or {}).items()):
            hists.append(("disruptor." + op, (d or {}).get("duration")))
        comparable.check_numbers(r, hists, f["counters"])
        for label, h in hists:
            n = stats.hist_count(h)
            s = stats.summary(h)
            if not s:
                continue
            lat = f["latency"]
            f["samples"][label] = n
            lat[(label, "p50")] = latency.percentile(h, 50)
            lat[(label, "max")] = s["max"]
            if n >= P99_MIN_SAMPLES:
                lat[(label, "p99")] = latency.percentile(h, 99)
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
                     noise_pages, nruns=None):
    items = []
    if bf[0]["program"] != "shmdb":
        return items
    bp = _values(bf, lambda f: f.get("pagetables_per_session"))
    cp = _values(cf, lambda f: f.get("pagetables_per_session"))
    n = cf[0].get("sessions") or 1
    if bp and cp:
        it = deterministic_runs(
            "deterministic", k, "pagetables_per_session", bp, cp, tolerance,
            "higher_worse", noise_pages * model.PT_PAGE / n)
        rise = cf[0].get("unshared_rise")
        if rise:
            got = statistics.median(cp) - statistics.median(bp)
            it["unshared_rise"] = rise
            it["rise_in_unshared"] = got / rise
            it["detail"] = (
                "rise %+.0f B per session = %.2f x what a kernel that "
                "does not share adds by the model (%.0f B: one 4 KiB PMD "
                "page per 1 GiB slot); %s" % (got, got / rise, rise,
                                              it["detail"]))
        items.append(it)
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
                                            vc, tolerance,
                                            counter_direction(name)))
    keys = {lk for f in bf + cf for lk in f["latency"]}
    keys |= {(label, "p99") for f in bf + cf for label in
             f.get("samples") or {}}
    for label, stat in sorted(keys):
        vb = _values(bf, lambda f: f["latency"].get((label, stat)))
        vc = _values(cf, lambda f: f["latency"].get((label, stat)))
        if stat == "p99":
            it = p99_below_floor(k, label, bf, cf, vb, vc)
            if it is not None:
                items.append(it)
                continue
        counting = stat.startswith("over_")
        it = latency_verdict(k, "%s %s" % (label, stat), vb, vc,
                             threshold, count_slack if counting else 0.0,
                             runs=nruns or (len(bf), len(cf)))
        if it is not None:
            items.append(it)
    return items


def p99_below_floor(key, label, bf, cf, vb, vc):
    """A 'skipped' item when some run of either side has fewer than
    P99_MIN_SAMPLES samples of `label` (its p99 is the maximum there, and
    render does not show it), else None.  Not 'inconclusive': the figure
    is not measured, not missing, and it must not turn the latency
    verdict inconclusive.  baseline / candidate: the p99 of the runs that
    have one (lists, as every latency item)."""
    nb = [f.get("samples", {}).get(label) for f in bf]
    nc = [f.get("samples", {}).get(label) for f in cf]
    low = [n for n in nb + nc if n is not None and n < P99_MIN_SAMPLES]
    if not low:
        return None
    return _item("latency", key, "%s p99" % label, "skipped", vb, vc,
                 "not compared (fewer than %d samples in some run, where "
                 "p99 is the maximum): %d to %d samples a run" % (
                     P99_MIN_SAMPLES, min(low),
                     max(n for n in nb + nc if n is not None)),
                 samples={"baseline": nb, "candidate": nc})


def failure_message(msg):
    """A check's failure message with its numbers masked: the same
    failure in two runs differs in its figures, not in its words."""
    return re.sub(r"[0-9]+(\.[0-9]+)?", "#", str(msg or "")).strip()


def _failing(checks):
    """{(suite, name): message} of one run's failed checks."""
    out = {}
    for x in checks:
        if x["status"] == "fail":
            out.setdefault((x["suite"], x["name"]), x["message"])
    return out


def _known(key, msg, i, fb, paired):
    """Whether the candidate's failure of `key` in round i (message msg)
    is a baseline failure: the same check failing with the same message
    in the same round (twins), or in any baseline run (separate runs,
    which have no rounds)."""
    want = failure_message(msg)
    runs = [fb[i]] if paired and i < len(fb) else fb
    return any(failure_message(f.get(key)) == want for f in runs
               if key in f)


def check_items(base_checks, cand_checks, paired=False):
    """Render's checks of each side (lists of check lists, one per run),
    matched by suite and name.  A candidate failure is known when the
    baseline fails the same check with the same message (numbers masked)
    in the same round (paired: twins) or, for separate runs, in any
    baseline run.  A check newly failing in every candidate run is a
    regression (a check that flakes at rate q does that with probability
    q^R (1 - q)^R <= 4^-R: 1.6 % at R = 3); newly failing in some runs
    only is inconclusive (a 10 % flake fails in 1 of 3 candidate rounds
    and none of 3 baseline rounds 20 % of the time); all failures known
    is a known failure; failing only in the baseline is improved."""
    fb = [_failing(c) for c in base_checks]
    fc = [_failing(c) for c in cand_checks]
    nc = len(fc)
    seen_c = {(x["suite"], x["name"]) for checks in cand_checks
              for x in checks}
    out = []
    for key in sorted({k for f in fc for k in f}):
        suite, name = key
        fails = [(i, f[key]) for i, f in enumerate(fc) if key in f]
        new = [(i, m) for i, m in fails
               if not _known(key, m, i, fb, paired)]
        msg = (new or fails)[0][1]
        where = "candidate run(s) %s" % ", ".join(
            str(i + 1) for i, _ in (new or fails))
        if not new:
            out.append(_item("checks", name, suite, "known-failure", "fail",
                             "fail", "%s (%s, the baseline fails it with "
                             "the same message)" % (msg, where)))
        elif len(new) == nc:
            out.append(_item("checks", name, suite, "regression",
                             "not failing", "fail", msg, rounds=nc))
        else:
            out.append(_item(
                "checks", name, suite, "inconclusive", "not failing",
                "fail in %d of %d" % (len(new), nc),
                "newly failing in %s of %d only (%s): a flaky check does "
                "this as often; rerun with more rounds" % (
                    where, nc, msg)))
    failing_b = {k for f in fb for k in f}
    failing_c = {k for f in fc for k in f}
    for key in sorted(failing_b - failing_c):
        if key in seen_c:
            msg = next(f[key] for f in fb if key in f)
            out.append(_item("checks", key[1], key[0], "improved", "fail",
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


def describe(runs):
    """The kernels of a side in one line: variant-flavour, the line when
    not 6.1, and the guest's extra command line (from the manifest's
    inventory), each distinct one once."""
    out = []
    for r in runs:
        inv = r.manifest.get("inventory") or {}
        for g in r.guests:
            k = g.kernel
            d = "%s-%s" % (k.get("variant"), k.get("flavour"))
            if k.get("source") and str(k["source"]) != "6.1":
                d = "%s %s" % (k["source"], d)
            extra = (inv.get(g.name) or {}).get("cmdline_extra")
            if extra:
                d += " " + extra
            if d not in out:
                out.append(d)
    return "; ".join(out) or "n/a"


# Injected changes the power statement is measured at (x candidate).
POWER_RATIOS = (2, 10, 30)
# A figure "would have been caught" at a ratio detected this often.
POWER_GOAL = 0.8
# What each rule's false alarm rate is (README "compare").
FALSE_ALARM_RULES = {
    "latency": "per direction at most max(alpha, 1 / C(Rb + Rc, Rc)) for "
               "the whole comparison (step-down max-T); below the "
               "resolution the verdict is inconclusive",
    "deterministic": "a change beyond max(tolerance, noise pages, the "
                     "baseline runs' spread) in the rule's direction: 0 "
                     "for repeats within the measured page noise",
    "checks": "a check failing in every candidate round and no baseline "
              "round: q^R (1 - q)^R for a check flaking at rate q, at "
              "most 4^-R (1.6 % at R = 3); failing in some rounds only "
              "is inconclusive",
    "warnings": "a kernel finding in a candidate run beyond every baseline "
                "run's count: findings are not noise (a flaky finding is "
                "a bug to report)",
    "coverage": "an experiment of the baseline missing in every "
                "candidate run",
}


def latency_status(lat, nb, nc):
    if not resolution_reaches(nb, nc):
        return "inconclusive (R=%d+%d)" % (nb, nc)
    if any(i["verdict"] == "regression" for i in lat):
        return "regression"
    if any(i["verdict"] == "inconclusive" for i in lat):
        return "inconclusive (figures missing from some runs)"
    return "ok"


def power_statement(items, floor, nb, nc, threshold):
    """Per judged latency figure the chance that a change of each of
    POWER_RATIOS would have been declared (maxt.power) and the smallest
    ratio caught with probability >= POWER_GOAL; a summary count."""
    if not floor:
        return {"ratios": list(POWER_RATIOS), "goal": POWER_GOAL,
                "figures": 0, "detectable": {},
                "statement": "no latency figure could be judged at R=%d+%d"
                % (nb, nc)}
    judged, figures = floor["_judged"], floor["_figures"]
    pw = maxt.power(figures, judged, nb, nc, threshold, ALPHA, POWER_RATIOS)
    byname = {_figure_name(i): i for i in items if i["kind"] == "latency"}
    caught = {str(k): 0 for k in POWER_RATIOS}
    for name, ps in pw.items():
        it = byname[name]
        it["power"] = {str(k): p for k, p in ps.items()}
        small = [k for k in POWER_RATIOS if ps[k] >= POWER_GOAL]
        it["detectable_ratio"] = small[0] if small else None
        if small:
            for k in POWER_RATIOS:
                caught[str(k)] += k >= small[0]
    n = len(pw)
    parts = ["%d of %d figures a %dx change" % (caught[str(k)], n, k)
             for k in POWER_RATIOS]
    return {"ratios": list(POWER_RATIOS), "goal": POWER_GOAL, "figures": n,
            "detectable": caught,
            "statement": "with these runs' noise, probability >= %.0f %% "
            "of catching: %s" % (POWER_GOAL * 100, "; ".join(parts))}


def pair_twins(items, nb, nc):
    """Twin rounds: per latency figure the candidate / baseline ratio of
    each round's twins and the exact one-sided sign-flip p-values of
    their mean log (maxt.sign_flip); a summary of how much twin ratios
    spread within rounds against the runs across rounds.  Reported, not
    the verdict: R rounds give 2^R sign flips, so p >= 2^-R (12.5 % at
    R = 3) and the pairing alone can reach 5 % only from R = 5."""
    if nb != nc:
        return None
    within, across = [], []
    for it in items:
        if it["kind"] != "latency" or it["verdict"] in ("inconclusive",
                                                        "skipped"):
            continue
        b, c = it["baseline"], it["candidate"]
        if len(b) != nb or len(c) != nc or min(b + c) <= 0:
            continue
        logs = [math.log(y / x) for x, y in zip(b, c)]
        pr, pi = maxt.sign_flip(logs)
        it["paired"] = {"ratios": [math.exp(x) for x in logs],
                        "p_regression": pr, "p_improved": pi}
        within.append(math.exp(max(logs) - min(logs)))
        across.append(max(b) / min(b))
    return {"rounds": nb, "smallest_p": 2.0 ** -nb,
            "figures": len(within),
            "twin_ratio_spread_median": statistics.median(within)
            if within else None,
            "baseline_run_spread_median": statistics.median(across)
            if across else None}


def verdict_line(status, regressions, inconclusive, pw):
    if status == "regression":
        return "regression: %d item(s)" % len(regressions)
    if status == "inconclusive":
        return ("inconclusive: %d item(s) cannot reach the stated bound "
                "(%s); %s" % (len(inconclusive), ", ".join(
                    "%s %s" % (i["key"], i["metric"])
                    for i in inconclusive[:3]) +
                    (", ..." if len(inconclusive) > 3 else ""),
                    pw["statement"]))
    return "no regression detected; %s" % pw["statement"]


def compare(base, cand, tolerance=0.02, threshold=DEFAULT_THRESHOLD,
            check_tolerance=0.25, noise_pages=NOISE_PAGES,
            count_slack=DEFAULT_COUNT_SLACK, twins=None):
    """Compare baseline run(s) with candidate run(s): a Run or a list of
    Runs a side.  twins: the pairs of a twin comparison (each run holding
    both sides, rundir.side_view), recorded in the result."""
    bases = base if isinstance(base, (list, tuple)) else [base]
    cands = cand if isinstance(cand, (list, tuple)) else [cand]
    comparable.check_sides(bases, cands)
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
                                      threshold, count_slack, noise_pages,
                                      (len(bases), len(cands))))
    ab = [summary.analyse(r, tolerance=check_tolerance) for r in bases]
    ac = [summary.analyse(r, tolerance=check_tolerance) for r in cands]
    items.extend(estimate_items(ab, ac, check_tolerance))
    items.extend(warning_items(ab, ac))
    items.extend(check_items([a["checks"] for a in ab],
                             [a["checks"] for a in ac],
                             paired=bool(twins)))
    nb, nc = len(bases), len(cands)
    lat = [i for i in items if i["kind"] == "latency"]
    separated = sum(i["verdict"] in ("regression", "improved") for i in lat)
    floor = (apply_noise_floor(items, nb, nc, threshold)
             if resolution_reaches(nb, nc) else None)
    pw = power_statement(items, floor, nb, nc, threshold)
    pairing = pair_twins(items, nb, nc) if twins else None
    if floor:
        floor.pop("_judged"), floor.pop("_figures")
    regressions = [i for i in items if i["verdict"] in ("regression",
                                                        "changed")]
    inconclusive = [i for i in items if i["verdict"] == "inconclusive"]
    # Figures equal in every run of both sides (mostly zero stall counts)
    # cannot separate.
    judged = [i for i in lat if i["verdict"] not in ("inconclusive",
                                                     "skipped")]
    varying = [i for i in judged
               if len(set(i["baseline"]) | set(i["candidate"])) > 1]
    status = ("regression" if regressions else
              "inconclusive" if inconclusive else "ok")
    return summary.clean({
        "schema": SCHEMA,
        "baseline": {"run_ids": [r.run_id for r in bases],
                     "paths": [r.path for r in bases]},
        "candidate": {"run_ids": [r.run_id for r in cands],
                      "paths": [r.path for r in cands]},
        "runs": {"baseline": nb, "candidate": nc},
        "sides": {"baseline": describe(bases),
                  "candidate": describe(cands)},
        "twins": twins,
        "settings": {"tolerance": tolerance,
                     "latency_threshold": threshold,
                     "count_slack": count_slack,
                     "check_tolerance": check_tolerance,
                     "noise_pages": noise_pages,
                     "min_samples": P99_MIN_SAMPLES, "alpha": ALPHA},
        "status": status,
        "verdict": verdict_line(status, regressions, inconclusive, pw),
        "latency_verdict": latency_status(lat, nb, nc),
        # The chance that an A/A comparison reports any latency
        # regression at all (the step-down max-T test makes it one event
        # for the whole comparison, however many figures are judged).
        "false_alarm": {
            "comparison_bound": max(ALPHA, separation_chance(nb, nc))
            if floor else None,
            "resolution": separation_chance(nb, nc),
            "items": len(judged), "varying_items": len(varying),
            "separated": separated,
            "noise": sum(i["verdict"] == "noise" for i in lat),
            "rules": FALSE_ALARM_RULES},
        "noise_floor": floor,
        "power": pw,
        "pairing": pairing,
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
                   "noise": sum(i["verdict"] == "noise" for i in items),
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
                  "noise": "pass",
                  "skipped": "skip", "known-failure": "skip",
                  "inconclusive": "skip"}.get(i["verdict"], "fail")
        out.append({"suite": i["kind"],
                    "name": "%s %s" % (i["key"], i["metric"]),
                    "status": status,
                    "message": "%s: %s" % (i["verdict"], i["detail"] or
                                           "%s -> %s" % (i["baseline"],
                                                         i["candidate"]))})
    return out
