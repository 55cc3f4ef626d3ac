"""Words for numbers: how every page and every verdict spells bytes,
durations, ratios and configurations.

A leaf module: it imports nothing of this package, so the analysis
modules may spell the figures of their verdicts (check messages, claim
evidence) with it and the presentation modules their tables, the same
way.  Pure arithmetic stays in model.py."""

import re

# CSI (ESC [ ... final byte), OSC (ESC ] ... BEL or ESC \), and two-byte
# ESC sequences; then any C0/C1 control character but tab and newline.
ANSI_RE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]"
                     r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
                     r"|\x1b[@-Z\\-_]")
CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# A lone UTF-16 surrogate (JSON "\ud800" without its pair): no UTF-8
# encoding exists, so writing it would crash; it becomes U+FFFD.
SURROGATE_RE = re.compile("[\ud800-\udfff]")


def plain_text(text):
    """text without ANSI escape sequences and control characters (tab and
    newline kept; a carriage return becomes nothing), a lone surrogate
    as U+FFFD."""
    if text is None:
        return None
    return SURROGATE_RE.sub("\ufffd", CONTROL_RE.sub(
        "", ANSI_RE.sub("", str(text))))


def human_bytes(n):
    """1536 -> '1.50 KiB' (binary units, three significant digits)."""
    if n is None:
        return "n/a"
    sign = "-" if n < 0 else ""
    n = abs(float(n))
    units = ("B", "KiB", "MiB", "GiB", "TiB")
    i = 0
    while n >= 1024 and i < len(units) - 1:
        n /= 1024
        i += 1
    if i == 0:
        return "%s%d B" % (sign, round(n))
    return "%s%s %s" % (sign, sig3(n), units[i])


def sig3(x):
    """Three significant digits without an exponent: 39.06 -> '39.1'."""
    x = float(x)
    if x == 0:
        return "0"
    a = abs(x)
    if a >= 100:
        return "%.0f" % x
    if a >= 10:
        return "%.1f" % x
    if a >= 1:
        return "%.2f" % x
    return "%.3g" % x


def ns(v):
    """Nanoseconds for people: 1234567 -> '1.23 ms'."""
    if v is None:
        return "n/a"
    v = float(v)
    for unit, div in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if abs(v) >= div:
            return "%s %s" % (sig3(v / div), unit)
    return "%d ns" % round(v)


def num(v):
    if v is None:
        return "n/a"
    if isinstance(v, float):
        return sig3(v)
    return str(v)


def pct(m, key):
    """A percentile of a latency summary for people: '= max' when the
    run has too few samples for it (latency.PERCENTILE_MIN_SAMPLES: the
    nearest-rank p99 of fewer than 100 samples is the maximum)."""
    m = m or {}
    if m.get(key) is None and m.get("count"):
        return "= max"
    return ns(m.get(key))


def ratio(v):
    return "n/a" if v is None else "%sx" % sig3(v)


def secs(x):
    return "n/a" if x is None else "%s s" % sig3(x)


def pair(a, b, fmt):
    """'a / b' with fmt, or n/a when either is missing."""
    if a is None or b is None:
        return "n/a"
    return "%s / %s" % (fmt(a), fmt(b))


def count(n):
    """1000 -> '1,000'."""
    return "{:,}".format(n)


def count_range(lo_hi):
    lo, hi = lo_hi
    return str(lo) if lo == hi else "%d-%d" % (lo, hi)


def verdict_text(v):
    """A verdict for people: its word upper case, what follows in
    parentheses as it is ('INCONCLUSIVE (1 run)')."""
    head, sep, rest = str(v).partition(" (")
    return head.upper() + (" (" + rest if sep else "")


def params_text(cfg):
    """Workload parameters as 'key value' pairs, sizes in binary units."""
    out = []
    for k in sorted(cfg or {}):
        v = cfg[k]
        if isinstance(v, bool):
            v = "yes" if v else "no"
        elif v is None:
            v = "none"
        elif isinstance(v, int) and ("size" in k or k.endswith("bytes") or
                                     k.endswith("len")) and v >= 1024:
            v = human_bytes(v)
        elif isinstance(v, (list, tuple)):
            v = ",".join(str(x) for x in v) or "none"
        elif isinstance(v, dict):
            v = ", ".join("%s %s" % kv for kv in sorted(v.items()))
        out.append("%s %s" % (k.replace("_", " "), v))
    return "; ".join(out) or "none"


def page_size(v):
    try:
        return human_bytes(int(v))
    except (TypeError, ValueError):
        return str(v)
