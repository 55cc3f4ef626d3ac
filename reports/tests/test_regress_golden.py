"""Golden tests of fleet regression runs (tests/regress_golden.py): every
fixture under fixtures/regress/ (rounds of a real playbooks/regress run)
must give its claimed exit status and verdicts (expect.json: the issue's
claims for the A/A, canary and fault-lock proofs) and reproduce its
reviewed compare.json.  The fixture path itself is proved on synthetic
twin rounds made from the real fixtures, so it works before (and apart
from) the real runs."""

import json
import os
import shutil

import pytest
from conftest import dump_json, load_json
from test_compare_twins import BASE, CAND, fixture, make_twin_runs
from test_golden import approx_equal

import regress_golden as rg

REAL = rg.fixtures()


@pytest.mark.parametrize("name", REAL)
def test_real_regression_run_holds_its_claims(name, tmp_path):
    fdir = os.path.join(rg.FIXTURES, name)
    expect = load_json(os.path.join(fdir, "expect.json"))
    code, doc = rg.compare(rg.rounds_of(fdir), str(tmp_path))
    assert rg.unmet(code, doc, expect) == []
    want = load_json(os.path.join(fdir, "golden", "compare.json"))
    approx_equal(rg.normalise(doc), want)


def rename(runs, keep):
    """Keep only the results in `keep` ({old name: new name}) in every
    twin of the rounds, renamed; the synthetic fault histogram during
    disruption stands for the faulting reads (--count-faults) too."""
    for run in runs:
        for g in (BASE, CAND):
            gd = os.path.join(run, "guests", g)
            gj = load_json(os.path.join(gd, "guest.json"))
            exps = []
            for e in gj["experiments"]:
                if e["name"] not in keep:
                    os.unlink(os.path.join(gd, e["result"]))
                    continue
                new = keep[e["name"]]
                os.rename(os.path.join(gd, e["result"]),
                          os.path.join(gd, "results", new + ".json"))
                p = os.path.join(gd, "results", new + ".json")
                doc = load_json(p)
                dd = doc.get("during_disruption")
                if dd and dd.get("faults"):
                    dd["faulting"] = dd["faults"]
                dump_json(p, doc)
                exps.append(dict(e, name=new,
                                 result="results/%s.json" % new))
            gj["experiments"] = exps
            dump_json(os.path.join(gd, "guest.json"), gj)
    return runs


def regress_dir(runs, dest, rid="20261205T000000Z"):
    """A regression run directory as playbooks/regress leaves it."""
    d = os.path.join(dest, rid + "-regress")
    os.makedirs(d)
    dump_json(os.path.join(d, "regress.json"), {
        "schema": "hugelab.regress/1", "id": rid,
        "rounds": [{"run_id": os.path.basename(r), "site_exit": 0,
                    "seconds": 1, "run_dir": r} for r in runs]})
    return d


def punch_rounds(dest, scale, seed):
    runs = make_twin_runs(fixture("disrupt-"), "stock", dest, 3,
                          scale=scale, seed=seed)
    return rename(runs, {"punch-skewed-200": "latency-punch-skewed-3000"})


def canary_rounds(dest, seed):
    def no_sharing(i, gd):
        p = os.path.join(gd, "results", "aligned-2m.json")
        doc = load_json(p)
        n = doc["config"]["sessions"]
        doc["pagetables_delta"] = n * 4096 + (i - 1) * 8192
        doc["pagetables_per_session"] = doc["pagetables_delta"] / n
        dump_json(p, doc)
    runs = make_twin_runs(fixture("smoke-"), "stock", dest, 3, seed=seed,
                          cand=no_sharing, cand_variant="canary-noshare")
    return rename(runs, {"aligned-2m": "savings-2m-aligned-1000",
                         "skewed-2m": "savings-2m-skewed-1000"})


@pytest.fixture
def fixtures_dir(tmp_path, monkeypatch):
    d = str(tmp_path / "fixtures" / "regress")
    monkeypatch.setattr(rg, "FIXTURES", d)
    return d


@pytest.mark.parametrize("proof", sorted(rg.CLAIMS))
def test_fixture_path_on_synthetic_rounds(proof, fixtures_dir, tmp_path):
    """add -> expect.json + golden -> the golden test passes; the claims
    hold for rounds made to show them."""
    src = str(tmp_path / "runs")
    if proof == "canary":
        runs = canary_rounds(src, seed=11)
    else:
        scale = {"aa": 1.0, "faultlock": 3.0, "faultlock-reverse": 1 / 3}
        runs = punch_rounds(src, scale[proof], seed=12)
    assert rg.add(regress_dir(runs, str(tmp_path)), proof) == 0
    (name,) = rg.fixtures()
    fdir = os.path.join(fixtures_dir, name)
    assert load_json(os.path.join(fdir, "expect.json"))["proof"] == proof
    # The rounds were copied: the fixture stands alone.
    shutil.rmtree(src)
    os.makedirs(str(tmp_path / "cmp"))
    test_real_regression_run_holds_its_claims(name, tmp_path / "cmp")


def test_claims_that_do_not_hold_are_named(tmp_path):
    runs = punch_rounds(str(tmp_path / "runs"), 3.0, seed=13)
    code, doc = rg.compare(runs, str(tmp_path))
    assert rg.unmet(code, doc, rg.CLAIMS["faultlock"]) == []
    bad = rg.unmet(code, doc, rg.CLAIMS["aa"])
    assert bad[0] == "exit 1, claimed 0"
    assert bad[1].startswith("regressions: %s faulting_disrupted" % rg.PUNCH)
    bad = rg.unmet(code, doc, rg.CLAIMS["faultlock-reverse"])
    assert "no latency %s faulting_disrupted* improved" % rg.PUNCH in bad
    bad = rg.unmet(code, doc, rg.CLAIMS["canary"])
    assert any("page tables rose by None" in b for b in bad)


def test_canary_rise_must_be_one_pmd_page(tmp_path):
    """Half a PMD page a session more is a regression, but not the
    canary's: the claim names the measured rise."""
    def half(i, gd):
        p = os.path.join(gd, "results", "aligned-2m.json")
        doc = load_json(p)
        n = doc["config"]["sessions"]
        doc["pagetables_delta"] += n * 2048
        doc["pagetables_per_session"] = doc["pagetables_delta"] / n
        dump_json(p, doc)
    runs = make_twin_runs(fixture("smoke-"), "stock",
                          str(tmp_path / "runs"), 3, seed=14, cand=half)
    runs = rename(runs, {"aligned-2m": "savings-2m-aligned-1000",
                         "skewed-2m": "savings-2m-skewed-1000"})
    code, doc = rg.compare(runs, str(tmp_path))
    bad = rg.unmet(code, doc, rg.CLAIMS["canary"])
    assert len(bad) == 1 and "rose by 0.5" in bad[0]


def test_console_trimmed_around_findings(tmp_path):
    n = rg.CONSOLE_HEAD + rg.CONSOLE_TAIL + 500
    lines = ["[%8d.000000] line %d\n" % (i, i) for i in range(n)]
    lines[600] = "[     600.000000] WARNING: CPU: 1 PID: 7 at mm/x.c:1\n"
    src, dst = str(tmp_path / "in.log"), str(tmp_path / "out.log")
    with open(src, "w") as f:
        f.writelines(lines)
    assert rg.trim_console(src, dst)
    out = open(dst).read().splitlines(keepends=True)
    kept = [ln for ln in out if not ln.startswith("[hugelab fixture")]
    assert kept[:rg.CONSOLE_HEAD] == lines[:rg.CONSOLE_HEAD]
    assert kept[-rg.CONSOLE_TAIL:] == lines[-rg.CONSOLE_TAIL:]
    assert lines[600] in kept and lines[597] in kept and lines[603] in kept
    assert lines[596] not in kept
    assert sum(ln.startswith("[hugelab fixture") for ln in out) == 2
    short = str(tmp_path / "short.log")
    with open(short, "w") as f:
        f.writelines(lines[:10])
    assert not rg.trim_console(short, dst)
    assert open(dst).read() == "".join(lines[:10])


def test_add_refuses_unknown_proof_and_existing_fixture(
        fixtures_dir, tmp_path):
    runs = punch_rounds(str(tmp_path / "runs"), 1.0, seed=15)
    d = regress_dir(runs, str(tmp_path))
    with pytest.raises(SystemExit):
        rg.add(d, "bogus")
    assert rg.add(d, "aa", "x") == 0
    with pytest.raises(SystemExit):
        rg.add(d, "aa", "x")
    assert json.load(open(os.path.join(fixtures_dir, "x", "regress.json")))[
        "id"] == "20261205T000000Z"
