"""Load and validate a run directory (reports/RUNDIR.md).

A run directory holds manifest.json, guests/<guest>/guest.json,
guests/<guest>/console.log and guests/<guest>/results/<exp>.json.  Loading
never guesses: a missing manifest, JSON that does not parse or a document of
the wrong schema raises RunDirError, which the command line turns into exit
status 2.  Optional parts (console log, results of a guest that failed to
boot) may be absent; their absence is recorded, not hidden.
"""

import json
import os
import re

RUN_SCHEMA = "hugelab.run/1"
GUEST_SCHEMA = "hugelab.guest/1"
RESULT_PROGRAMS = ("shmdb", "racer", "selftest")


class RunDirError(Exception):
    """The directory is not a valid run directory."""


def read_json(path):
    """Parse one JSON document; every failure is a RunDirError."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except FileNotFoundError:
        raise RunDirError("%s: missing" % path) from None
    except (OSError, UnicodeDecodeError) as e:
        raise RunDirError("%s: cannot read: %s" % (path, e)) from None
    except json.JSONDecodeError as e:
        raise RunDirError("%s: invalid JSON: %s" % (path, e)) from None
    if not isinstance(doc, dict):
        raise RunDirError("%s: not a JSON object" % path)
    return doc


def _require(doc, path, keys):
    missing = [k for k in keys if k not in doc]
    if missing:
        raise RunDirError("%s: missing key(s) %s" % (path, ", ".join(missing)))


class Result:
    """One workload result document (workloads/SCHEMA.md)."""

    def __init__(self, guest, name, path, doc):
        self.guest = guest
        self.name = name
        self.path = path
        self.doc = doc

    @property
    def program(self):
        return self.doc.get("program") or \
            self.doc.get("schema", "").split(".")[-1].split("/")[0]

    @property
    def config(self):
        return self.doc.get("config") or {}

    @property
    def kernel(self):
        return self.doc.get("kernel") or {}

    def get(self, *keys, default=None):
        """Nested lookup: get("pagetables", "before")."""
        cur = self.doc
        for k in keys:
            if not isinstance(cur, dict) or k not in cur:
                return default
            cur = cur[k]
        return cur


class Guest:
    """guest.json plus its console log and results."""

    def __init__(self, name, path, doc, console, results, missing,
                 unreadable=None, console_error=None):
        self.name = name
        self.path = path
        self.doc = doc
        self.console = console
        self.results = results
        self.missing_results = missing
        # {name: why} of the missing results whose file is there but holds
        # no JSON object (empty or cut short: a workload killed while it
        # wrote, a guest that died)
        self.unreadable = unreadable or {}
        # why console.log is there but could not be read, else None
        self.console_error = console_error

    @property
    def status(self):
        return self.doc.get("status", "unknown")

    @property
    def kernel(self):
        return self.doc.get("kernel") or {}

    @property
    def shape(self):
        return self.doc.get("shape") or {}

    @property
    def experiments(self):
        return self.doc.get("experiments") or []


class Run:
    """A loaded run directory."""

    def __init__(self, path, manifest, guests):
        self.path = path
        self.manifest = manifest
        self.guests = guests

    @property
    def run_id(self):
        return self.manifest.get("run_id") or os.path.basename(self.path)

    def results(self, program=None):
        """Results of a known schema (all programs, or one)."""
        for g in self.guests:
            for r in g.results:
                if not known_schema(r.doc):
                    continue
                if program is None or r.program == program:
                    yield r


def known_schema(doc):
    """True for a workload result of a schema version this code reads."""
    schema = doc.get("schema")
    return (isinstance(schema, str) and schema.startswith("hugelab.")
            and schema.endswith("/1") and "status" in doc)


def _load_result(guest, path):
    """A result that parses is loaded even when its schema is unknown: the
    report lists it as a failed check instead of refusing the run."""
    doc = read_json(path)
    name = os.path.splitext(os.path.basename(path))[0]
    return Result(guest, name, path, doc)


def _load_guest(gdir, name):
    gpath = os.path.join(gdir, "guest.json")
    doc = read_json(gpath)
    if doc.get("schema") != GUEST_SCHEMA:
        raise RunDirError("%s: schema is %r, want %r"
                          % (gpath, doc.get("schema"), GUEST_SCHEMA))
    _require(doc, gpath, ("name", "status"))
    console, console_error = None, None
    cpath = os.path.join(gdir, "console.log")
    if os.path.lexists(cpath):
        # There but unreadable (a symlink loop or to nowhere, a
        # directory): recorded, never taken as an absent, clean console.
        try:
            with open(cpath, encoding="utf-8", errors="replace") as f:
                console = f.read()
        except OSError as e:
            console_error = "console.log unreadable: %s" % (
                e.strerror or e)
    # Results named by guest.json first (in its order), then any other
    # results/*.json the guest left.
    paths, missing = [], []
    for exp in doc.get("experiments") or []:
        rel = exp.get("result")
        if not rel:
            continue
        p = os.path.normpath(os.path.join(gdir, rel))
        if not p.startswith(os.path.normpath(gdir) + os.sep):
            raise RunDirError("%s: result path %r leaves the guest directory"
                              % (gpath, rel))
        if os.path.exists(p):
            paths.append(p)
        else:
            missing.append(exp.get("name") or rel)
    rdir = os.path.join(gdir, "results")
    if os.path.isdir(rdir):
        for f in sorted(os.listdir(rdir)):
            p = os.path.normpath(os.path.join(rdir, f))
            if f.endswith(".json") and p not in paths:
                paths.append(p)
    results, unreadable = [], {}
    for p in paths:
        try:
            results.append(_load_result(name, p))
        except RunDirError as e:
            # One result cut short must not take the whole fleet's report
            # with it: it is a missing result with a reason (a failed
            # check), as a result that never arrived is.
            rname = os.path.splitext(os.path.basename(p))[0]
            exp = next((x.get("name") for x in doc.get("experiments") or []
                        if x.get("result") and os.path.normpath(
                            os.path.join(gdir, x["result"])) == p), None)
            key = exp or rname
            missing.append(key)
            unreadable[key] = str(e).replace(gdir + os.sep, "")
    return Guest(name, gdir, doc, console, results, missing, unreadable,
                 console_error)


def load(path):
    """Load a run directory or raise RunDirError."""
    path = os.path.abspath(path)
    if not os.path.isdir(path):
        raise RunDirError("%s: not a directory" % path)
    mpath = os.path.join(path, "manifest.json")
    if not os.path.exists(mpath):
        raise RunDirError("%s: not a run directory (no manifest.json)" % path)
    manifest = read_json(mpath)
    if manifest.get("schema") != RUN_SCHEMA:
        raise RunDirError("%s: schema is %r, want %r"
                          % (mpath, manifest.get("schema"), RUN_SCHEMA))
    gdir = os.path.join(path, "guests")
    names = manifest.get("guests")
    if names is None:
        names = sorted(os.listdir(gdir)) if os.path.isdir(gdir) else []
    if not isinstance(names, list):
        raise RunDirError("%s: guests is not a list" % mpath)
    guests = []
    for n in names:
        if not isinstance(n, str) or not n or "/" in n or n.startswith("."):
            raise RunDirError("%s: bad guest name %r" % (mpath, n))
        d = os.path.join(gdir, n)
        if not os.path.isdir(d):
            raise RunDirError("%s: guest %s listed but %s is missing"
                              % (mpath, n, d))
        guests.append(_load_guest(d, n))
    return Run(os.path.abspath(path), manifest, guests)


def require_complete(run):
    """RunDirError for a run still under way (manifest status partial,
    written after a batch of guests): it has no verdict to compare."""
    m = run.manifest
    if m.get("status") == "partial":
        pending = [str(g) for g in m.get("pending") or []]
        raise RunDirError("%s: a partial run (still to come: %s): compare "
                          "runs that finished" % (
                              run.path, ", ".join(pending) or
                              "the final collect"))
    return run


# --- twin runs (the regression fleet: playbooks/regress) --------------------
SIDES = ("baseline", "candidate")
PAIR_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


def twin_of(guest):
    """(side, pair) from guest.json `regress` of a regression fleet's
    guest, or RunDirError."""
    rg = guest.doc.get("regress")
    gpath = os.path.join(guest.path, "guest.json")
    if not isinstance(rg, dict):
        raise RunDirError("%s: no regress side and pair: not a guest of a "
                          "regression fleet (playbooks/regress)" % gpath)
    side, pair = rg.get("side"), rg.get("pair")
    if side not in SIDES:
        raise RunDirError("%s: regress.side is %r, want one of %s"
                          % (gpath, side, ", ".join(SIDES)))
    if not isinstance(pair, str) or not PAIR_RE.fullmatch(pair):
        raise RunDirError("%s: regress.pair %r is not a name" % (gpath, pair))
    return side, pair


def kernel_id(kernel):
    """The kernel's key in the run manifest's kernels (kernel-build/build's
    cache directory name)."""
    src = str(kernel.get("source") or "6.1")
    vf = "%s-%s" % (kernel.get("variant"), kernel.get("flavour"))
    return vf if src == "6.1" else "%s-%s" % (src, vf)


def twins(run):
    """{pair: {"baseline": guest name, "candidate": guest name}} of a twin
    run; RunDirError when a guest is no twin or a pair has two guests on
    one side."""
    out = {}
    for g in run.guests:
        side, pair = twin_of(g)
        sides = out.setdefault(pair, {})
        if side in sides:
            raise RunDirError("%s: pair %s has two %s guests (%s, %s)"
                              % (run.path, pair, side, sides[side], g.name))
        sides[side] = g.name
    return out


def side_view(run, side):
    """One side of a twin run as a run of its own: only that side's guests,
    each named by its pair (so the two sides' results, checks and
    findings match by name), the manifest's status, failures, inventory
    and kernels reduced to them."""
    if side not in SIDES:
        raise ValueError(side)
    twins(run)                  # every guest a twin, one per side and pair
    guests, renamed, inventory = [], {}, {}
    for g in run.guests:
        s, pair = twin_of(g)
        if s != side:
            continue
        doc = dict(g.doc, name=pair)
        results = [Result(pair, r.name, r.path, r.doc) for r in g.results]
        guests.append(Guest(pair, g.path, doc, g.console, results,
                            g.missing_results, g.unreadable,
                            g.console_error))
        renamed[g.name] = pair
        inv = (run.manifest.get("inventory") or {}).get(g.name)
        if inv is not None:
            inventory[pair] = inv
    m = dict(run.manifest)
    failures = [f for f in m.get("failures") or []
                if isinstance(f, str) and f.split(":")[0] in renamed]
    failures = ["%s:%s" % (renamed[f.split(":")[0]], f.split(":", 1)[1])
                for f in failures]
    bad = [g.name for g in guests if g.status != "ok"]
    m["status"] = "fail" if failures or bad else "ok"
    m["failures"] = failures
    m["guests"] = [g.name for g in guests]
    m["inventory"] = inventory
    used = {kernel_id(g.kernel) for g in guests}
    m["kernels"] = {k: v for k, v in (m.get("kernels") or {}).items()
                    if k in used}
    m["regress_side"] = side
    return Run(run.path, m, guests)
