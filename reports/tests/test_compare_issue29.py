"""Issue 29, compare part: each case of the issue reproduced on copies of
the committed regression fixtures (tests/fixtures/regress), before and
after the change."""

import os
import shutil

import pytest
from conftest import dump_json, load_json

import regress_golden as rg
from hugelab_report import cli, compare, latency

FAULTLOCK = [n for n in rg.fixtures() if n.startswith("faultlock-2")][0]
AA = [n for n in rg.fixtures() if n.startswith("aa-")][0]
CANARY = [n for n in rg.fixtures() if n.startswith("canary-")][0]
REVERSE = [n for n in rg.fixtures() if n.startswith("faultlock-reverse")][0]


def rounds(name, tmp_path):
    """Writable copies of a regression fixture's rounds, in round order."""
    dest = str(tmp_path / name)
    shutil.copytree(os.path.join(rg.FIXTURES, name), dest)
    return rg.rounds_of(dest)


def twin_results(run, side):
    """{experiment: path} of the `side` twin of one round."""
    g = os.path.join(run, "guests", "hl-rg-" + side[:4])
    return {f[:-5]: os.path.join(g, "results", f)
            for f in os.listdir(os.path.join(g, "results"))}


def edit(path, fn):
    doc = load_json(path)
    fn(doc)
    dump_json(path, doc)


def run(argv, capsys):
    code = cli.main(argv)
    err = capsys.readouterr().err
    return code, err


def one_line(err):
    lines = err.strip().splitlines()
    return len(lines) == 1 and "Traceback" not in err


# --- 3. a crash is exit 2, one line, never 1 --------------------------------
# An unreadable console.log is no crash any more (render shows it as a
# finding), but compare still refuses the run: its kernel findings are
# unknown, on either side (reports/README.md, "compare").
@pytest.mark.parametrize("side", ["cand", "base"])
def test_console_log_that_is_a_directory_is_exit_2(tmp_path, capsys, side):
    rs = rounds(AA, tmp_path)
    c = os.path.join(rs[0], "guests", "hl-rg-" + side, "console.log")
    os.unlink(c)
    os.mkdir(c)
    out = tmp_path / "o"
    code, err = run(["compare", "--twins"] + rs + ["--out", str(out)],
                    capsys)
    assert code == 2 and one_line(err), err
    assert c in err and "unreadable" in err, err
    assert not (out / "compare.json").exists()


def test_console_log_symlink_loop_is_exit_2(tmp_path, capsys):
    rs = rounds(AA, tmp_path)
    c = os.path.join(rs[1], "guests", "hl-rg-cand", "console.log")
    os.unlink(c)
    os.symlink("console.log", c)
    code, err = run(["compare", "--twins"] + rs + ["--out",
                                                   str(tmp_path / "o")],
                    capsys)
    assert code == 2 and one_line(err) and c in err, err


def test_absent_console_log_is_no_console(tmp_path, capsys):
    """Absent is not unreadable: the A/A proof still passes."""
    rs = rounds(AA, tmp_path)
    os.unlink(os.path.join(rs[0], "guests", "hl-rg-cand", "console.log"))
    code, err = run(["compare", "--twins"] + rs + ["--out",
                                                   str(tmp_path / "o")],
                    capsys)
    assert code == 0, err


def test_unwritable_compare_md_is_exit_2(tmp_path, capsys):
    rs = rounds(AA, tmp_path)
    out = tmp_path / "o"
    (out / "compare.md.tmp").mkdir(parents=True)
    code, err = run(["compare", "--twins"] + rs + ["--out", str(out)],
                    capsys)
    assert code == 2 and one_line(err), err


def test_internal_error_is_exit_2(tmp_path, capsys, monkeypatch):
    rs = rounds(AA, tmp_path)

    def boom(*a, **k):
        raise RuntimeError("bug")
    monkeypatch.setattr(compare, "compare", boom)
    code, err = run(["compare", "--twins"] + rs + ["--out",
                                                   str(tmp_path / "o")],
                    capsys)
    assert code == 2 and one_line(err) and "bug" in err, err


def test_bad_option_is_exit_2_on_one_line(capsys):
    code, err = run(["compare", "--threshold", "x", "a", "b"], capsys)
    assert code == 2 and one_line(err), err


def scale_hist(h, k):
    """A latency histogram k times slower (k < 1: faster)."""
    for key in ("sum", "min", "max", "p50", "p90", "p99", "p999"):
        if isinstance(h.get(key), (int, float)):
            h[key] = h[key] * k
    h["buckets"] = [[b * k, n] for b, n in h["buckets"]]


def inject(rs, experiment, path, k, side="candidate"):
    """Scale histogram `path` of `experiment` on `side` in every round."""
    for r in rs:
        def fn(doc):
            h = doc
            for p in path:
                h = h[p]
            scale_hist(h, k)
        edit(twin_results(r, side)[experiment], fn)


PUNCH = "latency-punch-skewed-3000"


def twins(rs, tmp_path, capsys=None):
    out = str(tmp_path / "cmp")
    code = cli.main(["compare", "--twins"] + rs + ["--out", out])
    doc = load_json(os.path.join(out, "compare.json")) \
        if os.path.exists(os.path.join(out, "compare.json")) else None
    return code, doc


def verdict_of(doc, metric, key="hl-rg/" + PUNCH):
    (it,) = [i for i in doc["items"] if i["key"] == key and
             i["metric"] == metric]
    return it["verdict"]


# --- 1. an improvement must not hide a regression ---------------------------
def test_improvement_does_not_hide_the_fault_lock_regression(tmp_path):
    rs = rounds(FAULTLOCK, tmp_path)
    inject(rs, PUNCH, ("faults", "first_touch"), 0.1)
    code, doc = twins(rs, tmp_path)
    assert verdict_of(doc, "faulting_disrupted p50") == "regression"
    assert verdict_of(doc, "faults p50") == "improved"
    assert code == 1


# --- 5. too little evidence is inconclusive (exit 3) -------------------------
@pytest.mark.parametrize("r", [1, 2])
def test_too_few_rounds_are_inconclusive(r, tmp_path):
    rs = rounds(AA, tmp_path)[:r]
    code, doc = twins(rs, tmp_path)
    assert (code, doc["status"]) == (3, "inconclusive")
    assert doc["latency_verdict"].startswith("inconclusive")


def test_figure_missing_from_one_round_is_inconclusive(tmp_path):
    rs = rounds(AA, tmp_path)

    def drop(doc):
        del doc["during_disruption"]["faulting"]
    edit(twin_results(rs[1], "candidate")[PUNCH], drop)
    code, doc = twins(rs, tmp_path)
    assert (code, doc["status"]) == (3, "inconclusive")
    assert verdict_of(doc, "faulting_disrupted p50") == "inconclusive"


# --- a p99 below its sample floor: skipped, neither judged nor missing ------
def test_p99_of_fewer_than_100_samples_is_skipped_not_missing(tmp_path):
    """The A/A punch run's faulting_disrupted has 53-142 samples a run:
    its p99 is not compared (render does not show it either), the A/A
    proof stays exit 0 and the power statement is made of the rest."""
    rs = rounds(AA, tmp_path)
    code, doc = twins(rs, tmp_path)
    assert (code, doc["status"], doc["latency_verdict"]) == (0, "ok", "ok")
    (it,) = [i for i in doc["items"] if i["key"] == "hl-rg/" + PUNCH and
             i["metric"] == "faulting_disrupted p99"]
    assert it["verdict"] == "skipped"
    assert it["detail"].startswith(
        "not compared (fewer than 100 samples in some run, where p99 is "
        "the maximum)")
    assert isinstance(it["baseline"], list)
    assert isinstance(it["candidate"], list)
    assert min(n for side in it["samples"].values() for n in side) < 100
    assert "power" not in it and "paired" not in it
    assert doc["settings"]["min_samples"] == \
        latency.PERCENTILE_MIN_SAMPLES[99] == compare.P99_MIN_SAMPLES
    assert doc["counts"]["skipped"] >= 1
    assert 0 < doc["power"]["figures"] <= doc["false_alarm"]["items"]
    assert doc["power"]["statement"] in doc["verdict"]
    assert "faulting_disrupted p99" not in doc["verdict"]


def test_compare_judges_a_p99_exactly_where_render_shows_it(tmp_path):
    """One rule for both: a p99 is judged when render's latency.summary
    has a p99 for that histogram in every run of both sides."""
    rs = rounds(FAULTLOCK, tmp_path)
    code, doc = twins(rs, tmp_path)
    base, cand, _ = cli.twin_sides(rs)
    shown = {}
    for run in base + cand:
        for row in latency.rows_of(run):
            key = "%s/%s" % (row["guest"], row["experiment"])
            for label, s in row["metrics"].items():
                shown.setdefault((key, label + " p99"), []).append(
                    s["p99"] is not None)
    assert any(not all(v) for v in shown.values())
    for i in doc["items"]:
        if i["kind"] != "latency" or not i["metric"].endswith(" p99") or \
                i["metric"].startswith("disruptor."):
            continue
        every = all(shown[(i["key"], i["metric"])]) and \
            len(shown[(i["key"], i["metric"])]) == len(base) + len(cand)
        assert (i["verdict"] != "skipped") == every, i


def test_p99_below_the_floor_in_one_round_only_is_skipped(tmp_path):
    """One baseline round with 99 samples of transactions (p99 shown in
    the others) skips that p99; the A/A stays exit 0, not exit 3."""
    rs = rounds(AA, tmp_path)

    def thin(doc):
        h = doc["transactions"]["latency"]
        h["buckets"] = [[h["buckets"][-1][0], 99]]
        h["count"] = 99
        h["min"] = h["max"] = h["buckets"][-1][0]
        h.pop("sum", None)
    edit(twin_results(rs[2], "baseline")[PUNCH], thin)
    code, doc = twins(rs, tmp_path)
    assert code == 0, doc["verdict"]
    assert verdict_of(doc, "transactions p99") == "skipped"
    assert verdict_of(doc, "transactions p50") != "inconclusive"


# --- 2. bad numbers are refused, not judged ---------------------------------
def _nan_pagetables(doc):
    doc["pagetables_per_session"] = float("nan")


def _negative_buckets(doc):
    h = doc["faults"]["first_touch"]
    h["buckets"] = [[-b, n] for b, n in h["buckets"]]


def _nan_max(doc):
    doc["during_disruption"]["faulting"]["max"] = float("nan")


def _inf_pagetables(doc):
    doc["pagetables_per_session"] = float("inf")


@pytest.mark.parametrize("experiment,side,fn", [
    ("savings-2m-aligned-1000", "candidate", _nan_pagetables),
    (PUNCH, "candidate", _negative_buckets),
    (PUNCH, "candidate", _nan_max),
    ("savings-2m-aligned-1000", "baseline", _inf_pagetables),
])
def test_bad_numbers_are_exit_2(experiment, side, fn, tmp_path, capsys):
    rs = rounds(AA, tmp_path)
    for r in rs:
        edit(twin_results(r, side)[experiment], fn)
    code, err = run(["compare", "--twins"] + rs + ["--out",
                                                   str(tmp_path / "o")],
                    capsys)
    assert code == 2 and one_line(err), err
    assert experiment in err


# --- 4. runs that are not comparable are refused ----------------------------
def test_mixed_proofs_on_one_side_are_refused(tmp_path, capsys):
    rs = rounds(FAULTLOCK, tmp_path)[:2] + rounds(REVERSE, tmp_path)[2:]
    code, err = run(["compare", "--twins"] + rs + ["--out",
                                                   str(tmp_path / "o")],
                    capsys)
    assert code == 2 and one_line(err), err
    assert "command line" in err


def test_the_same_round_three_times_is_refused(tmp_path, capsys):
    rs = rounds(AA, tmp_path)[:1] * 3
    code, err = run(["compare", "--twins"] + rs + ["--out",
                                                   str(tmp_path / "o")],
                    capsys)
    assert code == 2 and "given twice" in err, err


def test_changed_workload_is_refused(tmp_path, capsys):
    rs = rounds(FAULTLOCK, tmp_path)

    def faster(doc):
        doc["config"]["disrupt_interval_ms"] = 10
        doc["config"]["duration_s"] = 5.0
    for r in rs:
        edit(twin_results(r, "candidate")[PUNCH], faster)
    code, err = run(["compare", "--twins"] + rs + ["--out",
                                                   str(tmp_path / "o")],
                    capsys)
    assert code == 2 and one_line(err), err
    assert "workload" in err and "differs" in err


# --- 6. known failures match by round and message ---------------------------
def _check(name, status, msg="", suite="run"):
    return {"suite": suite, "name": name, "status": status, "message": msg}


def test_known_failure_needs_the_same_round_and_message():
    ok = [_check("guest status", "pass")]
    base = [[_check("guest status", "fail", "timed out after 600 s")], ok,
            ok]
    cand = [ok, ok, [_check("guest status", "fail", "kernel panic")]]
    (it,) = compare.check_items(base, cand, paired=True)
    assert it["verdict"] != "known-failure"
    # the same failure, same round, other figures: known
    cand = [[_check("guest status", "fail", "timed out after 612 s")], ok,
            ok]
    (it,) = compare.check_items(base, cand, paired=True)
    assert it["verdict"] == "known-failure"
    # ... in another round: new there
    cand = [ok, [_check("guest status", "fail", "timed out after 612 s")],
            ok]
    (it,) = compare.check_items(base, cand, paired=True)
    assert it["verdict"] != "known-failure"


# --- 8. direction is part of the rule; each rule's false-alarm rate ---------
def test_pmd_share_counter_rising_is_an_improvement(tmp_path):
    rs = rounds(AA, tmp_path)

    def more(k):
        def fn(doc):
            vm = doc["vmstat_delta"]
            for c in ("htlb_pmd_share", "htlb_pmd_unshare"):
                vm[c] = int(vm[c] * k)
        return fn
    for r in rs:
        edit(twin_results(r, "candidate")["savings-2m-aligned-1000"],
             more(1.2))
    code, doc = twins(rs, tmp_path)
    key = "hl-rg/savings-2m-aligned-1000"
    assert verdict_of(doc, "htlb_pmd_share", key) == "improved"
    assert code == 0
    for r in rs:
        edit(twin_results(r, "candidate")["savings-2m-aligned-1000"],
             more(0.5 / 1.2))
    code, doc = twins(rs, tmp_path)
    assert verdict_of(doc, "htlb_pmd_share", key) == "regression"
    assert code == 1


def test_flaky_check_false_alarm_rate_is_within_the_bound():
    """A check failing 10 % of the time at random, 3 + 3 rounds: the
    checks rule calls it a regression in at most 5 % of comparisons
    (measured 0.07 %: q^3 (1 - q)^3), where "failing in some candidate
    round and no baseline round" did in 20 %."""
    import random
    rnd = random.Random(5)
    trials, alarms = 4000, 0
    for _ in range(trials):
        runs = [[_check("c", "fail" if rnd.random() < 0.1 else "pass",
                        "m")] for _ in range(6)]
        its = compare.check_items(runs[:3], runs[3:], paired=True)
        alarms += any(i["verdict"] == "regression" for i in its)
    assert alarms / trials < 0.01
    # a check failing in every candidate round is still caught
    its = compare.check_items([[_check("c", "pass")]] * 3,
                              [[_check("c", "fail", "m")]] * 3, paired=True)
    assert its[0]["verdict"] == "regression"


# --- 7. the pairing of twins and the power statement ------------------------
def test_sign_flip_is_exact():
    from hugelab_report import maxt
    assert maxt.sign_flip([1.0, 2.0, 3.0]) == (0.125, 1.0)
    assert maxt.sign_flip([-1.0, -2.0, -3.0]) == (1.0, 0.125)
    pr, pi = maxt.sign_flip([1.0, -2.0, 3.0])
    assert pr == 0.375


def test_verdict_carries_power_and_pairing(tmp_path):
    code, doc = twins(rounds(AA, tmp_path), tmp_path)
    assert code == 0
    assert doc["verdict"].startswith("no regression detected; with these "
                                     "runs' noise")
    assert doc["power"]["figures"] > 0
    judged = [i for i in doc["items"] if i.get("power")]
    assert judged and all(set(i["power"]) == {"2", "10", "30"}
                          for i in judged)
    assert doc["pairing"]["smallest_p"] == 0.125
    it = [i for i in doc["items"] if i.get("paired")][0]
    assert len(it["paired"]["ratios"]) == 3
    md = open(str(tmp_path / "cmp" / "compare.md")).read()
    assert "P(caught) 2x / 10x / 30x" in md and "Pairing" in md


# --- 9. compare.html: self-contained, with the runs plotted -----------------
def test_compare_html_is_self_contained_with_a_plot(tmp_path):
    code, doc = twins(rounds(FAULTLOCK, tmp_path), tmp_path)
    assert code == 1
    html = open(str(tmp_path / "cmp" / "compare.html")).read()
    assert html.count("<svg") == 1 and "<script" not in html
    assert "src=\"http" not in html and "href=\"http" not in html
    assert "faulting_disrupted p50" in html and "P(caught)" in html
    assert doc["verdict"] in html
