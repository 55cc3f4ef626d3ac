"""RUNS_DIR/latest: the symlink to the newest run directory, which
render moves after writing a report and `hugelab-report latest` on
demand."""

import datetime
import json
import os
import re

RUNS_DIR = os.path.normpath(os.path.join(os.path.dirname(__file__), "..",
                                         "runs"))


RUN_ID_TIME = re.compile(r"(\d{8}T\d{6}Z)")


def run_time(runs_dir, name):
    """When run `name` started, as a sortable UTC 'yyyymmddThhmmssZ': the
    timestamp in its run id, else the manifest's started_at; None when it
    has neither."""
    m = RUN_ID_TIME.search(name)
    if m:
        return m.group(1)
    try:
        with open(os.path.join(runs_dir, name, "manifest.json"),
                  encoding="utf-8") as f:
            started = json.load(f).get("started_at")
    except (OSError, ValueError, AttributeError):
        return None
    if not isinstance(started, str):
        return None
    try:
        t = datetime.datetime.fromisoformat(started.replace("Z", "+00:00"))
    except ValueError:
        return None
    if t.tzinfo is not None:
        t = t.astimezone(datetime.timezone.utc)
    return t.strftime("%Y%m%dT%H%M%SZ")


def newest_run(runs_dir):
    """The newest run directory under runs_dir by start time (run id
    timestamp, else manifest started_at), not by name: 'smoke-2026...'
    sorts after 'proof-2027...' but is older.  Runs without a time rank
    below every timed run; ties go to the name.  None without runs."""
    names = [n for n in os.listdir(runs_dir) if n != "latest" and
             os.path.isfile(os.path.join(runs_dir, n, "manifest.json"))]
    if not names:
        return None
    return max(names, key=lambda n: (run_time(runs_dir, n) or "", n))


class LatestError(Exception):
    """runs_dir/latest cannot be pointed at the newest run."""


def point_latest(runs_dir):
    """Point runs_dir/latest at newest_run(runs_dir) (relative link,
    replaced atomically).  Returns (name, changed)."""
    name = newest_run(runs_dir)
    if name is None:
        return None, False
    link = os.path.join(runs_dir, "latest")
    if os.path.islink(link) and os.readlink(link) == name:
        return name, False
    if os.path.lexists(link) and not os.path.islink(link):
        # A real directory or file someone put there: never replaced.
        raise LatestError("%s is a %s, not a symlink: left as it is "
                          "(move it away to let latest point at %s)" % (
                              link, "directory" if os.path.isdir(link)
                              else "file", name))
    tmp = link + ".tmp"
    if os.path.lexists(tmp):
        os.unlink(tmp)
    try:
        os.symlink(name, tmp)
        os.replace(tmp, link)
    except OSError as e:
        if os.path.lexists(tmp):
            os.unlink(tmp)
        raise LatestError("%s: cannot point it at %s: %s" % (
            link, name, e.strerror)) from None
    return name, True


def update_latest(run_path, runs_dir=RUNS_DIR):
    """Point runs_dir/latest at the newest run when run_path is a run
    directly under runs_dir; the name it points at, else None."""
    run_path = os.path.realpath(run_path)
    if os.path.dirname(run_path) != os.path.realpath(runs_dir):
        return None
    return point_latest(runs_dir)[0]
