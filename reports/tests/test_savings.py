"""Savings analysis on the real smoke fixture: the model checks pass on
the real figures and fail when the figures are broken in known ways."""

import os

import pytest
from conftest import copy_run, dump_json, fixture_runs

from hugelab_report import model, rundir, savings

SMOKE = [n for n in fixture_runs() if n.startswith("smoke-")]
SWEEP = [n for n in fixture_runs() if n.startswith("sweep-")]


@pytest.fixture
def smoke(tmp_path):
    assert SMOKE, "no smoke fixture"
    return copy_run(SMOKE[0], tmp_path / SMOKE[0])


def results(run_dir):
    run = rundir.load(run_dir)
    return {model.mode_of(r.config): r for r in run.results("shmdb")}


def analyse(run_dir):
    an = savings.analyse(rundir.load(run_dir))
    return an, {c["name"]: c for c in an["checks"]}


def sharing_checks(checks):
    return [c for n, c in checks.items() if "sharing saves" in n]


def test_real_smoke_run_matches_the_model(smoke):
    an, checks = analyse(smoke)
    assert not [c for c in checks.values() if c["status"] == "fail"]
    (pair,) = an["pairs"]
    # 1000 sessions: the skewed run pays ~2 PMD pages per session more.
    assert pair["bytes_per_pmd_page"] == pytest.approx(4096, rel=0.05)
    # The article's arithmetic from the measurement: 1 GiB shared by
    # 10,000 processes saves ~39 MiB; 39 GiB needs ~1 TiB.
    (x,) = an["extrapolation"].values()
    art = x["article"]
    assert art["measured_saved_bytes"] == pytest.approx(
        9999 * 4096, rel=0.05)
    assert art["size_needed"] == pytest.approx(model.TiB, rel=0.05)
    tera = [t for t in x["targets"] if t["size"] == model.TiB][0]
    assert tera["saved_bytes"] == pytest.approx(39.06 * model.GiB, rel=0.05)


def test_broken_sharing_fails(smoke):
    rs = results(smoke)
    al, sk = rs["2m-aligned"], rs["2m-skewed"]
    # As if the aligned sessions had each allocated their PMD page: one
    # page per session, half the skewed run's two.
    al.doc["pagetables_delta"] = sk.doc["pagetables_delta"] // 2
    dump_json(al.path, al.doc)
    _, checks = analyse(smoke)
    (c,) = sharing_checks(checks)
    assert c["status"] == "fail"


def band_check(checks, r):
    return checks["%s/%s pagetables within model" % (r.guest, r.name)]


def test_missing_page_tables_fail(smoke):
    r = results(smoke)["4k"]
    r.doc["pagetables_delta"] //= 2
    dump_json(r.path, r.doc)
    _, checks = analyse(smoke)
    assert band_check(checks, r)["status"] == "fail"


def test_kernel_that_stops_sharing_fails_alone(smoke):
    """Without the skewed run next to it: an aligned run that measures one
    PMD page per session (no sharing) is outside the model's band."""
    rs = results(smoke)
    os.unlink(rs["2m-skewed"].path)
    al = rs["2m-aligned"]
    _, checks = analyse(smoke)
    assert band_check(checks, al)["status"] == "pass"
    assert "detected" in band_check(checks, al)["message"]
    n = al.config["sessions"]
    al.doc["pagetables_delta"] = n * model.PT_PAGE
    dump_json(al.path, al.doc)
    _, checks = analyse(smoke)
    assert not sharing_checks(checks)
    assert band_check(checks, al)["status"] == "fail"


def test_band_is_two_sided_with_stated_slack():
    low, high = savings.model_band(1000 * 4096, 100, 0.25)
    noise = savings.NOISE_PAGES * 4096
    assert low == 750 * 4096 - noise
    assert high == 1250 * 4096 + noise + savings.OVERHEAD_SLACK * 100
    row = {"guest": "g", "experiment": "e", "sessions": 100,
           "model_bytes": 1000 * 4096, "model_sharing": False}
    for got, status in ((low - 1, "fail"), (low, "pass"), (high, "pass"),
                        (high + 1, "fail")):
        row["measured_bytes"] = got
        assert savings.model_band_check(row, 0.25)["status"] == status


def test_few_sessions_say_they_cannot_tell():
    row = {"guest": "g", "experiment": "e", "sessions": 16,
           "model_bytes": 4096, "model_sharing": True, "slots": 1,
           "measured_bytes": 16 * 4096}
    c = savings.model_band_check(row, 0.25)
    assert c["status"] == "pass"
    assert "too few sessions to tell" in c["message"]


def test_workload_model_disagreement_fails(smoke):
    r = results(smoke)["2m-skewed"]
    r.doc["model"]["expected_pagetables_bytes"] += 4096
    dump_json(r.path, r.doc)
    _, checks = analyse(smoke)
    assert checks["%s/%s workload model agrees" % (
        r.guest, r.name)]["status"] == "fail"


@pytest.mark.parametrize("share, status", [(None, "skip"), ("model", "pass"),
                                           (0, "fail")])
def test_pmd_share_counter(smoke, share, status):
    r = results(smoke)["2m-aligned"]
    n = r.config["sessions"]
    if share is not None:
        r.doc["vmstat_delta"]["htlb_pmd_share"] = (n - 1 if share == "model"
                                                   else share)
        dump_json(r.path, r.doc)
    _, checks = analyse(smoke)
    c = checks["%s/%s pmd-share counter" % (r.guest, r.name)]
    assert c["status"] == status


def test_sweep_fits_recover_the_model(tmp_path):
    assert SWEEP, "no sweep fixture"
    d = copy_run(SWEEP[0], tmp_path / SWEEP[0])
    an, _ = analyse(d)
    fits = {f["mode"]: f for f in an["fits"] if "slope" in f}
    # Skewed 1 GiB: two PMD pages per extra session; 4 KiB: PTE pages.
    assert fits["2m-skewed"]["slope"] == pytest.approx(8192, rel=0.05)
    assert fits["4k"]["slope"] == pytest.approx(
        fits["4k"]["model_marginal_bytes"], rel=0.05)
    assert fits["2m-aligned"]["slope"] < 0.1 * fits["2m-skewed"]["slope"]
    (est,) = an["pmd_page_estimates"].values()
    assert est["method"] == "fit"
    assert est["bytes_per_pmd_page"] == pytest.approx(4096, rel=0.1)


@pytest.mark.parametrize("attached", [0, None])
def test_run_that_never_attached_is_no_measurement(smoke, attached):
    """A run whose fork failed before every session attached wrote
    attached 0 (before shmdb wrote null) and a delta of 0: no page-table
    figure, not a 'measured 0' that fails the model and the pair check."""
    rs = results(smoke)
    al = rs["2m-aligned"]
    al.doc["status"] = "fail"
    al.doc["pagetables"]["attached"] = attached
    al.doc["pagetables_delta"] = 0 if attached == 0 else None
    dump_json(al.path, al.doc)
    an, checks = analyse(smoke)
    assert not [r for r in an["rows"] if r["experiment"] == al.name]
    name = "%s/%s pagetables within model" % (al.guest, al.name)
    assert name not in checks
    assert not sharing_checks(checks)
    assert not [c for c in checks.values() if c["status"] == "fail"]
