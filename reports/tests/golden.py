"""Golden outputs of the fixture runs: what render must reproduce."""

import json
import os
import shutil
import tempfile

from hugelab_report import render, rundir, summary

GOLDEN = "golden"


def render_copy(src):
    """Render a copy of run directory src; return (summary dict, tmp dir)."""
    tmp = tempfile.mkdtemp(prefix="hugelab-golden-")
    dst = os.path.join(tmp, os.path.basename(src.rstrip("/")))
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns(GOLDEN))
    run = rundir.load(dst)
    render.render(run, runs_dir=tmp)
    with open(os.path.join(dst, "summary.json"), encoding="utf-8") as f:
        doc = json.load(f)
    return doc, dst


def normalise(doc):
    """Drop what depends on where the run was rendered."""
    doc = json.loads(json.dumps(doc))
    return summary.clean(doc)
