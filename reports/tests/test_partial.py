"""The report after a batch of guests (manifest status partial, pending:
the guests still to come) never reads as a final verdict, and the
Timings section: each stage, each guest's phases and the lab's own
overhead (timing.py)."""

import json
import os

from conftest import copy_run, dump_json, fixture_runs, load_json

from hugelab_report import cli, rundir, summary, timing

# A run whose every check passes (the disrupt fixture: status ok).
OK_RUN = "disrupt-20261203T054709Z"


def ok_run(tmp_path, name="run"):
    assert OK_RUN in fixture_runs()
    return copy_run(OK_RUN, tmp_path / name)


def set_manifest(path, **keys):
    m = load_json(os.path.join(path, "manifest.json"))
    m.update(keys)
    dump_json(os.path.join(path, "manifest.json"), m)
    return m


def read(path, name):
    with open(os.path.join(path, name), encoding="utf-8") as f:
        return f.read()


def test_fixture_is_ok_when_final(tmp_path):
    """The base of the tests below: complete, this run is ok."""
    d = ok_run(tmp_path)
    assert cli.main(["render", d, "--runs-dir", str(tmp_path)]) == 0
    assert load_json(os.path.join(d, "summary.json"))["status"] == "ok"
    assert "PARTIAL" not in read(d, "report.md")


def test_partial_run_is_never_ok(tmp_path):
    """Every check of the guests so far passes, guests are still to come:
    no 'ok' anywhere a reader takes a verdict from (status, title,
    correctness line, junit), a banner naming the guests to come."""
    d = ok_run(tmp_path)
    set_manifest(d, status="partial", pending=["hl-racer", "hl-pg"],
                 finished_at=None)
    assert cli.main(["render", d, "--runs-dir", str(tmp_path)]) == 0
    doc = load_json(os.path.join(d, "summary.json"))
    assert doc["status"] == "partial"
    assert doc["counts"]["failed"] == 0
    assert doc["partial"]["pending"] == ["hl-racer", "hl-pg"]
    assert doc["headline"]["verdict"] == "partial"
    md, html = read(d, "report.md"), read(d, "report.html")
    title = md.splitlines()[0]
    assert "checks PARTIAL" in title and "OK" not in title
    for text in (md, html):
        assert "PARTIAL REPORT, not a verdict" in text
        assert "still to come: hl-racer, hl-pg" in text
        assert "Correctness: pass" not in text
    h1 = html.split("<h1>", 1)[1].split("</h1>")[0]
    assert "status-ok" not in h1 and "status-partial" in h1
    assert "(still under way)" in md
    junit = read(d, "junit.xml")
    assert 'name="run complete"' in junit and "<skipped" in junit


def test_partial_run_with_nothing_pending_is_still_partial(tmp_path):
    """After the last batch and before the final collect: no guest to
    come, still no verdict."""
    d = ok_run(tmp_path)
    set_manifest(d, status="partial", pending=[])
    an = summary.analyse(rundir.load(d))
    assert an["status"] == "partial"
    assert "still to come: no guest (the run's final collect)" in \
        an["partial"]["text"]


def test_partial_run_with_a_failure_is_partial_and_counts_it(tmp_path):
    d = ok_run(tmp_path)
    set_manifest(d, status="partial", pending=["hl-pg"])
    g = os.path.join(d, "guests", "stock", "guest.json")
    doc = load_json(g)
    doc["status"] = "panic"
    dump_json(g, doc)
    assert cli.main(["render", d, "--runs-dir", str(tmp_path)]) == 0
    assert cli.main(["render", d, "--runs-dir", str(tmp_path),
                     "--fail-on-check"]) == 1
    s = load_json(os.path.join(d, "summary.json"))
    assert s["status"] == "partial" and s["counts"]["failed"] > 0
    assert "PARTIAL (%d failed so far)" % s["counts"]["failed"] in \
        read(d, "report.md").splitlines()[0]


def test_compare_refuses_a_partial_run(tmp_path, capsys):
    base = ok_run(tmp_path, "base")
    cand = ok_run(tmp_path, "cand")
    set_manifest(cand, status="partial", pending=["hl-pg"])
    assert cli.main(["compare", base, cand, "--out",
                     str(tmp_path / "out")]) == 2
    assert "a partial run (still to come: hl-pg)" in capsys.readouterr().err


# --- timings ---------------------------------------------------------------

def lab_run(tmp_path, concurrent=False, started=True):
    """The fixture as a lab run of two guests with phases: batch windows
    of 300 s and 200 s, experiments of 100 + 50 s and 80 s."""
    d = ok_run(tmp_path)
    src = os.path.join(d, "guests", "stock")
    os.rename(src, os.path.join(d, "guests", "hl-a"))
    os.makedirs(os.path.join(d, "guests", "hl-b", "results"))
    set_manifest(d, harness="lab", guests=["hl-a", "hl-b"],
                 timings={"validate": 10, "host": 20, "kernel": 1000,
                          "image": 30, "guests": 520, "collect": 20},
                 kernels={"patched-perf": {"rebuilt": True,
                                           "build_seconds": 900},
                          "patched-debug": {"rebuilt": False,
                                            "build_seconds": 600}})
    t_b = "2026-12-07T12:01:40.000Z" if concurrent else \
        "2026-12-07T12:06:00.000Z"

    def exp(name, secs, at):
        e = {"name": name, "program": "shmdb", "status": "ok",
             "result": "results/%s.json" % name, "seconds": secs}
        if started:
            e["started_at"] = at
        return e
    a = load_json(os.path.join(d, "guests", "hl-a", "guest.json"))
    a.update(name="hl-a", batch={"index": 0},
             boot_to_ssh_s=40.0, reboot_to_ssh_s=20.0,
             phases={"boot": 60.0, "install": 50.0, "experiments": 190.0,
                     "collect": 8.0, "window": 300.0, "failed_in": None},
             experiments=[exp("e1", 100.0, "2026-12-07T12:01:00.000Z"),
                          exp("e2", 50.0, "2026-12-07T12:02:45.000Z")])
    dump_json(os.path.join(d, "guests", "hl-a", "guest.json"), a)
    b = {"schema": "hugelab.guest/1", "name": "hl-b", "status": "timeout",
         "batch": {"index": 1},
         "phases": {"boot": 50.0, "install": 40.0, "experiments": 110.0,
                    "collect": None, "window": 200.0,
                    "failed_in": "experiments"},
         "experiments": [exp("e3", 80.0, t_b)]}
    dump_json(os.path.join(d, "guests", "hl-b", "guest.json"), b)
    return d


def test_union_seconds():
    assert timing.union_seconds([]) == 0
    assert timing.union_seconds([(0, 10), (5, 20), (30, 31)]) == 21
    assert timing.union_seconds([(30, 31), (0, 10), (10, 12)]) == 13


def test_overhead_of_a_serial_run(tmp_path):
    tm = timing.analyse(rundir.load(lab_run(tmp_path)))
    assert [s["stage"] for s in tm["stages"]] == [
        "validate", "host", "kernel", "image", "guests", "collect"]
    a, b = tm["guests"]
    assert a["experiments_own"] == 150.0 and a["lab"] == 150.0
    assert b["lab"] == 120.0 and b["failed_in"] == "experiments"
    assert b["collect"] is None and a["boot_to_ssh"] == 40.0
    o = tm["overhead"]
    # 1,600 s of stages, 900 s compiling (the kernel this run built),
    # 230 s of experiments: 470 s of lab = 90.4 % of the 520 s guests
    # stage; inside the guests stage 290 s.
    assert o["total_s"] == 1600 and o["compile_s"] == 900
    assert o["experiments_s"] == 230 and o["seconds"] == 470
    assert abs(o["share"] - 470 / 520) < 1e-9 and not o["met"]
    assert o["guests_stage_lab_s"] == 290
    assert tm["basis"] == "wall"


def test_overhead_counts_concurrent_experiments_once(tmp_path):
    """hl-b's experiment ran 12:01:40-12:03:00, inside hl-a's first
    (12:01:00-12:02:40) and second (12:02:45-12:03:35): the experiments
    covered 155 s of wall time, not 230."""
    tm = timing.analyse(rundir.load(lab_run(tmp_path, concurrent=True)))
    assert tm["overhead"]["experiments_s"] == 155
    assert tm["overhead"]["seconds"] == 1600 - 900 - 155


def test_overhead_without_start_times_sums(tmp_path):
    tm = timing.analyse(rundir.load(lab_run(tmp_path, started=False)))
    assert tm["basis"] == "sum" and tm["overhead"]["experiments_s"] == 230


def test_compile_is_at_most_the_kernel_stage():
    assert timing.compile_seconds(
        {"kernels": {"a": {"rebuilt": True, "build_seconds": 900}}},
        12) == 12
    assert timing.compile_seconds({"kernels": {"a": {
        "rebuilt": False, "build_seconds": 900}}}, 12) == 0


def test_no_overhead_outside_a_lab_run(real_run):
    tm = timing.analyse(rundir.load(real_run))
    assert tm["overhead"] is None


def test_timings_section(tmp_path):
    d = lab_run(tmp_path)
    assert cli.main(["render", d, "--runs-dir", str(tmp_path)]) == 0
    md = read(d, "report.md")
    sec = md.split("## Timings", 1)[1].split("\n## ", 1)[0]
    assert "| guests | 8 min 40 s |" in sec
    assert "| hl-a | 0 | ok | 1 min 00 s | 50.0 s | 3 min 10 s | 8.0 s | " \
        "5 min 00 s | 2 min 30 s | 2 min 30 s | 40.0 s / 20.0 s |" in sec
    assert "| hl-b | 1 | timeout (in experiments) |" in sec
    assert "the run's 26 min 40 s less 15 min 00 s compiling kernels " \
        "and 3 min 50 s of the experiments' own run time = 7 min 50 s, " \
        "90.4 % of the guests stage (8 min 40 s; goal 15.0 % or less: " \
        "NOT met). Inside the guests stage alone: 4 min 50 s, 55.8 %." \
        in sec
    doc = load_json(os.path.join(d, "summary.json"))
    assert doc["timing"]["overhead"]["seconds"] == 470
    json.dumps(doc)
