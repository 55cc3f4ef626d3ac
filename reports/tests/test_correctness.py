"""Correctness checks on the real smoke fixture (it has a guest meant to
panic) and the console scan."""

import os

import pytest
from conftest import copy_run, dump_json, fixture_runs, load_json

from hugelab_report import correctness, rundir

SMOKE = [n for n in fixture_runs() if n.startswith("smoke-")]


@pytest.fixture
def smoke(tmp_path):
    assert SMOKE, "no smoke fixture"
    return copy_run(SMOKE[0], tmp_path / SMOKE[0])


def negative_guest(run):
    for g in run.guests:
        if (g.doc.get("expect") or {}).get("status") == "panic":
            return g
    pytest.fail("the smoke fixture has no guest expected to panic")


def checks_of(run_dir, guest):
    run = rundir.load(run_dir)
    g = [g for g in run.guests if g.name == guest][0]
    return {c["name"]: c for c in correctness.guest_of(g)["checks"]}


def test_expected_panic_is_not_a_failure(smoke):
    g = negative_guest(rundir.load(smoke))
    assert g.status == "panic"
    cs = checks_of(smoke, g.name)
    assert cs["%s guest status" % g.name]["status"] == "pass"
    assert cs["%s kernel warning reproduced" % g.name]["status"] == "pass"
    assert not [c for c in cs.values() if c["status"] == "fail"]


def test_same_panic_unexpected_fails(smoke):
    g = negative_guest(rundir.load(smoke))
    path = os.path.join(g.path, "guest.json")
    doc = load_json(path)
    del doc["expect"]
    dump_json(path, doc)
    cs = checks_of(smoke, g.name)
    assert cs["%s guest status" % g.name]["status"] == "fail"
    assert cs["%s no kernel warnings" % g.name]["status"] == "fail"
    assert "Kernel panic" in cs["%s no kernel warnings" % g.name]["output"]


def test_console_scan_skips_program_output():
    text = ("[    1.0] booting\n"
            "|| WARNING: this is a program's stderr\n"
            "hugelab-init: BUG: not the kernel either\n"
            "[    2.0] ok\n")
    assert correctness.console_findings(text) == (0, [])
    n, excerpt = correctness.console_findings(
        text + "[    3.0] WARNING: CPU: 0 PID: 1 at mm/hugetlb.c:1 x\n")
    assert n == 1
    assert excerpt[-1].endswith("mm/hugetlb.c:1 x")
    assert "|| WARNING" not in "\n".join(excerpt)


def test_selftest_results(smoke):
    run = rundir.load(smoke)
    g = [g for g in run.guests if g.status == "ok"][0]
    doc = {"schema": "hugelab.selftest/1", "program": "selftest",
           "status": "fail", "failures": ["hugepage-mremap 1024"],
           "config": {"suite": "vm",
                      "programs": ["hugepage-mremap 1024", "hugepage-shm",
                                   "userfaultfd hugetlb_shared 128 32"]},
           "tests": [
               {"name": "hugepage-mremap 1024", "status": "fail",
                "seconds": 1.5, "output_excerpt": "mremap: Invalid"},
               {"name": "hugepage-shm", "status": "pass", "seconds": 0.2,
                "output_excerpt": ""},
               {"name": "userfaultfd hugetlb_shared 128 32",
                "status": "skip", "seconds": 0.0,
                "output_excerpt": "skip"}]}
    dump_json(os.path.join(g.path, "results", "vm-selftests.json"), doc)
    cs = checks_of(smoke, g.name)
    st = {n.split("/")[-1]: c for n, c in cs.items()
          if c["suite"] == "selftest"}
    assert st["hugepage-mremap 1024"]["status"] == "fail"
    assert st["hugepage-mremap 1024"]["output"] == "mremap: Invalid"
    assert st["hugepage-shm"]["status"] == "pass"
    assert st["userfaultfd hugetlb_shared 128 32"]["status"] == "skip"
    assert cs["%s/vm-selftests status" % g.name]["status"] == "fail"


EMULATOR_CONSOLE = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "workloads",
    "smoke", "testdata", "emulator-fault.console")


def test_emulator_fault_is_no_expected_warning(smoke):
    """A guest that must show a kernel warning and shows only an emulator
    fault (the smoke harness names it) has not reproduced the warning."""
    g = [g for g in rundir.load(smoke).guests
         if not (g.doc.get("expect") or {}).get("status")][0]
    with open(EMULATOR_CONSOLE, encoding="utf-8") as f:
        console = f.read()
    with open(os.path.join(g.path, "console.log"), "w") as f:
        f.write(console)
    path = os.path.join(g.path, "guest.json")
    doc = load_json(path)
    fault = [ln for ln in console.splitlines() if "exc_debug_kernel" in ln]
    doc.update(status="fail", expect={"kernel_warnings": True},
               kernel_log={"warnings": 1, "excerpt": fault,
                           "emulator_faults": fault[:1]})
    dump_json(path, doc)
    c = checks_of(smoke, g.name)["%s kernel warning reproduced" % g.name]
    assert c["status"] == "fail", c
    assert "1 of them emulator faults" in c["message"]
    # The same finding not named an emulator fault: reproduced.
    doc["kernel_log"]["emulator_faults"] = []
    dump_json(path, doc)
    c = checks_of(smoke, g.name)["%s kernel warning reproduced" % g.name]
    assert c["status"] == "pass", c
