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


if __name__ == "__main__":
    unittest.main()
