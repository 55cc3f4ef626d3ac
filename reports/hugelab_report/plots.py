"""Plots as inline SVG (matplotlib, Agg backend, deterministic output)."""

import io
import statistics

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from . import fmt, latency, model, stats  # noqa: E402

matplotlib.rcParams.update({
    "svg.hashsalt": "hugelab",
    "svg.fonttype": "none",
    "font.size": 9,
    "figure.figsize": (6.4, 3.8),
    "figure.subplot.left": 0.12, "figure.subplot.right": 0.97,
    "figure.subplot.bottom": 0.13, "figure.subplot.top": 0.92,
})
MODE_STYLE = {"4k": ("tab:red", "s"), "2m-aligned": ("tab:green", "o"),
              "2m-skewed": ("tab:orange", "^"),
              "2m-private": ("tab:purple", "v"), "1g": ("tab:blue", "D")}


# The one colour of each fault-lock mode in every plot (survival, the
# distribution panels, the mapper sweeps); a mode not listed is black.
LOCK_COLOR = {"i_mmap": "tab:red", "vma": "tab:blue", "none": "tab:gray"}


def lock_color(lock):
    return LOCK_COLOR.get(lock, "black")


def to_svg(fig):
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None})
    plt.close(fig)
    svg = buf.getvalue()
    return svg[svg.index("<svg"):]


def savings_plot(fits, guest):
    """Page-table bytes against sessions per mode, with the fit (solid)
    and the model (x, dashed; it counts only the mapping's tables).  The
    y axis is logarithmic above one page-table page and linear below, so
    a measured 0 stays visible."""
    fig, ax = plt.subplots()
    drawn = False
    for f in fits:
        if f["guest"] != guest:
            continue
        color, marker = MODE_STYLE[f["mode"]]
        label = "%s, %s" % (f["mode"], fmt.human_bytes(f["size"]))
        xs, ys = f["sessions"], f["bytes"]
        ax.plot(xs, ys, linestyle="none", marker=marker, color=color,
                label=label)
        if "slope" in f:
            fx = [min(xs), max(xs)]
            ax.plot(fx, [f["intercept"] + f["slope"] * x for x in fx],
                    color=color, linewidth=1)
        ax.plot(xs, [model.Expectation(f["mode"], f["size"], n).bytes
                     for n in xs], color=color, linestyle="--",
                linewidth=0.8, marker="x", markersize=5)
        drawn = True
    if not drawn:
        plt.close(fig)
        return None
    ax.set_xlabel("sessions")
    ax.set_ylabel("PageTables delta (bytes)")
    ax.set_yscale("symlog", linthresh=model.PT_PAGE)
    ax.set_ylim(bottom=0)
    ax.set_xscale("log")
    ax.grid(True, linewidth=0.3)
    ax.set_title("%s: page-table bytes vs sessions "
                 "(points: measured, solid: fit, x/dashed: model)" % guest,
                 fontsize=8)
    ax.legend(fontsize=7)
    return to_svg(fig)


def cdf_plot(rows, mode, metrics):
    """Distribution panels for one page mode: one panel per metric, one
    line per result (all guests, so fault-lock modes show side by side),
    as survival curves (fraction of samples slower than x, the
    complementary CDF) on log-log axes, so that the tail a linear CDF
    axis squeezes into its top pixel shows; coloured by fault-lock mode
    (LOCK_COLOR, as every plot), vma dashed, | the maximum."""
    metrics = [m for m in metrics if any(
        r["mode"] == mode and m in r["metrics"] for r in rows)]
    if not metrics:
        return None
    fig, axes = plt.subplots(1, len(metrics), squeeze=False,
                             figsize=(4.2 * len(metrics) + 0.6, 3.8))
    for ax, metric in zip(axes[0], metrics):
        path = dict(latency.METRICS)[metric]
        n_max = 1
        for r in rows:
            if r["mode"] != mode:
                continue
            h = r["_result"].get(*path)
            xs, ys = survival(h)
            if not xs:
                continue
            n = stats.hist_count(h)
            n_max = max(n_max, n)
            label = "%s: %s, %s sess. (%s)" % (
                r["guest"], r["lock"], r["sessions"], r["experiment"])
            color = lock_color(r["lock"])
            ax.step([x / 1000.0 for x in xs], ys, where="post", label=label,
                    color=color,
                    linestyle="--" if r["lock"] == "vma" else "-")
            ax.plot([r["metrics"][metric]["max"] / 1000.0], [1.0 / n],
                    marker="|", markersize=8, color=color)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_ylim(0.5 / n_max, 1.5)
        ax.set_xlabel("latency x (us, log2 bucket bounds)")
        ax.grid(True, linewidth=0.3)
        ax.set_title(latency.METRIC_TITLES[metric], fontsize=8)
    axes[0][0].set_ylabel("fraction of samples slower than x")
    axes[0][-1].legend(fontsize=6, loc="lower left")
    fig.suptitle(model.MODE_TITLES.get(mode, mode), fontsize=9)
    fig.subplots_adjust(top=0.84, wspace=0.22)
    return to_svg(fig)


SEED_STALL_MS = 2000.0


def survival(hist):
    """(xs, ys): bucket upper bounds and the fraction of samples above
    each (the empirical CCDF at the bucket edges), starting at the lowest
    bucket's lower bound with 1; the last point (0) is dropped for a log
    axis."""
    bs = stats.buckets(hist)
    n = sum(k for _, k in bs)
    if not n:
        return [], []
    xs, ys, seen = [stats.bucket_lower(bs[0][0])], [1.0], 0
    for v, k in bs:
        seen += k
        if seen < n:
            xs.append(v)
            ys.append((n - seen) / n)
    return xs, ys


def ccdf_plot(rows, mode, metrics):
    """Log-log survival curves (fraction of faults slower than x) for one
    page mode: one line per result, coloured by fault-lock mode, from the
    first of `metrics` the result has.  The bucket width is written in
    the plot."""
    fig, ax = plt.subplots(figsize=(9.6, 3.8))
    fig.subplots_adjust(left=0.08, right=0.6)
    spans, n_max, drawn = [], 1, False
    for r in rows:
        if r["mode"] != mode:
            continue
        m = next((m for m in metrics if m in r["metrics"]), None)
        if m is None:
            continue
        h = r["_result"].get(*dict(latency.METRICS)[m])
        xs, ys = survival(h)
        if not xs:
            continue
        n_max = max(n_max, stats.hist_count(h))
        span = stats.bucket_span(h)
        if span:
            spans.append(span)
        label = "%s: %s, %s sess. (%s, %s)" % (
            r["guest"], r["lock"], r["sessions"], r["experiment"], m)
        ax.step([x / 1e6 for x in xs], ys, where="post", label=label,
                color=lock_color(r["lock"]),
                linestyle="--" if r["lock"] == "vma" else "-")
        mx = r["metrics"][m]["max"]
        ax.plot([mx / 1e6], [1.0 / stats.hist_count(h)], marker="|",
                markersize=8, color=lock_color(r["lock"]))
        drawn = True
    if not drawn:
        plt.close(fig)
        return None
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(0.5 / n_max, 1.5)
    ax.set_xlabel("fault latency x (ms)")
    ax.set_ylabel("fraction of faults slower than x")
    for t, name in stats.STALL_THRESHOLDS:
        ax.axvline(t / 1e6, color="k", linewidth=0.4, linestyle=":")
    res = ("bucket resolution: each step spans one log2 bucket (x%.0f); "
           "| marks the maximum" % max(spans)) if spans else ""
    ax.text(0.01, 0.01, res, transform=ax.transAxes, fontsize=7,
            va="bottom")
    ax.grid(True, linewidth=0.3)
    ax.set_title("%s: fault latency survival (dotted: 100 ms, 1 s, 2 s)"
                 % model.MODE_TITLES.get(mode, mode), fontsize=8)
    ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.02, 1.0),
              borderaxespad=0)
    return to_svg(fig)


def sweep_plot(sw):
    """Fault latency against mappers for one sweep (sweep.py): median
    (solid), p99 (dashed) and maximum (dotted) per fault-lock mode, log-log,
    with the seed's 2 s line.  Repeated runs of one mode and count are
    separate points; the lines join their medians."""
    fig, ax = plt.subplots()
    drawn = False
    for lock in sorted({p["lock"] for p in sw["points"]}):
        pts = [p for p in sw["points"] if p["lock"] == lock]
        counts = sorted({p["sessions"] for p in pts})
        for fig_name, style in (("p50", "-"), ("p99", "--"), ("max", ":")):
            # A p99 of fewer than 100 samples is None (the maximum).
            have = [p for p in pts if p[fig_name] is not None]
            if not any(p[fig_name] for p in have):
                continue
            ax.plot([p["sessions"] for p in have],
                    [max(p[fig_name], 1) / 1e6 for p in have],
                    linestyle="none", marker="o", markersize=3,
                    color=lock_color(lock))
            at = [n for n in counts if any(p["sessions"] == n
                                           for p in have)]
            med = [statistics.median(max(p[fig_name], 1) for p in have
                                     if p["sessions"] == n) for n in at]
            ax.plot(at, [v / 1e6 for v in med], linestyle=style,
                    color=lock_color(lock),
                    label="%s %s" % (lock, fig_name))
            drawn = True
    if not drawn:
        plt.close(fig)
        return None
    ax.axhline(SEED_STALL_MS, color="k", linewidth=0.5, linestyle=":")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("mappers (sessions)")
    ax.set_ylabel("fault latency (ms, log2 bucket bounds)")
    ax.grid(True, linewidth=0.3)
    ax.set_title("%s, %s: fault latency vs mappers (dotted line: 2 s)" % (
        model.MODE_TITLES.get(sw["mode"], sw["mode"]),
        ",".join(sw["disrupt"])), fontsize=8)
    ax.legend(fontsize=6, ncol=2)
    return to_svg(fig)


# The ranges of a latency map, smallest first: one line style each.
RANGE_STYLES = ("-", "--", "-.", ":")
# The map's smallest stall drawn (ms): below it, or none, sits on it.
MAP_FLOOR_MS = 0.01


def latency_map_plot(doc):
    """The latency map (latency_map.py): per fault-lock mode (a panel
    each) the worst fault during a punch against mappers, one line per
    range (the median over rounds, every round a dot), and the fit's
    writer hold for the same range in grey; log-log, with the seed's 2 s
    line.  A stall under MAP_FLOOR_MS (or none: no faulting access during
    a punch) is drawn at MAP_FLOOR_MS."""
    pts = doc["points"]
    modes = [m for m in ("i_mmap", "vma")
             if any(p["mode"] == m for p in pts)]
    if not modes:
        return None
    fig, axes = plt.subplots(1, len(modes), sharey=True,
                             figsize=(6.4 if len(modes) == 1 else 9.6, 4.2),
                             squeeze=False)
    fig.subplots_adjust(top=0.86, left=0.08, right=0.98, wspace=0.06)
    ranges = sorted({(p["range_bytes"], p["range"]) for p in pts})

    def ms(ns):
        return max(ns / 1e6, MAP_FLOOR_MS)
    for ax, mode in zip(axes[0], modes):
        for i, (nb, name) in enumerate(ranges):
            style = RANGE_STYLES[i % len(RANGE_STYLES)]
            line = sorted((p for p in pts if p["mode"] == mode and
                           p["range_bytes"] == nb and p["rounds"]),
                          key=lambda p: p["mappers"])
            if not line:
                continue
            for p in line:
                ax.plot([p["mappers"]] * len(p["stall_ns"]),
                        [ms(s) for s in p["stall_ns"]],
                        linestyle="none", marker="o", markersize=2,
                        color=lock_color(mode), alpha=0.5)
            ax.plot([p["mappers"] for p in line],
                    [ms(p["stall_median_ns"]) for p in line],
                    linestyle=style, color=lock_color(mode),
                    label="worst fault, %s" % name)
            if all(p.get("hold_fit_ns") for p in line):
                ax.plot([p["mappers"] for p in line],
                        [ms(p["hold_fit_ns"]) for p in line],
                        linestyle=style, color="0.6", linewidth=0.8,
                        label="fitted hold, %s" % name)
        ax.axhline(SEED_STALL_MS, color="k", linewidth=0.5, linestyle=":")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_ylim(bottom=MAP_FLOOR_MS / 2)
        ax.set_xlabel("mappers")
        ax.grid(True, linewidth=0.3)
        ax.set_title("hugetlb_fault_lock=%s" % mode, fontsize=8)
    axes[0][0].set_ylabel("ms (dotted line: 2 s; none or < %g ms at %g)"
                          % (MAP_FLOOR_MS, MAP_FLOOR_MS))
    axes[0][-1].legend(fontsize=6, ncol=2, loc="upper left")
    fig.suptitle("Worst fault during a hole punch, by mappers and range "
                 "punched (median over rounds; dots: rounds)", fontsize=9)
    return to_svg(fig)
