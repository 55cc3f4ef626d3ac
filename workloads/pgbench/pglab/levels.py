"""One client level: hold N idle backends (connected, then warm), then the
pgbench runs (each mode, and backend churn), with the kernel's figures."""
import glob
import math
import os
import signal
import threading
import time

from . import options, pgblog, procfs, touch


class LevelError(Exception):
    """A level could not be measured; the message is one failure line."""


def snapshot():
    m, v = procfs.meminfo(), procfs.vmstat()
    return {"pagetables": m.get("PageTables"), "mem_free": m.get("MemFree"),
            "vmstat": v}


def client_backends(postmaster):
    """Backends of clients on the Unix socket ("postgres: USER DB [local]
    ..."): pgbench's connections (the driver's psql runs at other times)."""
    return [p for p in procfs.children(postmaster)
            if "[local]" in procfs.cmdline(p)]


def vmpte(pids):
    return procfs.stats([procfs.status(p).get("VmPTE", 0) for p in pids
                         if procfs.alive(p)])


def wait_backends(postmaster, want, proc, timeout_s):
    """Until `want` client backends exist; LevelError on timeout or when
    pgbench exits first."""
    deadline = time.monotonic() + timeout_s
    while True:
        have = client_backends(postmaster)
        if len(have) >= want:
            return have
        if proc.poll() is not None:
            raise LevelError("pgbench exited (status %s) with %d of %d "
                             "clients connected: %s" % (
                                 proc.returncode, len(have), want,
                                 tail(proc)))
        if time.monotonic() > deadline:
            raise LevelError("%d of %d clients connected within %d s"
                             % (len(have), want, timeout_s))
        time.sleep(0.5)


def wait_gone(postmaster, timeout_s):
    deadline = time.monotonic() + timeout_s
    while client_backends(postmaster) and time.monotonic() < deadline:
        time.sleep(0.3)
    return len(client_backends(postmaster))


def tail(proc):
    try:
        out = proc.stdout.read() if proc.stdout else ""
    except (OSError, ValueError):
        out = ""
    return " / ".join(out.strip().splitlines()[-3:])


def stop(proc):
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def hold(cl, postmaster, mapping, stride, n, a):
    """N clients connected and idle: PageTables before, connected, and
    warm (every backend faulted the whole mapping)."""
    script = os.path.join(cl.dir, "idle.sql")
    with open(script, "w") as f:
        f.write("\\sleep 1 s\n")
    before = snapshot()
    proc = cl.popen([cl.bin("pgbench"), "-n", "-c", str(n), "-j",
                     str(a.threads), "-T", str(10 * a.connect_timeout_s),
                     "-f", script])
    try:
        t0 = time.monotonic()
        pids = wait_backends(postmaster, n, proc, a.connect_timeout_s)
        connect_s = time.monotonic() - t0
        time.sleep(1)
        connected = snapshot()
        pte_connected = vmpte(pids)
        t0 = time.monotonic()
        errors, first = 0, None
        want = len(touch.addresses(mapping["start"], mapping["size"],
                                   stride))
        for pid in pids:
            try:
                got = touch.touch(pid, mapping["start"], mapping["size"],
                                  stride)
            except OSError as e:
                got, first = None, first or str(e)
            if got is not None and got != want:
                first = first or ("backend %d: %d of %d reads" % (
                    pid, got, want))
            errors += got != want
        touch_s = time.monotonic() - t0
        warm = snapshot()
        pte_warm = vmpte(pids)
    finally:
        stop(proc)
    left = wait_gone(postmaster, a.teardown_timeout_s)
    out = {
        "backends": len(pids),
        "connect_s": round(connect_s, 3),
        "touch_s": round(touch_s, 3),
        "touch_stride": stride,
        "touch_errors": errors,
        "touch_first_error": first,
        "pagetables": {"before": before["pagetables"],
                       "connected": connected["pagetables"],
                       "warm": warm["pagetables"]},
        "memory": {"mem_free_before": before["mem_free"],
                   "mem_free_warm": warm["mem_free"]},
        "vmpte": {"connected": pte_connected, "warm": pte_warm},
        "vmstat_connected": procfs.vmstat_delta(before["vmstat"],
                                                connected["vmstat"]),
        "vmstat_warm": procfs.vmstat_delta(before["vmstat"],
                                           warm["vmstat"]),
        "backends_left": left,
    }
    pt = out["pagetables"]
    out["per_backend"] = {
        "total": (pt["warm"] - pt["before"]) / n,
        "connected": (pt["connected"] - pt["before"]) / n,
        "warm_increment": (pt["warm"] - pt["connected"]) / n,
    }
    out["memory"]["per_backend"] = (before["mem_free"]
                                    - warm["mem_free"]) / n
    return out


class Sampler(threading.Thread):
    """Peak PageTables and backend count, once a second."""

    def __init__(self, postmaster):
        super().__init__(daemon=True)
        self.postmaster = postmaster
        self.done = threading.Event()
        self.pagetables_max = 0
        self.backends_max = 0

    def run(self):
        while not self.done.wait(1.0):
            pt = procfs.meminfo().get("PageTables", 0)
            self.pagetables_max = max(self.pagetables_max, pt)
            self.backends_max = max(self.backends_max, len(
                client_backends(self.postmaster)))


def bench(cl, postmaster, n, mode, churn, a, connect_s):
    """One pgbench run; its summary, latency from its own log, and the
    kernel's counters across it.  pgbench's -T includes the clients'
    initial connections, which took connect_s in the hold phase: a run
    without --connect gets 1.5 times that (and 10 s) on top of its
    duration, and its steady window is measured from the log."""
    tag = "%s%s-%d" % (mode, "-churn" if churn else "", n)
    prefix = os.path.join(cl.dir, "log-" + tag)
    duration = a.churn_duration if churn else a.duration
    allowance = 0 if churn else math.ceil(1.5 * connect_s) + 10
    argv = [cl.bin("pgbench"), "-n", "-c", str(n), "-j", str(a.threads),
            "-T", str(duration + allowance), "--log",
            "--log-prefix=" + prefix]
    argv += options.MODE_ARGS[mode]
    if churn:
        argv.append("-C")
    v0 = procfs.vmstat()
    sampler = Sampler(postmaster)
    sampler.start()
    t0 = time.monotonic()
    rc, out = cl.run(argv, timeout=duration + allowance +
                     a.connect_timeout_s + 120)
    seconds = time.monotonic() - t0
    sampler.done.set()
    sampler.join()
    v1 = procfs.vmstat()
    lines = []
    for path in sorted(glob.glob(prefix + ".*")):
        with open(path) as f:
            lines += f.read().splitlines()
        os.unlink(path)
    lat, failed, skipped, first, last = pgblog.parse_log_lines(lines)
    window = None if churn else pgblog.steady(pgblog.records(lines),
                                              duration)
    left = wait_gone(postmaster, a.teardown_timeout_s)
    run = {
        "mode": mode, "churn": churn, "clients": n, "duration_s": duration,
        "connect_allowance_s": allowance,
        "argv": argv[1:], "exit": rc, "seconds": round(seconds, 3),
        "summary": pgblog.parse_summary(out or ""),
        "output_tail": (out or "").strip().splitlines()[-12:],
        "log": {"transactions": len(lat), "failed": failed,
                "skipped": skipped,
                "span_s": round(last - first, 3) if lat else 0},
        "latency": pgblog.histogram([x * 1000 for x in lat]),
        "latency_ms": pgblog.exact_ms(lat),
        "steady": window,
        "pagetables_max": sampler.pagetables_max,
        "backends_max": sampler.backends_max,
        "vmstat_delta": procfs.vmstat_delta(v0, v1),
        "backends_left": left,
    }
    return run
