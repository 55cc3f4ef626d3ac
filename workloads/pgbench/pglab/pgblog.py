"""pgbench's own output: the summary it prints and its per-transaction log
(`pgbench --log`), as the lab's histogram object (workloads/SCHEMA.md)."""
import math
import re

# PostgreSQL 15 pgbench --log line:
#   client_id transaction_no time script_no time_epoch time_us
#   [schedule_lag] [retries]
# time: microseconds, or "failed" / "skipped".
_SUMMARY = (
    ("transactions", r"number of transactions actually processed: (\d+)",
     int),
    ("failed", r"number of failed transactions: (\d+)", int),
    ("latency_avg_ms", r"latency average = ([\d.]+) ms", float),
    ("latency_stddev_ms", r"latency stddev = ([\d.]+) ms", float),
    ("initial_connection_ms", r"initial connection time = ([\d.]+) ms",
     float),
    ("average_connection_ms", r"average connection time = ([\d.]+) ms",
     float),
    ("tps", r"tps = ([\d.]+) \(", float),
    ("clients", r"number of clients: (\d+)", int),
    ("threads", r"number of threads: (\d+)", int),
    ("duration_s", r"duration: (\d+) s", int),
)


def parse_summary(text):
    """Figures of pgbench's summary (absent ones are left out); `tps_basis`
    says what pgbench divided by (it changes with --connect)."""
    out = {}
    for key, pattern, conv in _SUMMARY:
        m = re.search(pattern, text)
        if m:
            out[key] = conv(m.group(1))
    m = re.search(r"tps = [\d.]+ \(([^)]*)\)", text)
    if m:
        out["tps_basis"] = m.group(1)
    return out


def parse_log_lines(lines):
    """(latencies in microseconds, failed, skipped, first_epoch_s,
    last_epoch_s) of per-transaction log lines."""
    lat, failed, skipped = [], 0, 0
    first = last = None
    for line in lines:
        f = line.split()
        if len(f) < 6:
            continue
        if f[2] == "failed":
            failed += 1
        elif f[2] == "skipped":
            skipped += 1
        else:
            lat.append(int(f[2]))
        t = int(f[4]) + int(f[5]) / 1e6
        first = t if first is None or t < first else first
        last = t if last is None or t > last else last
    return lat, failed, skipped, first, last


def records(lines):
    """[(client, latency_us or None when failed/skipped, end_s)] of
    per-transaction log lines (end_s: completion time, epoch seconds)."""
    out = []
    for line in lines:
        f = line.split()
        if len(f) < 6:
            continue
        lat = int(f[2]) if f[2].isdigit() else None
        out.append((f[0], lat, int(f[4]) + int(f[5]) / 1e6))
    return out


def steady(recs, duration_s):
    """The window after every client had connected: from the latest first
    transaction start of any client, `duration_s` long (or to the last
    completion).  Transactions that started and ended inside it; pgbench's
    -T counts the clients' connection time in its duration, so under TCG
    hundreds of connections can take all of it."""
    firsts = {}
    for client, lat, end in recs:
        start = end - (lat or 0) / 1e6
        if client not in firsts or start < firsts[client]:
            firsts[client] = start
    if not firsts:
        return None
    t0 = max(firsts.values())
    t1 = min(t0 + duration_s, max(end for _, _, end in recs))
    lat = [x for _, x, end in recs
           if x is not None and end - x / 1e6 >= t0 and end <= t1]
    span = t1 - t0
    return {"clients_seen": len(firsts),
            "start_s": round(t0 - min(firsts.values()), 3),
            "seconds": round(span, 3), "transactions": len(lat),
            "tps": len(lat) / span if span > 0 else None,
            "latency": histogram([x * 1000 for x in lat]),
            "latency_ms": exact_ms(lat)}


def bucket_of(ns):
    """Lab bucket index: 0 holds 0, i holds [2^(i-1), 2^i - 1]."""
    return 0 if ns <= 0 else int(ns).bit_length()


def histogram(values_ns):
    """The lab's log2 histogram object (workloads/SCHEMA.md)."""
    n = len(values_ns)
    if n == 0:
        return {"unit": "ns", "count": 0, "sum": 0, "min": 0, "max": 0,
                "mean": 0, "p50": 0, "p90": 0, "p99": 0, "p999": 0,
                "buckets": []}
    counts = {}
    for v in values_ns:
        b = bucket_of(v)
        counts[b] = counts.get(b, 0) + 1
    lo, hi, total = min(values_ns), max(values_ns), sum(values_ns)
    order = sorted(counts)
    bounds = [(0 if b == 0 else (1 << b) - 1, counts[b]) for b in order]

    def pct(q):
        rank = max(1, math.ceil(q * n))
        seen = 0
        for bound, c in bounds:
            seen += c
            if seen >= rank:
                return min(max(bound, lo), hi)
        return hi

    return {"unit": "ns", "count": n, "sum": total, "min": lo, "max": hi,
            "mean": total / n, "p50": pct(0.5), "p90": pct(0.9),
            "p99": pct(0.99), "p999": pct(0.999),
            "buckets": [[b, c] for b, c in bounds]}


def exact_ms(values_us):
    """Exact percentiles (nearest rank) in milliseconds."""
    if not values_us:
        return None
    s = sorted(values_us)
    n = len(s)

    def rank(q):
        return s[max(0, math.ceil(q * n) - 1)] / 1000.0

    return {"p50": rank(0.5), "p90": rank(0.9), "p99": rank(0.99),
            "p999": rank(0.999), "max": s[-1] / 1000.0,
            "mean": sum(s) / n / 1000.0}
