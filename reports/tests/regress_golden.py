#!/usr/bin/python3
"""Golden fixtures of fleet regression runs (playbooks/regress).

    tests/regress_golden.py add REGRESS_DIR PROOF [NAME]
    tests/regress_golden.py golden        (what make golden runs)

A fixture is tests/fixtures/regress/<NAME>/:

    rounds/<run-id>/      the rounds' run directories (consoles trimmed,
                          below), in round order
    regress.json          the regression run's record, as written
    expect.json           what the proof claims (CLAIMS[PROOF]): exit
                          status, regressions and improvements it must
                          name, the page-table rise in PMD pages
    golden/compare.json   what compare --twins wrote for the rounds,
                          reviewed (paths dropped)

`add` copies a regression run directory's rounds (regress.json
`rounds`) into a new fixture, writes expect.json from PROOF's claims and
the golden; review the diff before committing.  A console.log longer
than CONSOLE_HEAD + CONSOLE_TAIL lines keeps its first CONSOLE_HEAD
and last CONSOLE_TAIL lines and every kernel finding line (with the
lines around it, as the report's excerpts); results and guest.json are
copied unchanged.  The claims are the issue's, not measured figures."""

import json
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from hugelab_report import cli, correctness  # noqa: E402

FIXTURES = os.path.join(os.environ.get(
    "HUGELAB_REPORT_FIXTURES", os.path.join(HERE, "fixtures")), "regress")
CONSOLE_HEAD, CONSOLE_TAIL = 300, 100
PAIR = "hl-rg"
SAVINGS = PAIR + "/savings-2m-aligned-1000"
SKEWED = PAIR + "/savings-2m-skewed-1000"
PUNCH = PAIR + "/latency-punch-skewed-3000"
# What each proof inventory (inventories/regress*) must show.
CLAIMS = {
    # A/A: patched perf against itself.
    "aa": {"exit": 0, "no_regression": True},
    # patched perf against canary-noshare: the aligned run's page tables
    # up by one PMD page a session (the model's "without sharing"), the
    # skewed run (never shared) unchanged.
    "canary": {"exit": 1,
               "regressions": [["deterministic", SAVINGS,
                                "pagetables_per_session"]],
               "unchanged": [["deterministic", SKEWED,
                              "pagetables_per_session"]],
               "pagetables_rise": [{"key": SAVINGS, "pmd_pages": 1.0,
                                    "tolerance": 0.1}]},
    # hugetlb_fault_lock=vma against =i_mmap at 3,000 mappers: a latency
    # regression of the faults during hole punches.
    "faultlock": {"exit": 1,
                  "regressions": [["latency", PUNCH,
                                   "faulting_disrupted"]]},
    # ... and the other way round an improvement, no regression.
    "faultlock-reverse": {"exit": 0, "no_regression": True,
                          "improvements": [["latency", PUNCH,
                                            "faulting_disrupted"]]},
}


def fixtures():
    """Names of the regression fixtures (with an expect.json)."""
    if not os.path.isdir(FIXTURES):
        return []
    return sorted(n for n in os.listdir(FIXTURES)
                  if os.path.isfile(os.path.join(FIXTURES, n, "expect.json")))


def rounds_of(fdir):
    rdir = os.path.join(fdir, "rounds")
    with open(os.path.join(fdir, "regress.json"), encoding="utf-8") as f:
        order = [r["run_id"] for r in json.load(f)["rounds"]]
    return [os.path.join(rdir, r) for r in order]


def compare(rounds, out):
    """compare --twins over the rounds into out: (exit, compare.json)."""
    code = cli.main(["compare", "--twins"] + list(rounds) + ["--out", out])
    path = os.path.join(out, "compare.json")
    doc = None
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    return code, doc


def normalise(doc):
    """compare.json without what depends on where the runs lie."""
    doc = json.loads(json.dumps(doc))
    for side in ("baseline", "candidate"):
        doc[side].pop("paths", None)
    return doc


def _has(doc, verdict, kind, key, prefix):
    return any(i["kind"] == kind and i["key"] == key and
               i["metric"].startswith(prefix) and i["verdict"] == verdict
               for i in doc["items"])


def unmet(code, doc, claims):
    """The claims the comparison does not bear out (empty: all hold)."""
    out = []
    if code != claims["exit"]:
        out.append("exit %s, claimed %s" % (code, claims["exit"]))
    if doc is None:
        return out + ["no compare.json"]
    regs = [i for i in doc["items"]
            if i["verdict"] in ("regression", "changed")]
    if claims.get("no_regression") and regs:
        out.append("regressions: %s" % ", ".join(
            "%s %s" % (i["key"], i["metric"]) for i in regs))
    for what, verdict in (("regressions", "regression"),
                          ("improvements", "improved"),
                          ("unchanged", "ok")):
        for kind, key, prefix in claims.get(what, []):
            if not _has(doc, verdict, kind, key, prefix):
                out.append("no %s %s %s* %s" % (kind, key, prefix, verdict))
    for r in claims.get("pagetables_rise", []):
        items = [i for i in doc["items"] if i["key"] == r["key"] and
                 i["metric"] == "pagetables_per_session"]
        got = items[0].get("rise_in_unshared") if items else None
        if got is None or abs(got - r["pmd_pages"]) > r["tolerance"]:
            out.append("%s page tables rose by %s PMD pages a session, "
                       "claimed %s +- %s" % (r["key"], got, r["pmd_pages"],
                                             r["tolerance"]))
    return out


def trim_console(src, dst):
    with open(src, encoding="utf-8", errors="replace") as f:
        lines = f.read().splitlines(keepends=True)
    if len(lines) <= CONSOLE_HEAD + CONSOLE_TAIL:
        shutil.copyfile(src, dst)
        return False
    keep = set(range(CONSOLE_HEAD)) | set(range(len(lines) - CONSOLE_TAIL,
                                                len(lines)))
    for i, ln in enumerate(lines):
        if correctness.FINDING.search(ln):
            keep.update(range(max(0, i - correctness.CONTEXT),
                              min(len(lines), i + correctness.CONTEXT + 1)))
    with open(dst, "w", encoding="utf-8") as f:
        last = -1
        for i in sorted(keep):
            if i != last + 1:
                f.write("[hugelab fixture: %d lines trimmed]\n"
                        % (i - last - 1))
            f.write(lines[i])
            last = i
    return True


def write_golden(fdir):
    tmp = tempfile.mkdtemp(prefix="hugelab-regress-golden-")
    try:
        code, doc = compare(rounds_of(fdir), tmp)
    finally:
        shutil.rmtree(tmp)
    os.makedirs(os.path.join(fdir, "golden"), exist_ok=True)
    with open(os.path.join(fdir, "golden", "compare.json"), "w",
              encoding="utf-8") as f:
        json.dump(normalise(doc), f, indent=1, sort_keys=True)
        f.write("\n")
    return code, doc


def add(regress_dir, proof, name=None):
    if proof not in CLAIMS:
        sys.exit("regress_golden: unknown proof %r (%s)" % (
            proof, ", ".join(CLAIMS)))
    with open(os.path.join(regress_dir, "regress.json"),
              encoding="utf-8") as f:
        reg = json.load(f)
    name = name or "%s-%s" % (proof, reg["id"])
    fdir = os.path.join(FIXTURES, name)
    if os.path.exists(fdir):
        sys.exit("regress_golden: %s exists" % fdir)
    os.makedirs(os.path.join(fdir, "rounds"))
    trimmed = 0
    for r in reg["rounds"]:
        dst = os.path.join(fdir, "rounds", r["run_id"])
        shutil.copytree(r["run_dir"], dst, ignore=shutil.ignore_patterns(
            "report.*", "summary.json", "junit.xml", "compare.*",
            "junit-compare.xml", "*.png"))
        for g in os.listdir(os.path.join(dst, "guests")):
            c = os.path.join(dst, "guests", g, "console.log")
            if os.path.exists(c):
                src = os.path.join(r["run_dir"], "guests", g, "console.log")
                trimmed += trim_console(src, c)
    shutil.copyfile(os.path.join(regress_dir, "regress.json"),
                    os.path.join(fdir, "regress.json"))
    with open(os.path.join(fdir, "expect.json"), "w", encoding="utf-8") as f:
        json.dump(dict(CLAIMS[proof], proof=proof), f, indent=1,
                  sort_keys=True)
        f.write("\n")
    code, doc = write_golden(fdir)
    bad = unmet(code, doc, CLAIMS[proof])
    print("regress fixture %s: %d rounds, %d consoles trimmed, compare exit "
          "%d; claims %s" % (name, len(reg["rounds"]), trimmed, code,
                             "hold" if not bad else "NOT MET: " +
                             "; ".join(bad)))
    return 0 if not bad else 1


def main(argv):
    if len(argv) >= 2 and argv[1] == "golden" and len(argv) == 2:
        for name in fixtures():
            code, _ = write_golden(os.path.join(FIXTURES, name))
            print("regress golden: %s: exit %d" % (name, code))
        return 0
    if len(argv) in (4, 5) and argv[1] == "add":
        return add(*argv[2:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
