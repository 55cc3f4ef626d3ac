"""Page-table model of PostgreSQL's main shared memory mapping, per backend
(/work/shared/KERNEL-NOTES.md; the same arithmetic as lib/model.h and
reports/hugelab_report/model.py, for a mapping at an address the kernel
chose).

Every backend is forked by the postmaster and inherits the mapping at the
same address, so backends always map it congruently: each full 1 GiB slot
of 2 MiB pages is shared (one PMD page for all), each partial slot (the
kernel aligns PostgreSQL's mmap to 2 MiB, not to 1 GiB) costs every
backend its own PMD page.  4 KiB pages (huge_pages=off, shmem) cost one
PTE page per 2 MiB range touched plus one PMD page per slot.  1 GiB pages
are mapped at the PUD level: no PMD or PTE page.  The figures assume every
backend faulted the whole mapping (the experiment's warm phase makes sure).

A partial slot or 2 MiB span that also holds another mapping of the
postmaster (libraries, locale files, other segments mapped directly above
the segment: mmap grows down) has its page-table page in every backend
with or without the segment: marginal_per_backend_bytes leaves those out
(maps.neighbours()).
"""
from .maps import GIB, MIB, KIB, PTE_SPAN, slots

PT_PAGE = 4 * KIB
MODES = ("4k", "2m", "1g")


def mode_of(page_size):
    return {4 * KIB: "4k", 2 * MIB: "2m", GIB: "1g"}.get(page_size)


def per_backend(page_size, start, size, backends, neighbour_slots=0,
                neighbour_pte_spans=0):
    """Model figures for `backends` processes mapping [start, start+size)
    faulted whole, with page size `page_size` (bytes); the neighbour
    counts (maps.neighbours()) give marginal_per_backend_bytes."""
    mode = mode_of(page_size)
    if mode is None:
        raise ValueError("unknown page size %r" % page_size)
    total, full = slots(start, size)
    partial = total - full
    ptes = slots(start, size, PTE_SPAN)[0]
    if mode == "4k":
        own_pmd, own_pte, shared = total, ptes, 0
    elif mode == "2m":
        own_pmd, own_pte = partial, 0
        shared = full if backends > 1 else 0
        if backends <= 1:
            own_pmd = total
    else:
        own_pmd, own_pte, shared = 0, 0, 0
    per = (own_pmd + own_pte) * PT_PAGE
    # page-table pages the backend has anyway for its other mappings
    there = {"4k": neighbour_slots + neighbour_pte_spans,
             "2m": neighbour_slots}.get(mode, 0)
    return {
        "mode": mode,
        "backends": backends,
        "slots": total,
        "full_slots": full,
        "partial_slots": partial,
        "pmd_pages_per_backend": own_pmd,
        "pte_pages_per_backend": own_pte,
        "shared_pmd_pages": shared,
        "per_backend_bytes": per,
        # what the mapping adds to a backend's page tables: per_backend
        # less the pages of partial slots and spans it shares with the
        # backend's other mappings
        "marginal_per_backend_bytes": max(0, per - there * PT_PAGE),
        "expected_bytes": per * backends + shared * PT_PAGE,
        "sharing": shared > 0,
        # PMD pages a backend finds present at its first fault in a full
        # slot (htlb_pmd_share of the patched kernel), for `backends`
        # processes after the first
        "expected_pmd_shares": full * max(0, backends - 1)
        if mode == "2m" else 0,
        # the same mapping 1 GiB-aligned (what shmdb's aligned placement
        # gets): every slot full when the size is whole GiB
        "aligned_per_backend_bytes": _aligned(mode, size),
    }


def _aligned(mode, size):
    total, full = slots(0, size)
    if mode == "4k":
        return (total + slots(0, size, PTE_SPAN)[0]) * PT_PAGE
    if mode == "2m":
        return (total - full) * PT_PAGE
    return 0
