"""touch.py: one read per stride faults a whole mapping."""
import mmap
import unittest

from pglab import touch
from pglab.maps import MIB


class Touch(unittest.TestCase):
    def test_addresses_cover_every_range(self):
        a = touch.addresses(3 * MIB, 5 * MIB, 2 * MIB)
        # ranges [2,4) [4,6) [6,8) MiB: the first starts inside the mapping
        self.assertEqual(a, [3 * MIB, 4 * MIB, 6 * MIB])
        self.assertEqual(touch.addresses(0, 4 * MIB, 2 * MIB),
                         [0, 2 * MIB])

    def test_touch_reads_own_memory(self):
        import os
        m = mmap.mmap(-1, 8 * MIB)
        m[0] = 1
        import ctypes
        addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
        n = touch.touch(os.getpid(), addr, 8 * MIB, 2 * MIB)
        self.assertEqual(n, len(touch.addresses(addr, 8 * MIB, 2 * MIB)))
        del addr
        m.close()

    def test_touch_of_a_missing_process(self):
        with self.assertRaises(OSError):
            touch.touch(2 ** 22 + 7, 0x10000, 4096, 4096)


if __name__ == "__main__":
    unittest.main()
