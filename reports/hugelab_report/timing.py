"""Where a run's time went: the seconds of each stage (manifest.json
timings), of each guest's phases (guest.json phases: boot, install,
experiments, collect) and the lab's own overhead.

The lab's overhead is everything but kernel compilation and the
experiments' own run time (issue 32), as a share of the guests stage (the
goal is 15 % or less): the run's stages added up, less the kernel builds
of this run (kernel manifests with rebuilt true: their build_seconds, at
most the kernel stage), less the wall time in which an experiment ran (the
union of the experiments' [started_at, started_at + seconds] intervals,
so that guests running side by side are not counted twice; the plain sum
of their seconds when an experiment has no start time).  The part of it
inside the guests stage is given too."""

import datetime

# The lab's stages in site.yml's order (manifest.json timings); other keys
# (the smoke harness's) follow in their own order.
STAGES = ("validate", "host", "kernel", "image", "guests", "collect")
PHASES = ("boot", "install", "experiments", "collect")
GOAL = 0.15


def number(x):
    """A non-negative number of seconds, None for anything else."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return None
    return float(x) if x >= 0 else None


def epoch(text):
    """Epoch seconds of a UTC ISO 8601 time (guest.json), else None."""
    if not isinstance(text, str) or not text:
        return None
    try:
        t = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if t.tzinfo is None:
        t = t.replace(tzinfo=datetime.timezone.utc)
    return t.timestamp()


def union_seconds(intervals):
    """Seconds covered by at least one of the (start, end) intervals."""
    total, cur = 0.0, None
    for a, b in sorted(intervals):
        if cur is None or a > cur[1]:
            if cur is not None:
                total += cur[1] - cur[0]
            cur = [a, b]
        else:
            cur[1] = max(cur[1], b)
    if cur is not None:
        total += cur[1] - cur[0]
    return total


def stages_of(timings):
    """[{stage, seconds}] in site.yml's order, then the other keys."""
    if not isinstance(timings, dict):
        return []
    keys = [k for k in STAGES if k in timings] + \
        [k for k in timings if k not in STAGES]
    return [{"stage": k, "seconds": number(timings[k])} for k in keys]


def compile_seconds(manifest, kernel_stage):
    """Seconds of kernel compilation in this run: the build_seconds of the
    kernels this run built (rebuilt true), at most the kernel stage."""
    total = 0.0
    for k in (manifest.get("kernels") or {}).values():
        if isinstance(k, dict) and k.get("rebuilt") is True:
            total += number(k.get("build_seconds")) or 0.0
    if kernel_stage is not None:
        total = min(total, kernel_stage)
    return total


def guest_row(g):
    """One guest's phases, its experiments' own seconds and intervals."""
    ph = g.doc.get("phases")
    ph = ph if isinstance(ph, dict) else {}
    own, intervals, untimed = 0.0, [], 0
    for e in g.experiments:
        s = number(e.get("seconds")) if isinstance(e, dict) else None
        if not s:
            continue
        own += s
        t0 = epoch(e.get("started_at"))
        if t0 is None:
            untimed += 1
        else:
            intervals.append((t0, t0 + s))
    window = number(ph.get("window"))
    batch = g.doc.get("batch")
    row = {"guest": g.name, "status": g.status,
           "batch": batch.get("index") if isinstance(batch, dict) else None,
           "recorded": bool(ph),
           "window": window,
           "experiments_own": own,
           "lab": None if window is None else max(window - own, 0.0),
           "failed_in": ph.get("failed_in"),
           "boot_to_ssh": number(g.doc.get("boot_to_ssh_s")),
           "reboot_to_ssh": number(g.doc.get("reboot_to_ssh_s"))}
    for p in PHASES:
        row[p] = number(ph.get(p))
    return row, intervals, untimed


def overhead(run, stages, own_wall):
    """The lab's overhead of a lab run (None without a guests stage)."""
    m = run.manifest
    secs = {s["stage"]: s["seconds"] for s in stages}
    guests = secs.get("guests")
    if m.get("harness") != "lab" or not guests:
        return None
    total = sum(v for k, v in secs.items() if k in STAGES and v)
    compiled = compile_seconds(m, secs.get("kernel"))
    lab = max(total - compiled - own_wall, 0.0)
    in_guests = max(guests - own_wall, 0.0)
    return {"total_s": total, "compile_s": compiled,
            "experiments_s": own_wall, "guests_stage_s": guests,
            "seconds": lab, "share": lab / guests,
            "guests_stage_lab_s": in_guests,
            "guests_stage_share": in_guests / guests,
            "goal": GOAL, "met": lab / guests <= GOAL}


def analyse(run):
    """{stages, guests, overhead, basis} of a run; overhead None for a run
    that is not the lab's or has no guests stage."""
    stages = stages_of(run.manifest.get("timings"))
    rows, intervals, untimed = [], [], 0
    for g in run.guests:
        row, iv, ut = guest_row(g)
        rows.append(row)
        intervals += iv
        untimed += ut
    if untimed:
        basis = "sum"
        own_wall = sum(r["experiments_own"] for r in rows)
    else:
        basis = "wall"
        own_wall = union_seconds(intervals)
    return {"stages": stages, "guests": rows,
            "overhead": overhead(run, stages, own_wall), "basis": basis}
