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


def binomial_ci(k, n, level=0.95):
    """Exact (Clopper-Pearson) two-sided interval of a rate k of n, e.g.
    boots that hit a race; (low, high), or None when n is 0."""
    if not 0 <= k <= n:
        raise ValueError("need 0 <= k <= n, got k=%r n=%r" % (k, n))
    if n == 0:
        return None
    ci = sps.binomtest(k, n).proportion_ci(confidence_level=level,
                                           method="exact")
    return float(ci.low), float(ci.high)


def linear_fit(xs, ys):
    """Ordinary least squares y = intercept + slope * x
    (scipy.stats.linregress).

    Returns a dict with slope, intercept, r2, n and the slope's standard
    error; None with fewer than two distinct x.  With exactly two distinct
    x the line passes through both points whatever they are: r2 and the
    standard error are None (nothing says the data is linear) and
    "exact" is True."""
    x = np.asarray(xs, dtype=float)
    y = np.asarray(ys, dtype=float)
    distinct = len(set(x.tolist()))
    if len(x) < 2 or distinct < 2:
        return None
    fit = sps.linregress(x, y)
    exact = distinct == 2
    r2 = None
    if not exact:
        r2 = float(fit.rvalue) ** 2 if np.ptp(y) > 0 else 1.0
    se = float(fit.stderr) if len(x) > 2 else None
    return {"slope": float(fit.slope), "intercept": float(fit.intercept),
            "r2": r2, "n": int(len(x)), "slope_stderr": se, "exact": exact}


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


# Stall thresholds the reports count samples over (100 ms, 1 s, 2 s).
STALL_THRESHOLDS = ((100_000_000, "100ms"), (1_000_000_000, "1s"),
                    (2_000_000_000, "2s"))


def bucket_lower(upper):
    """Smallest value a log2 bucket listed by `upper` can hold: bucket i
    holds [2^(i-1), 2^i - 1] (workloads/SCHEMA.md)."""
    return (int(upper) + 1) // 2


def count_over(hist, threshold):
    """(at_least, at_most): samples above `threshold` ns.  Buckets whose
    whole range lies above it count in both; the one bucket straddling it
    only in at_most (a log2 bucket spans 2x, so the count is exact to one
    bucket); a histogram maximum above it makes at_least >= 1."""
    bs = buckets(hist)
    if not bs:
        return 0, 0
    mx = hist.get("max") if isinstance(hist, dict) else None
    lo = sum(n for u, n in bs if bucket_lower(u) > threshold)
    hi = sum(n for u, n in bs if u > threshold)
    if isinstance(mx, (int, float)):
        if mx <= threshold:
            return 0, 0
        lo = max(lo, 1)
    return lo, hi


def bucket_span(hist):
    """Ratio of upper to lower bound of the histogram's buckets (2 for
    log2 buckets), or None without buckets wider than one value."""
    spans = [u / bucket_lower(u) for u, _ in buckets(hist)
             if bucket_lower(u) > 0 and u > 1]
    return max(spans) if spans else None
