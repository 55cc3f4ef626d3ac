"""The latency plots: one colour per fault-lock mode in every plot (a
single dict, plots.LOCK_COLOR), log-scaled tails."""

import copy
import os

import matplotlib.colors as mcolors
import pytest
from conftest import copy_run, dump_json, fixture_runs

from hugelab_report import plots, render, rundir

PROOF = [n for n in fixture_runs() if n.startswith("proof-")]
SWEEP = [n for n in fixture_runs() if n.startswith("sweep-")]


@pytest.fixture
def figures(monkeypatch):
    """Every matplotlib figure render draws, captured before it is
    closed: a list of figures."""
    seen = []
    real = plots.to_svg

    def keep(fig):
        seen.append(copy.copy([(ax, list(ax.get_lines()))
                               for ax in fig.axes]))
        return real(fig)
    monkeypatch.setattr(plots, "to_svg", keep)
    return seen


def lock_lines(seen):
    """(plot index, lock, colour) of every line whose label names a
    fault-lock mode (': i_mmap,' in the per-run labels, 'i_mmap p50' in
    the sweep's)."""
    out = []
    for i, axes in enumerate(seen):
        for _, lines in axes:
            for ln in lines:
                label = ln.get_label()
                for lock in plots.LOCK_COLOR:
                    if (": %s," % lock) in label or \
                            label.startswith(lock + " "):
                        out.append((i, lock, mcolors.to_hex(ln.get_color())))
    return out


def sweep_with_locks(tmp_path):
    """The sweep fixture with half its runs in each fault-lock mode."""
    d = copy_run(SWEEP[0], tmp_path / SWEEP[0])
    for k, r in enumerate(rundir.load(d).results("shmdb")):
        r.doc.setdefault("kernel", {})["hugetlb_fault_lock"] = \
            "i_mmap" if k % 2 else "vma"
        dump_json(r.path, r.doc)
    return d


def test_one_colour_per_fault_lock_mode_in_every_plot(tmp_path, figures):
    """Issue 29: i_mmap was orange in the CDF panels (matplotlib's colour
    cycle) and red in the survival plot.  Every line of a lock mode, in
    every plot of the report, has plots.LOCK_COLOR's colour."""
    d = copy_run(PROOF[0], tmp_path / PROOF[0])
    render.render(rundir.load(d), runs_dir=str(tmp_path))
    n = len(lock_lines(figures))
    render.render(rundir.load(sweep_with_locks(tmp_path)),
                  runs_dir=str(tmp_path))
    pts = [{"lock": lock, "sessions": n, "p50": 1e6 * n, "p99": None,
            "max": 4e6 * n} for lock in ("i_mmap", "vma")
           for n in (100, 1000)]
    plots.sweep_plot({"points": pts, "mode": "2m-skewed",
                      "disrupt": ["punch"]})
    lines = lock_lines(figures)
    assert len(lines) > n, "the sweep fixture's and the sweep plot's lines"
    plotted = {i for i, _, _ in lines}
    assert len(plotted) >= 4, "the survival, CDF and sweep plots"
    assert {lock for _, lock, _ in lines} >= {"i_mmap", "vma"}
    for i, lock, colour in lines:
        assert colour == mcolors.to_hex(plots.LOCK_COLOR[lock]), (i, lock)


def test_cdf_panels_show_the_tail_on_a_log_axis(tmp_path, figures):
    """The latency section's distribution panels have a log y axis (the
    survival function, fraction of samples slower than x), as the
    headline's survival plot: on a linear axis the tail was invisible."""
    d = copy_run(PROOF[0], tmp_path / PROOF[0])
    render.render(rundir.load(d), runs_dir=str(tmp_path))
    scales = [(ax.get_xscale(), ax.get_yscale())
              for axes in figures for ax, lines in axes
              if any("sess. (" in ln.get_label() for ln in lines)]
    assert len(scales) >= 3, "the survival plot and two panels"
    assert all(s == ("log", "log") for s in scales), scales
