"""summary.json: every figure of a report, machine-readable.

The schema is "hugelab.summary/1" (reports/README.md).  Floats are rounded
to 6 significant digits so golden files do not depend on the last bits of
a platform's arithmetic."""

import math

from . import (VERSION, attribution, correctness, headline, latency,
               latency_map, postgres, provenance, savings, timing)

SCHEMA = "hugelab.summary/1"


def clean(x):
    """JSON-safe copy: floats rounded to 6 significant digits, inf/nan as
    None, tuples as lists."""
    if isinstance(x, float):
        if math.isnan(x) or math.isinf(x):
            return None
        if x == 0:
            return 0.0
        return float("%.6g" % x)
    if isinstance(x, dict):
        return {str(k): clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [clean(v) for v in x]
    return x


def partial(run):
    """{pending, collected, text} of a run still under way (manifest
    status partial, written after a batch of guests: reports/RUNDIR.md),
    else None."""
    m = run.manifest
    if m.get("status") != "partial":
        return None
    pending = [str(g) for g in m.get("pending") or []]
    collected = [g.name for g in run.guests]
    text = ("rendered while the run is under way, from %d guest(s) "
            "collected so far (%s); still to come: %s; the run's final "
            "report replaces this one" % (
                len(collected), ", ".join(collected) or "none",
                ", ".join(pending) if pending else
                "no guest (the run's final collect)"))
    return {"pending": pending, "collected": collected, "text": text}


def analyse(run, tolerance=0.25):
    """Everything the report shows, from a loaded run."""
    sav = savings.analyse(run, tolerance=tolerance)
    lat = latency.analyse(run)
    cor = correctness.analyse(run)
    pg = postgres.analyse(run)
    checks = cor["checks"] + sav["checks"] + pg.pop("checks")
    part = partial(run)
    if part is not None:
        # A run still under way: no verdict on what has not run yet.
        checks.insert(0, {"suite": "run", "name": "run complete",
                          "status": "skip",
                          "message": "partial report: %s" % part["text"]})
    elif run.manifest.get("status") not in (None, "ok"):
        checks.insert(0, {"suite": "run", "name": "manifest status",
                          "status": "fail",
                          "message": "manifest status %s%s" % (
                              run.manifest.get("status"),
                              "".join("; " + f for f in
                                      run.manifest.get("failures") or []))})
    failed = [c for c in checks if c["status"] == "fail"]
    an = {
        "schema": SCHEMA,
        "generator": "hugelab-report/%s" % VERSION,
        "run_id": run.run_id,
        # partial: the run is still under way (manifest status partial):
        # never ok, whatever the checks so far say.
        "status": "partial" if part is not None else
        "fail" if failed else "ok",
        "partial": part,
        "provenance": provenance.analyse(run),
        "timing": timing.analyse(run),
        "savings": {k: v for k, v in sav.items() if k != "checks"},
        "latency": lat,
        "attribution": attribution.analyse(run),
        "correctness": {"guests": cor["guests"]},
        "postgres": pg,
        "checks": checks,
        "counts": {"checks": len(checks), "failed": len(failed),
                   "skipped": sum(c["status"] == "skip" for c in checks)},
    }
    lmap = latency_map.analyse_run(run)
    if lmap:        # only a latency-map run has the key
        an["latency_map"] = lmap
    an["headline"] = headline.analyse(an)
    return an


def to_json(an):
    """The JSON document of an analysis (drops internal references)."""
    doc = dict(an)
    doc["latency"] = latency.public(an["latency"])
    return clean(doc)
