"""model.py: page tables per backend for PostgreSQL's mapping."""
import unittest

from pglab import model
from pglab.maps import GIB, MIB

KIB = 1024


class Model(unittest.TestCase):
    def test_2m_unaligned_pays_partial_slots(self):
        # 3 GiB at 1 GiB + 512 MiB: slots 1..4, full 2 and 3
        m = model.per_backend(2 * MIB, GIB + 512 * MIB, 3 * GIB, 100)
        self.assertEqual((m["slots"], m["full_slots"]), (4, 2))
        self.assertEqual(m["pmd_pages_per_backend"], 2)
        self.assertEqual(m["per_backend_bytes"], 8 * KIB)
        self.assertEqual(m["shared_pmd_pages"], 2)
        self.assertEqual(m["expected_bytes"], 100 * 8 * KIB + 2 * 4 * KIB)
        self.assertEqual(m["expected_pmd_shares"], 2 * 99)
        self.assertTrue(m["sharing"])
        # aligned, the same size shares everything
        self.assertEqual(m["aligned_per_backend_bytes"], 0)

    def test_2m_mapping_without_a_full_slot(self):
        m = model.per_backend(2 * MIB, 2 * MIB, GIB, 500)
        self.assertEqual(m["pmd_pages_per_backend"], 2)
        self.assertFalse(m["sharing"])
        self.assertEqual(m["expected_pmd_shares"], 0)

    def test_2m_single_backend_pays_every_slot(self):
        m = model.per_backend(2 * MIB, 0, 2 * GIB, 1)
        self.assertEqual(m["per_backend_bytes"], 8 * KIB)
        self.assertEqual(m["shared_pmd_pages"], 0)

    def test_4k_pte_pages_count_2m_ranges_spanned(self):
        # 276 MiB at a 64 KiB-aligned address: 139 2 MiB ranges, 1 slot
        start = 0x7fce5df10000
        m = model.per_backend(4 * KIB, start, 289808384, 20)
        self.assertEqual(m["pte_pages_per_backend"], 139)
        self.assertEqual(m["pmd_pages_per_backend"], 1)
        self.assertEqual(m["per_backend_bytes"], 140 * 4 * KIB)

    def test_1g_costs_nothing(self):
        m = model.per_backend(GIB, 0, 3 * GIB, 1000)
        self.assertEqual(m["per_backend_bytes"], 0)
        self.assertEqual(m["expected_bytes"], 0)

    def test_marginal_leaves_out_slots_shared_with_other_mappings(self):
        # the guest run's 980 MiB at 0x7f3aa8600000: 2 partial slots, the
        # top one holding the postmaster's libraries
        m = model.per_backend(2 * MIB, 0x7f3aa8600000, 980 * MIB, 100, 1, 0)
        self.assertEqual(m["per_backend_bytes"], 8 * KIB)
        self.assertEqual(m["marginal_per_backend_bytes"], 4 * KIB)
        # nothing near: the whole model
        m = model.per_backend(2 * MIB, 0x7f3aa8600000, 980 * MIB, 100)
        self.assertEqual(m["marginal_per_backend_bytes"], 8 * KIB)
        # 2 MiB pages have no PTE page: edge spans do not matter
        m = model.per_backend(2 * MIB, 0x7f3aa8600000, 980 * MIB, 100, 1, 2)
        self.assertEqual(m["marginal_per_backend_bytes"], 4 * KIB)

    def test_marginal_4k_leaves_out_slots_and_spans(self):
        # 298 MiB at 0x7f463add2000: 2 slots + 150 spans; libraries in the
        # top slot and span, something else in the bottom slot
        m = model.per_backend(4 * KIB, 0x7f463add2000, 298 * MIB, 20, 2, 1)
        self.assertEqual(m["per_backend_bytes"], 152 * 4 * KIB)
        self.assertEqual(m["marginal_per_backend_bytes"], 149 * 4 * KIB)

    def test_marginal_1g_and_floor(self):
        m = model.per_backend(GIB, 0, 3 * GIB, 10, 1, 1)
        self.assertEqual(m["marginal_per_backend_bytes"], 0)
        # never below nothing (counts that do not fit the mapping)
        m = model.per_backend(2 * MIB, 2 * MIB, 2 * MIB, 10, 3, 0)
        self.assertEqual(m["per_backend_bytes"], 4 * KIB)
        self.assertEqual(m["marginal_per_backend_bytes"], 0)

    def test_unknown_page_size(self):
        with self.assertRaises(ValueError):
            model.per_backend(64 * KIB, 0, GIB, 2)


if __name__ == "__main__":
    unittest.main()
