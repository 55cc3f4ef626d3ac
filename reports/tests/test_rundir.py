"""Loading and validating run directories; exit status 2 on bad input."""

import os
import shutil

from conftest import FIXTURES, dump_json, load_json

from hugelab_report import cli, rundir

MANIFEST = {"schema": "hugelab.run/1", "run_id": "r", "guests": ["g"]}
GUEST = {"schema": "hugelab.guest/1", "name": "g", "status": "ok",
         "experiments": [{"name": "e", "program": "shmdb", "status": "ok",
                          "result": "results/e.json"}]}


def make(tmp_path, manifest=MANIFEST, guest=GUEST, result=None):
    d = tmp_path / "run"
    (d / "guests" / "g" / "results").mkdir(parents=True)
    if manifest is not None:
        dump_json(d / "manifest.json", manifest)
    if guest is not None:
        dump_json(d / "guests" / "g" / "guest.json", guest)
    if result is not None:
        with open(d / "guests" / "g" / "results" / "e.json", "w") as f:
            f.write(result)
    return str(d)


def rc(*argv):
    return cli.main(list(argv))


def test_not_a_directory(tmp_path, capsys):
    assert rc("render", str(tmp_path / "nope")) == 2
    assert "not a directory" in capsys.readouterr().err


def test_no_manifest(tmp_path, capsys):
    assert rc("render", make(tmp_path, manifest=None)) == 2
    assert "not a run directory" in capsys.readouterr().err


def test_invalid_manifest_json(tmp_path, capsys):
    d = make(tmp_path)
    with open(os.path.join(d, "manifest.json"), "w") as f:
        f.write("{not json")
    assert rc("render", d) == 2
    assert "invalid JSON" in capsys.readouterr().err


def test_wrong_schema(tmp_path):
    assert rc("render", make(tmp_path, manifest={"schema": "x/1"})) == 2


def test_listed_guest_missing(tmp_path, capsys):
    m = dict(MANIFEST, guests=["g", "h"])
    assert rc("render", make(tmp_path, manifest=m)) == 2
    assert "guest h" in capsys.readouterr().err


def test_bad_guest_name(tmp_path):
    m = dict(MANIFEST, guests=["../g"])
    assert rc("render", make(tmp_path, manifest=m)) == 2


def test_invalid_result_json_is_a_failed_check(tmp_path):
    """A result cut short (a workload killed while it wrote, a guest that
    died) is a missing result with its reason, not a run that cannot be
    reported: it used to stop render (exit 2) and with it the fleet's
    whole report."""
    for text in ("[1, 2", "", "[1, 2]"):
        d = make(tmp_path / ("r%d" % len(text)), result=text)
        g = rundir.load(d).guests[0]
        assert g.results == [] and g.missing_results == ["e"]
        assert "results/e.json" in g.unreadable["e"]
        assert rc("render", d) == 0
        s = load_json(os.path.join(d, "summary.json"))
        c = [c for c in s["checks"] if c["name"] == "g/e result present"]
        assert [x["status"] for x in c] == ["fail"]
        assert c[0]["message"] == g.unreadable["e"]


def test_compare_bad_input(tmp_path, real_run):
    assert rc("compare", real_run, str(tmp_path / "nope")) == 2
    assert rc("compare", str(tmp_path / "nope"), real_run) == 2


def test_missing_result_is_a_failed_check(tmp_path):
    run = rundir.load(make(tmp_path))
    assert run.guests[0].missing_results == ["e"]


def test_real_run_loads(real_run):
    run = rundir.load(real_run)
    m = load_json(os.path.join(real_run, "manifest.json"))
    assert [g.name for g in run.guests] == m["guests"]
    assert any(True for _ in run.results())
    for g in run.guests:
        for r in g.results:
            assert r.doc["schema"].startswith("hugelab.")


def test_real_run_corrupt_result(real_run, tmp_path):
    run = rundir.load(real_run)
    r = next(run.results())
    with open(r.path, "a") as f:
        f.write("garbage")
    assert rc("render", real_run) == 0
    s = load_json(os.path.join(real_run, "summary.json"))
    c = [c for c in s["checks"]
         if c["name"] == "%s/%s result present" % (r.guest, r.name)]
    assert [x["status"] for x in c] == ["fail"]
    assert "invalid JSON" in c[0]["message"]
    # Compared with the intact run, the candidate lost that result: a
    # regression (exit 1), not bad input.
    good = str(tmp_path / "good")
    shutil.copytree(os.path.join(FIXTURES, os.path.basename(real_run)),
                    good, ignore=shutil.ignore_patterns("golden"))
    assert rc("compare", good, real_run, "--out", str(tmp_path)) == 1


def test_unknown_result_schema_is_a_failed_check(real_run):
    run = rundir.load(real_run)
    g = run.guests[0]
    dump_json(os.path.join(g.path, "results", "odd.json"), {"x": 1})
    assert rc("render", real_run, "--runs-dir", real_run) == 0
    s = load_json(os.path.join(real_run, "summary.json"))
    bad = [c for c in s["checks"] if c["name"] == "%s/odd schema" % g.name]
    assert bad and bad[0]["status"] == "fail"
    assert s["status"] == "fail"
    assert rc("render", real_run, "--runs-dir", real_run,
              "--fail-on-check") == 1


def test_entry_script(real_run, tmp_path):
    """The installed entry point, as the lab runs it."""
    import subprocess
    script = os.path.join(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), "hugelab-report")
    p = subprocess.run([script, "render", real_run, "--runs-dir",
                        str(tmp_path)], capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stderr
    assert "report.html" in p.stdout
    p = subprocess.run([script, "compare", real_run, str(tmp_path / "x")],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "not a directory" in p.stderr
    p = subprocess.run([script], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2


def test_relative_path_loads_each_result_once(real_run, monkeypatch):
    monkeypatch.chdir(os.path.dirname(real_run))
    run = rundir.load(os.path.join(".", os.path.basename(real_run)))
    for g in run.guests:
        paths = [r.path for r in g.results]
        assert len(paths) == len(set(paths))
        assert all(os.path.isabs(p) for p in paths)


def test_latest_over_a_real_directory(tmp_path, real_run, capsys):
    """Issue 29: runs/latest a real directory (not a symlink): `latest`
    gave a traceback and left latest.tmp.  Now exit 2 with one line,
    the directory untouched, no latest.tmp; render still writes its
    report and says latest was not updated."""
    runs = tmp_path / "runs"
    runs.mkdir()
    run = shutil.copytree(real_run, runs / "20261203T000000Z")
    (runs / "latest").mkdir()
    (runs / "latest" / "keep").write_text("x")
    assert rc("latest", str(runs)) == 2
    err = capsys.readouterr().err
    assert "latest" in err and "not a symlink" in err
    assert "Traceback" not in err
    assert not os.path.lexists(runs / "latest.tmp")
    assert (runs / "latest" / "keep").read_text() == "x"
    assert rc("render", str(run), "--runs-dir", str(runs)) == 0
    err = capsys.readouterr().err
    assert "latest not updated" in err and "not a symlink" in err
    assert os.path.exists(os.path.join(run, "report.html"))
    assert not os.path.lexists(runs / "latest.tmp")
    # A regular file is not replaced either; a symlink is.
    shutil.rmtree(runs / "latest")
    (runs / "latest").write_text("notes")
    assert rc("latest", str(runs)) == 2
    assert (runs / "latest").read_text() == "notes"
    os.unlink(runs / "latest")
    os.symlink("elsewhere", runs / "latest")
    assert rc("latest", str(runs)) == 0
    assert os.readlink(runs / "latest") == "20261203T000000Z"


def test_lone_surrogate_in_an_excerpt(real_run, tmp_path):
    """Issue 29: a lone surrogate (JSON "\\ud800", a console cut inside a
    UTF-16 pair) in a console excerpt, a kernel log excerpt or a failure
    message crashed render (UnicodeEncodeError writing report.md).  It is
    written as U+FFFD."""
    run = rundir.load(real_run)
    g = run.guests[0]
    gj = load_json(os.path.join(g.path, "guest.json"))
    gj["console_excerpt"] = ["before \ud800 after"]
    gj["kernel_log"] = {"warnings": 1, "excerpt": ["WARNING: x \udfff y"]}
    dump_json(os.path.join(g.path, "guest.json"), gj)
    r = g.results[0]
    r.doc["failures"] = ["odd \ud834 failure"]
    r.doc["status"] = "fail"
    dump_json(r.path, r.doc)
    assert rc("render", real_run, "--runs-dir", str(tmp_path)) == 0
    for f in ("report.md", "report.html", "junit.xml", "summary.json"):
        text = open(os.path.join(real_run, f), encoding="utf-8").read()
        assert "before" in text or f == "summary.json", f
    md = open(os.path.join(real_run, "report.md"), encoding="utf-8").read()
    assert "before \ufffd after" in md
    assert "odd \ufffd failure" in md


def test_unreadable_console_is_a_finding(real_run, tmp_path):
    """Issue 29: a console.log that cannot be read (a symlink loop, a
    directory) was taken as absent: no findings, a clean guest.  It is a
    failed check naming the console unreadable."""
    run = rundir.load(real_run)
    g = [g for g in run.guests if not (g.doc.get("expect") or {})][0]
    cpath = os.path.join(g.path, "console.log")
    if os.path.lexists(cpath):
        os.unlink(cpath)
    os.symlink("console.log", cpath)            # a loop
    loaded = [x for x in rundir.load(real_run).guests
              if x.name == g.name][0]
    assert loaded.console is None and "unreadable" in loaded.console_error
    assert rc("render", real_run, "--runs-dir", str(tmp_path)) == 0
    s = load_json(os.path.join(real_run, "summary.json"))
    (c,) = [c for c in s["checks"]
            if c["name"] == "%s no kernel warnings" % g.name]
    assert c["status"] == "fail" and "console unreadable" in c["message"]
    assert s["correctness"]["guests"][g.name]["console_unreadable"]
