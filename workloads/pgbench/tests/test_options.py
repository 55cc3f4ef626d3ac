"""options.py: the run's options and its --check against a guest shape."""
import unittest

from pglab import options
from pglab.maps import GIB, MIB

SHAPE = "mem_mib=4608,hugepages_2m=1100,hugepages_1g=1,vcpus=2"


def check(argv, shape=SHAPE):
    a = options.parse(["--check", "--guest-shape", shape] + argv)
    options.fit(a, options.needs(a), options.parse_shape(shape))
    return options.needs(a)


class Parse(unittest.TestCase):
    def test_defaults(self):
        a = options.parse(["--json", "x", "--shared-buffers", "2G",
                           "--clients", "100,500"])
        self.assertEqual(a.shared_buffers, 2 * GIB)
        self.assertEqual(a.max_connections, 502)
        self.assertEqual(a.churn_duration, a.duration)
        self.assertEqual(a.modes, ["select-only", "read-write"])
        a = options.parse(["--json", "x", "--shared-buffers", "2G",
                           "--modes", "simple-update"])
        self.assertEqual(options.MODE_ARGS[a.modes[0]], ["-N"])

    def test_refusals(self):
        for argv, said in (
                (["--clients", "500,100"], "ascending"),
                (["--clients", "100", "--max-connections", "100"],
                 "at least 102"),
                (["--huge-pages", "off", "--huge-page-size", "1G"],
                 "needs --huge-pages on"),
                (["--modes", "select-only,tpcc"], "bad value"),
                (["--churn-duration", "0"], "churn"),
                (["--shared-buffers", "3Q"], "not a size")):
            base = ["--json", "x"]
            if "--shared-buffers" not in argv:
                base += ["--shared-buffers", "1G"]
            with self.assertRaises(options.BadInput) as cm:
                options.parse(base + argv)
            self.assertIn(said, str(cm.exception))

    def test_json_required(self):
        with self.assertRaises(options.BadInput):
            options.parse(["--shared-buffers", "1G"])

    def test_empty_json_refused(self):
        # --json '' (the lab's json_opt with an empty path), also by
        # --check: the validate stage must refuse what a run refuses
        for argv in (["--json", ""], ["--json="], ["--check", "--json", ""]):
            with self.assertRaises(options.BadInput) as cm:
                options.parse(argv + ["--shared-buffers", "1G"])
            self.assertEqual(str(cm.exception), "--json: empty file name")


class Check(unittest.TestCase):
    def test_shmem_estimate_covers_postgresql_15(self):
        # postgres -C shared_memory_size of 15.18 (MB):
        # (shared_buffers MiB, max_connections, measured)
        for sb, mc, real in ((128, 100, 143), (128, 1010, 188),
                             (1024, 100, 1074), (1024, 1010, 1119),
                             (3072, 100, 3165), (3072, 1010, 3210)):
            est = options.shmem_estimate(sb * MIB, mc)
            self.assertGreaterEqual(est, real * MIB)
            self.assertLess(est, (real + 64) * MIB)

    def test_2m_pages(self):
        n = check(["--shared-buffers", "2000M", "--clients", "100,200"])
        self.assertEqual(n["hugepages_1g"], 0)
        self.assertGreater(n["hugepages_2m"], 1000)
        self.assertLessEqual(n["hugepages_2m"], 1100)

    def test_2m_pool_too_small(self):
        with self.assertRaises(options.BadInput) as cm:
            check(["--shared-buffers", "3G", "--clients", "100"])
        self.assertIn("free 2M huge pages", str(cm.exception))
        self.assertIn("the guest shape has 1100", str(cm.exception))

    def test_1g_pages(self):
        n = check(["--shared-buffers", "900M", "--huge-page-size", "1G",
                   "--clients", "100"])
        self.assertEqual(n["hugepages_1g"], 1)
        with self.assertRaises(options.BadInput):
            check(["--shared-buffers", "1G", "--huge-page-size", "1G",
                   "--clients", "100"])

    def test_memory_for_backends(self):
        shape = "mem_mib=4608,hugepages_2m=1100,hugepages_1g=1,vcpus=2"
        # 4608 - 2200 - 1024 - 256 = 1128 MiB for processes
        check(["--shared-buffers", "1G", "--clients", "300"], shape)
        with self.assertRaises(options.BadInput) as cm:
            check(["--shared-buffers", "1G", "--clients", "1000"], shape)
        self.assertIn("1128 MiB available", str(cm.exception))

    def test_off_counts_segment_and_page_tables(self):
        n = check(["--huge-pages", "off", "--shared-buffers", "256M",
                   "--clients", "100", "--backend-kib", "1024"])
        # 100 MiB of backends + the ~290 MiB segment + 100 x ~580 KiB
        self.assertGreater(n["mem_mib"], 100 + 256 + 50)
        self.assertEqual(n["hugepages_2m"], 0)

    def test_shape_errors(self):
        for shape in ("mem_mib=4096", "mem_mib=x,hugepages_2m=0,"
                      "hugepages_1g=0,vcpus=2",
                      "mem_mib=1024,hugepages_2m=600,hugepages_1g=0,vcpus=2"):
            with self.assertRaises(options.BadInput):
                options.parse_shape(shape)


if __name__ == "__main__":
    unittest.main()
