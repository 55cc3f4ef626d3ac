"""The pages' machinery, shared by render and compare: the Jinja
environment of templates/ with its filters, and writing a page."""

import os
import re

import jinja2
import markupsafe

from .fmt import SURROGATE_RE, ns, num, params_text

TEMPLATES = os.path.join(os.path.dirname(__file__), "templates")


def environment():
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=jinja2.select_autoescape(["html.j2"]),
        keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True)
    env.filters["mdcell"] = lambda v: str(v).replace("|", "\\|").replace(
        "\n", " ")
    env.filters["inline"] = inline_html
    env.filters["figure"] = figure
    env.filters["params"] = params_text
    env.filters["verdict_first"] = verdict_first
    return env


VERDICT_ORDER = ("regression", "changed", "improved", "noise",
                 "known-failure", "new", "inconclusive", "skipped", "ok")


def verdict_first(items):
    """Compare items with regressions first, then improvements, ..., ok
    last (stable within a verdict)."""
    def rank(i):
        v = i.get("verdict")
        return VERDICT_ORDER.index(v) if v in VERDICT_ORDER else 0
    return sorted(items, key=rank)


def figure(v, metric=""):
    """A compare figure (one value or one per run) for people: latency
    statistics as durations, everything else as numbers."""
    timed = (" p50" in metric or " p99" in metric or " max" in metric)
    if isinstance(v, list):
        return ", ".join(figure(x, metric) for x in v) or "n/a"
    if v is None:
        return "n/a"
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return ns(v) if timed else num(v)
    return str(v)


def inline_html(text):
    """Escape text for HTML and turn `code` spans into <code>."""
    parts = str(markupsafe.escape(text)).split("`")
    if len(parts) % 2 == 0:         # unbalanced: leave the backticks
        return markupsafe.Markup(LONG_TOKEN.sub(
            r'<span class="brk">\1</span>', "`".join(parts)))
    out = []
    for i, p in enumerate(parts):
        p = LONG_TOKEN.sub(r'<span class="brk">\1</span>', p)
        out.append("<code>%s</code>" % p if i % 2 else p)
    return markupsafe.Markup("".join(out))


# Tokens this long (hashes, paths, parameter lists without spaces) may
# break anywhere, so that a table fits a 1366 px screen; shorter words
# keep whole.
LONG_TOKEN = re.compile(r"(\S{24,})")


def write_text(path, text):
    """Write text atomically as UTF-8; a lone surrogate (from JSON that
    held half a UTF-16 pair) is written as U+FFFD, not a crash."""
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(SURROGATE_RE.sub("\ufffd", text))
    os.replace(tmp, path)
