"""The headline section: figures from the real proof and smoke fixtures,
claims that flip when the figures do, and the report's order."""

import os

import pytest
from conftest import copy_run, dump_json, fixture_runs
from test_stats import hist_of

from hugelab_report import cli, model, plots, rundir, stats, summary
from hugelab_report import headline as headline_mod

PROOF = [n for n in fixture_runs() if n.startswith("proof-")]


@pytest.fixture
def proof(tmp_path):
    assert PROOF, "no proof fixture"
    return copy_run(PROOF[0], tmp_path / PROOF[0])


def headline(run_dir):
    return summary.analyse(rundir.load(run_dir))["headline"]


def claim(hl, words):
    (c,) = [c for c in hl["claims"] if words in c["claim"]]
    return c


def test_extrapolation_uses_4096_bytes_per_pmd_page(proof):
    hl = headline(proof)
    t = {x["size"]: x for x in hl["savings"]["targets"]}
    assert t[model.GiB]["saved_bytes"] == 9999 * 4096
    assert t[model.TiB]["saved_bytes"] == 1024 * 9999 * 4096
    assert t[model.TiB]["per_process_bytes"] == 1024 * 4096
    # The measured figure is beside it, not the multiplier.
    (beta,) = hl["savings"]["measured_bytes_per_pmd_page"].values()
    assert beta != 4096 and beta == pytest.approx(4096, rel=0.05)
    assert claim(hl, "1 GB mapping")["verdict"] == "refuted"
    # Arithmetic from the 1 GiB runs is not a measurement at 1 TiB.
    c = claim(hl, "1 TiB mapping saves with 10,000 processes")
    assert c["verdict"] == "extrapolated" and "extrapolated" in c["evidence"]


def test_stall_counts_from_the_buckets(proof):
    hl = headline(proof)
    (row,) = [s for s in hl["stalls"] if s["lock"] == "i_mmap" and
              s["experiment"] == "punch"]
    r = [r for r in rundir.load(proof).results("shmdb")
         if r.guest == row["guest"] and r.name == "punch"][0]
    h = r.get("during_disruption", "faults")
    # At least: buckets wholly above 2 s; at most: also the one holding
    # 2 s (its lower bound 1 GiB ns).
    want_lo = sum(n for u, n in h["buckets"] if (u + 1) // 2 > 2e9)
    want_hi = sum(n for u, n in h["buckets"] if u > 2e9)
    assert row["over"]["2s"] == [want_lo, want_hi]
    assert want_lo < want_hi
    assert row["worst"] == h["max"]
    c = claim(hl, "more than two seconds")
    assert c["verdict"] == "reproduced" and "6.81 s" in c["evidence"]


def test_claims_follow_the_figures(proof):
    # No i_mmap stall over 2 s: the claim is refuted, with the number.
    for r in rundir.load(proof).results("shmdb"):
        if (r.kernel.get("hugetlb_fault_lock") or "").startswith("i_mmap"):
            r.doc["during_disruption"]["faults"] = hist_of(
                [1000] * 50 + [1_500_000_000])
            dump_json(r.path, r.doc)
    hl = headline(proof)
    c = claim(hl, "more than two seconds")
    assert c["verdict"] == "refuted" and "1.50 s" in c["evidence"]
    # The vma kernel's worst punch stall (7.31 s) is worse: refuted; at
    # 300 ms it is 5x better: reproduced.
    assert claim(hl, "per-VMA lock")["verdict"] == "refuted"
    for r in rundir.load(proof).results("shmdb"):
        if r.name == "punch" and not (r.kernel.get(
                "hugetlb_fault_lock") or "").startswith("i_mmap"):
            r.doc["during_disruption"]["faults"] = hist_of(
                [1000] * 50 + [300_000_000])
            dump_json(r.path, r.doc)
    assert claim(headline(proof), "per-VMA lock")["verdict"] == \
        "reproduced"


def test_a_lot_better_needs_a_minimum_ratio(proof):
    """Better by less than A_LOT_BETTER is not "a lot better"."""
    def vma_worst(ns):
        for r in rundir.load(proof).results("shmdb"):
            if r.name == "punch" and not (r.kernel.get(
                    "hugetlb_fault_lock") or "").startswith("i_mmap"):
                r.doc["during_disruption"]["faults"] = hist_of(
                    [1000] * 50 + [ns])
                dump_json(r.path, r.doc)
        return claim(headline(proof), "per-VMA lock")
    (im,) = [s for s in headline(proof)["stalls"]
             if s["lock"] == "i_mmap" and s["experiment"] == "punch"]
    # Just under and just over the minimum ratio (the vma histogram's max
    # is the sample itself).
    low = vma_worst(int(im["worst"] / (headline_mod.A_LOT_BETTER * 0.9)))
    assert low["verdict"] == "refuted" and "a lot: 2.00x" in low["evidence"]
    high = vma_worst(int(im["worst"] / (headline_mod.A_LOT_BETTER * 1.1)))
    assert high["verdict"] == "reproduced"


def test_not_measured_without_runs():
    smoke = [n for n in fixture_runs() if n.startswith("smoke-")]
    hl = headline(os.path.join(os.path.dirname(__file__), "fixtures",
                               smoke[0]))
    assert claim(hl, "more than two seconds")["verdict"] == "not measured"
    assert claim(hl, "per-VMA lock")["verdict"] == "not measured"


def test_survival_curve():
    h = hist_of([1] * 90 + [100] * 9 + [1000])
    xs, ys = plots.survival(h)
    assert ys == [1.0, pytest.approx(0.1), pytest.approx(0.01)]
    assert xs[1:] == [1, 128]
    assert stats.bucket_span(h) == pytest.approx(2.0)


def test_count_over():
    h = hist_of([10] * 5 + [150] * 3)      # buckets 16 (8..16), 256
    assert stats.count_over(h, 100) == (3, 3)
    assert stats.count_over(h, 140) == (1, 3)  # 256 bucket holds 128..256
    assert stats.count_over(h, 150) == (0, 0)  # the maximum is 150


def test_report_order_headline_first_provenance_last(proof, tmp_path):
    assert cli.main(["render", proof, "--runs-dir", str(tmp_path)]) == 0
    for f, h in (("report.md", "\n## %s\n"), ("report.html", "<h2>%s</h2>")):
        text = open(os.path.join(proof, f), encoding="utf-8").read()
        i = [text.index(h % s) for s in ("Headline", "Savings", "Latency",
                                         "Correctness", "Checks",
                                         "Provenance")]
        assert i == sorted(i), f
        assert "Survival (CCDF)" in text
        assert '{"' not in text.split("Provenance")[-1], "JSON dump"


def test_sharing_claim_names_the_pair_that_failed():
    """The evidence of a refuted sharing claim shows the failing pair
    first (run 20261205T140410Z showed three passing pairs under
    REFUTED), and how many pairs passed."""
    def check(pair, status, got):
        return {"suite": "savings", "status": status,
                "name": "hl/%s-aligned vs %s-skewed sharing saves 4 KiB per "
                "PMD page" % (pair, pair),
                "message": "measured %d bytes per PMD page" % got}
    checks = [check("s%d" % i, "pass", 4096) for i in range(4)]
    checks.append(check("s9", "fail", 2000))
    an = {"savings": {"pmd_page_estimates": {}},
          "latency": {"ratios": []}, "checks": checks}
    c = claim({"claims": headline_mod.claims(an, [])}, "share its PMD")
    assert c["verdict"] == "refuted"
    assert c["evidence"].startswith("4 of 5 pairs within tolerance: "
                                    "hl/s9-aligned vs s9-skewed: measured "
                                    "2000")
