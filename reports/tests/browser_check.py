#!/usr/bin/python3
"""Rendered-page check: render a fixture run, open report.html in Debian's
chromium (headless, no network, a throw-away profile) at 1366x900, and
assert that the page fits the window (document and every table no wider
than the viewport, from the DOM chromium laid out) and that the
screenshot is a page, not a blank.

    tests/browser_check.py [--keep DIR]   (make -C reports check runs it)

Exit 0 when the page passes, 1 when it does not, 2 when chromium is
missing (tests/deps.sh group browser)."""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

from conftest import FIXTURES, copy_run, fixture_runs  # noqa: E402

from hugelab_report import render, rundir  # noqa: E402

WIDTH, HEIGHT = 1366, 900
# The widest report of the fixtures: several guests, long hashes, plots.
FIXTURE_PREFIX = "proof-"
PROBE = """<script>
(function () {
  var w = window.innerWidth, out = {inner: w,
    scroll: document.documentElement.scrollWidth, wide: []};
  var els = document.querySelectorAll("table, figure, svg, pre, p, h1, h2");
  for (var i = 0; i < els.length; i++) {
    var r = els[i].getBoundingClientRect();
    if (r.right > w + 0.5)
      out.wide.push(els[i].tagName + " " + Math.round(r.right) + ": " +
                    els[i].textContent.slice(0, 60));
  }
  var p = document.createElement("pre");
  p.id = "hugelab-probe";
  p.textContent = JSON.stringify(out);
  document.body.appendChild(p);
})();
</script>
"""


def chromium(args, tmp):
    exe = shutil.which("chromium")
    if not exe:
        print("browser_check: chromium not installed (tests/deps.sh "
              "browser)", file=sys.stderr)
        sys.exit(2)
    profile = tempfile.mkdtemp(prefix="profile-", dir=tmp)
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu",
           "--disable-background-networking", "--disable-component-update",
           "--disable-sync", "--no-first-run",
           "--user-data-dir=%s" % profile,
           "--window-size=%d,%d" % (WIDTH, HEIGHT)] + args
    return subprocess.run(cmd, capture_output=True, text=True, timeout=180,
                          check=False)


def layout(html_path, tmp):
    """The probe's measurements of the page as chromium laid it out."""
    with open(html_path, encoding="utf-8") as f:
        html = f.read()
    probe = os.path.join(tmp, "probe.html")
    with open(probe, "w", encoding="utf-8") as f:
        f.write(html.replace("</body>", PROBE + "</body>"))
    res = chromium(["--dump-dom", "file://" + probe], tmp)
    m = re.search(r'<pre id="hugelab-probe">(.*?)</pre>', res.stdout, re.S)
    if not m:
        raise SystemExit("browser_check: no layout from chromium (rc %d): "
                         "%s" % (res.returncode, res.stderr[-500:]))
    return json.loads(m.group(1).replace("&quot;", '"')
                      .replace("&lt;", "<").replace("&gt;", ">")
                      .replace("&amp;", "&"))


def screenshot(html_path, png, tmp):
    res = chromium(["--screenshot=%s" % png, "file://" + html_path], tmp)
    if not os.path.exists(png):
        raise SystemExit("browser_check: no screenshot (rc %d): %s" % (
            res.returncode, res.stderr[-500:]))
    from PIL import Image
    im = Image.open(png).convert("RGB")
    px = list(im.getdata())
    ink = sum(1 for p in px if sum(p) < 600) / len(px)
    colours = len(set(px))
    return im.size, ink, colours


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--keep", help="copy report.html and screenshot.png "
                    "here")
    ap.add_argument("--fixture", default=FIXTURE_PREFIX,
                    help="fixture run name prefix (default %(default)s)")
    a = ap.parse_args(argv)
    names = [n for n in fixture_runs() if n.startswith(a.fixture)]
    if not names:
        raise SystemExit("browser_check: no %s* fixture under %s" % (
            a.fixture, FIXTURES))
    tmp = tempfile.mkdtemp(prefix="hugelab-browser-")
    try:
        d = copy_run(names[0], os.path.join(tmp, names[0]))
        render.render(rundir.load(d), runs_dir=tmp)
        html = os.path.join(d, "report.html")
        lay = layout(html, tmp)
        png = os.path.join(tmp, "screenshot.png")
        size, ink, colours = screenshot(html, png, tmp)
        if a.keep:
            os.makedirs(a.keep, exist_ok=True)
            shutil.copy(html, a.keep)
            shutil.copy(png, a.keep)
        problems = []
        if lay["inner"] != WIDTH:
            problems.append("viewport %s px, want %d" % (lay["inner"],
                                                         WIDTH))
        if lay["scroll"] > lay["inner"]:
            problems.append("document %d px wide in a %d px window" % (
                lay["scroll"], lay["inner"]))
        problems += ["wider than the window: " + w for w in lay["wide"]]
        if size != (WIDTH, HEIGHT):
            problems.append("screenshot %dx%d" % size)
        if ink < 0.01 or colours < 16:
            problems.append("screenshot looks blank (%.2f %% ink, %d "
                            "colours)" % (ink * 100, colours))
        print("browser_check: %s: document %d px in %d px, %d wide "
              "elements; screenshot %dx%d, %.1f %% ink, %d colours" % (
                  names[0], lay["scroll"], lay["inner"], len(lay["wide"]),
                  size[0], size[1], ink * 100, colours))
        for p in problems:
            print("browser_check: FAIL: " + p, file=sys.stderr)
        return 1 if problems else 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
