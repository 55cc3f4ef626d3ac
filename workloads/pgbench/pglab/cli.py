"""pgbench experiment: main (exit status in workloads/SCHEMA.md,
hugelab.pgbench/1)."""
import datetime
import glob
import json
import os
import resource
import shutil
import signal
import sys
import time

from . import kmsg, levels, maps, model, options, procfs
from .server import PORT, Cluster, StartFailed

STRIDE = {"4k": maps.PTE_SPAN, "2m": maps.PTE_SPAN, "1g": maps.GIB}


class Interrupted(Exception):
    pass


def now():
    return datetime.datetime.now(datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%SZ")


def say(args, msg):
    if not args.quiet:
        print("pgbench: %s %s" % (time.strftime("%H:%M:%S"), msg),
              file=sys.stderr, flush=True)


def check(args):
    n = options.needs(args)
    if args.guest_shape:
        shape = options.parse_shape(args.guest_shape)
    else:
        m = procfs.meminfo()
        hp = procfs.hugepages()
        shape = {"what": "this machine",
                 "mem_avail_mib": m.get("MemAvailable", 0) // (1 << 20),
                 "pid_max": int(procfs.read("/proc/sys/kernel/pid_max",
                                            "32768").strip() or 32768)}
        for size, key in ((2 << 20, "hugepages_2m"),
                          (1 << 30, "hugepages_1g")):
            pool = hp.get(str(size), {"free": 0, "rsvd": 0})
            shape[key] = max(0, pool["free"] - pool["rsvd"])
    options.fit(args, n, shape)
    print(json.dumps({"ok": True, "needs": {
        k: n[k] for k in ("hugepages_2m", "hugepages_1g", "mem_mib",
                          "processes")}}))
    return 0


def settings(args, socket_dir):
    """PostgreSQL's settings for this run: a Unix socket in the cluster's
    own directory, no TCP."""
    s = {"listen_addresses": "", "port": str(PORT),
         "unix_socket_directories": socket_dir,
         "shared_buffers": "%dkB" % (args.shared_buffers // 1024),
         "max_connections": str(args.max_connections),
         "huge_pages": args.huge_pages,
         # explicit, not 0 (the kernel's default size, which a guest with
         # default_hugepagesz=1G would turn into 1 GiB pages)
         "huge_page_size": {"2M": "2MB", "1G": "1GB"}[args.huge_page_size],
         # the lab's run is about memory and latency under load, not
         # durability: commits do not wait for the WAL flush (WAL is still
         # written and fsynced by the WAL writer)
         "synchronous_commit": "off",
         "max_parallel_workers_per_gather": "0",
         "logging_collector": "off"}
    return s


def kernel():
    u = os.uname()
    return {"release": u.release, "version": u.version,
            "cmdline": procfs.read("/proc/cmdline").strip(),
            "hugetlb_fault_lock": procfs.read(
                "/sys/module/hugetlb/parameters/fault_lock").strip() or None}


def reap_stale(workdir):
    """Kill the processes of clusters an earlier run left behind (a run
    killed with SIGKILL cannot stop its postmaster) and remove their
    directories; returns the PIDs killed."""
    dead = []
    prefix = os.path.join(os.path.realpath(workdir), "hugelab-pg.")
    for pid in procfs.pids_by_cwd(lambda cwd: cwd.startswith(prefix)):
        if pid == os.getpid():
            continue
        try:
            os.kill(pid, signal.SIGKILL)
            dead.append(pid)
        except ProcessLookupError:
            pass
    for d in glob.glob(prefix + "*"):
        shutil.rmtree(d, ignore_errors=True)
    return dead


def stuck_record(pids):
    procs = []
    for pid in pids:
        st = procfs.read("/proc/%d/stat" % pid)
        state = st[st.rfind(")") + 2:].split()[0] if ")" in st else "?"
        stack = procfs.read("/proc/%d/stack" % pid)
        procs.append({"pid": pid, "role": procfs.cmdline(pid) or "postgres",
                      "state": state,
                      "wchan": procfs.read("/proc/%d/wchan" % pid).strip(),
                      "stack": stack.splitlines() if stack else None})
    return {"count": len(procs), "processes": procs}


def versions(cl):
    out = {}
    for name, key in (("postgres", "version"), ("pgbench", "pgbench")):
        rc, text = cl.run([cl.bin(name), "--version"])
        out[key] = text.strip() if rc == 0 else None
    return out


PGBENCH_BUFFERS = ("SELECT b.bufferid FROM pg_buffercache b JOIN pg_class c "
                   "ON b.relfilenode = pg_relation_filenode(c.oid) "
                   "WHERE c.relname LIKE 'pgbench_%' "
                   "AND b.reldatabase = (SELECT oid FROM pg_database "
                   "WHERE datname = current_database())")


def place_filler(cl, entry, off, place):
    """--data-placement full-slot: an unlogged table of one row per 8 KiB
    page takes the free buffers up to the first 1 GiB boundary of the
    pool (at `off` in the segment; PostgreSQL hands out free buffers in
    buffer-id order), so that the pgbench tables loaded next sit in a full
    slot."""
    blocks = maps.filler_blocks(entry["start"], off)
    t0 = time.monotonic()
    if blocks:
        cl.psql("CREATE UNLOGGED TABLE hugelab_filler (pad char(7900)); "
                "ALTER TABLE hugelab_filler ALTER COLUMN pad "
                "SET STORAGE PLAIN; "
                "INSERT INTO hugelab_filler SELECT '' "
                "FROM generate_series(1, %d)" % blocks)
    place.update(filler_blocks=blocks,
                 filler_s=round(time.monotonic() - t0, 3))


def data_slots(cl, entry, off, place):
    """Where the pgbench tables' buffers are: per 1 GiB slot (slot 0 being
    the segment's first, partial or full) and in the full slots."""
    ids = [int(x) for x in cl.psql(PGBENCH_BUFFERS).split()]
    per = maps.buffer_slots(entry["start"], off, ids)
    full = maps.full_slot_range(entry["start"], entry["size"])
    place.update(
        data_buffers_per_slot={str(k): v for k, v in sorted(per.items())},
        data_buffers_in_full_slots=sum(v for k, v in per.items()
                                       if k in full),
        data_buffers=len(ids))


def setup_db(cl, args, doc, entry):
    """pgbench -i, then every pgbench table and index into the buffer pool
    (pg_prewarm); where its buffers are (pg_buffercache)."""
    cl.psql("CREATE EXTENSION IF NOT EXISTS pg_buffercache")
    off = int(cl.psql("SELECT off FROM pg_shmem_allocations "
                      "WHERE name = 'Buffer Blocks'"))
    place = {"mode": args.data_placement, "buffer_blocks_offset": off}
    if args.data_placement == "full-slot":
        place_filler(cl, entry, off, place)
    t0 = time.monotonic()
    rc, out = cl.run([cl.bin("pgbench"), "-i", "-q", "-s", str(args.scale)])
    if rc != 0:
        raise RuntimeError("pgbench -i failed (exit %s): %s"
                           % (rc, out.strip()[-300:]))
    init_s = time.monotonic() - t0
    t0 = time.monotonic()
    cl.psql("CREATE EXTENSION IF NOT EXISTS pg_prewarm")
    blocks = cl.psql("SELECT sum(pg_prewarm(c.oid)) FROM pg_class c "
                     "WHERE c.relname LIKE 'pgbench_%' "
                     "AND c.relkind IN ('r', 'i')")
    doc["database"] = {
        "scale": args.scale, "init_s": round(init_s, 3),
        "size": int(cl.psql("SELECT pg_database_size(current_database())")),
        "prewarm_blocks": int(blocks or 0),
        "prewarm_s": round(time.monotonic() - t0, 3),
        "buffers": args.shared_buffers // 8192,
        "placement": place,
    }
    data_slots(cl, entry, off, place)


def find_mapping(postmaster):
    """(main mapping, its page size, every mapping of the postmaster)."""
    text = procfs.read("/proc/%d/maps" % postmaster)
    entries = maps.parse_maps(text)
    entry = maps.main_shared_mapping(entries)
    if entry is None:
        return None, None, entries
    page = maps.kernel_page_size(
        procfs.read("/proc/%d/smaps" % postmaster), entry["start"])
    entry["size"] = entry["end"] - entry["start"]
    return entry, page, entries


def experiment(args, doc, cl):
    pg = doc["postgres"]
    pg.update(versions(cl))
    sets = settings(args, cl.dir)
    pg["settings"] = sets
    for name in ("shared_memory_size", "shared_memory_size_in_huge_pages"):
        v = cl.show(sets, name)
        pg[name] = int(v) if v and v.lstrip("-").isdigit() else v
    say(args, "starting PostgreSQL (%s)" % options.describe(args))
    t0 = time.monotonic()
    try:
        pm = cl.start(sets, args.start_timeout_s)
    except StartFailed as e:
        pg["start"] = {"ok": False, "seconds": round(time.monotonic() - t0, 3),
                       "error": str(e), "log_tail": e.log_tail}
        if args.huge_pages == "on":
            size = str(options.PAGE_SIZES[args.huge_page_size])
            pool = procfs.hugepages().get(size, {"free": 0, "rsvd": 0})
            pg["start"]["huge_pages_needed"] = pg.get(
                "shared_memory_size_in_huge_pages")
            pg["start"]["huge_pages_free"] = pool["free"] - pool["rsvd"]
        fatal = [ln for ln in e.log_tail if "FATAL" in ln or "HINT" in ln]
        doc["failures"].append("PostgreSQL did not start: %s%s" % (
            e, (": " + " ".join(fatal))[:600] if fatal else ""))
        doc["status"] = "error"
        return
    pg["start"] = {"ok": True, "seconds": round(time.monotonic() - t0, 3)}
    pg["postmaster_pid"] = pm
    entry, page, entries = find_mapping(pm)
    if entry is None:
        doc["failures"].append("no shared memory mapping in /proc/%d/maps"
                               % pm)
        return
    doc["mapping"] = maps.describe(entry, page, entries)
    want = (4096 if args.huge_pages == "off"
            else options.PAGE_SIZES[args.huge_page_size])
    if args.huge_pages != "try" and page != want:
        doc["failures"].append("the shared memory mapping has %s-byte pages, "
                               "huge_pages=%s asked %d" % (
                                   page, args.huge_pages, want))
    say(args, "mapping %s, %d bytes, %s pages, %d full 1 GiB slots" % (
        doc["mapping"]["address"], entry["size"], page,
        doc["mapping"]["full_slots"]))
    say(args, "pgbench -i -s %d and pg_prewarm" % args.scale)
    setup_db(cl, args, doc, entry)
    mode = model.mode_of(page)
    stride = STRIDE.get(mode, maps.PTE_SPAN)
    for n in args.clients:
        level = {"clients": n,
                 "model": model.per_backend(
                     page, entry["start"], entry["size"], n,
                     doc["mapping"]["neighbour_slots"],
                     doc["mapping"]["neighbour_pte_spans"])
                 if mode else None}
        doc["levels"].append(level)
        say(args, "%d clients: hold, connect and warm" % n)
        try:
            level["hold"] = levels.hold(cl, pm, entry, stride, n, args)
        except levels.LevelError as e:
            doc["failures"].append("%d clients: %s" % (n, e))
            continue
        if level["hold"]["touch_errors"]:
            doc["failures"].append("%d clients: %d backends could not be "
                                   "warmed: %s" % (
                                       n, level["hold"]["touch_errors"],
                                       level["hold"]["touch_first_error"]))
        level["runs"] = []
        for m, churn in [(m, False) for m in args.modes] + [
                ("select-only", True)]:
            say(args, "%d clients: pgbench %s%s, %d s" % (
                n, m, " --connect" if churn else "",
                args.churn_duration if churn else args.duration))
            run = levels.bench(cl, pm, n, m, churn, args,
                               level["hold"]["connect_s"])
            level["runs"].append(run)
            if run["exit"] == 0 and not run["log"]["transactions"]:
                doc["failures"].append("%d clients: pgbench %s%s processed "
                                       "no transaction" % (
                                           n, m, " -C" if churn else ""))
            if run["exit"] != 0:
                doc["failures"].append("%d clients: pgbench %s%s exited %s: "
                                       "%s" % (n, m, " -C" if churn else "",
                                               run["exit"], " / ".join(
                                                   run["output_tail"][-2:])))
            shown = run["steady"] or run
            say(args, "  tps %s, p99 %s ms" % (
                shown.get("tps", run["summary"].get("tps")),
                (shown["latency_ms"] or {}).get("p99")))


def raise_nofile():
    """Open-file limit up to the hard limit for pgbench and PostgreSQL
    (inherited): pgbench needs a descriptor per client and refuses to
    start with fewer than clients + 3, and a login session's soft limit
    is often 1024.  Returns the soft limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard > soft:
        want = hard if hard != resource.RLIM_INFINITY else 1 << 20
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
            soft = want
        except (ValueError, OSError):
            pass
    return soft


def on_signal(signum, _frame):
    raise Interrupted(signum)


def main(argv=None):
    try:
        args = options.parse(sys.argv[1:] if argv is None else argv)
        if args.check:
            return check(args)
    except options.BadInput as e:
        print("pgbench: %s" % e, file=sys.stderr)
        return 2
    if os.geteuid() != 0:
        print("pgbench: must run as root (it reads other processes' "
              "memory and /dev/kmsg)", file=sys.stderr)
        return 2
    for name in ("postgres", "pgbench", "initdb", "psql"):
        if not os.access(os.path.join(args.pgbin, name), os.X_OK):
            print("pgbench: %s/%s: not installed (Debian's postgresql-15)"
                  % (args.pgbin, name), file=sys.stderr)
            return 2
    try:
        out = open(args.json + ".tmp", "w")
    except OSError as e:
        print("pgbench: --json %s: %s" % (args.json, e), file=sys.stderr)
        return 2
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, on_signal)
    nofile = raise_nofile()
    doc = {"schema": "hugelab.pgbench/1", "program": "pgbench",
           "status": "ok", "failures": [], "started_at": now(),
           "finished_at": None, "kernel": kernel(),
           "machine": {"cpus": os.cpu_count(),
                       "mem_total": procfs.meminfo().get("MemTotal", 0),
                       "hugepages": {k: {"nr": v["nr"], "free": v["free"]}
                                     for k, v in procfs.hugepages().items()}},
           "config": dict(config_of(args), nofile=nofile),
           "postgres": {}, "mapping": None,
           "database": None, "levels": [],
           "stuck": {"count": 0, "processes": []}}
    hp_before = procfs.hugepages()
    klog = kmsg.Scan()
    doc["stale_killed"] = reap_stale(args.workdir)
    cl = None
    teardown = args.teardown_timeout_s
    rc_signal = None
    try:
        cl = Cluster(args.pgbin, args.user, args.workdir, args.keep)
        say(args, "initdb in %s" % cl.dir)
        cl.initdb()
        experiment(args, doc, cl)
    except Interrupted as e:
        rc_signal = e.args[0]
        doc["status"] = "error"
        doc["failures"].append("interrupted by signal %d" % rc_signal)
        teardown = 2
    except (RuntimeError, OSError, KeyError) as e:
        doc["status"] = "error"
        doc["failures"].append("setup: %s" % e)
    finally:
        for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(s, signal.SIG_IGN)
        if cl is not None:
            left = cl.stop(teardown)
            if cl.proc is not None:
                doc["postgres"]["log_tail"] = cl.log_tail(20)
            if left:
                doc["stuck"] = stuck_record(left)
                doc["failures"].append("%d processes of the cluster still "
                                       "there after the teardown"
                                       % len(left))
            cl.remove()
    finish(doc, hp_before, klog)
    json.dump(doc, out, indent=1)
    out.write("\n")
    out.close()
    os.rename(args.json + ".tmp", args.json)
    if rc_signal:
        return 128 + rc_signal
    if doc["status"] == "error":
        return 2
    return 0 if doc["status"] == "ok" else 1


def finish(doc, hp_before, klog):
    """Close the document: pools returned, kernel log (klog: kmsg.Scan
    opened at the start), status."""
    hp_after = procfs.hugepages()
    doc["hugepages"] = {}
    for size, b in hp_before.items():
        a = hp_after.get(size, {})
        back = all(a.get(k) == b[k] for k in ("free", "nr", "rsvd"))
        doc["hugepages"][size] = {"before": b, "after": a, "returned": back}
        if not back:
            doc["failures"].append("%s-byte huge pages not returned: before "
                                   "%s, after %s" % (size, b, a))
    klog.poll()
    doc["kernel_log"] = klog.report()
    klog.close()
    doc["failures"] += ["kernel log: %s" % ln for ln in klog.excerpt[:5]]
    if not klog.available:
        doc["failures"].append("the kernel log could not be read "
                               "(/dev/kmsg)")
    elif klog.warnings > len(klog.excerpt[:5]):
        doc["failures"].append("kernel log: %d findings in all"
                               % klog.warnings)
    if doc["failures"] and doc["status"] == "ok":
        doc["status"] = "fail"
    if len(doc["failures"]) > 64:
        rest = len(doc["failures"]) - 64
        doc["failures"] = doc["failures"][:64] + ["<%d more>" % rest]
    doc["finished_at"] = now()


def config_of(args):
    return {"huge_pages": args.huge_pages,
            "huge_page_size": (options.PAGE_SIZES[args.huge_page_size]
                               if args.huge_pages != "off" else 4096),
            "shared_buffers": args.shared_buffers,
            "max_connections": args.max_connections,
            "clients": args.clients, "modes": args.modes,
            "duration_s": args.duration,
            "churn_duration_s": args.churn_duration,
            "scale": args.scale, "threads": args.threads,
            "connect_timeout_s": args.connect_timeout_s,
            "start_timeout_s": args.start_timeout_s,
            "teardown_timeout_s": args.teardown_timeout_s,
            "pgbin": args.pgbin, "user": args.user,
            "workdir": args.workdir}
