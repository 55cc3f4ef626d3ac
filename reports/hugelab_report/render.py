"""render RUN_DIR, the presentation of a run's analysis
(summary.analyse): report.md, report.html (inline SVG), summary.json,
junit.xml; update reports/runs/latest.  One section function per part of
the report, each building its tables from the analysis' figures."""

import json
import os
import sys

from . import (attribution, headline, junit, latency, latency_map, model,
               plots, postgres, savings, summary, timing)
from .fmt import (count_range, human_bytes, ns, num, page_size, pair,
                  params_text, pct, ratio, secs, sig3, verdict_text)
from .latest import RUNS_DIR, LatestError, update_latest
from .pages import environment, write_text


def status_line(an):
    """(checks, latency claims, css class of the latter) for the title:
    the checks' status and the latency claims' apart, so that claims one
    run cannot decide never stand under an "OK"."""
    lat = an["headline"]["latency_claims"]
    cls = "inconclusive" if lat.startswith("inconclusive") else "neutral"
    if lat == "decided":
        lat = "decided (see Headline)"
    if an.get("partial") is not None:
        # A run under way: nothing in its title reads as a final verdict.
        c = an["counts"]
        return ("PARTIAL (%d failed so far)" % c["failed"],
                verdict_text(lat) + " so far", "inconclusive")
    return an["status"].upper(), verdict_text(lat), cls


class Section:
    def __init__(self, title, level=2):
        self.title = title
        self.level = level
        self.blocks = []

    def para(self, text):
        self.blocks.append({"kind": "para", "text": text})

    def table(self, headers, rows, caption=None):
        if rows:
            self.blocks.append({"kind": "table", "headers": headers,
                                "rows": [[str(c) for c in r] for r in rows],
                                "caption": caption})

    def pre(self, lines, caption=None):
        if lines:
            self.blocks.append({"kind": "pre", "text": "\n".join(lines),
                                "caption": caption})

    def figure(self, svg, caption):
        if svg:
            self.blocks.append({"kind": "figure", "svg": svg,
                                "caption": caption})


def headline_sections(an):
    hl = an["headline"]
    s = Section("Headline")
    c = an["counts"]
    _claim_tables(s, hl, c)
    _page_table_tables(s, hl)
    _stall_tables(s, hl)
    s.table(["kernel", "guest", "status", "kernel findings",
             "warnings expected", "failed checks"],
            [[x["kernel"], x["guest"], x["status"], x["kernel_findings"],
              "yes" if x["expect_warnings"] else "no", x["failed_checks"]]
             for x in hl["correctness"]], "Correctness per guest")
    rows = an["latency"]["rows"]
    for m in [m for m in model.MODES if any(r["mode"] == m for r in rows)]:
        s.figure(plots.ccdf_plot(rows, m, CCDF_METRICS),
                 "Survival (CCDF) of fault latency per fault-lock mode, "
                 "log-log, %s: the fraction of faults slower than x; "
                 "each step is one histogram bucket" % model.MODE_TITLES[m])
    return [s]


def _claim_tables(s, hl, c):
    s.para("Correctness: %s (%d checks, %d failed, %d skipped; "
           "details under Correctness and Checks)." % (
               {"ok": "pass", "partial": "not decided (partial report: "
                "guests still to come)"}.get(hl["verdict"], "FAIL"),
               c["checks"], c["failed"], c["skipped"]))
    s.table(["seed claim", "verdict", "measured"],
            [[x["claim"], verdict_text(x["verdict"]), x["evidence"]]
             for x in hl["claims"] if x.get("kind") != "latency"],
            "The seed article's claims on page tables (arithmetic from "
            "the measured bytes)")
    s.para("Latency claims: %s. A latency claim is decided only from %d "
           "or more runs (rounds) of one configuration in each fault-lock "
           "mode, by the rule compare uses (every run of one side beyond "
           "every run of the other): the 2 s stall reproduced when every "
           "i_mmap run stalled a fault over 2 s, refuted when none did; "
           "the per-VMA lock reproduced when every i_mmap run's worst "
           "stall is %sx every vma run's or more, refuted when every one "
           "is less; otherwise, and from fewer runs, inconclusive, with "
           "the figures measured." % (
               verdict_text(hl["latency_claims"]), headline.MIN_ROUNDS,
               sig3(headline.A_LOT_BETTER)))
    s.table(["seed claim", "verdict", "measured"],
            [[x["claim"], verdict_text(x["verdict"]), x["evidence"]]
             for x in hl["claims"] if x.get("kind") == "latency"],
            "The seed article's latency claims")


def _page_table_tables(s, hl):
    s.table(["kernel", "guest", "page mode", "segment", "sessions",
             "page tables per session", "model", "within model"],
            [[x["kernel"], x["guest"], x["mode"],
              human_bytes(x["size"]), x["sessions"],
              human_bytes(x["per_session_bytes"]),
              human_bytes(x["model_per_session_bytes"]),
              x["check"]] for x in hl["page_tables"]],
            "Page-table bytes per session against the model (per page "
            "mode the run with the most sessions)")
    sv = hl["savings"]
    s.table(["kernel", "guest", "sessions", "segment", "saved (measured)",
             "saved (model)", "bytes per PMD page (measured)"],
            [[x["kernel"], x["guest"], x["sessions"],
              human_bytes(x["size"]),
              human_bytes(x["saved_bytes"]),
              human_bytes(x["model_saved_bytes"]),
              num(x["bytes_per_pmd_page"])] for x in sv["pairs"]],
            "Saving from sharing at the measured scale")
    cross = "; ".join("%s %s B" % (g, num(v)) for g, v in
                      sv["measured_bytes_per_pmd_page"].items()
                      if v is not None) or "not measured"
    s.table(["mapping", "processes", "PMD pages per process",
             "saved with 4096 B per PMD page"],
            [[human_bytes(t["size"]), "{:,}".format(t["processes"]),
              "{:,}".format(t["per_process_bytes"] // model.PT_PAGE),
              human_bytes(t["saved_bytes"])] for t in sv["targets"]],
            "Extrapolated to the seed's 1 GB x 10,000 processes and the "
            "1 TiB it takes for 39 GB")
    s.para("Extrapolations multiply by the kernel's 4096 bytes per PMD "
           "page; the measured bytes per PMD page saved are the "
           "cross-check: %s." % cross)


def _stall_tables(s, hl):
    s.table(["fault lock", "kernel", "guest", "experiment", "disrupt",
             "sessions", "faults", "worst fault stall", "> 100 ms", "> 1 s",
             "> 2 s"],
            [[x["lock"], x["kernel"], x["guest"], x["experiment"],
              ",".join(x["disrupt"]) or "none", x["sessions"], x["count"],
              ns(x["worst"]), count_range(x["over"]["100ms"]),
              count_range(x["over"]["1s"]), count_range(x["over"]["2s"])]
             for x in hl["stalls"]],
            "Fault stalls per fault-lock mode: during disruption, only "
            "the reads that faulted when recorded, else all faults then; "
            "runs without a disruptor last, all first-touch faults (a "
            "range where a log2 bucket straddles the threshold)")
    if hl.get("sweeps"):
        s.table(["page mode", "disrupt", "mappers", "i_mmap / vma: median, "
                 "worst fault", "first fault over 2 s"],
                [[x["mode"], ",".join(x["disrupt"]),
                  ", ".join("{:,}".format(n) for n in x["sessions"]),
                  "; ".join("%s: %s, %s" % ("{:,}".format(r["sessions"]),
                                            ratio(r["p50_ratio"]),
                                            ratio(r["max_ratio"]))
                            for r in x["ratios"]) or "no count in both",
                  "; ".join("%s %s" % (k, "{:,} mappers".format(v)
                                       if v else "none")
                            for k, v in sorted(x["stall_2s"].items()))]
                 for x in hl["sweeps"]],
                "Fault stalls against the number of mappers (mapper sweeps; "
                "under TCG trust the ratio between modes, not the absolute "
                "times)")


def provenance_sections(pv):
    s = Section("Provenance")
    src = pv.get("source") or {}
    s.para("Run `%s` (harness %s), %s to %s. Source package %s %s." % (
        pv["run_id"], pv.get("harness") or "n/a", pv.get("started_at"),
        pv.get("finished_at") or "(still under way)", src.get("package"),
        src.get("version")))
    rows = []
    for key, k in pv["kernels"].items():
        debs = ", ".join("%s sha256 %s" % (d["name"], d["sha256"])
                         for d in k["debs"]) or "n/a"
        ks = k.get("source") or {}
        rows.append([key, k["kernelrelease"] or "n/a", "%s %s" % (
            ks.get("package"), ks.get("version")),
            k["series_sha256"] or "n/a (not built here)",
            k["config_sha256"] or "n/a", debs])
    s.table(["kernel", "release", "source", "series sha256",
             "config sha256", "packages"], rows, "Kernel builds")
    rows = []
    for name, g in pv["guests"].items():
        k, sh = g["kernel"], g["shape"] or {}
        rows.append([name, "%s-%s" % (k["variant"], k["flavour"]),
                     k["release"], k["package_sha256"], k["verified"],
                     "`%s`" % k["cmdline"] if k["cmdline"] else "n/a",
                     "%s MiB, %s vCPU, %s x 2M, %s x 1G, %s, %s" % (
                         sh.get("memory_mib"), sh.get("vcpus"),
                         sh.get("hugepages_2m"), sh.get("hugepages_1g"),
                         sh.get("cpu_model"), sh.get("domain_type"))])
    s.table(["guest", "kernel", "release", "package sha256", "verified",
             "command line", "shape"], rows, "Guests")
    rows = []
    for name, g in pv["guests"].items():
        for w in g["workloads"]:
            rows.append([name, w["experiment"], w["program"],
                         w["hugetlb_fault_lock"] or "none",
                         params_text(w["config"])])
    s.table(["guest", "experiment", "program", "fault lock", "parameters"],
            rows, "Workload parameters")
    return [s]


def timing_sections(tm):
    """Where the run's time went (timing.py): per stage, per guest phase,
    and the lab's own overhead."""
    if not (tm["stages"] or any(g["recorded"] for g in tm["guests"])):
        return []
    s = Section("Timings")
    s.table(["stage", "time"],
            [[x["stage"], secs_text(x["seconds"])] for x in tm["stages"]],
            "Per stage (manifest.json timings)")
    if any(g["recorded"] for g in tm["guests"]):
        s.table(["guest", "batch", "status", "boot", "install",
                 "experiments", "collect", "batch window",
                 "experiments' own", "lab (window - own)",
                 "first boot / reboot to SSH"],
                [[g["guest"], "n/a" if g["batch"] is None else g["batch"],
                  g["status"] + (" (in %s)" % g["failed_in"]
                                 if g["failed_in"] else "")] +
                 [secs_text(g[p]) for p in timing.PHASES] +
                 [secs_text(g["window"]), secs_text(g["experiments_own"]),
                  secs_text(g["lab"]),
                  "%s / %s" % (secs_text(g["boot_to_ssh"]),
                               secs_text(g["reboot_to_ssh"]))]
                 for g in tm["guests"]],
                "Per guest phase (guest.json phases; boot: disk, seed, "
                "domain start until SSH answered; install: kernel package, "
                "reboot into it, verification; experiments: the run stage; "
                "collect: the guest's files into the run directory and the "
                "report after its batch)")
    o = tm["overhead"]
    if o is not None:
        s.para("The lab's own overhead (everything but kernel compilation "
               "and the experiments' own run time): the run's %s less %s "
               "compiling kernels and %s of the experiments' own run "
               "time%s = %s, %s of the guests stage (%s; goal %s or less: "
               "%s). Inside the guests stage alone: %s, %s." % (
                   secs_text(o["total_s"]), secs_text(o["compile_s"]),
                   secs_text(o["experiments_s"]),
                   "" if tm["basis"] == "wall" else
                   " (summed over guests: an experiment has no start "
                   "time)", secs_text(o["seconds"]), percent(o["share"]),
                   secs_text(o["guests_stage_s"]), percent(o["goal"]),
                   "met" if o["met"] else "NOT met",
                   secs_text(o["guests_stage_lab_s"]),
                   percent(o["guests_stage_share"])))
    return [s]


def percent(x):
    """A fraction as '13.7 %'."""
    return "%.1f %%" % (100.0 * x)


def secs_text(x):
    """Seconds as '41.2 s' or '5 min 21 s', 'n/a' for None."""
    if x is None:
        return "n/a"
    if x < 60:
        return "%.1f s" % x
    m, sec = divmod(int(round(x)), 60)
    if m < 60:
        return "%d min %02d s" % (m, sec)
    return "%d h %02d min %02d s" % (m // 60, m % 60, sec)


def savings_sections(sav):
    s = Section("Savings")
    s.para("PageTables delta (/proc/meminfo, attached minus before) per "
           "run against the model (KERNEL-NOTES: 4 KiB pages cost a PTE "
           "page per 2 MiB plus a PMD page per 1 GiB slot; 2 MiB pages a "
           "PMD page per slot, shared after the first process when the "
           "mapping covers the whole 1 GiB-aligned slot; 1 GiB pages "
           "none). The model counts only the mapping's page tables; "
           "'overhead' is what each session costs beyond it (its own "
           "stack, text and upper levels).")
    _measured_table(s, sav)
    _fits_table(s, sav)
    _pairs_table(s, sav)
    guests = sorted({f["guest"] for f in sav["fits"]})
    for g in guests:
        s.figure(plots.savings_plot(sav["fits"], g),
                 "Page-table bytes against sessions, %s" % g)
    return ([s, extrapolation_section(sav)] + seed_scale_section(sav) +
            baseline_section(sav))


def _measured_table(s, sav):
    rows = []
    for r in sav["rows"]:
        c = ", ".join("%s=%s" % (r["counter_keys"][k], r["counters"][k])
                      for k in sorted(r["counters"])) or "none"
        rows.append([r["guest"], r["experiment"], r["mode"],
                     human_bytes(r["size"]), r["sessions"],
                     human_bytes(r["measured_bytes"]),
                     human_bytes(r["model_bytes"]),
                     human_bytes(r["per_session_bytes"]),
                     human_bytes(r["model_per_session_bytes"]),
                     human_bytes(r["overhead_per_session"]), c])
    s.table(["guest", "experiment", "mode", "segment", "sessions",
             "measured", "model", "per session", "model per session",
             "overhead per session", "kernel PMD-share counters"], rows,
            "Measured page tables")


def _fits_table(s, sav):
    rows = []
    for f in sav["fits"]:
        if "slope" not in f:
            rows.append([f["guest"], f["mode"], human_bytes(f["size"]),
                         len(f["sessions"]), "n/a (one session count)",
                         "", "", "",
                         human_bytes(f["model_marginal_bytes"])])
            continue
        rows.append([f["guest"], f["mode"], human_bytes(f["size"]),
                     f["n"], human_bytes(f["slope"]),
                     human_bytes(f["slope_per_gib"]),
                     human_bytes(f["intercept"]),
                     "n/a (2 session counts)" if f.get("exact")
                     else num(f["r2"]),
                     human_bytes(f["model_marginal_bytes"])])
    s.table(["guest", "mode", "segment", "points", "slope per session",
             "slope per session per GiB", "intercept", "R²",
             "model mapping cost per extra session"], rows,
            "Least-squares fit: bytes = intercept + slope x sessions")
    two = sorted({"%s %s" % (f["guest"], f["mode"]) for f in sav["fits"]
                  if f.get("exact")})
    if two:
        s.para("Fitted on two session counts only (%s): a line through "
               "two points fits them exactly, so these slopes carry no "
               "check that page tables grow linearly and no error "
               "estimate, and the extrapolations below inherit that. "
               "A third session count in the inventory gives both." %
               ", ".join(two))


def _pairs_table(s, sav):
    rows = []
    for p in sav["pairs"]:
        counter = "n/a"
        if p["counter_share"] is not None:
            counter = "%s shares = %s (model %d)" % (
                num(p["counter_share"]),
                human_bytes(p["counter_share_bytes"]),
                p["model_share_events"])
        rows.append([p["guest"], p["sessions"],
                     "%s (%s)" % (", ".join(p["shared_experiments"]),
                                  human_bytes(p["size"])),
                     "%s (%s, %s)" % (", ".join(p["unshared_experiments"]),
                                      p["unshared_mode"],
                                      human_bytes(p["unshared_size"])),
                     human_bytes(p["shared_bytes"]),
                     human_bytes(p["unshared_bytes"]),
                     human_bytes(p["saved_bytes"]),
                     human_bytes(p["saved_per_session"]),
                     human_bytes(p["model_saved_bytes"]),
                     num(p["bytes_per_pmd_page"]), counter])
    s.table(["guest", "sessions", "shared run", "unshared run", "shared",
             "unshared", "saved (unshared - shared)", "saved per session",
             "model saved", "bytes per PMD page", "kernel counter"], rows,
            "Savings from sharing at the same session count")
    if not sav["pairs"]:
        s.para("No guest ran a sharing and an unshared 2 MiB run at the "
               "same session count: no sharing savings measured.")


def extrapolation_section(sav):
    e = Section("Extrapolation", 3)
    mode_x = sav["mode_extrapolation"]
    if not sav["extrapolation"]:
        e.para("No estimate of the bytes one unshared PMD page costs: "
               "nothing to extrapolate from.")
    for g, x in sav["extrapolation"].items():
        _guest_extrapolation(e, g, x, mode_x)
    return e


def _guest_extrapolation(e, g, x, mode_x):
    beta = x["bytes_per_pmd_page"]
    if not x["targets"]:
        e.para("%s: measured %s bytes per unshared PMD page; no "
               "extrapolation from a non-positive figure." % (
                   g, num(beta)))
        return
    how = ("slopes of the aligned and skewed fits" if x["method"] ==
           "fit" else "least-squares fit of the pairs' savings")
    e.para("%s: sharing saves %s bytes per PMD page per extra process "
           "(from the %s; model %d)." % (
               g, num(beta), how, model.PT_PAGE))
    e.table(["mapping", "processes", "saved (measured)",
             "saved (model)"],
            [[human_bytes(t["size"]), "{:,}".format(t["processes"]),
              human_bytes(t["saved_bytes"]),
              human_bytes(t["model_saved_bytes"])]
             for t in x["targets"]])
    a = x["article"]
    mx = [m for m in mode_x if m["guest"] == g]
    e.table(["mode", "fitted on", "measured / model per session",
             "page tables for %s, %s processes" % (
                 human_bytes(mx[0]["size"]) if mx else "",
                 "{:,}".format(mx[0]["processes"]) if mx else ""),
             "model"],
            [[m["mode"], human_bytes(m["measured_size"]),
              num(m["measured_over_model"]) if m["method"] == "fit"
              else "n/a (no per-session cost)",
              human_bytes(m["bytes"]),
              human_bytes(m["model_bytes"])] for m in mx],
            "Per mode, from the fits: the model's pages at the target "
            "times the measured bytes per model page")
    if any(m["mode"] == "2m-skewed" for m in mx):
        e.para("A skewed mapping larger than 1 GiB still shares the "
               "slots it covers completely: only its two edge slots "
               "cost every process a PMD page, so the skewed figure "
               "above is not the unshared cost; the savings table "
               "uses one PMD page per GiB per process for that.")
    e.para("The seed article's \"%s mapping, %s processes, 39GB saved\": "
           "from these measurements a %s mapping shared by %s processes "
           "saves %s, not %s; saving %s needs a %s mapping." % (
               human_bytes(a["size"]), "{:,}".format(a["processes"]),
               human_bytes(a["size"]), "{:,}".format(a["processes"]),
               human_bytes(a["measured_saved_bytes"]),
               human_bytes(a["claimed"]),
               human_bytes(a["claimed"]),
               human_bytes(a["size_needed"])))


def seed_scale_section(sav):
    if not sav.get("seed_scale"):
        return []
    x = Section("The seed's scale: 1 TiB")
    x.para("A sparse 1 TiB segment (shmdb --touch sparse: one 2 MiB "
           "page per 1 GiB slot) gives every session the page tables "
           "of a 1 TiB mapping. Unshared (MAP_PRIVATE) against shared "
           "(aligned); the measured bytes per modelled page of the "
           "unshared run scale the 1024 PMD pages x 9,999 extra "
           "processes of the seed's claim. PageTables counts PUD pages "
           "only from Linux 6.7 (the model follows the workload's "
           "pud_counted).")
    x.table(["guest", "unshared run", "sessions", "per session",
             "model", "shared run", "sessions", "per session", "model",
             "1 TiB x 10,000 saves", "model"],
            [[r["guest"], r["unshared"],
              "{:,}".format(r["unshared_sessions"]),
              human_bytes(r["unshared_per_session_bytes"]),
              human_bytes(r["unshared_model_per_session_bytes"]),
              r["shared"], "{:,}".format(r["shared_sessions"]),
              human_bytes(r["shared_per_session_bytes"]),
              human_bytes(r["shared_model_per_session_bytes"]),
              human_bytes(r["saved_bytes"]),
              human_bytes(r["model_saved_bytes"])]
             for r in sav["seed_scale"]],
            "Measured at the seed's scale")
    return [x]


def baseline_section(sav):
    if not sav.get("baseline"):
        return []
    b = Section("Cost of sessions")
    b.para("shmdb's attach+fault against forktouch, a bare "
           "fork-and-touch of the same segment by as many processes in "
           "the same guest. Each figure is the median over the "
           "repeated runs (shmdb / forktouch). 'CPU' is the mean CPU "
           "time a process spent from the start signal to its last "
           "page faulted: what a session costs, and the figure the "
           "goal (at most %sx) is read on. 'window' is the same "
           "window in wall-clock time and 'phase' the whole attach "
           "phase: with thousands of runnable processes on a few "
           "CPUs they mostly measure the wait for a CPU, and under "
           "TCG on a busy host single runs vary by up to 3x. Runs "
           "written before the CPU time was recorded show n/a."
           % savings.BASELINE_GOAL)
    b.table(["guest", "sessions", "placement", "attach",
             "runs", "CPU", "ratio", "window", "ratio", "phase",
             "ratio"],
            [[r["guest"], "{:,}".format(r["sessions"] or 0),
              r["placement"], r["attach"],
              "%d / %d" % (len(r["experiments"]), len(r["baselines"])),
              pair(r["cpu_ns"], r["baseline_cpu_ns"], ns),
              ratio(r["cpu_ratio"]),
              pair(r["mean_ns"], r["baseline_mean_ns"], ns),
              ratio(r["mean_ratio"]),
              pair(r["total_s"], r["baseline_total_s"], secs),
              ratio(r["total_ratio"])]
             for r in sav["baseline"]],
            "Attach+fault per session: shmdb / forktouch")
    b.para("Runs: " + "; ".join(
        "%s: %s against %s" % (r["guest"], ", ".join(r["experiments"]),
                               ", ".join(r["baselines"]))
        for r in sav["baseline"]) + ".")
    return [b]


HIST_COLUMNS = ("transactions", "faults", "transactions_disrupted",
                "faults_disrupted", "faulting_disrupted")
# CCDF panels of the headline: fault latency (only the faulting reads,
# else faults during disruption, else all first-touch faults).
CCDF_METRICS = ("faulting_disrupted", "faults_disrupted", "faults")
# CDF panels: the metric during disruption, or all samples without one.
CDF_METRICS = (("faults_disrupted", "faults"),
               ("transactions_disrupted", "transactions"))


def latency_sections(lat):
    s = Section("Latency")
    s.para("Percentiles are interpolated linearly inside their log2 "
           "bucket and clamped to the minimum and maximum "
           "(latency.percentile, the function compare uses too); not "
           "the bucket upper bounds the workloads print.  p99 needs 100 "
           "samples and p99.9 1,000: with fewer they read '= max' (the "
           "nearest-rank p99 of fewer than 100 samples is the "
           "maximum).  'lock' is the kernel's "
           "hugetlb_fault_lock mode of the run (none: no such knob).  "
           "i_mmap holds i_mmap_rwsem in hugetlb faults only after the "
           "fault mutex and the page table allocation, and not across "
           "fork or UFFDIO_COPY (kernel-build/README.md, the "
           "hugetlb_fault_lock= patch): a lower "
           "bound of the v5.7-v6.0 locking, not a reproduction of it.")
    _histogram_tables(s, lat)
    _ratio_tables(s, lat)
    for sw in lat.get("sweeps", []):
        _sweep_tables(s, sw)
    _cdf_figures(s, lat)
    return [s]


def _histogram_tables(s, lat):
    for metric in HIST_COLUMNS + ("attach",):
        rows = []
        for r in lat["rows"]:
            m = r["metrics"].get(metric)
            if not m:
                continue
            rows.append([r["guest"], r["experiment"], r["lock"], r["mode"],
                         r["sessions"], ",".join(r["disrupt"]) or "none",
                         m["count"], ns(m["p50"]), pct(m, "p99"),
                         pct(m, "p999"), ns(m["max"])])
        s.table(["guest", "experiment", "lock", "mode", "sessions",
                 "disrupt", "samples", "p50", "p99", "p99.9", "max"], rows,
                latency.METRIC_TITLES[metric])


def _ratio_tables(s, lat):
    rows = []
    for r in lat["rows"]:
        for op, o in r["ops"].items():
            d = o["duration"] or {}
            rows.append([r["guest"], r["experiment"], r["lock"],
                         r["sessions"], op, o["count"], ns(d.get("p50")),
                         pct(d, "p99"), ns(d.get("max"))])
    s.table(["guest", "experiment", "lock", "sessions", "operation",
             "count", "p50", "p99", "max"], rows,
            "Disruptor operation durations")
    rows = [[x["mode"], x["sessions"], ",".join(x["disrupt"]) or "none",
             x["metric"], x["i_mmap"], x["vma"], ns(x["p99_i_mmap"]),
             ns(x["p99_vma"]), ratio(x["p99_ratio"]), ns(x["max_i_mmap"]),
             ns(x["max_vma"]), ratio(x["max_ratio"])]
            for x in lat["ratios"]]
    s.table(["mode", "sessions", "disrupt", "metric", "i_mmap run",
             "vma run", "p99 i_mmap", "p99 vma", "p99 ratio", "max i_mmap",
             "max vma", "worst-case ratio"], rows,
            "i_mmap / vma fault-lock ratio of p99 and worst-case stalls")
    if not lat["ratios"]:
        s.para("No pair of runs differing only in the fault-lock mode "
               "(i_mmap and vma): no stall ratio.")


def _sweep_tables(s, sw):
    title = "%s, %s, %s segment" % (
        model.MODE_TITLES.get(sw["mode"], sw["mode"]),
        ",".join(sw["disrupt"]), human_bytes(sw["size"]))
    s.table(["mappers", "lock", "guest", "experiment", "faults", "p50",
             "p99", "max", "> 100 ms", "> 1 s", "> 2 s"],
            [[p["sessions"], p["lock"], p["guest"], p["experiment"],
              p["count"], ns(p["p50"]), pct(p, "p99"), ns(p["max"]),
              count_range(p["over"]["100ms"]),
              count_range(p["over"]["1s"]),
              count_range(p["over"]["2s"])] for p in sw["points"]],
            "Mapper sweep (%s; %s): fault latency against the number "
            "of mappers" % (title, sw["metric"]))
    s.table(["mappers", "runs (i_mmap, vma)", "p50 ratio", "p99 ratio",
             "worst-case ratio"],
            [[x["sessions"], "%d, %d" % tuple(x["runs"]),
              ratio(x["p50_ratio"]), ratio(x["p99_ratio"]),
              ratio(x["max_ratio"])] for x in sw["ratios"]],
            "Mapper sweep (%s): i_mmap / vma at equal mappers (medians "
            "of repeated runs)" % title)
    s.para("Under TCG every absolute time is inflated; the ratio "
           "between the fault-lock modes at equal mappers is the "
           "figure to trust.  First mapper count with a fault "
           "certainly over 2 s: %s." % "; ".join(
               "%s %s" % (k, "{:,}".format(v["first_over_2s"])
                          if v["first_over_2s"] else "none (of %s)" %
                          ", ".join("{:,}".format(n) for n in
                                    v["sessions_measured"]))
               for k, v in sorted(sw["stall_2s"].items())))
    s.figure(plots.sweep_plot(sw),
             "Fault latency against mappers, %s: median (solid), p99 "
             "(dashed), maximum (dotted) per fault-lock mode" % title)


def _cdf_figures(s, lat):
    modes = [m for m in model.MODES if any(r["mode"] == m
                                           for r in lat["rows"])]
    for m in modes:
        have = {k for r in lat["rows"] if r["mode"] == m
                for k in r["metrics"]}
        metrics = [d if d in have else plain for d, plain in CDF_METRICS]
        s.figure(plots.cdf_plot(lat["rows"], m, metrics),
                 "Survival (CCDF, log-log) of fault and transaction "
                 "latency during disruption (all samples when a run had no "
                 "disruption), %s: the fraction of samples slower than x, "
                 "coloured by fault-lock mode as every plot (i_mmap red, "
                 "vma blue dashed, none grey); | marks the maximum"
                 % model.MODE_TITLES[m])


def attribution_sections(att):
    """The long faults' breakdown (shmdb --attribute): one row per
    attributed result and threshold."""
    rows = att["rows"]
    if not rows:
        return []
    s = Section("Long faults: where the time went")
    s.para("Faulting first accesses (shmdb --count-faults) of 10 ms and "
           "more, recorded with --attribute: run-queue wait and time on "
           "a CPU from the session's /proc/thread-self/schedstat around "
           "the access; time blocked on each lock from the kernel's "
           "lock:contention_begin/end events (the lock named from the "
           "stack of its first sleeping wait), up to the waiter's "
           "wakeup: the time from the wakeup to the lock is a wait for a "
           "CPU, counted in the run-queue wait.  Each cell: mean per "
           "fault (share of the faults' latency).  Unexplained = latency "
           "- run queue - on CPU - lock waits: off a CPU but not on a "
           "traced lock (a page lock, memory allocation, I/O), negative "
           "where a waiter preempted before it slept counted twice.  "
           "Holder: the disruptor operation whose interval overlaps the "
           "fault's longest lock wait (of 1 ms or more) most ('%s': the "
           "waits overlap none, e.g. another fault held the fault "
           "mutex; '%s': none of 1 ms)." % (attribution.NO_OP,
                                            attribution.NO_WAIT))
    table = []
    for r in rows:
        for label, _ in attribution.THRESHOLDS:
            o = r["over"][label]
            if o["count"]:
                table.append(_attribution_row(r, label, o))
    s.table(["guest", "experiment", "lock", "faults", "count", "mean",
             "max", "run queue", "on CPU"] + list(attribution.LOCKS) +
            ["unexplained", "holder"], table,
            "Faults over 10 ms / 100 ms / 1 s / 2 s per fault-lock mode")
    for r in rows:
        notes = _attribution_notes(r)
        if notes:
            s.para("%s/%s: %s." % (r["guest"], r["experiment"],
                                   "; ".join(notes)))
    return [s]


def latency_map_sections(m):
    """The latency map (latency_map.py): the seed's '>2 s' answered, the
    map's table, the writer's hold fit and its prediction, the plot."""
    if not m:
        return []
    s = Section("Where the stall grows: mappers x range punched")
    s.para("Answer to the seed's '>2 s' claim: %s." % m["headline"])
    s.para("Each point: MAPPERS sessions fault the whole segment (skewed: "
           "no PMD sharing), 4 of them run transactions, the disruptor "
           "punches RANGE-sized holes, each range once (shmdb "
           "--disrupt-once), so every punch walks MAPPERS VMAs with the "
           "range mapped under i_mmap_rwsem held for write.  Hold: the "
           "punch's duration (median over rounds of each run's mean).  "
           "Stall: the worst fault during a punch (median over rounds; "
           "max: the worst round); net: the worst attributed fault's "
           "latency less its run-queue wait, the part a CPU does not "
           "explain; locks: its time blocked on any traced lock.  The "
           "per-lock columns are the longest wait on that lock of any "
           "attributed fault, named as workloads/shmdb/README.md "
           "'Attribution' says: a rwsem wait in hugetlb_fault that only "
           "one task made and no other stack named is called the VMA "
           "lock, so a lone i_mmap_rwsem wait (one punch, one faulting "
           "session) can show there.  i_mmap vs vma: the regression "
           "run's rule (per-direction max-T permutation test over the "
           "rounds, vma the baseline): 'longer' only when declared; "
           "fewer than %d rounds a side is inconclusive."
           % latency_map.MIN_ROUNDS)
    rows = []
    for p in m["points"]:
        w = p["worst"] or {}
        rows.append([p["mode"], num(p["mappers"]), p["range"],
                     num(p["rounds"]), ns(p["hold_median_ns"]),
                     ns(p.get("hold_fit_ns")), ns(p["stall_median_ns"]),
                     ns(p["stall_max_ns"]), ns(w.get("runqueue_ns")),
                     ns(w.get("net_ns")), ns(w.get("lock_total_ns")),
                     ns(max(p["i_mmap_wait_ns"], default=None)),
                     ns(max(p["vma_lock_wait_ns"], default=None)),
                     p["modes_verdict"] or "n/a"])
    s.table(["mode", "mappers", "range", "rounds", "hold", "fit",
             "stall", "max", "run queue (worst)", "net (worst)",
             "locks (worst)", "i_mmap_rwsem wait", "VMA lock wait",
             "i_mmap vs vma"], rows,
            "Per fault-lock mode, mappers and range")
    pr = m["prediction"]
    for mode, f in sorted((m.get("fits") or {}).items()):
        if f:
            s.para("Writer's hold, %s." % latency_map.fit_text(mode, f))
    if pr:
        s.para("Predicted mappers for a 2 s hold: %s." % ", ".join(
            "%s per punch: %s" % (x["range"], num(x["mappers"])
                                  if x["mappers"] else "never")
            for x in pr["per_range"]))
    s.figure(plots.latency_map_plot(m),
             "Worst fault during a punch against mappers, per range "
             "punched and fault-lock mode (median over rounds, each round "
             "a dot), with the fitted hold in grey; log-log")
    return [s]


THRESHOLD_TITLES = {"10ms": "≥ 10 ms", "100ms": "≥ 100 ms", "1s": "≥ 1 s",
                    "2s": "≥ 2 s"}


def _share(total, n, whole):
    if total is None:
        return "not traced"
    return "%s (%s %%)" % (ns(total / n), sig3(100.0 * total / whole)
                           if whole else "n/a")


def _attribution_row(r, label, o):
    n, whole = o["count"], o["latency_ns"]
    locks = o["lock_ns"] or {}
    holders = o["holders"]
    return ([r["guest"], r["experiment"], r["lock"],
             THRESHOLD_TITLES[label], n, ns(whole / n), ns(o["max_ns"]),
             _share(o["runqueue_ns"], n, whole),
             _share(o["cpu_ns"], n, whole)] +
            [_share(locks.get(k) if o["lock_ns"] is not None else None,
                    n, whole) for k in attribution.LOCKS] +
            [_share(o["unexplained_ns"], n, whole),
             "not traced" if holders is None else ", ".join(
                 "%s %d" % kv for kv in sorted(
                     holders.items(), key=lambda kv: (-kv[1], kv[0])))])


def _attribution_notes(r):
    notes = []
    if not r["traced"]:
        notes.append("lock waits not traced (%s)" % (
            r["trace_error"] or "no reason given"))
    if r["lost_events"]:
        notes.append("%s trace events lost: lock waits are incomplete"
                     % num(r["lost_events"]))
    if r["dropped"]:
        notes.append("%s faults over %s not recorded (the first %s were)"
                     % (num(r["dropped"]), ns(r["min_latency_ns"]),
                        num(r["kept"])))
    return notes


def correctness_sections(cor, pv):
    out = []
    s = Section("Correctness")
    rows = [[name, g["status"], g["kernel_warnings"],
             "unreadable" if g.get("console_unreadable")
             else g["console_findings"],
             g["result_warnings"], "yes" if g["expect_warnings"] else "no"]
            for name, g in cor["guests"].items()]
    s.table(["guest", "status", "kernel findings", "on console",
             "in results", "warnings expected"], rows)
    out.append(s)
    for name, g in cor["guests"].items():
        gs = Section("Guest %s" % name, 3)
        k = (pv["guests"].get(name) or {}).get("kernel") or {}
        gs.para("Kernel %s-%s, release %s, package sha256 %s, verified %s; "
                "command line `%s`." % (
                    k.get("variant"), k.get("flavour"), k.get("release"),
                    k.get("package_sha256") or "n/a", k.get("verified"),
                    k.get("cmdline")))
        gs.pre(g["console_excerpt"], "Console (guest status %s)"
               % g["status"])
        gs.pre(g["warning_excerpt"], "Kernel findings")
        gs.table(["experiment", "program", "status", "kernel warnings",
                  "failures"],
                 [[e["name"], e["program"], e["status"], e["kernel_warnings"],
                   "; ".join(e["failures"]) or "none"]
                  for e in g["experiments"]], "Experiments")
        gs.table(["experiment", "status", "reads", "tag errors",
                  "unshare operations"],
                 [[r["experiment"], r["status"], r["reads"], r["tag_errors"],
                   ", ".join("%s=%s" % kv for kv in
                             sorted(r["unshare_ops"].items())) or "none"]
                  for r in g["racers"]], "Racer")
        gs.table(["experiment", "page size", "before", "after", "returned"],
                 [[h["experiment"], page_size(h["page_size"]),
                   params_text(h["before"]), params_text(h["after"]),
                   h["returned"]]
                  for h in g["hugepages"]], "Huge page accounting")
        gs.table(["experiment", "test", "status", "seconds"],
                 [[t["experiment"], t["name"], t["status"],
                   num(t["seconds"])] for t in g["selftests"]],
                 "Peer selftests")
        out.append(gs)
    return out


def checks_section(an):
    s = Section("Checks")
    c = an["counts"]
    s.para("%d checks: %d failed, %d skipped, %d passed." % (
        c["checks"], c["failed"], c["skipped"],
        c["checks"] - c["failed"] - c["skipped"]))
    s.table(["suite", "check", "status", "detail"],
            [[x["suite"], x["name"], x["status"].upper(), x["message"]]
             for x in an["checks"] if x["status"] != "pass"],
            "Failed and skipped checks (all of them are in junit.xml)")
    return [s]


def postgres_sections(pg):
    """PostgreSQL next to the model and shmdb (postgres.py); nothing when
    the run has no pgbench result."""
    if not (pg["levels"] or pg["runs"] or pg["failures"]):
        return []
    s = Section("PostgreSQL")
    s.para("Debian's PostgreSQL (%s) under pgbench (workloads/pgbench). "
           "'measured' is PageTables (warm - before) per backend: every "
           "page-table page a backend costs once it has faulted the whole "
           "shared mapping, its own private mappings included. 'model' is "
           "what the mapping costs a backend at the address the kernel "
           "gave it (2 MiB pages: a PMD page per partial 1 GiB slot, the "
           "full slots shared; 4 KiB: a PTE page per 2 MiB and a PMD page "
           "per slot; 1 GiB: none). 'baseline' is the same guest's "
           "1 GiB-page figure at the same count (the backends' own page "
           "tables); 'mapping' = measured - baseline, to set against the "
           "model and against shmdb's per-session figure, which excludes "
           "a session's own page tables. 'own' is the model less the "
           "page-table pages of the partial slots (4 KiB pages: and edge "
           "2 MiB spans) that also hold the postmaster's other mappings "
           "(libraries and the like, mapped next to the segment): every "
           "backend has those anyway, the baseline too, so 'mapping' is "
           "set against 'own' (n/a: the result does not record them)."
           % ", ".join(pg["versions"]))
    _level_tables(s, pg)
    _run_table(s, pg)
    s.table(["guest", "experiment", "placement", "filler blocks",
             "data in 1 GiB slot(s)", "data buffers", "in full slots"],
            [[x["guest"], x["experiment"], x["mode"],
              num(x["filler_blocks"]),
              ", ".join(map(str, x["slots"])) or "n/a",
              num(x["buffers"]), num(x["in_full_slots"])]
             for x in pg.get("placements") or []],
            "Where pgbench's tables sat in the buffer pool (pg_buffercache; "
            "slot 0 is the segment's first 1 GiB slot): a backend that "
            "reads them shares the PMD tables of the full slots among "
            "them, so the runs' share / unshare counters move only when "
            "the data is in a full slot")
    s.table(["guest", "experiment", "status", "first failure"],
            [[f["guest"], f["experiment"], f["status"], f["failure"]]
             for f in pg["failures"]], "pgbench results that did not "
            "measure")
    return [s]


def _level_tables(s, pg):
    rows = []
    for r in pg["levels"]:
        sh = "; ".join("%s %s %s: %s" % (
            x["placement"], human_bytes(x["size"]), x["map"],
            human_bytes(x["per_session"])) for x in r["shmdb"])
        rows.append([r["guest"], r["experiment"],
                     postgres.MODE_TITLES.get(r["mode"], "n/a"),
                     "%s at %s, %s/%s full" % (
                         human_bytes(r["size"]), r["address"],
                         num(r["full_slots"]), num(r["slots"])),
                     r["backends"], human_bytes(r["measured"]),
                     human_bytes(r["baseline"]),
                     human_bytes(r["mapping_measured"]),
                     human_bytes(r["model"]),
                     human_bytes(r["model_own"]),
                     "n/a" if r["pmd_share"] is None else "%d / %d (model "
                     "%d)" % (r["pmd_share"], r["pmd_unshare"] or 0,
                              r["model_shares"]),
                     sh or "no shmdb run at this count"])
    s.table(["guest", "experiment", "pages", "mapping (slots)", "backends",
             "measured per backend", "baseline", "mapping", "model", "own",
             "PMD share / unshare (warm)", "shmdb per session"], rows,
            "PostgreSQL page tables per backend")
    s.pre(["%s/%s, %d backends: %s" % (r["guest"], r["experiment"],
                                       r["backends"],
                                       "; ".join(r["explanation"]))
           for r in pg["levels"]], "What accounts for the difference")


def _run_table(s, pg):
    rows = [[r["guest"], r["experiment"],
             postgres.MODE_TITLES.get(postgres.PAGE_MODES.get(
                 r["page_size"]), "n/a"), r["clients"],
             r["mode"] + (" --connect" if r["churn"] else ""),
             num(r["tps"]), num(r["p50_ms"]), num(r["p99_ms"]),
             num(r["p999_ms"]), num(r["max_ms"]), num(r["connection_ms"]),
             num(r["failed"]), human_bytes(r["pagetables_max"]),
             "n/a" if r["pmd_share"] is None else "%d / %d" % (
                 r["pmd_share"], r["pmd_unshare"] or 0)]
            for r in pg["runs"]]
    s.table(["guest", "experiment", "pages", "clients", "pgbench", "TPS",
             "p50 ms", "p99 ms", "p99.9 ms", "max ms", "connection ms",
             "failed", "peak PageTables", "PMD share / unshare"], rows,
            "pgbench runs (TPS and latency from pgbench's per-transaction "
            "log over the steady window after every client connected; "
            "--connect opens a backend per transaction, its whole run)")


def sections(an):
    return (headline_sections(an) +
            savings_sections(an["savings"]) +
            postgres_sections(an["postgres"]) +
            latency_sections(an["latency"]) +
            attribution_sections(an["attribution"]) +
            latency_map_sections(an.get("latency_map")) +
            correctness_sections(an["correctness"], an["provenance"]) +
            checks_section(an) +
            timing_sections(an["timing"]) +
            provenance_sections(an["provenance"]))


def write_report(run, an, runs_dir=RUNS_DIR):
    """Write report.md, report.html, summary.json and junit.xml of the
    analysis `an` (summary.analyse) into the run directory; point
    runs_dir/latest at the newest run."""
    env = environment()
    ctx = {"an": an, "sections": sections(an), "counts": an["counts"],
           "status": status_line(an)}
    write_text(os.path.join(run.path, "report.md"),
               env.get_template("report.md.j2").render(**ctx))
    write_text(os.path.join(run.path, "report.html"),
               env.get_template("report.html.j2").render(**ctx))
    write_text(os.path.join(run.path, "summary.json"),
               json.dumps(summary.to_json(an), indent=1, sort_keys=True) +
               "\n")
    junit.write(an["checks"], os.path.join(run.path, "junit.xml"),
                "hugelab.%s" % run.run_id)
    try:
        update_latest(run.path, runs_dir)
    except LatestError as e:
        # The report is written; only the link is stale.
        print("hugelab-report: latest not updated: %s" % e, file=sys.stderr)


def render(run, tolerance=0.25, runs_dir=RUNS_DIR):
    """Analyse a run and write its four outputs; return the analysis."""
    an = summary.analyse(run, tolerance=tolerance)
    write_report(run, an, runs_dir)
    return an
