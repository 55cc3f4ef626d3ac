"""What compare refuses before judging (exit 2, with the reason): runs that
are not comparable and numbers that are not measurements.

- Every run of a side must hold the same guests with the same kernel
  (variant, flavour, line, release, package), command line and shape;
  both sides the same shapes and the same workload options per
  experiment.  Rounds of different proofs mixed on one side, or a
  candidate whose workload changed, are not a comparison of kernels.
- A run given twice (same directory or run id) on one side would count
  its noise twice.
- A figure compare reads must be a finite number, latencies and
  histogram buckets not negative: NaN, infinity or a negative bucket is
  a broken result, not a change of the kernel.
- A guest's console.log must be readable when it is there: a console
  that cannot be read (a directory, a symlink loop or to nowhere, no
  permission) leaves the kernel findings of that run unknown, on either
  side, and an unknown count is neither clean nor a regression.  render
  shows it as a finding ("console unreadable", a failed "no kernel
  warnings" check); compare refuses the run, naming the file.
"""

import math
import os

from .rundir import RunDirError

KERNEL_KEYS = ("variant", "flavour", "source", "release", "package_sha256")
HIST_NUMBERS = ("count", "sum", "min", "max", "p50", "p90", "p99", "p999")


def _guest_ids(run):
    """{guest: (kernel, command line, shape)} of one run."""
    out = {}
    for g in run.guests:
        k = g.kernel
        out[g.name] = (tuple(str(k.get(x)) for x in KERNEL_KEYS),
                       k.get("cmdline"), sorted((g.shape or {}).items()))
    return out


def _workloads(run):
    """{guest/experiment: config} of one run."""
    return {"%s/%s" % (r.guest, r.name): r.config for r in run.results()}


def _first_difference(a, b):
    for k in sorted(set(a) | set(b), key=str):
        if a.get(k) != b.get(k):
            return k
    return None


def check_duplicates(runs, side):
    seen = {}
    for r in runs:
        for key in (os.path.realpath(r.path), r.run_id):
            if key in seen:
                raise RunDirError(
                    "%s side: %s given twice (%s and %s): a round counts "
                    "once" % (side, key, seen[key], r.path))
            seen[key] = r.path


def check_side(runs, side):
    """Every run of one side: the same guests, kernels, command lines and
    shapes, the same workload options."""
    check_duplicates(runs, side)
    first, fw = _guest_ids(runs[0]), _workloads(runs[0])
    what = ("kernel", "command line", "shape")
    for r in runs[1:]:
        ids = _guest_ids(r)
        if sorted(ids) != sorted(first):
            raise RunDirError("%s side: %s has guests %s, %s has %s" % (
                side, r.run_id, ", ".join(sorted(ids)), runs[0].run_id,
                ", ".join(sorted(first))))
        for g in sorted(ids):
            for i, name in enumerate(what):
                if ids[g][i] != first[g][i]:
                    raise RunDirError(
                        "%s side: guest %s differs in %s between %s and "
                        "%s (%s vs %s): not repeats of one kernel" % (
                            side, g, name, runs[0].run_id, r.run_id,
                            first[g][i], ids[g][i]))
        check_workloads(fw, _workloads(r), "%s side: %s and %s" % (
            side, runs[0].run_id, r.run_id))


def check_workloads(a, b, where):
    for k in sorted(set(a) & set(b)):
        key = _first_difference(a[k], b[k])
        if key is not None:
            raise RunDirError(
                "%s: workload %s differs in %s (%r vs %r): not the same "
                "experiment" % (where, k, key, a[k].get(key),
                                b[k].get(key)))


def check_consoles(runs, side):
    """RunDirError naming the first console.log of a side that is there
    but could not be read (rundir records it as Guest.console_error)."""
    for r in runs:
        for g in r.guests:
            if g.console_error:
                raise RunDirError(
                    "%s side: %s: %s; its kernel findings are unknown, "
                    "not a run compare can judge" % (
                        side, os.path.join(g.path, "console.log"),
                        g.console_error.replace("console.log ", "")))


def check_sides(bases, cands):
    """RunDirError with the first reason the sides are not comparable."""
    check_side(bases, "baseline")
    check_side(cands, "candidate")
    check_consoles(bases, "baseline")
    check_consoles(cands, "candidate")
    check_workloads(_workloads(bases[0]), _workloads(cands[0]),
                    "baseline %s and candidate %s" % (bases[0].run_id,
                                                      cands[0].run_id))
    b, c = _guest_ids(bases[0]), _guest_ids(cands[0])
    for g in sorted(set(b) & set(c)):
        if b[g][2] != c[g][2]:
            raise RunDirError(
                "guest %s has another shape in the candidate (%s vs %s): "
                "the kernels are not compared on one machine" % (
                    g, dict(b[g][2]), dict(c[g][2])))


def _bad(path, field, value, why):
    raise RunDirError("%s: %s is %r: %s" % (path, field, value, why))


def _finite(path, field, v, nonneg=False):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return
    if not math.isfinite(v):
        _bad(path, field, v, "not a finite number")
    if nonneg and v < 0:
        _bad(path, field, v, "negative")


def check_histogram(path, field, h):
    if not isinstance(h, dict):
        return
    for k in HIST_NUMBERS:
        _finite(path, "%s.%s" % (field, k), h.get(k), nonneg=True)
    for b in h.get("buckets") or []:
        if isinstance(b, (list, tuple)):
            for x in b:
                _finite(path, "%s.buckets" % field, x, nonneg=True)


def check_numbers(result, hists, counters):
    """RunDirError when a figure compare reads is NaN, infinite or (for
    latencies) negative.  hists: [(label, histogram)]."""
    p = result.path
    for field in ("pagetables_per_session", "pagetables_delta"):
        _finite(p, field, result.get(field))
    for name, v in (counters or {}).items():
        _finite(p, "vmstat_delta." + name, v)
    for label, h in hists:
        check_histogram(p, label, h)
