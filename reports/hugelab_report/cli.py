"""Command line: hugelab-report render RUN_DIR | compare BASELINE CANDIDATE.

Exit status: render 0 (1 with --fail-on-check when a check failed);
compare 0 no regression, 1 regression; 2 bad input for both."""

import argparse
import json
import os
import sys

from . import compare as cmpmod
from . import junit, render, rundir


def _fraction(s):
    v = float(s)
    if not 0 <= v < 10:
        raise argparse.ArgumentTypeError("%s is not a fraction" % s)
    return v


def parser():
    p = argparse.ArgumentParser(prog="hugelab-report", description=__doc__)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("render", help="write report.md, report.html, "
                       "summary.json and junit.xml into RUN_DIR")
    r.add_argument("run_dir")
    r.add_argument("--tolerance", type=_fraction, default=0.25,
                   help="relative tolerance of measured page-table figures "
                   "against the model (default 0.25)")
    r.add_argument("--fail-on-check", action="store_true",
                   help="exit 1 when a check failed")
    r.add_argument("--runs-dir", default=render.RUNS_DIR,
                   help="where the latest symlink lives (default %(default)s)")
    lt = sub.add_parser("latest", help="point RUNS_DIR/latest at the "
                        "newest run (by run id timestamp or start time)")
    lt.add_argument("runs_dir", nargs="?", default=render.RUNS_DIR)
    c = sub.add_parser("compare", help="compare two runs; exit 1 on a "
                       "regression")
    c.add_argument("baseline")
    c.add_argument("candidate")
    c.add_argument("--tolerance", type=_fraction, default=0.02,
                   help="relative tolerance of deterministic figures "
                   "(default 0.02)")
    c.add_argument("--alpha", type=_fraction, default=0.01,
                   help="significance level of the latency test "
                   "(default 0.01)")
    c.add_argument("--threshold", type=_fraction, default=0.10,
                   help="latency regression: mean slower by more than this "
                   "fraction (default 0.10)")
    c.add_argument("--noise-pages", type=int, default=cmpmod.NOISE_PAGES,
                   help="page-table pages a PageTables delta may move "
                   "between runs without a change (default %(default)s)")
    c.add_argument("--check-tolerance", type=_fraction, default=0.25,
                   help="model tolerance of the candidate's checks "
                   "(as render --tolerance)")
    return p


def do_render(a):
    run = rundir.load(a.run_dir)
    an = render.render(run, tolerance=a.tolerance, runs_dir=a.runs_dir)
    c = an["counts"]
    print("%s: %s, %d checks, %d failed, %d skipped -> %s" % (
        run.run_id, an["status"], c["checks"], c["failed"], c["skipped"],
        os.path.join(run.path, "report.html")))
    return 1 if a.fail_on_check and c["failed"] else 0


def do_compare(a):
    base = rundir.load(a.baseline)
    cand = rundir.load(a.candidate)
    res = cmpmod.compare(base, cand, tolerance=a.tolerance, alpha=a.alpha,
                         threshold=a.threshold,
                         check_tolerance=a.check_tolerance,
                         noise_pages=a.noise_pages)
    md = render.environment().get_template("compare.md.j2").render(c=res)
    render.write_text(os.path.join(cand.path, "compare.md"), md)
    render.write_text(os.path.join(cand.path, "compare.json"),
                      json.dumps(res, indent=1, sort_keys=True) + "\n")
    junit.write(cmpmod.checks_of(res),
                os.path.join(cand.path, "junit-compare.xml"),
                "hugelab.compare")
    sys.stdout.write(md)
    return 1 if res["status"] == "regression" else 0


def do_latest(a):
    if not os.path.isdir(a.runs_dir):
        raise rundir.RunDirError("%s: not a directory" % a.runs_dir)
    name, changed = render.point_latest(a.runs_dir)
    if name is None:
        raise rundir.RunDirError("%s: no run directory" % a.runs_dir)
    print("%s/latest -> %s (%s)" % (a.runs_dir, name,
                                    "changed" if changed else "unchanged"))
    return 0


def main(argv=None):
    a = parser().parse_args(argv)
    try:
        if a.cmd == "render":
            return do_render(a)
        if a.cmd == "latest":
            return do_latest(a)
        return do_compare(a)
    except rundir.RunDirError as e:
        print("hugelab-report: %s" % e, file=sys.stderr)
        return 2
