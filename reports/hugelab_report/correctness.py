"""Correctness: kernel warnings per guest (from the results and the serial
console), racer results, huge page accounting, peer selftests, and one
check per finding for JUnit."""

import re

from . import rundir
from .fmt import plain_text

# Console lines that are kernel findings: the families the workloads look
# for in dmesg (workloads/SCHEMA.md kernel_log) and the smoke collector on
# the console. Not a bare "lockdep": a debug kernel prints "RCU lockdep
# checking is enabled." at every boot.
FINDING = re.compile(
    r"WARNING:|BUG:|Oops|Bad page|kernel BUG|Kernel panic|"
    r"general protection fault|"
    r"possible (circular|recursive) locking|inconsistent lock state|"
    r"suspicious RCU usage|rcu: INFO:|detected stalls?|"
    r"INFO: task .* blocked|UBSAN:|KASAN:")
CONTEXT = 3
MAX_EXCERPT = 60
# Console lines that are not the kernel's: program output relayed by the
# smoke harness's init ("|| ") and the init's own messages.
NOT_KERNEL = ("|| ", "hugelab-init:")


def console_findings(text):
    """(count, excerpt): kernel finding lines in a console log with CONTEXT
    lines either side, at most MAX_EXCERPT lines of excerpt."""
    if not text:
        return 0, []
    lines = [ln.rstrip("\r") for ln in text.splitlines()
             if not ln.startswith(NOT_KERNEL)]
    hits = [i for i, ln in enumerate(lines) if FINDING.search(ln)]
    keep = set()
    for i in hits:
        keep.update(range(max(0, i - CONTEXT),
                          min(len(lines), i + CONTEXT + 1)))
    excerpt, last = [], None
    for i in sorted(keep):
        if last is not None and i != last + 1:
            excerpt.append("...")
        excerpt.append(plain_text(lines[i].rstrip()))
        last = i
    return len(hits), excerpt[:MAX_EXCERPT]


def _check(suite, name, ok, message="", skip=False, output=None):
    c = {"suite": suite, "name": name,
         "status": "skip" if skip else ("pass" if ok else "fail"),
         "message": message}
    if output:
        c["output"] = output
    return c


def only_kernel_log(doc):
    """A failed result whose every failure is a kernel log finding (the
    workloads word those "kernel log: ...")."""
    failures = doc.get("failures") or []
    return (doc.get("status") == "fail" and bool(failures) and
            all(str(f).startswith("kernel log") for f in failures))


def guest_of(g):
    count, excerpt = console_findings(g.console)
    expect_kw = (g.doc.get("expect") or {}).get("kernel_warnings")
    by_name = {r.name: r for r in g.results}
    result_warnings = 0
    result_excerpt = []
    experiments, racers, accounting, selftests = [], [], [], []
    checks = []
    suite = "correctness"
    for r in g.results:
        if not rundir.known_schema(r.doc):
            msg = ("result has schema %r and status %r: not a workload "
                   "result this report reads" % (r.doc.get("schema"),
                                                 r.doc.get("status")))
            checks.append(_check(suite, "%s/%s schema" % (g.name, r.name),
                                 False, msg))
            continue
        kl = r.get("kernel_log") or {}
        w = kl.get("warnings") or 0
        result_warnings += w
        if w:
            result_excerpt.extend(plain_text(x)
                                  for x in kl.get("excerpt") or [])
        status = r.get("status")
        experiments.append({"name": r.name, "program": r.program,
                            "status": status,
                            "failures": r.get("failures") or [],
                            "kernel_warnings": w})
        # On a guest meant to reproduce a kernel warning, a result that
        # failed only for kernel log findings did what it was run for.
        expected = bool(expect_kw) and only_kernel_log(r.doc)
        checks.append(_check(
            suite, "%s/%s status" % (g.name, r.name),
            status == "ok" or expected,
            ("; ".join(r.get("failures") or []) or "status %s" % status) +
            (" (kernel warnings expected)" if expected else "")))
        verify = r.get("errors", "verify")
        if verify is not None:
            name = "%s/%s data verify" % (g.name, r.name)
            checks.append(_check(suite, name, verify == 0,
                                 "%d verify errors" % verify))
        for size, hp in sorted((r.get("hugepages") or {}).items()):
            if not isinstance(hp, dict):
                continue
            accounting.append({"experiment": r.name, "page_size": size,
                               "before": hp.get("before"),
                               "after": hp.get("after"),
                               "returned": hp.get("returned")})
            if hp.get("returned") is not None:
                checks.append(_check(
                    suite, "%s/%s hugepages %s returned" % (g.name, r.name,
                                                            size),
                    hp.get("returned") is True,
                    "before %s after %s" % (hp.get("before"),
                                            hp.get("after"))))
        if r.program == "racer":
            racers.append({
                "experiment": r.name, "status": status,
                "reads": r.get("reads"), "tag_errors": r.get("tag_errors"),
                "tag_error_samples": r.get("tag_error_samples") or [],
                "unshare_ops": r.get("unshare_ops") or {},
                "config": r.config})
            te = r.get("tag_errors")
            if te is not None:
                name = "%s/%s racer tags" % (g.name, r.name)
                checks.append(_check(suite, name, te == 0,
                                     "%d tag errors" % te))
        if r.program == "selftest":
            for t in r.get("tests") or []:
                st = t.get("status")
                selftests.append({"experiment": r.name, "name": t.get("name"),
                                  "status": st, "seconds": t.get("seconds"),
                                  "output_excerpt": t.get("output_excerpt")})
                checks.append(_check(
                    "selftest", "%s/%s/%s" % (g.name, r.name, t.get("name")),
                    st == "pass", "status %s" % st,
                    skip=(st in ("skip", "known-fail")),
                    output=t.get("output_excerpt")))
    for name in g.missing_results:
        checks.append(_check(suite, "%s/%s result present" % (g.name, name),
                             False, g.unreadable.get(name) or
                             "guest.json names a result that is missing"))
    for exp in g.experiments:
        if exp.get("status") not in (None, "ok") and not any(
                e["name"] == exp.get("name") for e in experiments):
            name = "%s/%s status" % (g.name, exp.get("name"))
            checks.append(_check(suite, name, False,
                                 "status %s" % exp.get("status")))
    guest_log = g.doc.get("kernel_log") or {}
    guest_warnings = guest_log.get("warnings") or 0
    warnings = max(count, result_warnings, guest_warnings)
    # Findings only an emulator fault explains (the smoke harness names
    # them in kernel_log.emulator_faults): no proof of an expected kernel
    # warning.
    emulated = len(guest_log.get("emulator_faults") or [])
    real_warnings = warnings
    if emulated:
        real_warnings = max(result_warnings, guest_warnings - emulated)
    expect_status = (g.doc.get("expect") or {}).get("status", "ok")
    expect = ((g.doc.get("expect") or {}).get("kernel_warnings") or
              expect_status == "panic")
    if expect_status != "ok":
        # A negative test: its experiments are not expected to finish.
        for c in checks:
            if c["status"] == "fail":
                c["status"] = "skip"
                c["message"] += " (guest expected to end %s)" % expect_status
    # A guest whose only fault is the kernel warning it was expected to
    # show is not a failed guest; nor is a negative test (a guest meant
    # to panic) that ended as expected.
    status_ok = g.status == expect_status or (
        expect and g.status == "fail" and warnings > 0 and
        all(e.get("status") == "ok" or (
            e.get("name") in by_name and
            only_kernel_log(by_name[e.get("name")].doc))
            for e in g.experiments))
    checks.insert(0, _check(suite, "%s guest status" % g.name,
                            status_ok, "status %s (expected %s)" % (
                                g.status, expect_status),
                            output="\n".join(g.doc.get("console_excerpt")
                                             or [])))
    verified = g.kernel.get("verified")
    if verified is not None:
        checks.insert(1, _check(suite, "%s kernel verified" % g.name,
                                verified is True,
                                "running kernel %s" % g.kernel.get("release")))
    if not excerpt:
        excerpt = [plain_text(x) for x in guest_log.get("excerpt") or []]
    if expect:
        checks.insert(1, _check(
            suite, "%s kernel warning reproduced" % g.name,
            real_warnings > 0,
            "%d findings (expected some)%s" % (
                warnings, ", %d of them emulator faults" % emulated
                if emulated else ""),
            output="\n".join(excerpt or result_excerpt)))
    else:
        # An unreadable console says nothing about warnings: the check
        # fails with the reason, never passes as a clean guest.
        checks.insert(1, _check(
            suite, "%s no kernel warnings" % g.name,
            warnings == 0 and not g.console_error,
            ("%d findings on the console, %d in results" % (
                count, result_warnings)) +
            ("; console unreadable (%s): its findings are unknown" %
             g.console_error if g.console_error else ""),
            output="\n".join(excerpt or result_excerpt)))
    return {
        "status": g.status,
        "console_excerpt": [plain_text(x) for x in
                            g.doc.get("console_excerpt") or []],
        "kernel_warnings": warnings,
        "console_findings": count,
        "console_unreadable": g.console_error,
        "result_warnings": result_warnings,
        "expect_warnings": bool(expect),
        "warning_excerpt": excerpt or result_excerpt[:MAX_EXCERPT],
        "experiments": experiments,
        "racers": racers,
        "hugepages": accounting,
        "selftests": selftests,
        "checks": checks,
    }


def analyse(run):
    guests = {g.name: guest_of(g) for g in run.guests}
    checks = [c for g in guests.values() for c in g["checks"]]
    if not run.guests:
        checks.append(_check("correctness", "run has guests", False,
                             "manifest lists no guest"))
    return {"guests": guests, "checks": checks}
