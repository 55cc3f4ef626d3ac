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


def _edge_ranges(start, end, span):
    """The `span`-aligned ranges [lo, lo + span) that [start, end) touches
    but does not cover whole: at most the first and the last."""
    out = []
    for lo in (start - start % span, (end - 1) - (end - 1) % span):
        if (lo < start or lo + span > end) and lo not in out:
            out.append(lo)
    return out


def neighbours(entry, entries):
    """{neighbour_slots, neighbour_pte_spans}: how many of the 1 GiB slots
    (PMD-page level) and of the 2 MiB spans (PTE-page level) that `entry`
    covers only in part also hold part of another mapping of `entries`
    (the same maps file).  The page-table page of such a slot or span is
    there for the other mapping whether or not `entry` is (a process's
    libraries, locale files, vdso, other segments and anonymous memory
    sit next to a mapping the kernel placed top-down), so `entry` does not
    add it.  A slot or span `entry` covers whole holds nothing else; a
    mapping that ends where the slot begins (or begins where it ends) is
    not in it; a mapping without access (---p: a guard or reserved range)
    maps no page and so needs no page-table page: not counted."""
    start, end = entry["start"], entry["end"]
    others = [(e["start"], e["end"]) for e in entries
              if e is not entry and e["perms"][:3] != "---"
              and (e["start"], e["end"]) != (start, end)]
    out = {}
    for key, span in (("neighbour_slots", SLOT),
                      ("neighbour_pte_spans", PTE_SPAN)):
        out[key] = sum(1 for lo in _edge_ranges(start, end, span)
                       if any(s < lo + span and e > lo for s, e in others))
    return out


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


def describe(entry, page_size, entries=None):
    """The mapping as the result records it; with `entries` (every mapping
    of the same maps file) also its neighbours (neighbours())."""
    size = entry["end"] - entry["start"]
    total, full = slots(entry["start"], size)
    out = {
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
    if entries is not None:
        out.update(neighbours(entry, entries))
    return out


def filler_blocks(seg_start, blocks_offset, block=8192, span=SLOT):
    """Buffers (8 KiB blocks) from the first buffer of the pool (at
    seg_start + blocks_offset) up to the first 1 GiB boundary at or after
    it: taking them first puts the next buffers into a full slot.  0 when
    the pool starts on a boundary."""
    first = seg_start + blocks_offset
    boundary = -(-first // span) * span
    return -(-(boundary - first) // block)


def full_slot_range(start, size, span=SLOT):
    """Indices of the full slots of [start, start + size), counted from
    the mapping's first slot (as buffer_slots counts them)."""
    _, full = slots(start, size, span)
    first = 0 if start % span == 0 else 1
    return range(first, first + full)


def buffer_slots(seg_start, blocks_offset, buffer_ids, block=8192,
                 span=SLOT):
    """{1 GiB slot index (from the segment's first slot): buffers} for
    PostgreSQL buffer ids (1-based, pg_buffercache's bufferid)."""
    base = seg_start // span
    out = {}
    for b in buffer_ids:
        s = (seg_start + blocks_offset + (b - 1) * block) // span - base
        out[s] = out.get(s, 0) + 1
    return out
