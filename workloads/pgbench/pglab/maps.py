"""PostgreSQL's main shared memory mapping in /proc/PID/maps, and the
1 GiB slots it covers (pure functions on the text of the files)."""

KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB
SLOT = GIB            # what one PMD page maps (x86_64)
PTE_SPAN = 2 * MIB    # what one PTE page maps

# Names the kernel gives a MAP_SHARED|MAP_ANONYMOUS mapping: hugetlb
# (huge_pages=on) or shmem (huge_pages=off); PostgreSQL's shared_memory_type
# mmap, its default on Linux.
SHARED_ANON_NAMES = ("/anon_hugepage", "/dev/zero", "/SYSV")


def parse_maps(text):
    """[{start, end, perms, offset, inode, path}] of a maps file."""
    out = []
    for line in text.splitlines():
        parts = line.split(None, 5)
        if len(parts) < 5:
            continue
        start, end = (int(x, 16) for x in parts[0].split("-"))
        out.append({"start": start, "end": end, "perms": parts[1],
                    "offset": int(parts[2], 16), "inode": int(parts[4]),
                    "path": parts[5].strip() if len(parts) > 5 else ""})
    return out


def main_shared_mapping(entries):
    """The largest shared (rw-s) anonymous mapping: PostgreSQL's main
    shared memory (buffer pool included); None when there is none."""
    best = None
    for e in entries:
        if e["perms"][3:4] != "s" or "w" not in e["perms"]:
            continue
        if not e["path"].startswith(SHARED_ANON_NAMES):
            continue
        if best is None or e["end"] - e["start"] > best["end"] - best["start"]:
            best = e
    return best


def slots(start, size, span=SLOT):
    """(slots touched, full slots) of [start, start + size) in units of
    `span`-aligned ranges."""
    if size <= 0:
        return 0, 0
    end = start + size
    total = (end - 1) // span - start // span + 1
    full = max(0, end // span - (-(-start // span)))
    return total, full


def kernel_page_size(smaps_text, start):
    """KernelPageSize (bytes) of the smaps entry starting at `start`."""
    inside = False
    for line in smaps_text.splitlines():
        head = line.split(None, 1)[0] if line.strip() else ""
        if "-" in head and not head.endswith(":"):
            try:
                inside = int(head.split("-")[0], 16) == start
            except ValueError:
                inside = False
        elif inside and line.startswith("KernelPageSize:"):
            return int(line.split()[1]) * KIB
    return None


def describe(entry, page_size):
    """The mapping as the result records it."""
    size = entry["end"] - entry["start"]
    total, full = slots(entry["start"], size)
    return {
        "address": "0x%x" % entry["start"],
        "end": "0x%x" % entry["end"],
        "size": size,
        "path": entry["path"],
        "inode": entry["inode"],
        "page_size": page_size,
        "slots": total,
        "full_slots": full,
        "partial_slots": total - full,
        "slot_offset": entry["start"] % SLOT,
        "pte_spans": slots(entry["start"], size, PTE_SPAN)[0],
    }
