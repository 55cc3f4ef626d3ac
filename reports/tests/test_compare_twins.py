"""compare --twins: runs of a regression fleet (playbooks/regress), each
holding a baseline and a candidate guest per pair side by side, split by
guest.json `regress` and matched by pair name; on synthetic twin runs made
from real fixtures."""

import json
import os
import random
import shutil

import pytest
from conftest import FIXTURES, dump_json, load_json
from test_compare_runs import samples
from test_stats import hist_of

from hugelab_report import cli, rundir

PAIR = "hl-rg"
BASE, CAND = "hl-rg-base", "hl-rg-cand"


def fixture(prefix):
    return os.path.join(FIXTURES, [n for n in os.listdir(FIXTURES)
                                   if n.startswith(prefix)][0])


def make_twin_runs(src, guest, dest, r, scale=1.0, seed=0, cand=None,
                   cand_variant=None):
    """r rounds, each a run directory with guest `guest` of fixture run src
    twice: BASE (regress side baseline) and CAND (candidate), pair PAIR.
    Their shmdb fault histograms during disruption are synthetic (each
    run's own jitter x0.85..1.15; the candidate `scale` times slower);
    cand(round, guest_dir) may change the candidate's files."""
    rnd = random.Random(seed)
    out = []
    m0 = load_json(os.path.join(src, "manifest.json"))
    for i in range(r):
        rid = "20261205T00000%dZ-r%d" % (i, i + 1)
        d = os.path.join(dest, rid)
        os.makedirs(os.path.join(d, "guests"))
        for name, side in ((BASE, "baseline"), (CAND, "candidate")):
            gd = os.path.join(d, "guests", name)
            shutil.copytree(os.path.join(src, "guests", guest), gd)
            gj = load_json(os.path.join(gd, "guest.json"))
            gj["name"] = name
            gj["regress"] = {"side": side, "pair": PAIR}
            if side == "candidate" and cand_variant:
                gj["kernel"]["variant"] = cand_variant
            dump_json(os.path.join(gd, "guest.json"), gj)
            k = scale * rnd.uniform(0.85, 1.15) if side == "candidate" \
                else rnd.uniform(0.85, 1.15)
            for res in sorted(os.listdir(os.path.join(gd, "results"))):
                p = os.path.join(gd, "results", res)
                doc = load_json(p)
                if doc.get("program") == "shmdb" and \
                        doc.get("during_disruption"):
                    doc["during_disruption"]["faults"] = hist_of(
                        samples(rnd, k))
                    dump_json(p, doc)
            if side == "candidate" and cand:
                cand(i, gd)
        m = dict(m0, run_id=rid, guests=[BASE, CAND], status="ok",
                 failures=[])
        m["inventory"] = {BASE: {"cmdline_extra": "hugetlb_fault_lock=vma"},
                          CAND: {"cmdline_extra": "hugetlb_fault_lock=i_mmap"}}
        if cand_variant:
            kernels = dict(m.get("kernels") or {})
            for key, v in list(kernels.items()):
                kernels[key.replace(v.get("variant", "stock"),
                                    cand_variant, 1)] = dict(
                    v, variant=cand_variant)
            m["kernels"] = kernels
        dump_json(os.path.join(d, "manifest.json"), m)
        out.append(d)
    return out


def run_twins(runs, tmp_path, *extra):
    out = str(tmp_path / "cmp")
    os.makedirs(out, exist_ok=True)
    code = cli.main(["compare", "--twins"] + runs + ["--out", out] +
                    list(extra))
    doc = None
    if os.path.exists(os.path.join(out, "compare.json")):
        doc = load_json(os.path.join(out, "compare.json"))
    return code, doc, out


def verdicts(doc, verdict="regression", kind=None):
    return {(i["kind"], i["key"], i["metric"]) for i in doc["items"]
            if i["verdict"] == verdict and (kind is None or i["kind"] == kind)}


@pytest.fixture
def disrupt():
    return fixture("disrupt-")


def test_twins_a_a_no_regression(disrupt, tmp_path):
    runs = make_twin_runs(disrupt, "stock", str(tmp_path), 3, seed=1)
    code, doc, out = run_twins(runs, tmp_path)
    assert (code, doc["status"], doc["latency_verdict"]) == (0, "ok", "ok")
    assert doc["runs"] == {"baseline": 3, "candidate": 3}
    assert doc["twins"]["pairs"] == [{"pair": PAIR, "baseline": BASE,
                                      "candidate": CAND}]
    keys = {i["key"] for i in doc["items"]}
    assert "%s/punch-aligned-200" % PAIR in keys
    assert not [k for k in keys if BASE in k or CAND in k]
    # Each side's provenance holds only its own guest, named by its pair.
    for side in ("baseline", "candidate"):
        for p in doc["provenance"][side]:
            assert list(p["guests"]) == [PAIR]
    assert "hugetlb_fault_lock=vma" in doc["sides"]["baseline"]
    assert "hugetlb_fault_lock=i_mmap" in doc["sides"]["candidate"]
    md = open(os.path.join(out, "compare.md"), encoding="utf-8").read()
    assert md.startswith("# hugelab compare: OK")
    assert "Twin runs: 3 round(s)" in md and \
        "**No regression detected** (with these runs' noise" in md
    assert md.index("**No regression detected**") < md.index("## Provenance")


def test_twins_latency_regression_names_pair_and_metric(disrupt, tmp_path):
    runs = make_twin_runs(disrupt, "stock", str(tmp_path), 3, scale=3.0,
                          seed=2)
    code, doc, out = run_twins(runs, tmp_path)
    assert code == 1 and doc["latency_verdict"] == "regression"
    reg = verdicts(doc, kind="latency")
    for exp in ("punch-aligned-200", "punch-skewed-200"):
        assert ("latency", "%s/%s" % (PAIR, exp),
                "faults_disrupted p50") in reg
    md = open(os.path.join(out, "compare.md"), encoding="utf-8").read()
    assert "regression(s):**" in md
    assert "%s/punch-aligned-200 `faults_disrupted p50`" % PAIR in md


def test_twins_failed_candidate_guest_is_inconclusive(disrupt, tmp_path):
    """The candidate twin failed in round 2: its side's run status fails
    (newly failing in 1 of 3 rounds: inconclusive, exit 3, as a flaky
    check would), the baseline side's does not, although both twins
    share one run manifest."""
    def fail_round_2(i, gd):
        if i == 1:
            gj = load_json(os.path.join(gd, "guest.json"))
            gj["status"] = "fail"
            dump_json(os.path.join(gd, "guest.json"), gj)
    runs = make_twin_runs(disrupt, "stock", str(tmp_path), 3, seed=3,
                          cand=fail_round_2)
    m = load_json(os.path.join(runs[1], "manifest.json"))
    m.update(status="fail", failures=[CAND + ": guest not ok"])
    dump_json(os.path.join(runs[1], "manifest.json"), m)
    code, doc, _ = run_twins(runs, tmp_path)
    assert code == 3
    reg = verdicts(doc, "inconclusive", kind="checks")
    assert ("checks", "manifest status", "run") in reg
    (st,) = [i for i in doc["items"] if i["key"] == "manifest status"]
    assert PAIR + ": guest not ok" in st["detail"]
    # The same runs read the other way round: no regression (the failing
    # twin is now the baseline).
    view = rundir.side_view(rundir.load(runs[1]), "baseline")
    assert view.manifest["status"] == "ok" and not view.manifest["failures"]


def test_twins_canary_page_tables_regress_by_one_pmd_page(tmp_path):
    """Canary twin (a kernel that does not share): the aligned 2 MiB runs
    of the candidate cost one PMD page per session; regression naming
    pagetables_per_session, by the model's amount; the candidate's own
    kernel build alone in its side's provenance."""
    def no_sharing(i, gd):
        for res in os.listdir(os.path.join(gd, "results")):
            p = os.path.join(gd, "results", res)
            doc = load_json(p)
            cfg = doc.get("config") or {}
            if cfg.get("page_size") == 2 << 20 and \
                    cfg.get("placement") == "aligned":
                n = cfg["sessions"]
                doc["pagetables_delta"] = n * 4096 + 4096 * i
                doc["pagetables_per_session"] = doc["pagetables_delta"] / n
                dump_json(p, doc)
    runs = make_twin_runs(fixture("smoke-"), "stock", str(tmp_path), 3,
                          seed=4, cand=no_sharing,
                          cand_variant="canary-noshare")
    code, doc, _ = run_twins(runs, tmp_path)
    assert code == 1
    key = "%s/aligned-2m" % PAIR
    assert ("deterministic", key, "pagetables_per_session") in verdicts(doc)
    (pt,) = [i for i in doc["items"] if i["key"] == key and
             i["metric"] == "pagetables_per_session"]
    assert pt["rise_in_unshared"] == pytest.approx(1.0, abs=0.05)
    for side, variant in (("baseline", "stock"),
                          ("candidate", "canary-noshare")):
        for p in doc["provenance"][side]:
            assert [k["variant"] for k in p["kernels"].values()] == \
                [variant]


def test_twins_reverse_is_an_improvement(disrupt, tmp_path):
    runs = make_twin_runs(disrupt, "stock", str(tmp_path), 3, scale=1 / 3,
                          seed=5)
    code, doc, _ = run_twins(runs, tmp_path)
    assert code == 0 and not verdicts(doc, kind="latency")
    assert ("latency", "%s/punch-skewed-200" % PAIR,
            "faults_disrupted p50") in verdicts(doc, "improved")


def _edit_guest(run, name, **regress):
    p = os.path.join(run, "guests", name, "guest.json")
    gj = load_json(p)
    if regress.get("drop"):
        gj.pop("regress")
    else:
        gj["regress"].update(regress)
    dump_json(p, gj)


@pytest.mark.parametrize("case", ["no-regress", "two-baselines", "bad-side",
                                  "bad-pair", "other-pairs", "mixed-args"])
def test_twins_bad_input_exit_2(case, disrupt, tmp_path, capsys):
    runs = make_twin_runs(disrupt, "stock", str(tmp_path), 2, seed=6)
    extra = []
    if case == "no-regress":
        _edit_guest(runs[0], CAND, drop=True)
    elif case == "two-baselines":
        _edit_guest(runs[0], CAND, side="baseline")
    elif case == "bad-side":
        _edit_guest(runs[0], CAND, side="control")
    elif case == "bad-pair":
        _edit_guest(runs[0], CAND, pair="../x")
    elif case == "other-pairs":
        _edit_guest(runs[1], BASE, pair="hl-other")
        _edit_guest(runs[1], CAND, pair="hl-other")
    else:
        extra = ["--baseline", runs[0]]
    code, doc, _ = run_twins(runs, tmp_path, *extra)
    assert code == 2 and doc is None
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("hugelab-report: ")


def test_ordinary_runs_are_not_twins(tmp_path):
    """A run of the default fleet has no regress sides: --twins refuses it
    (exit 2) instead of comparing its guests with nothing."""
    src = fixture("proof-")
    assert cli.main(["compare", "--twins", src, "--out", str(tmp_path)]) \
        == 2
    assert not os.path.exists(os.path.join(str(tmp_path), "compare.json"))


def test_side_view_keeps_other_keys(disrupt, tmp_path):
    (run,) = make_twin_runs(disrupt, "stock", str(tmp_path), 1, seed=7)
    r = rundir.load(run)
    assert rundir.twins(r) == {PAIR: {"baseline": BASE, "candidate": CAND}}
    v = rundir.side_view(r, "candidate")
    assert [g.name for g in v.guests] == [PAIR]
    assert {x.guest for x in v.results()} == {PAIR}
    assert v.manifest["guests"] == [PAIR]
    assert v.manifest["inventory"] == {
        PAIR: {"cmdline_extra": "hugetlb_fault_lock=i_mmap"}}
    assert v.run_id == r.run_id and v.manifest["regress_side"] == \
        "candidate"
    with pytest.raises(ValueError):
        rundir.side_view(r, "both")
    # The run itself is unchanged.
    assert json.dumps(r.manifest["guests"]) == json.dumps([BASE, CAND])
