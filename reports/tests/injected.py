#!/usr/bin/python3
"""The injected-change matrix of compare (README.md "Fleet regression
run"): known changes injected into the real regression fixtures
(tests/fixtures/regress), and how often compare finds them.

    tests/injected.py [FIXTURE]     print the detection-rate table

For every latency histogram of the fixture's experiments (the five of
the latency section, attach, each disruptor operation) the candidate's
histogram is made RATIO times slower in every round (each bucket bound,
min, max and percentile scaled), alone and beside a 10x improvement of
another histogram of the same experiment (the first-touch faults; for
the first-touch faults themselves, attach), and compared (compare
--twins, in memory).  Detected: some figure of the injected histogram
(p50, p99, max, stall counts) declared a regression.  False alarm: a
regression anywhere else.  Deterministic (no random draw): the same
fixtures give the same table."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import regress_golden as rg  # noqa: E402
from hugelab_report import cli, compare, latency  # noqa: E402

RATIOS = (2, 10, 30)
IMPROVEMENT = 10
PARTNER, PARTNER_OF_PARTNER = "faults", "attach"


def scale_hist(h, k):
    """Histogram h made k times slower, in place (k < 1: faster)."""
    for key in ("sum", "min", "max", "p50", "p90", "p99", "p999"):
        if isinstance(h.get(key), (int, float)):
            h[key] = h[key] * k
    h["buckets"] = [[b * k, n] for b, n in h["buckets"]]


def histogram_paths(result):
    """[(label, path)] of the latency histograms compare reads."""
    out = [(label, path) for label, path in latency.METRICS
           if isinstance(result.get(*path), dict)]
    for op in sorted(result.get("disruptor", "ops") or {}):
        out.append(("disruptor." + op, ("disruptor", "ops", op,
                                        "duration")))
    return [(label, path) for label, path in out
            if isinstance(result.get(*path), dict) and
            result.get(*path).get("buckets")]


def targets(rounds):
    """[(experiment, label, path)] of every latency histogram of the
    candidate's shmdb results."""
    _, cand, _ = cli.twin_sides(rounds[:1])
    out = []
    for r in cand[0].results("shmdb"):
        for label, path in histogram_paths(r):
            out.append((r.name, label, path))
    return out


def partner(tgts, experiment, label):
    """The histogram improved beside (experiment, label), or None."""
    want = PARTNER if label != PARTNER else PARTNER_OF_PARTNER
    for e, lab, path in tgts:
        if e == experiment and lab == want:
            return lab, path
    return None


def run(rounds, changes):
    """compare --twins of the rounds with changes [(experiment, path,
    ratio)] applied to the candidate in every round (in memory)."""
    base, cand, tw = cli.twin_sides(rounds)
    for run_ in cand:
        for r in run_.results("shmdb"):
            for experiment, path, k in changes:
                if r.name == experiment:
                    scale_hist(r.get(*path), k)
    return compare.compare(base, cand, twins=tw)


def regressions(doc):
    return [i for i in doc["items"] if i["verdict"] in ("regression",
                                                        "changed")]


def of(item, experiment, label):
    return item["key"].endswith("/" + experiment) and \
        item["metric"].startswith(label + " ")


def matrix(rounds, ratios=RATIOS):
    """{(ratio, beside_improvement): {"injected", "detected",
    "false_alarms", "missed": [...]}} over every latency histogram."""
    tgts = targets(rounds)
    out = {}
    for k in ratios:
        for beside in (False, True):
            row = {"injected": 0, "detected": 0, "false_alarms": 0,
                   "missed": []}
            for experiment, label, path in tgts:
                changes = [(experiment, path, k)]
                if beside:
                    p = partner(tgts, experiment, label)
                    if p is None:
                        continue
                    changes.append((experiment, p[1], 1.0 / IMPROVEMENT))
                doc = run(rounds, changes)
                regs = regressions(doc)
                row["injected"] += 1
                hit = any(of(i, experiment, label) for i in regs)
                row["detected"] += hit
                if not hit:
                    row["missed"].append("%s %s" % (experiment, label))
                row["false_alarms"] += any(not of(i, experiment, label)
                                           for i in regs)
            out[(k, beside)] = row
    return out


def table(m):
    lines = ["| injected | beside a %dx improvement | detected | false "
             "alarms elsewhere |" % IMPROVEMENT, "|---|---|---|---|"]
    for (k, beside), row in sorted(m.items()):
        lines.append("| %dx slower | %s | %d of %d (%.0f %%) | %d |" % (
            k, "yes" if beside else "no", row["detected"], row["injected"],
            100.0 * row["detected"] / max(row["injected"], 1),
            row["false_alarms"]))
    return "\n".join(lines)


def main(argv):
    names = argv[1:] or [n for n in rg.fixtures() if n.startswith("aa-")]
    for name in names:
        m = matrix(rg.rounds_of(os.path.join(rg.FIXTURES, name)))
        print("%s: one latency histogram of the candidate made slower in "
              "every round\n" % name)
        print(table(m))
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
