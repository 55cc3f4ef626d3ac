"""The real kernel-proof fixture: a stock debug kernel that must warn, the
patched kernel's PMD-sharing counters, and the fault-lock modes."""

import pytest
from conftest import FIXTURES, fixture_runs

from hugelab_report import rundir, summary

PROOF = [n for n in fixture_runs() if n.startswith("proof-")]


@pytest.fixture(scope="module")
def an():
    assert PROOF, "no kernel-proof fixture"
    return summary.analyse(rundir.load("%s/%s" % (FIXTURES, PROOF[0])))


def checks(an):
    return {c["name"]: c for c in an["checks"]}


def test_stock_debug_reproduces_the_warning(an):
    cs = checks(an)
    g = an["correctness"]["guests"]["stock-debug"]
    assert g["expect_warnings"] and g["kernel_warnings"] > 0
    assert any("hugetlb_split" in ln for ln in g["warning_excerpt"])
    for name in ("stock-debug guest status",
                 "stock-debug kernel warning reproduced",
                 "stock-debug/split-racer status",
                 "stock-debug/split-shmdb status"):
        assert cs[name]["status"] == "pass", name


def test_patched_kernels_are_clean(an):
    cs = checks(an)
    for g in ("patched-debug", "patched-debug-immap"):
        assert cs["%s no kernel warnings" % g]["status"] == "pass"
        assert an["correctness"]["guests"][g]["kernel_warnings"] == 0


def test_pmd_share_counter_matches_model(an):
    cs = checks(an)
    assert cs["patched-debug/aligned pmd-share counter"]["status"] == "pass"
    (pair,) = [p for p in an["savings"]["pairs"]
               if p["guest"] == "patched-debug"]
    assert pair["shared_experiments"] == ["aligned"]
    assert pair["counter_share"] == pytest.approx(
        pair["model_share_events"], rel=0.01)
    assert pair["bytes_per_pmd_page"] == pytest.approx(4096, rel=0.02)


def test_fault_lock_ratio(an):
    rows = {(r["guest"], r["experiment"]): r for r in an["latency"]["rows"]}
    assert rows[("patched-debug", "punch")]["lock"] == "vma"
    assert rows[("patched-debug-immap", "punch")]["lock"] == "i_mmap"
    ratios = {x["i_mmap"]: x for x in an["latency"]["ratios"]}
    x = ratios["patched-debug-immap/punch"]
    assert x["vma"] == "patched-debug/punch"
    assert x["p99_ratio"] == pytest.approx(x["p99_i_mmap"] / x["p99_vma"])
    assert x["max_ratio"] == pytest.approx(x["max_i_mmap"] / x["max_vma"])
