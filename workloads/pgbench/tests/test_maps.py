"""maps.py: PostgreSQL's shared mapping in /proc/PID/maps, 1 GiB slots."""
import unittest

from pglab import maps

GIB, MIB = maps.GIB, maps.MIB

# /proc/<postmaster>/maps of PostgreSQL 15 with huge_pages=on (trimmed).
MAPS = """\
55d0c8a00000-55d0c8b3a000 r--p 00000000 fe:01 1050 /usr/lib/pg/postgres
7f3a40000000-7f3ac9800000 rw-s 00000000 00:10 36291 /anon_hugepage (deleted)
7f3ad0e00000-7f3ad0e01000 rw-s 00000000 00:01 4 /SYSV0052e2c1 (deleted)
7f3ad1000000-7f3ad1200000 rw-p 00000000 00:00 0
7ffd1c3e0000-7ffd1c401000 rw-p 00000000 00:00 0 [stack]
"""
SMAPS = """\
7f3a40000000-7f3ac9800000 rw-s 00000000 00:10 36291 /anon_hugepage (deleted)
Size:            2252800 kB
KernelPageSize:     2048 kB
MMUPageSize:        2048 kB
7f3ad0e00000-7f3ad0e01000 rw-s 00000000 00:01 4 /SYSV0052e2c1 (deleted)
Size:                  4 kB
KernelPageSize:        4 kB
"""

# The postmaster of a 2 MiB-page run (PostgreSQL 15, trimmed): the 980 MiB
# segment at 646 MiB into a 1 GiB slot spans two partial slots; the kernel
# mapped everything after it top-down, directly above it: PostgreSQL's
# System V segment, locale files, libraries (with a ---p gap), the vdso.
MAPS_2M = """\
55d0c8a00000-55d0c8b3a000 r--p 00000000 fe:01 1050 /usr/lib/pg/postgres
55d0c9e00000-55d0c9f00000 rw-p 00000000 00:00 0 [heap]
7f3aa8600000-7f3ae5a00000 rw-s 00000000 00:10 36291 /anon_hugepage (deleted)
7f3ae5a00000-7f3ae5a01000 rw-s 00000000 00:01 4 /SYSV0052e2c1 (deleted)
7f3ae5a01000-7f3ae5cff000 r--p 00000000 fe:01 2100 /usr/lib/locale/LC_CTYPE
7f3ae5cff000-7f3ae5d25000 r--p 00000000 fe:01 2200 /lib/libc.so.6
7f3ae5d25000-7f3ae5e7a000 r-xp 00026000 fe:01 2200 /lib/libc.so.6
7f3ae5e7a000-7f3ae5e7b000 ---p 0017b000 fe:01 2200 /lib/libc.so.6
7f3ae5e7b000-7f3ae5e80000 rw-p 0017b000 fe:01 2200 /lib/libc.so.6
7f3ae5ec0000-7f3ae5ec4000 r--p 00000000 00:00 0 [vvar]
7f3ae5ec4000-7f3ae5ec6000 r-xp 00000000 00:00 0 [vdso]
7ffd1c3e0000-7ffd1c401000 rw-p 00000000 00:00 0 [stack]
"""

# huge_pages=off: 298 MiB of shmem at 0x7f463add2000 (2 partial slots,
# 150 2 MiB spans, both edges partial), libraries directly above it in its
# top slot and top span, and an anonymous mapping lower in its bottom slot
# but not in its bottom span.
MAPS_4K = """\
55d0c8a00000-55d0c8b3a000 r--p 00000000 fe:01 1050 /usr/lib/pg/postgres
7f4610000000-7f4610021000 rw-p 00000000 00:00 0
7f463add2000-7f464d7d2000 rw-s 00000000 00:01 1387 /dev/zero (deleted)
7f464d7d2000-7f464d7d3000 rw-s 00000000 00:01 5 /SYSV0052e2c1 (deleted)
7f464d7d3000-7f464d7f9000 r--p 00000000 fe:01 2200 /lib/libc.so.6
7ffd1c3e0000-7ffd1c401000 rw-p 00000000 00:00 0 [stack]
"""


def neighbours_of(text):
    """The main mapping's neighbour fields in a maps text."""
    entries = maps.parse_maps(text)
    return maps.neighbours(maps.main_shared_mapping(entries), entries)


def maps_text(*ranges):
    """A maps file of (start, end, perms) lines; the largest rw-s one is
    the main mapping."""
    return "\n".join(
        "%x-%x %s 00000000 00:01 %d %s" % (
            a, b, perms, i, "/dev/zero (deleted)" if "s" in perms
            else "/usr/lib/x86_64-linux-gnu/libx.so")
        for i, (a, b, perms) in enumerate(ranges))


class Maps(unittest.TestCase):
    def test_parse(self):
        e = maps.parse_maps(MAPS)
        self.assertEqual(len(e), 5)
        self.assertEqual(e[1]["start"], 0x7f3a40000000)
        self.assertEqual(e[1]["path"], "/anon_hugepage (deleted)")
        self.assertEqual(e[3]["path"], "")

    def test_main_mapping_is_the_largest_shared_anonymous(self):
        m = maps.main_shared_mapping(maps.parse_maps(MAPS))
        self.assertEqual(m["start"], 0x7f3a40000000)
        self.assertEqual(m["end"] - m["start"], 2200 * MIB)

    def test_private_and_file_mappings_are_not_it(self):
        text = "\n".join(MAPS.splitlines()[i] for i in (0, 3, 4))
        self.assertIsNone(maps.main_shared_mapping(maps.parse_maps(text)))

    def test_dev_zero_shmem(self):
        line = ("7fce5df10000-7fce6f372000 rw-s 00000000 00:01 1387 "
                "/dev/zero (deleted)")
        m = maps.main_shared_mapping(maps.parse_maps(line))
        self.assertEqual(m["inode"], 1387)

    def test_kernel_page_size(self):
        self.assertEqual(maps.kernel_page_size(SMAPS, 0x7f3a40000000),
                         2 * MIB)
        self.assertEqual(maps.kernel_page_size(SMAPS, 0x7f3ad0e00000), 4096)
        self.assertIsNone(maps.kernel_page_size(SMAPS, 0x1000))

    def test_slots(self):
        self.assertEqual(maps.slots(0, GIB), (1, 1))
        self.assertEqual(maps.slots(2 * MIB, GIB), (2, 0))
        self.assertEqual(maps.slots(GIB - 2 * MIB, 3 * GIB), (4, 2))
        self.assertEqual(maps.slots(5 * GIB, 3 * GIB), (3, 3))
        self.assertEqual(maps.slots(0, 0), (0, 0))
        # 2 MiB ranges (PTE pages of a 4 KiB mapping)
        self.assertEqual(maps.slots(4096, 2 * MIB, 2 * MIB), (2, 0))

    def test_describe(self):
        m = maps.main_shared_mapping(maps.parse_maps(MAPS))
        d = maps.describe(m, 2 * MIB)
        # 0x7f3a40000000 is 1 GiB-aligned: 2200 MiB = 2 full slots + part
        self.assertEqual((d["slots"], d["full_slots"], d["partial_slots"]),
                         (3, 2, 1))
        self.assertEqual(d["slot_offset"], 0)
        self.assertEqual(d["size"], 2200 * MIB)

    def test_describe_with_the_maps_file_counts_neighbours(self):
        entries = maps.parse_maps(MAPS_2M)
        d = maps.describe(maps.main_shared_mapping(entries), 2 * MIB,
                          entries)
        self.assertEqual((d["slots"], d["partial_slots"]), (2, 2))
        self.assertEqual(d["neighbour_slots"], 1)
        self.assertEqual(d["neighbour_pte_spans"], 0)    # 2 MiB-aligned
        # without the maps file: the fields of older results only
        d = maps.describe(maps.main_shared_mapping(entries), 2 * MIB)
        self.assertNotIn("neighbour_slots", d)


class Neighbours(unittest.TestCase):
    """Slots and 2 MiB spans of the main mapping that hold another
    mapping, whose page-table page is there without the mapping."""
    BASE = 0x7f0000000000          # 1 GiB-aligned

    def count(self, *ranges):
        n = neighbours_of(maps_text(*ranges))
        return n["neighbour_slots"], n["neighbour_pte_spans"]

    def test_libraries_directly_above_a_2m_mapping(self):
        # the top slot holds the libraries, the bottom one nothing else
        self.assertEqual(neighbours_of(MAPS_2M), {
            "neighbour_slots": 1, "neighbour_pte_spans": 0})

    def test_libraries_above_and_memory_below_a_4k_mapping(self):
        # both slots hold something else; of the 2 MiB spans only the top
        # one (the anonymous mapping below is 685 MiB away)
        self.assertEqual(neighbours_of(MAPS_4K), {
            "neighbour_slots": 2, "neighbour_pte_spans": 1})

    def test_the_first_fixture_has_its_sysv_segment_in_its_top_slot(self):
        self.assertEqual(neighbours_of(MAPS), {
            "neighbour_slots": 1, "neighbour_pte_spans": 0})

    def test_nothing_near(self):
        b = self.BASE
        self.assertEqual(self.count(
            (b - 5 * GIB, b - 5 * GIB + MIB, "r--p"),
            (b + 2 * MIB, b + 900 * MIB, "rw-s"),
            (b + 3 * GIB, b + 3 * GIB + 4096, "r-xp")), (0, 0))
        # alone in the file
        self.assertEqual(self.count(
            (b + 2 * MIB + 4096, b + 900 * MIB, "rw-s")), (0, 0))

    def test_touching_at_a_slot_boundary_does_not_count(self):
        b = self.BASE
        # [b + 2 MiB, b + 1 GiB): one partial slot; mappings that end where
        # it begins and begin where it ends are in the slots either side
        self.assertEqual(self.count(
            (b - MIB, b, "r--p"),
            (b + 2 * MIB, b + GIB, "rw-s"),
            (b + GIB, b + GIB + 4096, "r--p")), (0, 0))
        # one page inside the slot, below the mapping: counts; the 2 MiB
        # span it is in is not one of the mapping's
        self.assertEqual(self.count(
            (b, b + 4096, "r--p"),
            (b + 2 * MIB, b + GIB, "rw-s")), (1, 0))

    def test_touching_at_a_span_boundary_does_not_count(self):
        b = self.BASE
        # a 4 KiB mapping from 4 KiB into a 2 MiB span: a mapping ending
        # at the span's start is in the slot, not in the span
        self.assertEqual(self.count(
            (b + 2 * MIB - 4096, b + 2 * MIB, "r--p"),
            (b + 2 * MIB + 4096, b + 100 * MIB, "rw-s")), (1, 0))
        # one ending inside the span counts in both
        self.assertEqual(self.count(
            (b + 2 * MIB - 4096, b + 2 * MIB + 4096, "r--p"),
            (b + 2 * MIB + 4096, b + 100 * MIB, "rw-s")), (1, 1))
        # directly above, at an unaligned end: top span and slot
        self.assertEqual(self.count(
            (b + 2 * MIB + 4096, b + 100 * MIB + 8192, "rw-s"),
            (b + 100 * MIB + 8192, b + 100 * MIB + 12288, "r--p")), (1, 1))

    def test_a_full_slot_never_counts(self):
        b = self.BASE
        # two full slots with neighbours at both ends: no partial slot
        self.assertEqual(self.count(
            (b - 4096, b, "r--p"),
            (b, b + 2 * GIB, "rw-s"),
            (b + 2 * GIB, b + 2 * GIB + 4096, "r--p")), (0, 0))
        # a full slot and a partial one above with libraries in it: only
        # the partial one
        self.assertEqual(self.count(
            (b - 4096, b, "r--p"),
            (b, b + GIB + 4 * MIB, "rw-s"),
            (b + GIB + 4 * MIB, b + GIB + 8 * MIB, "r-xp")), (1, 0))

    def test_a_small_mapping_counts_its_one_slot_and_span_once(self):
        b = self.BASE
        self.assertEqual(self.count(
            (b + 4096, b + 8192, "rw-s"),
            (b, b + 4096, "r--p"),
            (b + 8192, b + 12288, "r--p")), (1, 1))

    def test_inaccessible_guards_map_nothing(self):
        b = self.BASE
        self.assertEqual(self.count(
            (b + 2 * MIB, b + 100 * MIB + 4096, "rw-s"),
            (b + 100 * MIB + 4096, b + 100 * MIB + 8192, "---p")), (0, 0))


class Placement(unittest.TestCase):
    def test_filler_blocks_reach_the_next_slot(self):
        # pool starting 370 MiB + 5 MiB into a slot: the rest of the slot
        start = 0x7fe657200000
        off = 5 * MIB
        n = maps.filler_blocks(start, off)
        first = start + off
        self.assertLess((first + n * 8192) % GIB, 8192)
        self.assertEqual((first + n * 8192) // GIB, first // GIB + 1)
        # already on a boundary: nothing to fill
        self.assertEqual(maps.filler_blocks(4 * GIB - 4096, 4096), 0)
        # one block short of a boundary rounds up to whole blocks
        self.assertEqual(maps.filler_blocks(GIB - 8192 - 100, 0), 2)

    def test_buffer_slots_count_from_the_segments_first_slot(self):
        start = 3 * GIB + 1000 * MIB
        off = 8 * MIB
        # buffer 1 is at start + off: slot 0; the first buffer past the
        # boundary is slot 1
        past = (4 * GIB - (start + off)) // 8192 + 1
        got = maps.buffer_slots(start, off, [1, 2, past, past + 1, past + 200])
        self.assertEqual(got, {0: 2, 1: 3})
        self.assertEqual(maps.buffer_slots(start, off, []), {})

    def test_full_slot_range_counts_like_buffer_slots(self):
        # 4.16 GiB at 370 MiB into a slot: slots 0 and 4 partial
        self.assertEqual(maps.full_slot_range(0x7fe657200000,
                                              4462739456), range(1, 4))
        self.assertEqual(maps.full_slot_range(4 * GIB, 4 * GIB),
                         range(0, 4))
        self.assertEqual(maps.full_slot_range(GIB + MIB, GIB), range(1, 1))


if __name__ == "__main__":
    unittest.main()
