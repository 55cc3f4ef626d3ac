"""Regression rules of `compare`, on copies of a real run perturbed in
known ways, and on the rule functions directly."""

import os
import shutil

import pytest
from conftest import copy_run, dump_json, fixture_runs, load_json

from hugelab_report import cli, compare, latency, rundir


def shmdb_results(run_dir):
    run = rundir.load(run_dir)
    return [r for r in run.results("shmdb")]


def candidate(real_run, tmp_path):
    c = str(tmp_path / "candidate")
    shutil.copytree(real_run, c)
    return c


def run_compare(base, cand, *extra):
    code = cli.main(["compare", base, cand] + list(extra))
    doc = load_json(os.path.join(cand, "compare.json"))
    return code, doc


def verdicts(doc, kind, verdict="regression"):
    return [i for i in doc["items"] if i["kind"] == kind and
            i["verdict"] == verdict]


@pytest.mark.parametrize("name", fixture_runs())
def test_run_against_itself_is_no_regression(name, tmp_path):
    """Every fixture, including the proof run whose manifest status fails
    (a check failing in both runs): nothing regressed; with one run a
    side the latency figures are inconclusive (exit 3), never exit 1."""
    base = copy_run(name, tmp_path / "base")
    cand = copy_run(name, tmp_path / "cand")
    code, doc = run_compare(base, cand)
    want = 3 if any(i["kind"] == "latency" for i in doc["items"]) else 0
    assert (code, doc["status"]) == (want, ("ok", "", "", "inconclusive")[
        want]), [i for i in doc["items"] if i["verdict"] == "regression"]
    assert not [i for i in doc["items"] if i["verdict"] == "regression"]
    failing = [i for i in doc["items"] if i["kind"] == "checks"]
    assert all(i["verdict"] == "known-failure" for i in failing)
    # The same directory on both sides too.
    assert cli.main(["compare", base, base]) == want


def test_out_directory_is_created_and_a_file_refused(tmp_path, capsys):
    """--out names where the comparison goes: a new directory is made, an
    existing file is bad input (exit 2), nothing is half-written."""
    name = fixture_runs()[0]
    base = copy_run(name, tmp_path / "base")
    cand = copy_run(name, tmp_path / "cand")
    out = tmp_path / "new" / "cmp"
    assert cli.main(["compare", base, cand, "--out", str(out)]) == 3
    assert sorted(os.listdir(out)) == ["compare.html", "compare.json",
                                       "compare.md", "junit-compare.xml"]
    capsys.readouterr()
    f = tmp_path / "file"
    f.write_text("x")
    assert cli.main(["compare", base, cand, "--out", str(f)]) == 2
    assert "--out %s: not a directory" % f in capsys.readouterr().err
    assert f.read_text() == "x"


def test_failed_check_in_both_is_known_newly_failing_regresses(tmp_path):
    proof = [n for n in fixture_runs() if n.startswith("proof-")]
    assert proof, "no proof fixture"
    base = copy_run(proof[0], tmp_path / "base")
    cand = copy_run(proof[0], tmp_path / "cand")
    code, doc = run_compare(base, cand)
    known = [i for i in doc["items"] if i["verdict"] == "known-failure"]
    assert [i["key"] for i in known] == ["manifest status"]
    # A check that passed in the baseline fails in the candidate.
    r = max((r for r in rundir.load(cand).results("shmdb")
             if r.config.get("page_size") == 2 * 1024 * 1024 and
             r.config.get("placement") != "skewed"),
            key=lambda r: r.config["sessions"])
    r.doc["pagetables_delta"] = r.config["sessions"] * 8192
    r.doc["pagetables_per_session"] = 8192
    dump_json(r.path, r.doc)
    code, doc = run_compare(base, cand)
    assert code == 1
    new = [i["key"] for i in verdicts(doc, "checks")]
    assert "%s/%s pagetables within model" % (r.guest, r.name) in new
    assert "manifest status" not in new
    # ... and the other way round the fixed check is an improvement.
    code, doc = run_compare(cand, base)
    assert code == 3        # one run a side: latency inconclusive
    assert "%s/%s pagetables within model" % (r.guest, r.name) in [
        i["key"] for i in doc["items"]
        if i["kind"] == "checks" and i["verdict"] == "improved"]


def _with_counters(run_dir, share, disrupt):
    r = next(r for r in rundir.load(run_dir).results("shmdb")
             if r.config.get("page_size") == 2 * 1024 * 1024)
    r.doc["vmstat_delta"]["htlb_pmd_share"] = share
    r.doc["config"]["disrupt"] = disrupt
    dump_json(r.path, r.doc)
    return "%s/%s" % (r.guest, r.name)


def _counter_items(doc, key):
    return [i for i in doc["items"] if i["key"] == key and
            i["metric"] == "htlb_pmd_share"]


def test_counters_of_disrupted_runs_are_not_compared(real_run, tmp_path):
    """10 vs 15 hole punches: htlb_pmd_share -33 %, no regression."""
    cand = candidate(real_run, tmp_path)
    key = _with_counters(real_run, 15, ["punch"])
    _with_counters(cand, 10, ["punch"])
    code, doc = run_compare(real_run, cand)
    (item,) = _counter_items(doc, key)
    assert item["verdict"] == "skipped"
    assert "disruptor" in item["detail"]


def test_counters_without_disruptor_are_exact(real_run, tmp_path):
    cand = candidate(real_run, tmp_path)
    key = _with_counters(real_run, 999, [])
    _with_counters(cand, 999, [])
    code, doc = run_compare(real_run, cand)
    (item,) = _counter_items(doc, key)
    assert item["verdict"] == "ok"
    _with_counters(cand, 500, [])
    code, doc = run_compare(real_run, cand)
    (item,) = _counter_items(doc, key)
    assert item["verdict"] == "regression"
    assert code == 1


def scale_hist(h, k):
    for key in ("sum", "min", "max", "p50", "p90", "p99", "p999"):
        if isinstance(h.get(key), (int, float)):
            h[key] = h[key] * k
    h["buckets"] = [[b * k, n] for b, n in h["buckets"]]


def test_one_run_a_side_is_inconclusive(real_run, tmp_path):
    """4x slower with R = 1: the latency verdict is inconclusive (R=1),
    not a regression; the figures are still listed."""
    cand = candidate(real_run, tmp_path)
    slowed = []
    for r in shmdb_results(cand):
        h = r.get("transactions", "latency")
        if h and h.get("count", 0) >= compare.P99_MIN_SAMPLES:
            scale_hist(h, 4)
            slowed.append(r.guest + "/" + r.name)
            dump_json(r.path, r.doc)
    assert slowed, "the fixture has no transaction histogram to slow down"
    code, doc = run_compare(real_run, cand)
    assert code == 3
    assert doc["latency_verdict"] == "inconclusive (R=1+1)"
    assert not verdicts(doc, "latency")
    got = {i["key"] for i in verdicts(doc, "latency", "inconclusive")
           if i["metric"] == "transactions p99"}
    assert got == set(slowed)
    assert "inconclusive (R=1+1)" in open(os.path.join(
        cand, "compare.md"), encoding="utf-8").read()


def _scaled_pagetables(real_run, tmp_path, k, name="candidate"):
    """Candidate whose biggest PageTables run has per-session bytes x k."""
    cand = str(tmp_path / name)
    shutil.copytree(real_run, cand)
    r = max(shmdb_results(cand), key=lambda r: r.doc["pagetables_delta"])
    r.doc["pagetables_per_session"] *= k
    dump_json(r.path, r.doc)
    return cand, "%s/%s" % (r.guest, r.name), r.doc["pagetables_delta"]


def _pt_verdicts(doc):
    return {(i["key"], i["verdict"]) for i in doc["items"]
            if i["metric"] == "pagetables_per_session" and
            i["verdict"] != "ok"}


def test_more_page_tables_regress_fewer_improve(real_run, tmp_path):
    # 10 % of the biggest delta must be more than the 32-page noise slack.
    cand, key, delta = _scaled_pagetables(real_run, tmp_path, 1.10, "up")
    assert 0.10 * delta > 32 * 4096
    code, doc = run_compare(real_run, cand)
    assert code == 1
    assert _pt_verdicts(doc) == {(key, "regression")}
    # A looser tolerance accepts the 10 % rise.
    code, doc = run_compare(real_run, cand, "--tolerance", "0.11")
    assert not _pt_verdicts(doc)
    cand, key, _ = _scaled_pagetables(real_run, tmp_path, 0.85, "down")
    code, doc = run_compare(real_run, cand)
    assert _pt_verdicts(doc) == {(key, "improved")}


def test_page_table_noise_within_slack(real_run, tmp_path):
    # A rise of 3 % on the biggest delta is over the 2 % tolerance but, when
    # that is fewer pages than the noise slack, no change.
    cand, key, delta = _scaled_pagetables(real_run, tmp_path, 1.03)
    pages = 0.03 * delta / 4096
    code, doc = run_compare(real_run, cand, "--noise-pages",
                            str(int(pages) + 1))
    assert not _pt_verdicts(doc)
    code, doc = run_compare(real_run, cand, "--noise-pages", "0")
    assert _pt_verdicts(doc) == {(key, "regression")}


def test_new_kernel_warning_regresses(real_run, tmp_path):
    cand = candidate(real_run, tmp_path)
    guests = [g for g in rundir.load(cand).guests
              if not (g.doc.get("expect") or {}).get("kernel_warnings")]
    if not guests:
        pytest.skip("every guest of the fixture is expected to warn")
    g = guests[0]
    with open(os.path.join(g.path, "console.log"), "a") as f:
        f.write("[   99.000000] WARNING: CPU: 1 PID: 77 at mm/hugetlb.c:5234 "
                "hugetlb_split+0x3c/0x50\n")
    code, doc = run_compare(real_run, cand)
    assert code == 1
    assert [i["key"] for i in verdicts(doc, "warnings")] == [g.name]


def test_missing_experiment_regresses(real_run, tmp_path):
    cand = candidate(real_run, tmp_path)
    r = next(rundir.load(cand).results())
    os.unlink(r.path)
    gpath = os.path.join(cand, "guests", r.guest, "guest.json")
    gdoc = load_json(gpath)
    gdoc["experiments"] = [e for e in gdoc.get("experiments", [])
                           if e.get("name") != r.name]
    dump_json(gpath, gdoc)
    code, doc = run_compare(real_run, cand)
    assert code == 1
    assert [i["key"] for i in verdicts(doc, "coverage")] == [
        "%s/%s" % (r.guest, r.name)]


def test_deterministic_rule():
    d = compare.deterministic
    assert d("k", "x", "m", 100, 101.9, 0.02, "higher_worse")["verdict"] \
        == "ok"
    assert d("k", "x", "m", 100, 103, 0.02, "higher_worse")["verdict"] \
        == "regression"
    assert d("k", "x", "m", 100, 97, 0.02, "higher_worse")["verdict"] \
        == "improved"
    assert d("k", "x", "m", 100, 97, 0.02, "any")["verdict"] == "regression"
    assert d("k", "x", "m", 100, 97, 0.02, "lower_worse")["verdict"] \
        == "regression"
    assert d("k", "x", "m", 0, 1, 0.02, "any")["verdict"] == "regression"
    assert d("k", "x", "m", 100, 150, 0.02, "higher_worse",
             abs_slack=50)["verdict"] == "ok"
    assert d("k", "x", "m", 100, 151, 0.02, "higher_worse",
             abs_slack=50)["verdict"] == "regression"


def test_lock_family():
    assert latency.lock_family("i_mmap_rwsem") == "i_mmap"
    assert latency.lock_family("vma") == "vma"
    assert latency.lock_family(None) == "none"
