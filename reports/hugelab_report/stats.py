"""Statistics on workload histograms and measurements.

Histograms follow workloads/SCHEMA.md: log2 buckets given as
[[upper_bound_ns, count], ...], only non-empty ones.  A bucket's samples are
represented by its upper bound, the same convention the workloads use for
their percentiles.
"""

import math

import numpy as np
from scipy import stats as sps

# Expanding a histogram into samples keeps at most this many per side; a
# larger histogram is scaled down proportionally (documented in the report).
MAX_SAMPLES = 200_000


def buckets(hist):
    """Sorted [(upper_bound, count)] of a histogram (may be empty)."""
    if not isinstance(hist, dict):
        return []
    out = []
    for b in hist.get("buckets") or []:
        if isinstance(b, (list, tuple)) and len(b) == 2 and b[1] > 0:
            out.append((float(b[0]), int(b[1])))
    out.sort()
    return out


def hist_count(hist):
    if not isinstance(hist, dict):
        return 0
    c = hist.get("count")
    if isinstance(c, int):
        return c
    return sum(n for _, n in buckets(hist))


def hist_mean(hist):
    """Exact mean from sum/count when present, else from the buckets."""
    if not isinstance(hist, dict):
        return None
    c, s = hist.get("count"), hist.get("sum")
    if isinstance(c, int) and c > 0 and isinstance(s, (int, float)):
        return s / c
    bs = buckets(hist)
    n = sum(k for _, k in bs)
    return sum(v * k for v, k in bs) / n if n else None


def percentile(hist, q):
    """Percentile q (0..100) from the buckets: upper bound of the bucket
    holding rank ceil(q/100 * N), clamped to the histogram's max."""
    bs = buckets(hist)
    n = sum(k for _, k in bs)
    if not n:
        return None
    rank = max(1, math.ceil(q / 100.0 * n))
    seen = 0
    for v, k in bs:
        seen += k
        if seen >= rank:
            mx = hist.get("max")
            return min(v, mx) if isinstance(mx, (int, float)) else v
    return bs[-1][0]


def summary(hist):
    """p50/p99/p999/max/count/mean of a histogram; the workload's own
    percentile keys win when present (they are exact for the same rule)."""
    if not isinstance(hist, dict) or not hist_count(hist):
        return None
    out = {"count": hist_count(hist), "mean": hist_mean(hist)}
    for key, q in (("p50", 50), ("p99", 99), ("p999", 99.9)):
        v = hist.get(key)
        out[key] = v if isinstance(v, (int, float)) else percentile(hist, q)
    mx = hist.get("max")
    out["max"] = mx if isinstance(mx, (int, float)) else buckets(hist)[-1][0]
    return out


def cdf(hist):
    """(xs, ys): bucket upper bounds and the fraction of samples <= each."""
    bs = buckets(hist)
    n = sum(k for _, k in bs)
    xs, ys, seen = [], [], 0
    for v, k in bs:
        seen += k
        xs.append(v)
        ys.append(seen / n)
    return xs, ys


def expand(hist, cap=MAX_SAMPLES):
    """Samples of a histogram: each bucket's upper bound repeated count
    times, scaled down proportionally when there are more than cap."""
    bs = buckets(hist)
    n = sum(k for _, k in bs)
    if not n:
        return np.zeros(0)
    scale = min(1.0, cap / n)
    vals = np.array([v for v, _ in bs])
    counts = np.array([max(1, round(k * scale)) if scale < 1 else k
                       for _, k in bs])
    return np.repeat(vals, counts)


def mann_whitney_greater(candidate, baseline):
    """One-sided Mann-Whitney U test that candidate samples tend to be
    larger than baseline samples.  Returns (U, p, effect) where effect is
    the probability that a candidate sample exceeds a baseline one (ties
    count one half); None when a side is empty."""
    a, b = np.asarray(candidate), np.asarray(baseline)
    if not len(a) or not len(b):
        return None
    if np.all(a == a[0]) and np.all(b == b[0]) and a[0] == b[0]:
        return float(len(a) * len(b) / 2.0), 1.0, 0.5
    res = sps.mannwhitneyu(a, b, alternative="greater", method="asymptotic")
    u = float(res.statistic)
    return u, float(res.pvalue), u / (len(a) * len(b))


def linear_fit(xs, ys):
    """Ordinary least squares y = intercept + slope * x.

    Returns a dict with slope, intercept, r2, n and the slope's standard
    error; None with fewer than two distinct x."""
    x = np.asarray(xs, dtype=float)
    y = np.asarray(ys, dtype=float)
    if len(x) < 2 or len(set(x.tolist())) < 2:
        return None
    xm, ym = x.mean(), y.mean()
    sxx = float(((x - xm) ** 2).sum())
    sxy = float(((x - xm) * (y - ym)).sum())
    slope = sxy / sxx
    intercept = float(ym - slope * xm)
    resid = y - (intercept + slope * x)
    ss_res = float((resid ** 2).sum())
    ss_tot = float(((y - ym) ** 2).sum())
    r2 = 1.0 - ss_res / ss_tot if ss_tot > 0 else 1.0
    se = math.sqrt(ss_res / (len(x) - 2) / sxx) if len(x) > 2 else None
    return {"slope": slope, "intercept": intercept, "r2": r2,
            "n": int(len(x)), "slope_stderr": se}


def fit_through_origin(xs, ys):
    """Least squares y = beta * x (no intercept); None without data."""
    x = np.asarray(xs, dtype=float)
    y = np.asarray(ys, dtype=float)
    sxx = float((x * x).sum())
    if not len(x) or sxx == 0:
        return None
    return float((x * y).sum()) / sxx


def rel_diff(candidate, baseline):
    """(candidate - baseline) / |baseline|; 0 when both are 0; inf when
    only the baseline is 0."""
    if baseline == candidate:
        return 0.0
    if baseline == 0:
        return math.inf
    return (candidate - baseline) / abs(baseline)


def holm(pvalues):
    """Holm-Bonferroni adjusted p-values, in the input order."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    out = [1.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        out[i] = running
    return out
