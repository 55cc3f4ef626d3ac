"""Command line: hugelab-report render RUN_DIR | latest [RUNS_DIR] |
compare BASELINE CANDIDATE | compare --baseline RUN... --candidate RUN... |
compare --twins RUN....

Exit status: render 0 (1 with --fail-on-check when a check failed);
compare 0 no regression detected, 1 regression, 3 inconclusive (the
runs cannot reach the stated false-alarm bound); 2 for bad input and for
every failure of the tool itself (one line on stderr, no traceback):
never 1, which playbooks/regress would read as a regression."""

import argparse
import os
import sys

from . import compare as cmpmod
from . import compare_report, latest, render, rundir, summary


def _fraction(s):
    v = float(s)
    if not 0 <= v < 10:
        raise argparse.ArgumentTypeError("%s is not a fraction" % s)
    return v


def _count(s):
    v = int(s)
    if v < 0:
        raise argparse.ArgumentTypeError("%s is not a count >= 0" % s)
    return v


EXIT_OK, EXIT_REGRESSION, EXIT_ERROR, EXIT_INCONCLUSIVE = 0, 1, 2, 3


class Parser(argparse.ArgumentParser):
    """argparse with its complaint on one line (exit 2)."""

    def error(self, message):
        self.exit(EXIT_ERROR, "%s: %s\n" % (self.prog, message))


def parser():
    p = Parser(prog="hugelab-report", description=__doc__)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("render", help="write report.md, report.html, "
                       "summary.json and junit.xml into RUN_DIR")
    r.add_argument("run_dir")
    r.add_argument("--tolerance", type=_fraction, default=0.25,
                   help="relative tolerance of measured page-table figures "
                   "against the model (default 0.25)")
    r.add_argument("--fail-on-check", action="store_true",
                   help="exit 1 when a check failed")
    r.add_argument("--runs-dir", default=latest.RUNS_DIR,
                   help="where the latest symlink lives (default %(default)s)")
    lt = sub.add_parser("latest", help="point RUNS_DIR/latest at the "
                        "newest run (by run id timestamp or start time)")
    lt.add_argument("runs_dir", nargs="?", default=latest.RUNS_DIR)
    c = sub.add_parser(
        "compare", help="compare baseline run(s) with candidate run(s); "
        "exit 1 on a regression",
        usage="%(prog)s [BASELINE CANDIDATE] [--baseline RUN...] "
        "[--candidate RUN...] [options]")
    c.add_argument("pair", nargs="*", metavar="RUN",
                   help="BASELINE CANDIDATE (one run a side)")
    c.add_argument("--baseline", nargs="+", default=[], metavar="RUN",
                   help="baseline run directories (repeats)")
    c.add_argument("--candidate", nargs="+", default=[], metavar="RUN",
                   help="candidate run directories (repeats)")
    c.add_argument("--twins", nargs="+", default=[], metavar="RUN",
                   help="runs of a regression fleet (playbooks/regress): "
                   "each holds both sides, a baseline and a candidate "
                   "guest per pair (guest.json regress)")
    c.add_argument("--out", help="where compare.md, compare.html, "
                   "compare.json and junit-compare.xml go (default: the "
                   "first candidate "
                   "run)")
    c.add_argument("--tolerance", type=_fraction, default=0.02,
                   help="relative tolerance of deterministic figures "
                   "(default 0.02)")
    c.add_argument("--threshold", type=_fraction,
                   default=cmpmod.DEFAULT_THRESHOLD,
                   help="latency regression: every candidate run above "
                   "every baseline run by more than this fraction "
                   "(default %(default)s)")
    c.add_argument("--count-slack", type=_count,
                   default=cmpmod.DEFAULT_COUNT_SLACK,
                   help="stall counts must also differ by more than this "
                   "many samples (default %(default)s)")
    c.add_argument("--noise-pages", type=_count, default=cmpmod.NOISE_PAGES,
                   help="page-table pages a PageTables delta may move "
                   "between runs without a change (default %(default)s)")
    c.add_argument("--check-tolerance", type=_fraction, default=0.25,
                   help="model tolerance of the candidate's checks "
                   "(as render --tolerance)")
    return p


def do_render(a):
    run = rundir.load(a.run_dir)
    an = summary.analyse(run, tolerance=a.tolerance)
    render.write_report(run, an, runs_dir=a.runs_dir)
    c = an["counts"]
    print("%s: %s, %d checks, %d failed, %d skipped -> %s" % (
        run.run_id, an["status"], c["checks"], c["failed"], c["skipped"],
        os.path.join(run.path, "report.html")))
    return 1 if a.fail_on_check and c["failed"] else 0


def compare_sides(a):
    """(baseline dirs, candidate dirs) from the two-argument form or the
    --baseline/--candidate lists; RunDirError when they do not add up."""
    if a.twins and (a.pair or a.baseline or a.candidate):
        raise rundir.RunDirError("give --twins RUN... alone, without "
                                 "BASELINE CANDIDATE or --baseline/"
                                 "--candidate")
    if a.pair and (a.baseline or a.candidate):
        raise rundir.RunDirError("give BASELINE CANDIDATE or --baseline/"
                                 "--candidate, not both")
    if a.pair:
        if len(a.pair) != 2:
            raise rundir.RunDirError("want BASELINE CANDIDATE, got %d run "
                                     "directories" % len(a.pair))
        return [a.pair[0]], [a.pair[1]]
    if a.twins:
        return None, None
    if not a.baseline or not a.candidate:
        raise rundir.RunDirError("want at least one --baseline and one "
                                 "--candidate run directory")
    return a.baseline, a.candidate


def twin_sides(dirs):
    """(baseline views, candidate views, pairs) of twin runs: each run split
    by guest.json regress.side, guests named by their pair.  Every run
    must hold the same pairs."""
    runs = [rundir.require_complete(rundir.load(d)) for d in dirs]
    pairs = None
    for r in runs:
        tw = rundir.twins(r)
        if not tw:
            raise rundir.RunDirError("%s: no guests" % r.path)
        if pairs is None:
            pairs = tw
        elif sorted(tw) != sorted(pairs):
            raise rundir.RunDirError(
                "%s: pairs %s, but %s has %s" % (
                    r.path, ", ".join(sorted(tw)), runs[0].path,
                    ", ".join(sorted(pairs))))
    listed = [{"pair": p, "baseline": s.get("baseline"),
               "candidate": s.get("candidate")}
              for p, s in sorted(pairs.items())]
    return ([rundir.side_view(r, "baseline") for r in runs],
            [rundir.side_view(r, "candidate") for r in runs],
            {"pairs": listed, "runs": [r.run_id for r in runs]})


def do_compare(a):
    tw = None
    if a.twins:
        compare_sides(a)
        base, cand, tw = twin_sides(a.twins)
    else:
        bdirs, cdirs = compare_sides(a)
        base = [rundir.require_complete(rundir.load(d)) for d in bdirs]
        cand = [rundir.require_complete(rundir.load(d)) for d in cdirs]
    out = a.out or cand[0].path
    if os.path.exists(out) and not os.path.isdir(out):
        raise rundir.RunDirError("--out %s: not a directory" % out)
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as e:
        raise rundir.RunDirError("--out %s: %s" % (out, e.strerror)) from e
    res = cmpmod.compare(base, cand, tolerance=a.tolerance,
                         threshold=a.threshold,
                         check_tolerance=a.check_tolerance,
                         noise_pages=a.noise_pages,
                         count_slack=a.count_slack, twins=tw)
    sys.stdout.write(compare_report.write(res, out))
    return {"regression": EXIT_REGRESSION,
            "inconclusive": EXIT_INCONCLUSIVE}.get(res["status"], EXIT_OK)


def do_latest(a):
    if not os.path.isdir(a.runs_dir):
        raise rundir.RunDirError("%s: not a directory" % a.runs_dir)
    try:
        name, changed = latest.point_latest(a.runs_dir)
    except latest.LatestError as e:
        raise rundir.RunDirError(str(e)) from None
    if name is None:
        raise rundir.RunDirError("%s: no run directory" % a.runs_dir)
    print("%s/latest -> %s (%s)" % (a.runs_dir, name,
                                    "changed" if changed else "unchanged"))
    return 0


def one_line(text):
    return " ".join(str(text).split())


def main(argv=None):
    """Exit status of one command; every failure is 2 with one line."""
    try:
        a = parser().parse_args(argv)
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else EXIT_ERROR
    try:
        if a.cmd == "render":
            return do_render(a)
        if a.cmd == "latest":
            return do_latest(a)
        return do_compare(a)
    except rundir.RunDirError as e:
        msg = one_line(e)
    except OSError as e:
        # a console.log that is a directory, an unwritable output, a full
        # disk: the tool failed, the kernels were not judged
        msg = "cannot read or write %s: %s" % (
            e.filename or "a file", e.strerror or e)
    except Exception as e:  # noqa: BLE001 - every failure must be exit 2
        # A document of the right schema holding values of the wrong type
        # (a string where a count goes), or a bug of this tool: no
        # verdict, never exit 1, which would read as a regression.
        msg = "cannot read this input or internal error (%s: %s)" % (
            type(e).__name__, one_line(e))
    print("hugelab-report: %s" % one_line(msg), file=sys.stderr)
    return EXIT_ERROR
