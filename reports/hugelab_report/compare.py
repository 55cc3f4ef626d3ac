"""compare BASELINE CANDIDATE: regression rules by metric kind.

- deterministic figures must be equal within a relative tolerance
  (default 2 %): page-table bytes per session may not rise (a fall is an
  improvement), allowing `noise_pages` page-table pages (default 32) on
  the run's PageTables delta, the noise measured between real runs; the
  kernel's PMD-sharing counters may not change; the measured bytes per
  PMD page saved (derived from the PageTables deltas) may not fall by
  more than the check tolerance (default 25 %);
- latency histograms are expanded into samples (bucket upper bounds) and
  compared with a one-sided Mann-Whitney U test: a regression when the
  candidate is slower with p < alpha (default 0.01, Holm-adjusted over all
  latency tests of the comparison) AND its mean is more than `threshold`
  (default 10 %) above the baseline's;
- any new kernel warning (more findings than the baseline's guest) and any
  failed check of the candidate is a regression; so is an experiment of the
  baseline the candidate lacks.
"""

from . import latency, model, stats, summary
from .savings import NOISE_PAGES

SCHEMA = "hugelab.compare/1"
MIN_SAMPLES = 20


def _item(kind, key, metric, verdict, base=None, cand=None, detail="",
          **extra):
    d = {"kind": kind, "key": key, "metric": metric, "verdict": verdict,
         "baseline": base, "candidate": cand, "detail": detail}
    d.update(extra)
    return d


def deterministic(kind, key, metric, base, cand, tol, direction,
                  abs_slack=0.0):
    """direction: 'higher_worse', 'lower_worse' or 'any'.  A change within
    tol (relative) or within abs_slack (absolute) is no change."""
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


def latency_item(key, metric, hb, hc, alpha, threshold):
    nb, nc = stats.hist_count(hb), stats.hist_count(hc)
    mb, mc = stats.hist_mean(hb), stats.hist_mean(hc)
    if not nb and not nc:
        return None                 # recorded in neither run
    if nb < MIN_SAMPLES or nc < MIN_SAMPLES:
        return _item("latency", key, metric, "skipped", mb, mc,
                     "too few samples (%d, %d < %d)" % (nb, nc, MIN_SAMPLES))
    u, p, effect = stats.mann_whitney_greater(stats.expand(hc),
                                              stats.expand(hb))
    ratio = mc / mb if mb else float("inf")
    sb, sc = stats.summary(hb), stats.summary(hc)
    # The verdict waits for the Holm adjustment over all latency tests.
    return _item(
        "latency", key, metric, "pending", mb, mc,
        "mean %.0f -> %.0f ns (x%.3f), Mann-Whitney U one-sided p=%.3g, "
        "P(candidate > baseline)=%.3f; p99 %s -> %s" % (
            mb, mc, ratio, p, effect, sb["p99"], sc["p99"]),
        p_value=p, effect=effect, mean_ratio=ratio,
        p99_ratio=sc["p99"] / sb["p99"] if sb["p99"] else None,
        samples=[nb, nc])


def decide_latency(items, alpha, threshold):
    """Holm-adjust the p-values of the pending latency items (family-wise
    error alpha over the whole comparison) and set their verdicts: a
    regression needs the adjusted p < alpha and the mean slower by more
    than threshold."""
    pending = [i for i in items if i["verdict"] == "pending"]
    adj = stats.holm([i["p_value"] for i in pending])
    for i, p in zip(pending, adj):
        i["p_adjusted"] = p
        slower = p < alpha and i["mean_ratio"] > 1 + threshold
        i["verdict"] = "regression" if slower else "ok"
        i["detail"] += "; Holm-adjusted p=%.3g" % p


def _results(run):
    return {(r.guest, r.name): r for r in run.results()}


def _counters(r):
    from .savings import counter_keys
    vm = r.get("vmstat_delta") or {}
    return {k: vm[k] for k in counter_keys(vm).values()}


def counter_items(key, b, c, tolerance):
    """The kernel's PMD-sharing counters of one experiment in both runs.

    Compared as exact figures (within the tolerance, either way) only when
    neither run had a disruptor: without one the counts follow from the
    configuration (one share per full slot per extra process).  A
    disruptor's operations unshare and re-share as often as the operations
    happened to land, so 10 vs 15 hole punches change the counts without
    any change of the kernel: such counters are listed, not judged."""
    cb, cc = _counters(b), _counters(c)
    db = b.config.get("disrupt") or []
    dc = c.config.get("disrupt") or []
    out = []
    for name in sorted(set(cb) | set(cc)):
        if name not in cb or name not in cc:
            out.append(_item("deterministic", key, name, "changed",
                             cb.get(name), cc.get(name),
                             "counter present in one run only"))
        elif db or dc:
            out.append(_item(
                "deterministic", key, name, "skipped", cb[name], cc[name],
                "not compared: disruptor (%s) operations unshare and "
                "re-share, the count depends on how many ran" % ",".join(
                    sorted(set(db) | set(dc)))))
        else:
            out.append(deterministic("deterministic", key, name, cb[name],
                                     cc[name], tolerance, "any"))
    return out


def check_items(base_checks, cand_checks):
    """Render's checks: a check failing in the candidate but not in the
    baseline (passing, skipped or absent there) is a regression; one
    failing in both is a known failure, not a regression; one failing only
    in the baseline is fixed.  Checks are matched by suite and name."""
    bst = {(x["suite"], x["name"]): x["status"] for x in base_checks}
    out = []
    for x in cand_checks:
        was = bst.get((x["suite"], x["name"]))
        if x["status"] == "fail":
            verdict = "known-failure" if was == "fail" else "regression"
            out.append(_item("checks", x["name"], x["suite"], verdict,
                             was or "absent", "fail", x["message"]))
        elif was == "fail":
            out.append(_item("checks", x["name"], x["suite"], "improved",
                             "fail", x["status"], x["message"]))
    return out


def compare(base, cand, tolerance=0.02, alpha=0.01, threshold=0.10,
            check_tolerance=0.25, noise_pages=NOISE_PAGES):
    items = []
    rb, rc = _results(base), _results(cand)
    for key in sorted(set(rc) - set(rb)):
        items.append(_item("coverage", "%s/%s" % key, "result", "new",
                           detail="experiment only in the candidate"))
    for key in sorted(rb):
        k = "%s/%s" % key
        if key not in rc:
            items.append(_item("coverage", k, "result", "regression",
                               detail="experiment missing in candidate"))
            continue
        b, c = rb[key], rc[key]
        if b.program == "shmdb":
            pb = b.get("pagetables_per_session")
            pc = c.get("pagetables_per_session")
            n = c.config.get("sessions") or 1
            if isinstance(pb, (int, float)) and isinstance(pc, (int, float)):
                items.append(deterministic(
                    "deterministic", k, "pagetables_per_session", pb, pc,
                    tolerance, "higher_worse",
                    noise_pages * model.PT_PAGE / n))
            items.extend(counter_items(k, b, c, tolerance))
            for label, path in latency.METRICS:
                hb, hc = b.get(*path), c.get(*path)
                if isinstance(hb, dict) and isinstance(hc, dict):
                    items.append(latency_item(k, label, hb, hc, alpha,
                                              threshold))
            items = [i for i in items if i is not None]
            ob = b.get("disruptor", "ops") or {}
            oc = c.get("disruptor", "ops") or {}
            for op in sorted(set(ob) & set(oc)):
                hb = (ob[op] or {}).get("duration")
                hc = (oc[op] or {}).get("duration")
                if isinstance(hb, dict) and isinstance(hc, dict):
                    items.append(latency_item(k, "disruptor." + op, hb, hc,
                                              alpha, threshold))
            items = [i for i in items if i is not None]
    decide_latency(items, alpha, threshold)
    ab = summary.analyse(base, tolerance=check_tolerance)
    ac = summary.analyse(cand, tolerance=check_tolerance)
    eb = ab["savings"]["pmd_page_estimates"]
    ec = ac["savings"]["pmd_page_estimates"]
    for g in sorted(set(eb) & set(ec)):
        vb, vc = eb[g]["bytes_per_pmd_page"], ec[g]["bytes_per_pmd_page"]
        if vb is not None and vc is not None:
            items.append(deterministic("deterministic", g,
                                       "sharing_bytes_per_pmd_page", vb, vc,
                                       check_tolerance, "lower_worse"))
    gb, gc = ab["correctness"]["guests"], ac["correctness"]["guests"]
    for g in sorted(gc):
        wc = gc[g]["kernel_warnings"]
        wb = gb[g]["kernel_warnings"] if g in gb else 0
        if gc[g]["expect_warnings"]:
            continue
        items.append(_item("warnings", g, "kernel_warnings",
                           "regression" if wc > wb else "ok", wb, wc,
                           "\n".join(gc[g]["warning_excerpt"][:20])
                           if wc > wb else ""))
    items.extend(check_items(ab["checks"], ac["checks"]))
    regressions = [i for i in items if i["verdict"] in ("regression",
                                                        "changed")]
    return summary.clean({
        "schema": SCHEMA,
        "baseline": {"run_id": base.run_id, "path": base.path},
        "candidate": {"run_id": cand.run_id, "path": cand.path},
        "settings": {"tolerance": tolerance, "alpha": alpha,
                     "latency_threshold": threshold,
                     "check_tolerance": check_tolerance,
                     "noise_pages": noise_pages,
                     "min_samples": MIN_SAMPLES,
                     "max_samples": stats.MAX_SAMPLES},
        "status": "regression" if regressions else "ok",
        "provenance": {"baseline": ab["provenance"],
                       "candidate": ac["provenance"]},
        "parameters": parameters(ab["provenance"], ac["provenance"]),
        "counts": {"items": len(items), "regressions": len(regressions),
                   "new": sum(i["verdict"] == "new" for i in items),
                   "improved": sum(i["verdict"] == "improved"
                                   for i in items),
                   "skipped": sum(i["verdict"] == "skipped"
                                  for i in items)},
        "items": items,
    })


def parameters(pb, pc):
    """Workload parameters of both runs per guest/experiment, and whether
    they are the same."""
    def by(p):
        return {"%s/%s" % (g, w["experiment"]): w["config"]
                for g, gd in p["guests"].items() for w in gd["workloads"]}
    b, c = by(pb), by(pc)
    return [{"key": k, "baseline": b.get(k), "candidate": c.get(k),
             "same": b.get(k) == c.get(k)} for k in sorted(set(b) | set(c))]


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
