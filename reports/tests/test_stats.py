"""Statistics on log2 histograms, fits and the Mann-Whitney test."""

import numpy as np
import pytest

from hugelab_report import stats


def hist_of(samples):
    """A workloads/SCHEMA.md histogram of integer samples (log2 buckets)."""
    b = {}
    for v in samples:
        ub = 1
        while ub < v:
            ub <<= 1
        b[ub] = b.get(ub, 0) + 1
    return {"unit": "ns", "count": len(samples), "sum": sum(samples),
            "min": min(samples), "max": max(samples),
            "buckets": [[k, n] for k, n in sorted(b.items())]}


def test_percentile_is_bucket_upper_bound_clamped_to_max():
    h = hist_of([3, 5, 6, 7, 100])
    assert stats.percentile(h, 50) == 8
    assert stats.percentile(h, 99) == 100
    assert stats.percentile(h, 0) == 4
    assert stats.percentile({}, 50) is None


def test_summary_prefers_workload_percentiles():
    h = hist_of([10, 20, 30])
    h["p50"] = 17
    s = stats.summary(h)
    assert s["p50"] == 17
    assert s["max"] == 30
    assert s["mean"] == 20
    assert stats.summary({"count": 0, "buckets": []}) is None


def test_cdf_ends_at_one():
    xs, ys = stats.cdf(hist_of([1, 2, 3, 4, 1000]))
    assert xs == sorted(xs)
    assert ys[-1] == 1.0
    assert ys[0] == pytest.approx(0.2)


def test_expand_and_cap():
    h = hist_of([5] * 30 + [100] * 10)
    s = stats.expand(h)
    assert len(s) == 40 and sorted(set(s.tolist())) == [8, 128]
    capped = stats.expand(h, cap=4)
    assert len(capped) == 4 and (capped == 8).sum() == 3


def test_mann_whitney_detects_shift_only():
    rng = np.random.default_rng(1)
    base = rng.lognormal(8, 0.5, 2000)
    same = rng.lognormal(8, 0.5, 2000)
    slow = rng.lognormal(8.5, 0.5, 2000)
    _, p_slow, eff = stats.mann_whitney_greater(slow, base)
    _, p_same, _ = stats.mann_whitney_greater(same, base)
    _, p_fast, _ = stats.mann_whitney_greater(base, slow)
    assert p_slow < 1e-6 and eff > 0.6
    assert p_same > 0.001
    assert p_fast > 0.5
    assert stats.mann_whitney_greater([], base) is None
    assert stats.mann_whitney_greater([3, 3], [3, 3])[1] == 1.0


def test_linear_fit_recovers_line():
    f = stats.linear_fit([1, 2, 4, 8], [10 + 3 * x for x in [1, 2, 4, 8]])
    assert f["slope"] == pytest.approx(3)
    assert f["intercept"] == pytest.approx(10)
    assert f["r2"] == pytest.approx(1)
    assert stats.linear_fit([5, 5], [1, 2]) is None


def test_linear_fit_two_points_claims_no_fit_quality():
    """Any two points lie on a line: R² = 1 would claim a linearity
    nothing measured."""
    f = stats.linear_fit([1000, 1000, 3000], [7, 9, 50])
    assert f["exact"] and f["r2"] is None
    assert stats.linear_fit([1, 3], [2, 9])["slope_stderr"] is None
    assert f["slope"] == pytest.approx((50 - 8) / 2000)
    g = stats.linear_fit([1, 2, 4], [1, 5, 2])
    assert not g["exact"] and g["r2"] < 0.5
    # the same figures as numpy's least squares
    slope, icept = np.polyfit([1, 2, 4], [1, 5, 2], 1)
    assert (g["slope"], g["intercept"]) == pytest.approx((slope, icept))
    assert g["slope_stderr"] > 0 and f["slope_stderr"] > 0


def test_fit_through_origin():
    assert stats.fit_through_origin([1, 2], [2, 4]) == pytest.approx(2)
    assert stats.fit_through_origin([], []) is None


def test_rel_diff():
    assert stats.rel_diff(102, 100) == pytest.approx(0.02)
    assert stats.rel_diff(0, 0) == 0
    assert stats.rel_diff(1, 0) == float("inf")


def test_binomial_ci_exact_interval():
    # Clopper-Pearson by the beta quantiles it is defined by.
    from scipy.stats import beta
    lo, hi = stats.binomial_ci(9, 10)
    assert lo == pytest.approx(beta.ppf(0.025, 9, 2))
    assert hi == pytest.approx(beta.ppf(0.975, 10, 1))
    assert 0.55 < lo < 0.56 and hi < 1.0
    lo, hi = stats.binomial_ci(0, 10)
    assert lo == 0.0 and hi == pytest.approx(1 - 0.025 ** 0.1)
    assert stats.binomial_ci(10, 10)[1] == 1.0
    assert stats.binomial_ci(0, 0) is None
    with pytest.raises(ValueError):
        stats.binomial_ci(3, 2)
