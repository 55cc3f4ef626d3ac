"""Options of the pgbench experiment and its `--check` (what a run needs
against a guest shape; pure, no PostgreSQL needed)."""
import argparse
import math
import re

from .maps import GIB, KIB, MIB, PTE_SPAN, slots

# pgbench built-in scripts a level runs: select-only (-S), read-write
# (-b tpcb-like: every transaction updates one of the scale's branch rows,
# so hundreds of clients on a small scale serialise on them; pgbench's
# documentation wants a scale of at least the client count),
# simple-update (-N: tpcb-like without the branch and teller updates).
MODE_ARGS = {"select-only": ["-S"], "read-write": ["-b", "tpcb-like"],
             "simple-update": ["-N"]}
MODES = tuple(MODE_ARGS)
DEFAULT_MODES = ["select-only", "read-write"]
PAGE_SIZES = {"2M": 2 * MIB, "1G": GIB}
# Memory (MiB) the guest's own system keeps, as shmdb's --check
# (workloads/lib/needs.h GUEST_OS_MIB).
GUEST_OS_MIB = 256
# PIDs kept for the system (workloads/lib/needs.h SYSTEM_PROCS).
SYSTEM_PROCS = 1000
# Connections the driver itself opens besides pgbench's (psql for the
# prewarm and the version; one at a time).
DRIVER_CONNECTIONS = 2
# Processes of the cluster besides backends: postmaster, checkpointer,
# background writer, walwriter, autovacuum launcher, logical replication
# launcher, and autovacuum workers (autovacuum_max_workers 3).
AUX_PROCS = 9
# PostgreSQL 15's main shared memory besides shared_buffers, an upper
# estimate: fitted over `postgres -C shared_memory_size` of 15.18 at
# shared_buffers 128 MB, 1 GB, 3 GB x max_connections 100, 1010 (15-138 MiB
# measured; this gives 26-187 MiB).  The guest's run asks PostgreSQL itself
# (`postgres -C shared_memory_size`) and records both.
SHMEM_FIXED_MIB = 16
SHMEM_PER_GIB_MIB = 40
SHMEM_PER_CONNECTION_KIB = 52
# Memory of one backend besides the shared mapping's page tables, for
# --check: 250 idle backends of 15.18 took 1.46 MiB of MemFree each on the
# development host (VmPTE 120-136 KiB included), 824 KiB private each
# under read-write; a run records the guest's own figure
# (levels[].hold.memory.per_backend).
BACKEND_KIB = 2048


class BadInput(Exception):
    """One line for stderr; exit 2, no document."""


def size_arg(text):
    m = re.fullmatch(r"(\d+)([KMG])B?", text.strip(), re.I)
    if not m:
        raise argparse.ArgumentTypeError(
            "'%s' is not a size (N[K|M|G], e.g. 3G, 2560M)" % text)
    return int(m.group(1)) * {"K": KIB, "M": MIB, "G": GIB}[
        m.group(2).upper()]


def list_arg(conv, name):
    def parse(text):
        try:
            out = [conv(x) for x in text.split(",") if x]
        except ValueError:
            out = []
        if not out:
            raise argparse.ArgumentTypeError(
                "'%s' is not a comma-separated list of %s" % (text, name))
        return out
    return parse


def modes_arg(text):
    out = [x for x in text.split(",") if x]
    bad = [x for x in out if x not in MODES]
    if bad or not out:
        raise argparse.ArgumentTypeError(
            "bad value '%s' (a list of %s)" % (text, ",".join(MODES)))
    return out


def parser():
    ap = argparse.ArgumentParser(
        prog="pgbench", description="PostgreSQL with huge pages under "
        "pgbench: page tables, PMD sharing, TPS and latency "
        "(hugelab.pgbench/1, workloads/SCHEMA.md)")
    ap.add_argument("--json", help="result file (required unless --check)")
    ap.add_argument("--check", action="store_true",
                    help="validate the options (against --guest-shape, else "
                    "this machine), print {\"ok\": true, ...}, run nothing")
    ap.add_argument("--guest-shape", metavar="SHAPE",
                    help="mem_mib=M,hugepages_2m=N,hugepages_1g=K,vcpus=V")
    ap.add_argument("--huge-pages", choices=("on", "off", "try"),
                    default="on", help="PostgreSQL's huge_pages")
    ap.add_argument("--huge-page-size", choices=sorted(PAGE_SIZES),
                    default="2M", help="PostgreSQL's huge_page_size "
                    "(with --huge-pages on or try)")
    ap.add_argument("--shared-buffers", type=size_arg, required=True,
                    help="PostgreSQL's shared_buffers, e.g. 3G")
    ap.add_argument("--clients", type=list_arg(int, "client counts"),
                    default=[100], help="pgbench clients (backends), one "
                    "level each, ascending, e.g. 100,500,1000")
    ap.add_argument("--max-connections", type=int,
                    help="max_connections (default: the largest client "
                    "count + %d)" % DRIVER_CONNECTIONS)
    ap.add_argument("--modes", type=modes_arg, default=DEFAULT_MODES,
                    help="pgbench built-in scripts run at every level")
    ap.add_argument("--duration", type=int, default=20,
                    help="seconds of each pgbench run")
    ap.add_argument("--churn-duration", type=int,
                    help="seconds of the backend-churn run (pgbench "
                    "--connect, select-only) at every level (default: "
                    "--duration)")
    ap.add_argument("--scale", type=int, default=10,
                    help="pgbench -i scale factor (~15 MiB each)")
    ap.add_argument("--data-placement", choices=("start", "full-slot"),
                    default="start",
                    help="where pgbench's tables go in the buffer pool: "
                    "'start' (PostgreSQL's own order: the first free "
                    "buffers, at the segment's start) or 'full-slot' (a "
                    "filler table takes the buffers before the first full "
                    "1 GiB slot, so every backend that reads the data "
                    "shares that slot's PMD page: what a buffer pool in "
                    "use everywhere gives, with a database that fits)")
    ap.add_argument("--threads", type=int, default=2,
                    help="pgbench -j (client threads)")
    ap.add_argument("--backend-kib", type=int, default=BACKEND_KIB,
                    help="memory a backend needs besides page tables of "
                    "the shared mapping, for --check (KiB, default %d)"
                    % BACKEND_KIB)
    ap.add_argument("--start-timeout-s", type=int, default=180)
    ap.add_argument("--connect-timeout-s", type=int, default=900,
                    help="seconds for every client of a level to connect")
    ap.add_argument("--teardown-timeout-s", type=int, default=60)
    ap.add_argument("--pgbin", default="/usr/lib/postgresql/15/bin")
    ap.add_argument("--user", default="postgres",
                    help="system user PostgreSQL runs as")
    ap.add_argument("--workdir", default="/var/tmp",
                    help="directory for the cluster's temporary directory")
    ap.add_argument("--keep", action="store_true",
                    help="keep the cluster directory (debugging)")
    ap.add_argument("--quiet", action="store_true")
    return ap


def parse(argv):
    """Options, or BadInput with one line."""
    ap = parser()
    ap.error = _raise
    args = ap.parse_args(argv)
    args.clients_max = max(args.clients)
    if args.max_connections is None:
        args.max_connections = args.clients_max + DRIVER_CONNECTIONS
    if args.churn_duration is None:
        args.churn_duration = args.duration
    validate(args)
    return args


def _raise(msg):
    raise BadInput(msg)


def validate(a):
    if a.json == "":
        raise BadInput("--json: empty file name")
    if not a.check and not a.json:
        raise BadInput("--json FILE is required (or --check)")
    if a.guest_shape and not a.check:
        raise BadInput("--guest-shape goes with --check")
    if any(c < 1 for c in a.clients) or a.clients != sorted(set(a.clients)):
        raise BadInput("--clients %s: positive, ascending, no repeats"
                       % ",".join(map(str, a.clients)))
    if a.max_connections < a.clients_max + DRIVER_CONNECTIONS:
        raise BadInput(
            "--max-connections %d: the largest client count %d needs at "
            "least %d (the clients plus %d for the driver's own sessions)"
            % (a.max_connections, a.clients_max,
               a.clients_max + DRIVER_CONNECTIONS, DRIVER_CONNECTIONS))
    if a.max_connections > 262143:
        raise BadInput("--max-connections %d: PostgreSQL allows at most "
                       "262143" % a.max_connections)
    for key in ("duration", "churn_duration", "scale", "threads",
                "start_timeout_s", "connect_timeout_s",
                "teardown_timeout_s", "backend_kib"):
        if getattr(a, key) < 1:
            raise BadInput("--%s: %d is not allowed (at least 1; backend "
                           "churn is part of every level)"
                           % (key.replace("_", "-"), getattr(a, key)))
    if a.threads > a.clients[0]:
        raise BadInput("--threads %d: more than the smallest client count "
                       "%d (pgbench refuses)" % (a.threads, a.clients[0]))
    if a.shared_buffers < 16 * MIB or a.shared_buffers % (8 * KIB):
        raise BadInput("--shared-buffers: at least 16M, whole 8 KiB blocks")
    if a.huge_pages == "off" and a.huge_page_size != "2M":
        raise BadInput("--huge-page-size %s needs --huge-pages on or try"
                       % a.huge_page_size)


def shmem_estimate(shared_buffers, max_connections):
    """Upper estimate of PostgreSQL 15's main shared memory (bytes)."""
    return (shared_buffers
            + SHMEM_FIXED_MIB * MIB
            + math.ceil(SHMEM_PER_GIB_MIB * MIB * shared_buffers / GIB)
            + SHMEM_PER_CONNECTION_KIB * KIB * max_connections)


def parse_shape(text):
    keys = ("mem_mib", "hugepages_2m", "hugepages_1g", "vcpus")
    out = {}
    for part in text.split(","):
        k, eq, v = part.partition("=")
        if not eq or k not in keys or k in out or not v.isdigit():
            raise BadInput("--guest-shape: '%s' is not key=value with one "
                           "of %s and an integer" % (part, ", ".join(keys)))
        out[k] = int(v)
    if len(out) != len(keys):
        raise BadInput("--guest-shape: needs all of %s" % ", ".join(keys))
    pools = out["hugepages_2m"] * 2 + out["hugepages_1g"] * 1024
    if pools + GUEST_OS_MIB > out["mem_mib"]:
        raise BadInput("--guest-shape: mem_mib=%d cannot hold its huge page "
                       "pools (%d MiB) and %d MiB for the guest's own system"
                       % (out["mem_mib"], pools, GUEST_OS_MIB))
    out["mem_avail_mib"] = out["mem_mib"] - pools - GUEST_OS_MIB
    out["pid_max"] = max(32768, 1024 * out["vcpus"])
    out["what"] = "the guest shape"
    return out


def needs(a):
    """What the run needs: huge pages, memory (MiB), processes."""
    shmem = shmem_estimate(a.shared_buffers, a.max_connections)
    n = {"hugepages_2m": 0, "hugepages_1g": 0, "processes": 0,
         "shmem_estimate": shmem}
    mem = a.clients_max * a.backend_kib * KIB
    if a.huge_pages == "on":
        page = PAGE_SIZES[a.huge_page_size]
        n["hugepages_" + a.huge_page_size.lower()] = -(-shmem // page)
    elif a.huge_pages == "off":
        # the segment in 4 KiB shmem pages, and every backend's PTE and
        # PMD pages for all of it (the warm phase faults it whole)
        total, _ = slots(0, shmem)
        per = (slots(0, shmem, PTE_SPAN)[0] + total) * 4 * KIB
        mem += shmem + a.clients_max * per
    n["mem_mib"] = -(-mem // MIB)
    n["processes"] = a.clients_max + AUX_PROCS + DRIVER_CONNECTIONS
    return n


def describe(a):
    """The options a --check message names."""
    hp = "--huge-pages %s" % a.huge_pages
    if a.huge_pages != "off":
        hp += " --huge-page-size %s" % a.huge_page_size
    return "--shared-buffers %dM %s --clients %s --max-connections %d" % (
        a.shared_buffers // MIB, hp, ",".join(map(str, a.clients)),
        a.max_connections)


def fit(a, n, shape):
    """BadInput when the needs do not fit the shape."""
    what = shape["what"]
    est = " (PostgreSQL's shared memory, estimated %d MiB)" % (
        n["shmem_estimate"] // MIB)
    for size in ("2m", "1g"):
        want, have = n["hugepages_" + size], shape["hugepages_" + size]
        if want > have:
            raise BadInput("%s: needs %d free %s huge pages%s, %s "
                           "has %d" % (describe(a), want, size.upper(), est,
                                       what, have))
    if n["mem_mib"] > shape["mem_avail_mib"]:
        raise BadInput(
            "%s: needs %d MiB of memory (%d backends at %d KiB%s), "
            "%s has %d MiB available" % (
                describe(a), n["mem_mib"], a.clients_max, a.backend_kib,
                ", the 4 KiB segment and its page tables"
                if a.huge_pages == "off" else "", what,
                shape["mem_avail_mib"]))
    if n["processes"] + SYSTEM_PROCS > shape["pid_max"]:
        raise BadInput("%s: needs %d processes, %s allows %d "
                       "(pid_max, %d kept for the system)"
                       % (describe(a), n["processes"], what,
                          shape["pid_max"] - SYSTEM_PROCS, SYSTEM_PROCS))
