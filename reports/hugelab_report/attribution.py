"""Where the time of the long faults went (shmdb --attribute, issue 31).

A result with an `attribution` key (workloads/SCHEMA.md) lists every
faulting first access of 10 ms or more with its run-queue wait and CPU
time (schedstat), its lock waits per lock (tracefs
lock:contention_begin/end, each split at the waiter's wakeup) and the
disruptor operations that overlap it.  This module breaks the faults over
10 ms, 100 ms, 1 s and 2 s down per result: run-queue wait, on-CPU time,
lock wait per lock, the disruptor operation holding the lock (the one
whose interval overlaps the wait most) and the unexplained remainder.
Pure functions of the result JSON: no file, no page."""

from collections import Counter

from . import latency

# (label, threshold ns): a fault counts when its latency is at least this
THRESHOLDS = (("10ms", 10_000_000), ("100ms", 100_000_000),
              ("1s", 1_000_000_000), ("2s", 2_000_000_000))
# lib/locktrace.c's names, in its order
LOCKS = ("hugetlb VMA lock", "i_mmap_rwsem", "fault mutex", "mmap_lock",
         "other")
# holder of a fault whose lock waits overlap no disruptor operation, and
# of one that waited for no lock at all
NO_OP = "no operation"
NO_WAIT = "no lock wait"
# Waits shorter than this name no holder: on a lockdep kernel every
# mutex_lock() emits a contention_begin/end pair, a few microseconds
# apart when nobody holds it.
HOLDER_MIN_NS = 1_000_000


def overlap(a0, a1, b0, b1):
    """Length of [a0, a1) and [b0, b1) in common (0 when apart)."""
    return max(0, min(a1, b1) - max(a0, b0))


def wait_span(wait):
    """[start, end) of a wait's blocked part; its runnable part when it
    was never blocked inside the fault (woken before the window)."""
    start = wait["start_ns"]
    length = wait["ns"] or wait.get("runnable_ns") or 0
    return start, start + length


def holder(wait, ops):
    """The disruptor operation ({"seq", "op", ...}) overlapping the wait
    most, None when none does (ties: the earlier in ops)."""
    a0, a1 = wait_span(wait)
    best, most = None, 0
    for op in ops:
        o = overlap(a0, a1, op["start_ns"], op["end_ns"])
        if o > most:
            best, most = op, o
    return best


def fault_parts(fault, ops):
    """One fault's breakdown: latency, runqueue, cpu, lock (ns blocked per
    lock, None when the waits were not traced), unexplained = latency -
    runqueue - cpu - every lock's blocked time (negative where two of
    them counted the same time: a waiter preempted before it slept), and
    holder: the operation of its longest wait (of HOLDER_MIN_NS or more)
    that overlaps one, NO_OP, NO_WAIT, or None (not traced)."""
    lat, rq, cpu = (fault["latency_ns"], fault["runqueue_ns"],
                    fault.get("cpu_ns") or 0)
    locks = fault.get("lock_ns")
    parts = {"latency": lat, "runqueue": rq, "cpu": cpu,
             "lock": None if locks is None else
             {k: locks.get(k, 0) for k in LOCKS},
             "holder": None}
    waited = 0 if locks is None else sum(locks.values())
    parts["unexplained"] = lat - rq - cpu - waited
    if locks is None:
        return parts
    waits = sorted((w for w in fault.get("waits") or []
                    if (w["ns"] or w.get("runnable_ns") or 0) >=
                    HOLDER_MIN_NS),
                   key=lambda w: -(w["ns"] or w.get("runnable_ns") or 0))
    parts["holder"] = NO_WAIT if not waits else NO_OP
    for w in waits:
        op = holder(w, ops)
        if op is not None:
            parts["holder"] = op["op"]
            break
    return parts


def breakdown(faults, ops):
    """Per threshold of THRESHOLDS: the faults at least that long, their
    count and the sums (ns) of latency, runqueue, cpu, lock per lock and
    unexplained, the longest, and how many each holder held."""
    parts = [fault_parts(f, ops) for f in faults]
    traced = all(p["lock"] is not None for p in parts)
    out = {}
    for label, t in THRESHOLDS:
        sel = [p for p in parts if p["latency"] >= t]
        out[label] = {
            "count": len(sel),
            "latency_ns": sum(p["latency"] for p in sel),
            "max_ns": max((p["latency"] for p in sel), default=None),
            "runqueue_ns": sum(p["runqueue"] for p in sel),
            "cpu_ns": sum(p["cpu"] for p in sel),
            "lock_ns": ({k: sum(p["lock"][k] for p in sel) for k in LOCKS}
                        if traced else None),
            "unexplained_ns": sum(p["unexplained"] for p in sel),
            "holders": (dict(sorted(Counter(p["holder"] for p in sel)
                                    .items())) if traced else None),
        }
    return out


def result_row(doc):
    """The attribution of one shmdb result (its JSON object), or None
    when it was run without --attribute."""
    a = doc.get("attribution")
    if not a:
        return None
    tr = a.get("trace") or {}
    traced = bool(tr.get("available"))
    faults = a.get("faults") or []
    if not traced:
        faults = [dict(f, lock_ns=None, waits=None) for f in faults]
    return {
        "fault_lock": (doc.get("kernel") or {}).get("hugetlb_fault_lock"),
        "lock": latency.lock_family(
            (doc.get("kernel") or {}).get("hugetlb_fault_lock")),
        "min_latency_ns": a.get("min_latency_ns"),
        "kept": a.get("faults_kept", len(faults)),
        "dropped": a.get("faults_dropped", 0),
        "traced": traced,
        "trace_error": tr.get("error"),
        "lost_events": tr.get("lost_events"),
        "txn_per_s": (doc.get("transactions") or {}).get("per_s"),
        "over": breakdown(faults, a.get("ops") or []),
    }


def analyse(run):
    """Rows of every attributed shmdb result of a run."""
    rows = []
    for r in run.results("shmdb"):
        row = result_row(r.doc)
        if row is None:
            continue
        cfg = r.config
        row.update({"guest": r.guest, "experiment": r.name,
                    "sessions": cfg.get("sessions"),
                    "disrupt": list(cfg.get("disrupt") or [])})
        rows.append(row)
    rows.sort(key=lambda x: (x["guest"], x["lock"], x["experiment"]))
    return {"rows": rows}
