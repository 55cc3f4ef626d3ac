"""Mapper sweeps (sweep.py) on copies of the real disruption fixture: the
same result at several session counts and in both fault-lock modes, with
latencies scaled by known factors."""

import copy
import os

import pytest
from conftest import copy_run, dump_json, fixture_runs
from test_compare import scale_hist

from hugelab_report import latency, plots, render, rundir, summary

DISRUPT = [n for n in fixture_runs() if n.startswith("disrupt-")]


def _scaled(doc, k):
    for _, path in latency.METRICS:
        h = doc
        for key in path:
            h = h.get(key) if isinstance(h, dict) else None
        if h is not None:
            scale_hist(h, k)


@pytest.fixture
def sweep_run(tmp_path):
    """vma at 100 and 1,000 sessions (x1, x2), i_mmap at 100 and 1,000
    (x3, x40) and i_mmap alone at 3,000 (x400): the fixture's aligned
    result is the template; the skewed one is removed."""
    assert DISRUPT, "no disruption fixture"
    d = copy_run(DISRUPT[0], tmp_path / DISRUPT[0])
    run = rundir.load(d)
    res = list(run.results("shmdb"))
    tmpl = [r for r in res if r.config["placement"] == "aligned"][0]
    for r in res:
        os.remove(r.path)
    out = os.path.dirname(tmpl.path)
    for lock, n, k in (("vma", 100, 1), ("vma", 1000, 2),
                       ("i_mmap", 100, 3), ("i_mmap", 1000, 40),
                       ("i_mmap", 3000, 400)):
        doc = copy.deepcopy(tmpl.doc)
        doc["kernel"]["hugetlb_fault_lock"] = lock
        doc["config"]["sessions"] = n
        _scaled(doc, k)
        dump_json(os.path.join(out, "%s-%d.json" % (lock, n)), doc)
    return d


def test_sweep_groups_counts_and_modes(sweep_run):
    lat = latency.analyse(rundir.load(sweep_run))
    (sw,) = lat["sweeps"]
    assert sw["metric"] == "faults_disrupted"
    assert [(p["sessions"], p["lock"]) for p in sw["points"]] == [
        (100, "i_mmap"), (100, "vma"), (1000, "i_mmap"), (1000, "vma"),
        (3000, "i_mmap")]
    rat = {x["sessions"]: x for x in sw["ratios"]}
    assert sorted(rat) == [100, 1000]          # 3,000 has no vma run
    assert rat[100]["max_ratio"] == pytest.approx(3)
    assert rat[1000]["max_ratio"] == pytest.approx(20)
    assert rat[1000]["p99_ratio"] == pytest.approx(20)
    assert rat[100]["runs"] == [1, 1]


def test_first_count_over_two_seconds(sweep_run):
    lat = latency.analyse(rundir.load(sweep_run))
    (sw,) = lat["sweeps"]
    worst = {p["lock"] + str(p["sessions"]): p["max"] for p in sw["points"]}
    # Only the scaled i_mmap runs can reach 2 s: the fixture's own
    # maximum decides which.
    first = sw["stall_2s"]["i_mmap"]["first_over_2s"]
    over = [n for n in (100, 1000, 3000) if worst["i_mmap%d" % n] > 2.1e9]
    assert first == (min(over) if over else None)
    assert sw["stall_2s"]["vma"]["sessions_measured"] == [100, 1000]


def test_no_sweep_from_one_count(tmp_path):
    assert DISRUPT
    d = copy_run(DISRUPT[0], tmp_path / DISRUPT[0])
    lat = latency.analyse(rundir.load(d))
    assert lat["sweeps"] == []      # 200 sessions only


def test_sweep_renders(sweep_run):
    an = summary.analyse(rundir.load(sweep_run))
    hl = an["headline"]["sweeps"]
    assert hl[0]["sessions"] == [100, 1000, 3000]
    assert [r["sessions"] for r in hl[0]["ratios"]] == [100, 1000]
    (lat,) = render.latency_sections(an["latency"])
    caps = [b.get("caption") or "" for b in lat.blocks]
    assert sum(c.startswith("Mapper sweep") for c in caps) == 2
    assert any(b["kind"] == "figure" and "against mappers" in b["caption"]
               for b in lat.blocks)
    (head,) = render.headline_sections(an)
    (row,) = [b for b in head.blocks if b["kind"] == "table" and
              b["caption"].startswith("Fault stalls against")][0]["rows"]
    assert row[2] == "100, 1,000, 3,000"
    assert row[3] == "100: 3.00x, 3.00x; 1,000: 20.0x, 20.0x"
    svg = plots.sweep_plot(an["latency"]["sweeps"][0])
    assert svg.startswith("<svg")
    doc = summary.to_json(an)
    assert doc["latency"]["sweeps"][0]["ratios"]
