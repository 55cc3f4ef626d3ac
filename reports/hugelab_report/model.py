"""The page-table savings model (/work/shared/KERNEL-NOTES.md, x86_64).

A PMD page-table page (4 KiB) maps one 1 GiB-aligned slot of 2 MiB pages.
Processes that map the same hugetlbfs range at the same 1 GiB-congruent
address and cover the whole slot share one PMD page per slot; a slot the
mapping covers only partly cannot be shared and costs every process its own
PMD page.  4 KiB pages cost a PTE page per 2 MiB plus the PMD pages; 1 GiB
pages are mapped at the PUD level and cost no PMD page.  A MAP_PRIVATE
mapping (shmdb --map private) never shares.  Every page size needs one PUD
page per 512 GiB region the mapping spans beyond the first (the program's
own region, whose PUD page every process has); PUD pages are never shared,
and /proc/meminfo PageTables counts them only from Linux 6.7 (the workload
says so in its model.pud_counted).

Everything here is pure arithmetic on the configuration; the measured
figures are compared against it by savings.py.
"""

import math

KiB = 1024
MiB = 1024 * KiB
GiB = 1024 * MiB
TiB = 1024 * GiB
PT_PAGE = 4 * KiB          # one page-table page
PMD_SPAN = GiB             # what one PMD page maps
PTE_SPAN = 2 * MiB         # what one PTE page maps
PGD_SPAN = 512 * GiB       # what one PUD page maps
SKEW = 2 * MiB             # skewed placement: 2 MiB past a 1 GiB boundary

MODES = ("4k", "2m-aligned", "2m-skewed", "2m-private", "1g")
MODE_TITLES = {
    "4k": "4 KiB pages",
    "2m-aligned": "2 MiB pages, 1 GiB-aligned (shared PMD)",
    "2m-skewed": "2 MiB pages, skewed by 2 MiB (no sharing)",
    "2m-private": "2 MiB pages, MAP_PRIVATE (never shared)",
    "1g": "1 GiB pages",
}


def mode_of(config):
    """Page mode of a shmdb configuration, or None if it has no page size."""
    ps = config.get("page_size")
    if config.get("backing") == "anon" or ps == 4 * KiB:
        return "4k"
    if ps == 2 * MiB:
        if config.get("map") == "private":
            return "2m-private"
        if config.get("placement") == "skewed":
            return "2m-skewed"
        return "2m-aligned"
    if ps == GiB:
        return "1g"
    return None


def slots(size, offset=0, span=PMD_SPAN):
    """(total, full) 1 GiB slots (or `span`-aligned ranges) touched by
    [offset, offset + size)."""
    if size <= 0:
        return 0, 0
    start, end = offset, offset + size
    first = start // span
    last = (end - 1) // span
    total = last - first + 1
    full_first = -(-start // span)              # ceil
    full_last = end // span                     # exclusive
    full = max(0, full_last - full_first)
    return total, full


def offset_of(mode):
    return SKEW if mode == "2m-skewed" else 0


def address_of(config):
    """The mapping's address from a configuration ("0x..."), or None."""
    a = (config or {}).get("address")
    try:
        return int(a, 16) if isinstance(a, str) else None
    except ValueError:
        return None


def pud_pages(size, address):
    """PUD pages a mapping needs beyond the first 512 GiB region's (which
    every process has); 0 without an address (taken as the lab's default
    placement, inside the first region)."""
    if address is None or size <= 0:
        return 0
    first, last = address // PGD_SPAN, (address + size - 1) // PGD_SPAN
    return last - first + 1 - (1 if first == 0 else 0)


class Expectation:
    """Model figures for `mappers` processes mapping `size` bytes in `mode`.

    `marginal_pages` is what one more process costs in page-table pages,
    `first_pages` what the first one costs; total pages are
    first + (mappers - 1) * marginal.
    """

    def __init__(self, mode, size, mappers, address=None, pud_counted=False):
        self.mode = mode
        self.size = size
        self.mappers = mappers
        self.slots, self.full_slots = slots(
            size, offset_of(mode) if address is None else address)
        self.pud_pages = pud_pages(size, address)
        if mode == "4k":
            # 2 MiB ranges touched at the address (lib/model.c's spans()):
            # a mapping not 2 MiB-aligned (PostgreSQL's shmem) may touch
            # one more than its size in 2 MiB
            pte = slots(size, address or 0, PTE_SPAN)[0]
            self.marginal_pages = pte + self.slots
            self.first_pages = self.marginal_pages
        elif mode in ("2m-aligned", "2m-skewed"):
            partial = self.slots - self.full_slots
            self.marginal_pages = partial
            self.first_pages = self.slots
        elif mode == "2m-private":
            self.marginal_pages = self.slots
            self.first_pages = self.slots
        elif mode == "1g":
            self.marginal_pages = 0
            self.first_pages = 0
        else:
            raise ValueError("unknown mode %r" % mode)
        # PUD pages: memory always, PageTables only where counted
        self.memory_marginal_pages = self.marginal_pages + self.pud_pages
        if pud_counted:
            self.marginal_pages += self.pud_pages
            self.first_pages += self.pud_pages
        self.sharing = (mode in ("2m-aligned", "2m-skewed")
                        and self.full_slots > 0 and mappers > 1)

    @property
    def pages(self):
        if self.mappers <= 0:
            return 0
        return self.first_pages + (self.mappers - 1) * self.marginal_pages

    @property
    def bytes(self):
        return self.pages * PT_PAGE

    @property
    def per_process_bytes(self):
        return self.bytes / self.mappers if self.mappers else 0.0

    @property
    def shared_pmd_events(self):
        """PMD pages found already present: one per full slot per extra
        process (what a kernel counter of pmd shares would count)."""
        if not self.sharing:
            return 0
        return (self.mappers - 1) * self.full_slots


def sharing_savings(size, processes, bytes_per_pmd_page=PT_PAGE):
    """Bytes PMD sharing saves for `processes` mapping `size` bytes at the
    same 1 GiB-aligned address, against the same mapping unshared: every
    process but the first would need one PMD page per slot."""
    total, _ = slots(size)
    return total * bytes_per_pmd_page * max(0, processes - 1)


def size_for_savings(target_bytes, processes, bytes_per_pmd_page=PT_PAGE):
    """Smallest aligned mapping (bytes, whole GiB) whose sharing saves at
    least target_bytes with `processes` processes."""
    per_gib = bytes_per_pmd_page * max(0, processes - 1)
    if per_gib <= 0:
        return None
    return math.ceil(target_bytes / per_gib) * GiB
