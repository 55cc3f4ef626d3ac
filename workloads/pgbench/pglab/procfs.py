"""What the experiment reads from /proc and /sys (as shmdb does:
workloads/lib/procfs.c)."""
import os
import re

HP_SYSFS = "/sys/kernel/mm/hugepages"
# /proc/vmstat keys always kept in deltas (shmdb's rule: every key with
# htlb/hugetlb or starting with thp, even when 0)
VMSTAT_KEEP = re.compile(r"htlb|hugetlb|^thp")


def read(path, default=""):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return default


def keyvals(text):
    """'Key:  123 kB' / 'key 123' lines -> {key: int} (kB -> bytes)."""
    out = {}
    for line in text.splitlines():
        parts = line.replace(":", " ").split()
        if len(parts) >= 2 and re.fullmatch(r"-?\d+", parts[1]):
            v = int(parts[1])
            out[parts[0]] = v * 1024 if parts[2:3] == ["kB"] else v
    return out


def meminfo():
    return keyvals(read("/proc/meminfo"))


def vmstat():
    return keyvals(read("/proc/vmstat"))


def vmstat_delta(a, b):
    """b - a for every counter that changed, plus the kept keys."""
    return {k: b[k] - a.get(k, 0) for k in sorted(b)
            if b[k] != a.get(k, 0) or VMSTAT_KEEP.search(k)}


def status(pid):
    return keyvals(read("/proc/%d/status" % pid))


def hugepages(base=HP_SYSFS):
    """{page size in bytes (string): {nr, free, rsvd, surp}}."""
    pools = {}
    names = sorted(os.listdir(base)) if os.path.isdir(base) else []
    for d in names:
        m = re.fullmatch(r"hugepages-(\d+)kB", d)
        if not m:
            continue

        def get(name, d=d):
            return int(read(os.path.join(base, d, name), "0").strip() or 0)
        pools[str(int(m.group(1)) * 1024)] = {
            "nr": get("nr_hugepages"), "free": get("free_hugepages"),
            "rsvd": get("resv_hugepages"), "surp": get("surplus_hugepages")}
    return pools


def children(ppid):
    """PIDs whose parent is `ppid`."""
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        st = read("/proc/%s/stat" % name)
        close = st.rfind(")")
        if close < 0:
            continue
        fields = st[close + 2:].split()
        if len(fields) > 1 and int(fields[1]) == ppid:
            out.append(int(name))
    return sorted(out)


def pids_by_cwd(match):
    """PIDs of the processes whose working directory satisfies match(cwd)."""
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            cwd = os.readlink("/proc/%s/cwd" % name)
        except OSError:
            continue
        if match(cwd):
            out.append(int(name))
    return out


def cmdline(pid):
    return read("/proc/%d/cmdline" % pid).replace("\0", " ").strip()


def alive(pid):
    return os.path.exists("/proc/%d" % pid)


def stats(values):
    """{count, min, max, mean, sum} of a list of ints (bytes)."""
    if not values:
        return {"count": 0, "min": 0, "max": 0, "mean": 0, "sum": 0}
    return {"count": len(values), "min": min(values), "max": max(values),
            "mean": sum(values) / len(values), "sum": sum(values)}
