"""latency_map.py: the map's rows, the hold fit, the prediction, the
modes compared by the regression run's rule, the headline."""

import json
import os

import pytest

import map_fixture
from conftest import FIXTURES, load_json
from test_golden import approx_equal
from hugelab_report import latency_map as lm

MS = 1_000_000
A, B, C = 2 * MS, 5_000, 900      # ns, ns per VMA, ns per VMA and page


def hold(n, pages):
    return A + B * (n + 1) + C * (n + 1) * pages


def row(mode, n, rng, rnd, stall, hold_ns=None, status="ok", once=True,
        ops=3, net=None):
    nb = {"2M": 2 << 20, "16M": 16 << 20, "128M": 128 << 20,
          "1G": 1 << 30}[rng]
    pages = nb // lm.PAGE
    h = hold(n, pages) if hold_ns is None else hold_ns
    worst = {"latency_ns": stall, "runqueue_ns": stall - (net or stall),
             "cpu_ns": 0, "lock_ns": {"i_mmap_rwsem": net or stall},
             "net_ns": net or stall, "unexplained_ns": 0, "op": "punch"}
    return {"name": "map-n%d-l%s-r%d" % (n, rng, rnd), "mode": mode,
            "mappers": n, "range": rng, "range_bytes": nb, "pages": pages,
            "round": rnd, "status": status, "ops": ops,
            "hold_mean_ns": h, "hold_max_ns": h, "faults": 10,
            "stall_ns": stall, "worst": worst,
            "i_mmap_wait_ns": stall if mode == "i_mmap" else 0,
            "vma_lock_wait_ns": 0, "lost_events": 0, "once": once}


def grid(rounds=3, imm=lambda n, p: hold(n, p), vma=lambda n, p: MS):
    rows = []
    for rnd in range(1, rounds + 1):
        for n in (100, 1000, 3000):
            for rng in ("2M", "128M", "1G"):
                pages = {"2M": 1, "128M": 64, "1G": 512}[rng]
                # rounds differ a little, as real ones do
                k = 1 + 0.01 * rnd
                h = int(imm(n, pages) * k)      # the writer's hold
                rows.append(row("i_mmap", n, rng, rnd, h, hold_ns=h))
                rows.append(row("vma", n, rng, rnd, int(vma(n, pages) * k),
                                hold_ns=h))
    return rows


def test_result_row_reads_a_map_result():
    doc = {"status": "ok", "kernel": {"hugetlb_fault_lock": "i_mmap"},
           "config": {"sessions": 300, "disrupt_len": 128 << 20,
                      "disrupt_once": True},
           "disruptor": {"ops": {"punch": {"count": 8, "duration": {
               "mean": 1.5e8, "max": 2e8}}}},
           "during_disruption": {"faulting": {"count": 5, "max": 119e6}},
           "attribution": {"trace": {"lost_events": 0}, "faults": [
               {"latency_ns": 50e6, "runqueue_ns": 1e6, "cpu_ns": 1e6,
                "lock_ns": {"i_mmap_rwsem": 47e6, "fault mutex": 0},
                "op": "punch"},
               {"latency_ns": 119e6, "runqueue_ns": 9e6, "cpu_ns": 2e6,
                "lock_ns": {"i_mmap_rwsem": 100e6, "hugetlb VMA lock": 3e6},
                "op": "punch"}]}}
    r = lm.result_row(doc, "map-n300-l128M-r2")
    assert (r["mode"], r["mappers"], r["range"], r["pages"], r["round"]) == \
        ("i_mmap", 300, "128M", 64, 2)
    assert (r["ops"], r["hold_mean_ns"], r["stall_ns"]) == (8, 1.5e8, 119e6)
    w = r["worst"]
    assert w["latency_ns"] == 119e6 and w["net_ns"] == 110e6
    assert w["unexplained_ns"] == 119e6 - 9e6 - 2e6 - 103e6
    assert w["lock_ns"] == {"i_mmap_rwsem": 100e6, "hugetlb VMA lock": 3e6}
    assert r["i_mmap_wait_ns"] == 100e6 and r["vma_lock_wait_ns"] == 3e6
    assert lm.result_row(doc, "attr-1") is None


def imm(rows):
    return [r for r in rows if r["mode"] == "i_mmap"]


def test_fit_recovers_the_linear_model():
    f = lm.fit(imm(grid()))
    lin = f["linear"]
    assert lin["a_ns"] == pytest.approx(A * 1.02, rel=0.05)
    assert lin["b_ns_per_vma"] == pytest.approx(B * 1.02, rel=0.05)
    assert lin["c_ns_per_vma_page"] == pytest.approx(C * 1.02, rel=0.02)
    assert lin["rel_residual_max"] < 0.02
    assert f["runs"] == 27 and f["chosen"] == "linear"
    assert f["power"]["rel_residual_median"] > 0.05


def test_fit_recovers_a_power_law():
    def law(n, p):
        return 300 * (n + 1) ** 1.6 * p ** 0.9
    f = lm.fit(imm(grid(imm=law)))
    assert f["chosen"] == "power"
    assert f["power"]["alpha"] == pytest.approx(1.6, abs=0.01)
    assert f["power"]["beta"] == pytest.approx(0.9, abs=0.01)
    assert lm.predict_hold(f, 5000, 512) == pytest.approx(
        law(5000, 512) * 1.02, rel=0.02)
    n = lm.mappers_for(f, 512)
    assert lm.predict_hold(f, n, 512) >= lm.STALL_NS > \
        lm.predict_hold(f, n - 1, 512)


def test_fit_skips_runs_it_cannot_read_and_refuses_too_few():
    rows = grid()
    rows.append(row("i_mmap", 3000, "1G", 4, 1, hold_ns=1, status="fail"))
    rows.append(row("i_mmap", 3000, "1G", 5, 1, hold_ns=1, once=False))
    rows.append(row("i_mmap", 3000, "1G", 6, 1, hold_ns=1, ops=0))
    f = lm.fit(imm(rows))
    assert f["runs"] == 27 and f["linear"]["rel_residual_max"] < 0.02
    # one mapper count only: the per-VMA terms cannot be told apart
    assert lm.fit([r for r in imm(grid()) if r["mappers"] == 1000]) is None
    assert lm.fit(imm(grid())[:3]) is None


def linear(a, b, c):
    return {"chosen": "linear", "linear": {
        "a_ns": a, "b_ns_per_vma": b, "c_ns_per_vma_page": c}}


def test_prediction_is_the_fewest_mappers_reaching_two_seconds():
    f = linear(A, B, C)
    n = lm.mappers_for(f, 512)
    assert lm.predict_hold(f, n, 512) >= lm.STALL_NS
    assert lm.predict_hold(f, n - 1, 512) < lm.STALL_NS
    pr = lm.prediction(f, [("2M", 2 << 20), ("1G", 1 << 30)])
    assert pr["smallest"]["range"] == "1G"
    assert pr["smallest"]["mappers"] == n
    assert pr["per_range"][0]["mappers"] > n
    # a fit that does not grow with mappers predicts nothing
    flat = linear(A, 0, 0)
    assert lm.mappers_for(flat, 512) is None
    assert lm.prediction(flat, [("1G", 1 << 30)])["smallest"] is None


def test_modes_compared_over_rounds_never_one_run():
    v = lm.compare_modes(lm.points(grid()))
    # i_mmap stalls of 2.5 ms and more against 1 ms: separated in every
    # round, declared at the largest points
    assert v["3000/%d" % (1 << 30)] == "longer"
    # two rounds a side cannot reach 5 %: inconclusive, never "not shown"
    v2 = lm.compare_modes(lm.points(grid(rounds=2)))
    assert set(v2.values()) == {"inconclusive"}
    # equal modes: nothing declared
    same = grid(vma=lambda n, p: hold(n, p))
    assert "longer" not in lm.compare_modes(lm.points(same)).values()


def test_sub_millisecond_stalls_do_not_hide_a_separation():
    # three points of run 20261207T121533Z (ms per round): zeros and
    # fractions of a millisecond, shuffled, out-scored the 1,000x gap of
    # 3,000 mappers x 1G before the 1 ms floor
    data = {(1000, "2M"): ([51.72, 0, 0], [0.28, 0, 0.35]),
            (3000, "1G"): ([1455.37, 1453.29, 1037.19], [0.99, 0.05, 0.06]),
            (100, "1G"): ([0, 0, 25.42], [0.02, 0.64, 0])}
    rows = []
    for (n, rng), (im, vm) in data.items():
        for r in range(3):
            rows.append(row("i_mmap", n, rng, r + 1, int(im[r] * MS)))
            rows.append(row("vma", n, rng, r + 1, int(vm[r] * MS)))
    v = lm.compare_modes(lm.points(rows))
    assert v["3000/%d" % (1 << 30)] == "longer"
    assert v["1000/%d" % (2 << 20)] == "not shown"
    assert v["100/%d" % (1 << 30)] == "not shown"


def test_headline_reproduced_only_with_the_lock_not_the_cpu():
    big = 3 * 10 ** 9
    rows = grid()
    rows += [row("i_mmap", 9000, "1G", r, big) for r in (1, 2, 3)]
    rows += [row("vma", 9000, "1G", r, 4 * MS) for r in (1, 2, 3)]
    h = lm.analyse(rows)["headline"]
    assert h.startswith(">2 s reproduced at 9000 mappers and 1G")
    assert "3.00 s of it off the run queue" in h
    assert "per-VMA lock at the same point: 4 ms" in h
    # one round over 2 s is not a reproduction
    rows = grid()
    rows += [row("i_mmap", 9000, "1G", r, s) for r, s in
             ((1, big), (2, 10 * MS), (3, 10 * MS))]
    assert lm.analyse(rows)["headline"].startswith("not reproduced")
    # nor are two rounds, however long
    rows = grid()
    rows += [row("i_mmap", 9000, "1G", r, big) for r in (1, 2)]
    assert lm.analyse(rows)["headline"].startswith("not reproduced")
    # the same stall spent waiting for a CPU is not the seed's stall
    rows = grid()
    rows += [row("i_mmap", 9000, "1G", r, big, net=10 * MS)
             for r in (1, 2, 3)]
    h = lm.analyse(rows)["headline"]
    assert h.startswith("not reproduced up to")
    assert "the fit predicts it at" in h


def test_points_and_table():
    doc = lm.analyse(grid())
    p = next(x for x in doc["points"] if x["mode"] == "i_mmap" and
             x["mappers"] == 1000 and x["range"] == "128M")
    assert p["rounds"] == 3 and len(p["stall_ns"]) == 3
    assert p["hold_fit_ns"] == pytest.approx(hold(1000, 64) * 1.02,
                                             rel=0.02)
    text = lm.table(doc)
    assert "i_mmap: 27 runs; linear" in text and "headline:" in text


def test_prediction_test_confirms_only_with_rounds_and_net_wait():
    f = linear(A, B, C)
    n = lm.mappers_for(f, 512)
    map_doc = {"fits": {"i_mmap": f},
               "prediction": lm.prediction(f, [("1G", 1 << 30)])}
    big = 21 * 10 ** 8
    rows = [row("i_mmap", n, "1G", r, big) for r in (1, 2, 3)] + \
        [row("vma", n, "1G", r, 5 * MS) for r in (1, 2, 3)]
    t = lm.prediction_test(map_doc, rows)
    assert t["mappers"] == n and t["range"] == "1G"
    assert t["predicted_hold_ns"] >= lm.STALL_NS
    assert t["verdict"].startswith("confirmed")
    assert t["modes_verdict"] == "longer"
    # two rounds: inconclusive, whatever they show
    assert lm.prediction_test(map_doc, rows[:2] + rows[3:5])[
        "verdict"].startswith("inconclusive")
    # the stall was a wait for a CPU: not confirmed
    rows = [row("i_mmap", n, "1G", r, big, net=MS) for r in (1, 2, 3)] + \
        rows[3:]
    assert lm.prediction_test(map_doc, rows)["verdict"].startswith(
        "not confirmed")
    assert lm.prediction_test({"fits": {}, "prediction": None}, rows) \
        is None


# Golden: each latency-map fixture (reports/tests/map_fixture.py) reproduces
# its reviewed map, fits, prediction test and all-disruptors attribution.
def map_fixtures():
    if not os.path.isdir(FIXTURES):
        return []
    return sorted(n for n in os.listdir(FIXTURES) if os.path.exists(
        os.path.join(FIXTURES, n, "golden", "latency-map.json")))


def test_there_is_a_map_fixture():
    assert map_fixtures(), "no latency-map fixture under reports/tests"


@pytest.mark.parametrize("name", map_fixtures())
def test_map_fixture_matches_golden(name):
    d = os.path.join(FIXTURES, name)
    approx_equal(json.loads(json.dumps(map_fixture.golden_map(
        d, os.path.join(d, "prediction")))),
        load_json(os.path.join(d, "golden", "latency-map.json")))
    approx_equal(
        map_fixture.golden_attribution(os.path.join(d, "all-disruptors")),
        load_json(os.path.join(d, "golden",
                               "attribution-all-disruptors.json")))
