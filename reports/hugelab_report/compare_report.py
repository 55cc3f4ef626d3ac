"""The comparison's presentation: compare.md, compare.html (a
self-contained page: inline CSS and SVG, no script, no external
reference, with a plot of every latency figure's runs against the
baseline's median), compare.json and junit-compare.xml from the result
of compare.compare."""

import json
import math
import os

import matplotlib.pyplot as plt

from . import junit, plots
from .compare import checks_of
from .pages import environment, write_text

# At most this many figures in the plot: declared ones first, then by
# the size of the change.
PLOT_FIGURES = 30
COLOURS = {"regression": "tab:red", "improved": "tab:green",
           "noise": "tab:orange", "ok": "tab:blue",
           "inconclusive": "tab:gray"}


def plotted(items):
    lat = [i for i in items if i["kind"] == "latency" and
           i.get("median_ratio") and min(i["baseline"] or [0]) > 0]
    first = [i for i in lat if i["verdict"] in ("regression", "improved",
                                                "noise")]
    rest = sorted((i for i in lat if i not in first),
                  key=lambda i: -abs(math.log(i["median_ratio"])))
    return (first + rest)[:PLOT_FIGURES]


def runs_plot(items):
    """Per latency figure each run's value over the baseline runs'
    median (log x): baseline runs grey, candidate runs coloured by the
    figure's verdict.  None without a figure to plot."""
    rows = plotted(items)
    if not rows:
        return None
    fig, ax = plt.subplots(figsize=(8.0, 0.9 + 0.22 * len(rows)))
    for y, it in enumerate(reversed(rows)):
        b = sorted(it["baseline"])
        med = b[len(b) // 2] if len(b) % 2 else (b[len(b) // 2 - 1] +
                                                 b[len(b) // 2]) / 2
        ax.scatter([v / med for v in it["baseline"]], [y] * len(b),
                   color="0.6", marker="|", s=80)
        ax.scatter([max(v, 1e-9) / med for v in it["candidate"]],
                   [y] * len(it["candidate"]),
                   color=COLOURS.get(it["verdict"], "tab:blue"), s=14)
    ax.set_xscale("log")
    ax.axvline(1.0, color="0.3", lw=0.6)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(["%s %s" % (i["key"].split("/")[-1], i["metric"])
                        for i in reversed(rows)], fontsize=6)
    ax.set_xlabel("run value / median of the baseline runs (log)")
    fig.subplots_adjust(left=0.36, right=0.98, top=0.98,
                        bottom=0.5 / (0.9 + 0.22 * len(rows)) + 0.05)
    return plots.to_svg(fig)


def render(env, res):
    return env.get_template("compare.html.j2").render(
        c=res, plot=runs_plot(res["items"]))


def write(res, out):
    """Write the four outputs of compare result `res` into directory
    `out`; return compare.md's text."""
    env = environment()
    md = env.get_template("compare.md.j2").render(c=res)
    write_text(os.path.join(out, "compare.md"), md)
    write_text(os.path.join(out, "compare.html"), render(env, res))
    write_text(os.path.join(out, "compare.json"),
               json.dumps(res, indent=1, sort_keys=True) + "\n")
    junit.write(checks_of(res), os.path.join(out, "junit-compare.xml"),
                "hugelab.compare")
    return md
