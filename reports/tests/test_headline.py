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
    assert c["verdict"] == "inconclusive (1 run)"
    assert "6.81 s" in c["evidence"]


def rounds(proof, i_mmap, vma, experiment="punch"):
    """Make the proof's punch pair into rounds: one result per worst
    fault stall given (ns) in each fault-lock mode, copies of the real
    result (same configuration) with their fault histogram replaced."""
    import json
    run = rundir.load(proof)
    model_of = {}
    for r in run.results("shmdb"):
        if r.name == experiment or r.name.startswith(experiment + "-r"):
            model_of[r.guest] = r
            os.unlink(r.path)
    for r in model_of.values():
        lock = "i_mmap" if (r.kernel.get("hugetlb_fault_lock") or
                            "").startswith("i_mmap") else "vma"
        for i, worst in enumerate(i_mmap if lock == "i_mmap" else vma):
            doc = json.loads(json.dumps(r.doc))
            doc["during_disruption"]["faults"] = hist_of(
                [1000] * 50 + [worst])
            dump_json(os.path.join(os.path.dirname(r.path),
                                   "%s-r%d.json" % (experiment, i + 1)), doc)
    return headline(proof)


def test_latency_claims_from_one_run_are_inconclusive(proof):
    """Issue 29: the three rounds of the fault-lock proof judged the 2 s
    claim REPRODUCED / REFUTED / REFUTED and the per-VMA claim REPRODUCED
    / REFUTED / REPRODUCED, one run each.  One run decides neither: the
    verdict is "inconclusive (1 run)", the measured numbers beside it."""
    hl = headline(proof)
    c = claim(hl, "more than two seconds")
    assert c["verdict"] == "inconclusive (1 run)"
    assert "6.81 s" in c["evidence"] and "3 or more" in c["evidence"]
    c = claim(hl, "per-VMA lock")
    assert c["verdict"] == "inconclusive (1 run)"
    assert "0.932x" in c["evidence"] and "7.31 s" in c["evidence"]
    assert hl["latency_claims"] == "inconclusive (1 run)"
    # Still one run of each: a 100x ratio decides nothing either.
    hl = rounds(proof, [6_000_000_000], [60_000_000])
    assert claim(hl, "per-VMA lock")["verdict"] == "inconclusive (1 run)"
    hl = rounds(proof, [6_000_000_000] * 2, [60_000_000] * 2)
    assert claim(hl, "per-VMA lock")["verdict"] == "inconclusive (2 runs)"
    assert claim(hl, "more than two seconds")["verdict"] == \
        "inconclusive (2 runs)"


def test_latency_claims_decided_from_three_rounds(proof):
    """Three runs or more of each mode in one configuration: reproduced
    when every i_mmap run's worst stall is at least A_LOT_BETTER x every
    vma run's, refuted when every one is below it, else inconclusive;
    the 2 s claim reproduced when every i_mmap run stalled over 2 s,
    refuted when none did."""
    s, ms = 1_000_000_000, 1_000_000
    hl = rounds(proof, [6 * s, 5 * s, 7 * s], [300 * ms, 2 * s, 400 * ms])
    c = claim(hl, "per-VMA lock")
    assert c["verdict"] == "reproduced", c
    assert "3 i_mmap and 3 vma runs" in c["evidence"]
    assert claim(hl, "more than two seconds")["verdict"] == "reproduced"
    assert hl["latency_claims"] == "decided"
    # One vma run within 2x of an i_mmap run: not every pair is "a lot".
    hl = rounds(proof, [6 * s, 5 * s, 7 * s], [300 * ms, 3 * s, 400 * ms])
    assert claim(hl, "per-VMA lock")["verdict"] == \
        "inconclusive (3 runs, not all on one side)"
    assert hl["latency_claims"].startswith("inconclusive")
    # Every i_mmap run below 2x every vma run: refuted.
    hl = rounds(proof, [1500 * ms, 1200 * ms, 1900 * ms],
                [1 * s, 1100 * ms, 1050 * ms])
    assert claim(hl, "per-VMA lock")["verdict"] == "refuted"
    assert claim(hl, "more than two seconds")["verdict"] == "refuted"
    hl = rounds(proof, [1500 * ms, 3 * s, 1900 * ms], [1 * s] * 3)
    assert claim(hl, "more than two seconds")["verdict"] == \
        "inconclusive (3 runs, not all on one side)"


def test_per_vma_claim_decided_at_the_worst_case(proof):
    """Two configurations of 3 rounds each: at the one whose i_mmap runs
    stall longest the per-VMA lock is a lot better, at a small one both
    modes stall alike (a CPU's wait, not the lock's).  The claim is about
    the worst case: reproduced, the small one counted in the evidence;
    the first rule ("refuted when one configuration refutes it") read the
    latency map 20261207T121533Z as refuted from 100 mappers."""
    import json
    s, ms = 1_000_000_000, 1_000_000
    rounds(proof, [5 * s, 5 * s, 5 * s], [40_000, 50_000, 40_000])
    run = rundir.load(proof)
    for r in list(run.results("shmdb")):
        if r.name.startswith("punch-r"):
            doc = json.loads(json.dumps(r.doc))
            doc["config"]["sessions"] = 100
            worst = 100 * ms if "immap" in r.guest else 98 * ms
            doc["during_disruption"]["faults"] = hist_of(
                [1000] * 50 + [worst])
            dump_json(os.path.join(os.path.dirname(r.path),
                                   "small-" + r.name + ".json"), doc)
    hl = headline(proof)
    c = claim(hl, "per-VMA lock")
    assert c["verdict"] == "reproduced", c
    assert "a lot better at 1, not at 1, undecided at 0" in c["evidence"]
    assert "5.00 s" in c["evidence"]


def test_status_line_does_not_say_ok_over_undecided_claims(proof, tmp_path):
    """The report's title gives the checks' status and the latency
    claims' apart: never a bare "OK" above claims one run cannot
    decide."""
    assert cli.main(["render", proof, "--runs-dir", str(tmp_path)]) == 0
    md = open(os.path.join(proof, "report.md"), encoding="utf-8").read()
    title = md.splitlines()[0]
    # (the proof's manifest failed: its checks FAIL)
    assert title.endswith(": checks FAIL; latency claims INCONCLUSIVE "
                          "(1 run)"), title
    html = open(os.path.join(proof, "report.html"), encoding="utf-8").read()
    assert "latency claims <span class=\"status-inconclusive\">" \
        "INCONCLUSIVE (1 run)</span>" in html


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


def merge_rounds(src, dst):
    """The rounds of a regression fleet run (fixtures/regress/*) as one
    run directory: every round's guests, named r<k>-<guest>."""
    import json
    import shutil
    guests, man = [], None
    rounds = sorted(os.listdir(os.path.join(src, "rounds")))
    for k, rid in enumerate(rounds, 1):
        rd = os.path.join(src, "rounds", rid)
        with open(os.path.join(rd, "manifest.json")) as f:
            m = json.load(f)
        man = man or dict(m)
        for g in m["guests"]:
            name = "r%d-%s" % (k, g)
            shutil.copytree(os.path.join(rd, "guests", g),
                            os.path.join(dst, "guests", name))
            gp = os.path.join(dst, "guests", name, "guest.json")
            with open(gp) as f:
                gj = json.load(f)
            dump_json(gp, dict(gj, name=name))
            guests.append(name)
    dump_json(os.path.join(dst, "manifest.json"),
              dict(man, guests=guests, run_id=os.path.basename(dst)))
    return dst


@pytest.mark.parametrize("name, stall", [
    ("faultlock-20261206T034404Z", "inconclusive (3 runs, not all on one "
     "side)"),
    ("faultlock-reverse-20261206T035949Z", "refuted")])
def test_fault_lock_rounds_in_one_run(name, stall, tmp_path):
    """The real fault-lock proof's three rounds (hole punch, 3,000
    mappers) in one run directory: each round alone is "inconclusive (1
    run)"; together the worst stalls (i_mmap 3.00 s, 164 ms, 516 ms
    against vma 145-185 ms) are not all beyond 2x: the per-VMA claim
    stays inconclusive, not the REPRODUCED / REFUTED / REPRODUCED of one
    round at a time; in the reverse proof no i_mmap run stalled 2 s."""
    src = os.path.join(os.path.dirname(__file__), "fixtures", "regress",
                       name)
    one = os.path.join(src, "rounds",
                       sorted(os.listdir(os.path.join(src, "rounds")))[0])
    hl = headline(one)
    assert claim(hl, "per-VMA lock")["verdict"] == "inconclusive (1 run)"
    hl = headline(merge_rounds(src, str(tmp_path / name)))
    c = claim(hl, "per-VMA lock")
    assert c["verdict"] == "inconclusive (3 runs, not all on one side)"
    assert "3 i_mmap and 3 vma runs" in c["evidence"]
    assert claim(hl, "more than two seconds")["verdict"] == stall
