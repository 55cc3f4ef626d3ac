"""Each guest's phases (guest.json's phases: boot, install, experiments,
collect) from the marks its lifecycle records, and the batches the report
after each batch names (playbooks/filter_plugins/hugelab_roles.py:
lab_guest_phases, lab_batch_members, lab_batch_pending)."""

import json

import filters
from test_roles_filters import HV, FakeHostVars, guest

F = filters.load("hugelab_roles")

T0 = 1765000000.0


def marks(**offsets):
    """Marks as the lifecycle records them: epoch seconds as text
    (lookup('pipe', 'date +%s.%N'))."""
    return {k: "%.9f" % (T0 + v) for k, v in offsets.items()}


def test_phases_of_a_guest_that_went_through():
    p = F.lab_guest_phases(marks(start=0, boot=41.22, install=71.3,
                                 experiments=301.0, end=301.2,
                                 collect=305.0))
    assert p == {"boot": 41.2, "install": 30.1, "experiments": 229.7,
                 "collect": 3.8, "window": 301.2, "failed_in": None}
    # The phases add up to the batch window (to the rounding).
    assert abs(p["boot"] + p["install"] + p["experiments"] -
               p["window"]) < 0.3


def test_phases_of_a_guest_that_failed_in_install():
    """The phase under way lasts until the batch ended (after the rescue);
    the phases after it did not happen."""
    p = F.lab_guest_phases(marks(start=0, boot=40, end=100))
    assert p == {"boot": 40.0, "install": 60.0, "experiments": None,
                 "collect": None, "window": 100.0, "failed_in": "install"}
    # Dropped without a rescue: no end, so no duration for that phase.
    p = F.lab_guest_phases(marks(start=0, boot=40))
    assert p["failed_in"] == "install" and p["install"] is None
    assert p["window"] is None and p["boot"] == 40.0


def test_phases_without_marks():
    empty = {"boot": None, "install": None, "experiments": None,
             "collect": None, "window": None, "failed_in": None}
    assert F.lab_guest_phases({}) == empty
    assert F.lab_guest_phases(None) == empty
    # A mark that is not a number counts as missing; a clock step back
    # is no negative phase.
    p = F.lab_guest_phases(dict(marks(start=10, install=20, end=25),
                                boot="?"))
    assert p["failed_in"] == "boot" and p["boot"] == 15.0
    p = F.lab_guest_phases(marks(start=10, boot=5, install=20,
                                 experiments=30, end=30))
    assert p["boot"] == 0.0 and p["install"] == 15.0


def test_guest_doc_records_phases_and_experiment_starts():
    g = guest(guest_status="ok",
              guest_phase_marks=marks(start=0, boot=1, install=2,
                                      experiments=3, end=3),
              guest_experiments=[
                  {"name": "a", "program": "shmdb", "status": "ok",
                   "result": "results/a.json", "seconds": "1.0", "rc": "0",
                   "stderr_tail": [],
                   "started_at": "2026-12-07T12:00:00.000Z"},
                  {"name": "b", "program": "shmdb", "status": "ok",
                   "result": "results/b.json", "seconds": "0", "rc": "-1",
                   "stderr_tail": ["result kept"]}])
    doc = F.lab_guest_doc(g, "g", HV)
    assert doc["phases"]["experiments"] == 1.0
    assert doc["phases"]["collect"] is None
    assert doc["experiments"][0]["started_at"] == "2026-12-07T12:00:00.000Z"
    assert "started_at" not in doc["experiments"][1]
    json.dumps(doc)
    assert "phases" not in F.lab_guest_doc(guest(), "g", HV)


def test_batch_members_and_pending():
    hv = FakeHostVars({
        "a": {"guest_batch": {"index": "0", "started_at": "t"}},
        "b": {"guest_batch": {"index": 1, "started_at": "t"}},
        "c": {"guest_batch": {"index": "1", "started_at": "t"}},
        "d": {},
        "e": {}})
    hosts = ["a", "b", "c", "d", "e"]
    assert F.lab_batch_members(hosts, hv, 1) == ["b", "c"]
    assert F.lab_batch_members(hosts, hv, "0") == ["a"]
    assert F.lab_batch_members(hosts, hv, 2) == []
    assert F.lab_batch_pending(hosts, hv) == ["d", "e"]
    assert F.lab_batch_pending(["a", "b"], hv) == []
