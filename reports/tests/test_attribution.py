"""attribution.py: the long faults' breakdown (shmdb --attribute)."""

import json
import os

import pytest

from conftest import FIXTURES, fixture_runs, load_json
from hugelab_report import attribution as at

MS = 1_000_000


def op(seq, name, start, end):
    return {"seq": seq, "op": name, "start_ns": start, "end_ns": end}


def wait(lock, start, length, runnable=0):
    return {"lock": lock, "site": "hugetlb_fault", "start_ns": start,
            "ns": length, "runnable_ns": runnable}


def fault(lat, rq=0, cpu=0, waits=(), start=0):
    locks = dict.fromkeys(at.LOCKS, 0)
    for w in waits:
        locks[w["lock"]] += w["ns"]
    return {"session": 0, "pid": 7, "start_ns": start, "latency_ns": lat,
            "runqueue_ns": rq, "cpu_ns": cpu, "op": None,
            "lock_ns": locks, "waits": list(waits)}


def test_overlap():
    assert at.overlap(0, 10, 5, 20) == 5
    assert at.overlap(0, 10, 10, 20) == 0
    assert at.overlap(5, 6, 0, 20) == 1
    assert at.overlap(30, 40, 0, 20) == 0


def test_holder_is_the_op_overlapping_most():
    ops = [op(1, "punch", 0, 12), op(3, "truncate", 12, 100)]
    assert at.holder(wait("i_mmap_rwsem", 10, 20), ops)["op"] == "truncate"
    assert at.holder(wait("i_mmap_rwsem", 0, 11), ops)["op"] == "punch"
    assert at.holder(wait("i_mmap_rwsem", 200, 5), ops) is None
    # never blocked inside the fault: its runnable part
    assert at.holder(wait("i_mmap_rwsem", 5, 0, runnable=5),
                     ops)["op"] == "punch"
    assert at.holder(wait("i_mmap_rwsem", 5, 0), ops) is None


def test_fault_parts():
    ops = [op(1, "punch", 0, 50 * MS)]
    f = fault(100 * MS, rq=20 * MS, cpu=5 * MS,
              waits=[wait("i_mmap_rwsem", 10 * MS, 60 * MS, 3 * MS),
                     wait("fault mutex", 90 * MS, 1 * MS)])
    p = at.fault_parts(f, ops)
    assert p["lock"]["i_mmap_rwsem"] == 60 * MS
    assert p["lock"]["fault mutex"] == 1 * MS
    assert p["unexplained"] == (100 - 20 - 5 - 61) * MS
    assert p["holder"] == "punch"
    # waits that overlap no operation; no wait at all; not traced
    assert at.fault_parts(f, [])["holder"] == at.NO_OP
    assert at.fault_parts(fault(10 * MS), ops)["holder"] == at.NO_WAIT
    # a wait under HOLDER_MIN_NS (an uncontended lockdep mutex_lock)
    short = fault(20 * MS, waits=[wait("fault mutex", 0, 5000)])
    assert at.fault_parts(short, ops)["holder"] == at.NO_WAIT
    untraced = dict(f, lock_ns=None, waits=None)
    p = at.fault_parts(untraced, ops)
    assert p["lock"] is None and p["holder"] is None
    assert p["unexplained"] == 75 * MS


def test_holder_of_the_longest_wait_that_overlaps_one():
    ops = [op(1, "punch", 0, 5 * MS), op(3, "truncate", 40 * MS, 60 * MS)]
    f = fault(100 * MS, waits=[wait("fault mutex", 1 * MS, 2 * MS),
                               wait("i_mmap_rwsem", 10 * MS, 20 * MS),
                               wait("i_mmap_rwsem", 45 * MS, 10 * MS)])
    # the longest (10-30 ms) overlaps none: the next longest's holder
    assert at.fault_parts(f, ops)["holder"] == "truncate"


def test_breakdown_thresholds():
    ops = [op(1, "punch", 0, 10_000 * MS)]
    faults = [fault(12 * MS, rq=12 * MS),
              fault(150 * MS, waits=[wait("hugetlb VMA lock", 0, 140 * MS)]),
              fault(2500 * MS, cpu=100 * MS,
                    waits=[wait("i_mmap_rwsem", 0, 2000 * MS)])]
    b = at.breakdown(faults, ops)
    assert [b[k]["count"] for k, _ in at.THRESHOLDS] == [3, 2, 1, 1]
    ten = b["10ms"]
    assert ten["latency_ns"] == 2662 * MS and ten["max_ns"] == 2500 * MS
    assert ten["runqueue_ns"] == 12 * MS and ten["cpu_ns"] == 100 * MS
    assert ten["lock_ns"]["hugetlb VMA lock"] == 140 * MS
    assert ten["lock_ns"]["i_mmap_rwsem"] == 2000 * MS
    assert ten["unexplained_ns"] == (10 + 400) * MS
    assert ten["holders"] == {"no lock wait": 1, "punch": 2}
    assert b["2s"]["holders"] == {"punch": 1}
    assert b["1s"]["lock_ns"]["hugetlb VMA lock"] == 0
    empty = at.breakdown([], ops)["2s"]
    assert empty["count"] == 0 and empty["max_ns"] is None


def test_every_part_adds_up_to_the_latency():
    f = fault(100 * MS, rq=7 * MS, cpu=3 * MS,
              waits=[wait("other", 0, 11 * MS), wait("mmap_lock", 20, 1)])
    p = at.fault_parts(f, [])
    assert (p["runqueue"] + p["cpu"] + sum(p["lock"].values()) +
            p["unexplained"]) == p["latency"]


def test_result_row_without_attribution_or_trace():
    assert at.result_row({"program": "shmdb"}) is None
    doc = {"kernel": {"hugetlb_fault_lock": "i_mmap"},
           "transactions": {"per_s": 5.0},
           "attribution": {"min_latency_ns": 10 * MS, "faults_kept": 1,
                           "faults_dropped": 3,
                           "trace": {"available": False,
                                     "error": "no tracefs"},
                           "faults": [fault(20 * MS, rq=5 * MS)],
                           "ops": []}}
    r = at.result_row(doc)
    assert r["lock"] == "i_mmap" and not r["traced"]
    assert r["trace_error"] == "no tracefs" and r["dropped"] == 3
    assert r["over"]["10ms"]["lock_ns"] is None
    assert r["over"]["10ms"]["holders"] is None
    assert r["over"]["10ms"]["unexplained_ns"] == 15 * MS


ATTR_RUNS = [n for n in fixture_runs() if n.startswith("attr-")]


@pytest.mark.parametrize("name", ATTR_RUNS)
def test_fixture_attribution_golden(name):
    """The breakdown of the committed real run, against its golden
    summary.json (written by make golden, reviewed), and what such a run
    must show whatever the figures: the parts add up to the latency, and
    with hugetlb_fault_lock=i_mmap the faults wait on i_mmap_rwsem, more
    than on the VMA lock and far more than the vma run's faults do."""
    from hugelab_report import rundir, summary
    run = rundir.load(os.path.join(FIXTURES, name))
    got = json.loads(json.dumps(at.analyse(run)))
    golden = load_json(os.path.join(FIXTURES, name, "golden",
                                    "summary.json"))["attribution"]
    assert summary.clean(got) == golden
    assert got["rows"], "no attributed result in %s" % name
    ten = {}
    for r in got["rows"]:
        t = ten[r["lock"]] = r["over"]["10ms"]
        assert r["traced"] and t["count"] > 0
        parts = (t["runqueue_ns"] + t["cpu_ns"] +
                 sum(t["lock_ns"].values()) + t["unexplained_ns"])
        assert parts == t["latency_ns"]
    if "i_mmap" in ten:
        im = ten["i_mmap"]["lock_ns"]
        assert im["i_mmap_rwsem"] > im["hugetlb VMA lock"]
        if "vma" in ten:
            assert im["i_mmap_rwsem"] > 10 * ten["vma"]["lock_ns"][
                "i_mmap_rwsem"]
