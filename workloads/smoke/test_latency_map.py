"""workloads/smoke/latency-map: the map file's checks, the points checked
by shmdb --check before any guest, the boots' order (runs --dry-run only:
nothing boots)."""

import os
import re
import subprocess
import tempfile
import unittest

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
RUNNER = os.path.join(HERE, "latency-map")
MAP = os.path.join(TOP, "inventories", "latency-map", "map.yml")
SHMDB = os.path.join(TOP, "workloads", "build", "shmdb")


def load():
    with open(MAP, encoding="utf-8") as f:
        return yaml.safe_load(f)


@unittest.skipUnless(os.access(SHMDB, os.X_OK), "needs make -C workloads")
class LatencyMapRunner(unittest.TestCase):
    def run_map(self, m, *args):
        with tempfile.TemporaryDirectory() as d:
            kern = os.path.join(d, "vmlinuz")
            open(kern, "w").close()
            path = os.path.join(d, "map.yml")
            with open(path, "w", encoding="utf-8") as f:
                yaml.safe_dump(m, f)
            return subprocess.run(
                [RUNNER, "--map", path, "--kernel", kern, "--dry-run",
                 "--out", os.path.join(d, "run")] + list(args),
                capture_output=True, text=True, check=False)

    def refused(self, m, msg, *args):
        r = self.run_map(m, *args)
        self.assertEqual(r.returncode, 2, r.stderr + r.stdout)
        self.assertIn(msg, r.stderr)
        self.assertNotIn("boot", r.stdout)

    def test_the_committed_map_plans_rounds_with_modes_alternating(self):
        r = self.run_map(load())
        self.assertEqual(r.returncode, 0, r.stderr)
        guests = re.findall(r"--name (\S+)", r.stdout)
        self.assertEqual(guests, ["immap-r1", "vma-r1", "vma-r2",
                                  "immap-r2", "immap-r3", "vma-r3"])
        names = re.findall(r"^  (map-\S+)", r.stdout, re.M)
        self.assertEqual(len(names), 6 * 16)
        # odd rounds ascend, even rounds descend
        self.assertEqual(names[0], "map-n100-l2M-r1")
        self.assertEqual(names[32], "map-n10000-l1G-r2")
        self.assertIn("hugetlb_fault_lock=vma", r.stdout)

    def test_duration_outlasts_the_punch(self):
        r = self.run_map(load(), "--points", "10000:1G,100:2M", "--rounds",
                         "1", "--modes", "i_mmap")
        self.assertEqual(r.returncode, 0, r.stderr)
        durs = dict(re.findall(r"^  (map-\S+) .*--duration (\d+)$",
                               r.stdout, re.M))
        # 4 s + 10,000 x 512 x 5 us, rounded up
        self.assertEqual(durs, {"map-n100-l2M-r1": "5",
                                "map-n10000-l1G-r1": "30"})

    def test_bad_maps_are_refused_before_any_guest(self):
        m = load()
        m["mapper"] = [1]
        self.refused(m, "unknown key mapper")
        m = load()
        del m["rounds"]
        self.refused(m, "missing key rounds")
        m = load()
        m["ranges"] = ["2M", "3X"]
        self.refused(m, "range '3X' is not a size")
        m = load()
        m["modes"] = ["immap"]
        self.refused(m, "unknown mode 'immap'")
        m = load()
        m["rounds"] = 0
        self.refused(m, "rounds: 0 is not a positive integer")
        m = load()
        m["guest"]["mem_mib"] = "4G"
        self.refused(m, "mem_mib: '4G' is not a positive integer")

    def test_a_point_the_guest_cannot_hold_is_named(self):
        m = load()
        m["mappers"] = [100, 30000]
        self.refused(m, "30000 mappers, 2M:")
        m = load()
        m["ranges"] = ["2G"]
        self.refused(m, "--disrupt-len 2G")

    def test_points_option(self):
        self.refused(load(), "--points: '10:3M:1'", "--points", "10:3M:1")
        self.refused(load(), "one or the other", "--points", "10:2M",
                     "--predict-from", "/nonexistent")


if __name__ == "__main__":
    unittest.main()
