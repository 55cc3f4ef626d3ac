"""Issue 12's scale figures: PUD pages and MAP_PRIVATE in the model, the
seed's 39 GB measured at 1 TiB, and shmdb's attach cost against the
forktouch baseline, on real smoke-harness results (tests/scale-results/)."""

import json
import os
import shutil

import pytest
from conftest import HERE, copy_run, fixture_runs, load_json

from hugelab_report import model, rundir, savings
from hugelab_report.model import GiB, MiB, TiB

SCALE = os.path.join(HERE, "scale-results")
SMOKE = [n for n in fixture_runs() if n.startswith("smoke-")]


def test_pud_pages_per_512_gib_region_beyond_the_first():
    assert model.pud_pages(TiB, 512 * GiB) == 2
    assert model.pud_pages(TiB, 512 * GiB + 2 * MiB) == 3
    assert model.pud_pages(TiB, 128 * GiB) == 2
    assert model.pud_pages(64 * GiB, 128 * GiB) == 0
    assert model.pud_pages(64 * GiB, 480 * GiB) == 1
    assert model.pud_pages(GiB, None) == 0


def test_1t_unshared_and_shared():
    a = 512 * GiB
    u = model.Expectation("2m-private", TiB, 1000, address=a + 2 * MiB)
    assert u.slots == 1025 and u.pud_pages == 3
    assert u.marginal_pages == 1025           # PageTables of 6.1: no PUD
    assert u.memory_marginal_pages == 1028
    assert not u.sharing
    u = model.Expectation("2m-private", TiB, 1000, address=a + 2 * MiB,
                          pud_counted=True)
    assert u.marginal_pages == 1028
    s = model.Expectation("2m-aligned", TiB, 10000, address=a)
    assert s.sharing and s.pages == 1024
    # a skewed *shared* 1 TiB shares its 1023 inner slots
    k = model.Expectation("2m-skewed", TiB, 1000, address=a + 2 * MiB)
    assert k.marginal_pages == 2 and k.full_slots == 1023
    # the seed's 39 GB: 1024 x 4 KiB x 9,999
    assert model.sharing_savings(TiB, 10000) == 1024 * 4096 * 9999
    saved = model.sharing_savings(TiB, 10000) / GiB
    assert saved == pytest.approx(39.06, abs=0.01)


def test_mode_and_address_of_config():
    assert model.mode_of({"page_size": 2 * MiB, "map": "private",
                          "placement": "skewed"}) == "2m-private"
    assert model.mode_of({"page_size": 2 * MiB}) == "2m-aligned"
    assert model.address_of({"address": "0x8000200000"}) == 512 * GiB + 2 * MiB
    assert model.address_of({"address": "bogus"}) is None
    assert model.address_of({}) is None


@pytest.fixture
def scale_run(tmp_path):
    assert SMOKE, "no smoke fixture"
    run = copy_run(SMOKE[0], tmp_path / SMOKE[0])
    dest = os.path.join(run, "guests", "stock", "results")
    for f in os.listdir(SCALE):
        if f.endswith(".json"):
            shutil.copy(os.path.join(SCALE, f), dest)
    return run


def test_seed_scale_measured(scale_run):
    an = savings.analyse(rundir.load(scale_run))
    (x,) = an["seed_scale"]
    assert x["unshared"] == "sp1t-private-skewed"
    assert x["shared"] == "sp1t-aligned"
    # 50 unshared sessions: 1025 PMD pages each (6.1 counts no PUD pages)
    assert x["unshared_model_per_session_bytes"] == 1025 * 4096
    assert x["unshared_per_session_bytes"] == pytest.approx(1025 * 4096,
                                                            rel=0.001)
    # shared: the 1024 PMD pages once among 50
    assert x["shared_per_session_bytes"] == pytest.approx(1024 * 4096 / 50)
    assert x["saved_bytes"] / GiB == pytest.approx(39.06, rel=0.005)
    rows = {r["experiment"]: r for r in an["rows"]}
    assert rows["sp1t-private-skewed"]["pud_pages"] == 3
    assert rows["sp1t-aligned"]["pud_pages"] == 2
    assert rows["sp1t-aligned"]["touch"] == "sparse"
    doc = load_json(os.path.join(SCALE, "sp1t-aligned.json"))
    assert doc["model"]["pud_counted"] is False


def _row(mode, size, measured_pages, n=1000):
    exp = model.Expectation(mode, size, n)
    return {"guest": "pg", "experiment": "%s-%d" % (mode, size >> 30),
            "mode": mode, "size": size, "sessions": n, "disrupt": [],
            "model_pages": exp.pages, "model_sharing": exp.sharing,
            "measured_bytes": measured_pages * 4096, "counters": {},
            "model_share_events": exp.shared_pmd_events}


def test_aligned_pairs_with_a_skewed_run_that_shares_its_inner_slots():
    """inventories/pg's shmdb runs: 4 GiB aligned (4 shared slots) and
    skewed (3 shared, 2 partial): the headline said sharing was 'not
    measured' because both sides share."""
    al = _row("2m-aligned", 4 * GiB, 4)
    sk = model.Expectation("2m-skewed", 4 * GiB, 1000)
    assert sk.sharing and sk.pages - al["model_pages"] >= 2 * 999
    sk = _row("2m-skewed", 4 * GiB, sk.pages)
    (p,) = savings.pairs_of([al, sk])
    assert p["shared_experiments"] == [al["experiment"]]
    assert p["unshared_experiments"] == [sk["experiment"]]
    assert p["model_saved_pages"] == sk["model_pages"] - al["model_pages"]
    assert p["bytes_per_pmd_page"] == pytest.approx(4096)
    # never the other way round, nor two aligned runs
    assert savings.pairs_of([sk]) == []
    assert savings.pairs_of([al, _row("2m-aligned", 2 * GiB, 2)]) == []


def test_baseline_pairs(scale_run):
    an = savings.analyse(rundir.load(scale_run))
    (p,) = [p for p in an["baseline"] if "sh-1000-fork" in p["experiments"]]
    # the smoke fixture's aligned-2m has the same segment and sessions
    assert sorted(p["experiments"]) == ["aligned-2m", "sh-1000-fork"]
    assert p["baselines"] == ["ft-1000-fork"]
    assert p["sessions"] == 1000
    sh = [load_json(os.path.join(SCALE, "sh-1000-fork.json"))["attach"],
          results_attach(scale_run, "aligned-2m")]
    ft = load_json(os.path.join(SCALE, "ft-1000-fork.json"))["attach"]
    # medians of two runs: their average
    mean = sum(a["per_session"]["mean"] for a in sh) / 2
    total = sum(a["total_s"] for a in sh) / 2
    assert p["mean_ratio"] == pytest.approx(mean / ft["per_session"]["mean"])
    assert p["total_ratio"] == pytest.approx(total / ft["total_s"])
    # recorded before the CPU time was: no CPU ratio, not 0
    assert p["cpu_ns"] is None and p["cpu_ratio"] is None


def test_baseline_cpu_ratio(scale_run):
    """The goal's figure: the median CPU time per process of each side."""
    res = os.path.join(scale_run, "guests", "stock", "results")
    cpu = {"aligned-2m": 300e3, "sh-1000-fork": 500e3, "ft-1000-fork": 200e3}
    for name, mean in cpu.items():
        path = os.path.join(res, name + ".json")
        doc = load_json(path)
        doc["attach"]["cpu_per_session"] = {"count": 1000, "mean": mean}
        with open(path, "w") as f:
            json.dump(doc, f)
    an = savings.analyse(rundir.load(scale_run))
    (p,) = [p for p in an["baseline"] if "sh-1000-fork" in p["experiments"]]
    assert p["cpu_ns"] == pytest.approx(400e3)      # median of 300 and 500
    assert p["baseline_cpu_ns"] == pytest.approx(200e3)
    assert p["cpu_ratio"] == pytest.approx(2.0)


def results_attach(run_dir, name):
    return load_json(os.path.join(run_dir, "guests", "stock", "results",
                                  name + ".json"))["attach"]
