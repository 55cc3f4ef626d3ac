"""Golden tests: rendering each real fixture run reproduces its reviewed
summary.json, and the four outputs are well formed."""

import json
import os
import re
import xml.etree.ElementTree as ET

import pytest
from conftest import FIXTURES, copy_run, fixture_runs, load_json
from golden import GOLDEN, normalise

from hugelab_report import cli, junit, latest

RUNS = fixture_runs()


def test_there_are_real_fixtures():
    assert RUNS, "reports/tests/fixtures holds no run directory"
    for name in RUNS:
        assert os.path.exists(os.path.join(FIXTURES, name, GOLDEN,
                                           "summary.json")), name


def approx_equal(a, b, path="$"):
    """Structural equality, floats within 1e-6 relative."""
    if isinstance(a, float) or isinstance(b, float):
        assert isinstance(a, (int, float)) and isinstance(b, (int, float)), \
            path
        assert a == pytest.approx(b, rel=1e-6, abs=1e-9), path
    elif isinstance(a, dict):
        assert isinstance(b, dict) and sorted(a) == sorted(b), path
        for k in a:
            approx_equal(a[k], b[k], "%s.%s" % (path, k))
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            approx_equal(x, y, "%s[%d]" % (path, i))
    else:
        assert a == b, path


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    """Each fixture run rendered once by the command line: name -> dir."""
    out = {}
    for name in RUNS:
        base = tmp_path_factory.mktemp("runs")
        d = copy_run(name, base / name)
        assert cli.main(["render", d, "--runs-dir", str(base)]) == 0
        out[name] = d
    return out


@pytest.mark.parametrize("name", RUNS)
def test_summary_matches_golden(name, rendered):
    doc = load_json(os.path.join(rendered[name], "summary.json"))
    want = load_json(os.path.join(FIXTURES, name, GOLDEN, "summary.json"))
    approx_equal(normalise(doc), want)


@pytest.mark.parametrize("name", RUNS)
def test_outputs_are_well_formed(name, rendered):
    d = rendered[name]
    s = load_json(os.path.join(d, "summary.json"))
    m = load_json(os.path.join(d, "manifest.json"))
    # JUnit: one test case per check, failures counted alike.
    root = ET.parse(os.path.join(d, "junit.xml")).getroot()
    cases = root.findall(".//testcase")
    assert len(cases) == s["counts"]["checks"]
    assert len(root.findall(".//failure")) == s["counts"]["failed"]
    # Markdown and HTML name the provenance.
    md = open(os.path.join(d, "report.md"), encoding="utf-8").read()
    html = open(os.path.join(d, "report.html"), encoding="utf-8").read()
    src = m.get("source") or {}
    for text in (md, html):
        assert m["run_id"] in text
        if src.get("version"):
            assert src["version"] in text
        for g in s["provenance"]["guests"].values():
            if g["kernel"]["cmdline"]:
                assert g["kernel"]["cmdline"].split()[0] in text
    # HTML is self-contained: inline SVG, no external resource.
    if s["savings"]["fits"] or s["latency"]["rows"]:
        assert "<svg" in html
    assert not re.search(r'(src|href)\s*=\s*"(https?:)?//', html)
    assert "<script" not in html
    # latest points at the run just rendered (the only one there).
    assert os.readlink(os.path.join(os.path.dirname(d), "latest")) == name


def test_latest_points_at_newest(tmp_path):
    name = RUNS[0] if RUNS else pytest.fail("no fixture")
    older = copy_run(name, tmp_path / "20000101T000000Z")
    assert latest.update_latest(older, str(tmp_path)) == "20000101T000000Z"
    assert os.readlink(tmp_path / "latest") == "20000101T000000Z"
    copy_run(name, tmp_path / "29991231T000000Z")
    (tmp_path / "30000101T000000Z").mkdir()       # not a run: no manifest
    assert latest.update_latest(older, str(tmp_path)) == "29991231T000000Z"
    assert os.readlink(tmp_path / "latest") == "29991231T000000Z"
    # A run outside runs-dir leaves latest alone.
    other = copy_run(name, tmp_path / "elsewhere" / "x")
    assert latest.update_latest(other, str(tmp_path)) is None
    assert os.readlink(tmp_path / "latest") == "29991231T000000Z"


def test_latest_is_newest_by_time_not_name(tmp_path):
    """'a-2030...' sorts first by name but is the newest; a run id without
    a timestamp is dated by its manifest's started_at."""
    name = RUNS[0]
    copy_run(name, tmp_path / "zz-20261203T054822Z")
    copy_run(name, tmp_path / "a-20300101T000000Z")
    assert latest.newest_run(str(tmp_path)) == "a-20300101T000000Z"
    undated = copy_run(name, tmp_path / "zzz-rerun")
    m = load_json(os.path.join(undated, "manifest.json"))
    m["started_at"] = "2031-01-01T00:00:00Z"
    with open(os.path.join(undated, "manifest.json"), "w") as f:
        json.dump(m, f)
    assert latest.run_time(str(tmp_path), "zzz-rerun") == "20310101T000000Z"
    assert cli.main(["latest", str(tmp_path)]) == 0
    assert os.readlink(tmp_path / "latest") == "zzz-rerun"
    m["started_at"] = "2029-01-01T01:00:00+01:00"       # 00:00 UTC
    with open(os.path.join(undated, "manifest.json"), "w") as f:
        json.dump(m, f)
    assert latest.run_time(str(tmp_path), "zzz-rerun") == "20290101T000000Z"
    assert latest.point_latest(str(tmp_path)) == ("a-20300101T000000Z",
                                                  True)
    assert latest.point_latest(str(tmp_path)) == ("a-20300101T000000Z",
                                                  False)
    assert cli.main(["latest", str(tmp_path / "nothing")]) == 2


def test_junit_valid_with_escape_codes(tmp_path):
    """A console excerpt with ANSI colour codes and other control
    characters next to a WARNING: junit.xml still parses, the excerpt
    keeps its text without the escapes."""
    name = [n for n in RUNS if n.startswith("smoke-")][0]
    d = copy_run(name, tmp_path / name)
    g = os.path.join(d, "guests", "stock")
    with open(os.path.join(g, "console.log"), "a", encoding="utf-8") as f:
        f.write("[  OK  ] \x1b[0;1;32mStarted\x1b[0m systemd-x.service\r\n"
                "[   99.000000] WARNING: CPU: 1 PID: 77 at mm/hugetlb.c:1 "
                "x+0x3c/0x50 \x07\x00\x1b]0;t\x07<&>\n")
    gj = load_json(os.path.join(g, "guest.json"))
    gj["console_excerpt"] = ["\x1b[31mred\x1b[0m \x08 line"]
    with open(os.path.join(g, "guest.json"), "w", encoding="utf-8") as f:
        json.dump(gj, f)
    assert cli.main(["render", d, "--runs-dir", str(tmp_path)]) == 0
    raw = open(os.path.join(d, "junit.xml"), encoding="utf-8").read()
    assert "\x1b" not in raw and "\x00" not in raw
    root = ET.fromstring(raw.encode("utf-8"))
    fails = [f.text for f in root.iter("failure")]
    assert any("WARNING: CPU: 1" in t and "Started systemd-x" in t and
               "<&>" in t for t in fails)
    html = open(os.path.join(d, "report.html"), encoding="utf-8").read()
    assert "\x1b" not in html and "red  line" in html
    assert junit.plain_text("a\x1b[0;1;31mb\x1b[0m\tc\x9bd") == "ab\tcd"
