"""Unit tests of tests/debian-matrix: the archive's image packages, the
savings verdict, a kernel's row and the table; the golden test renders
the committed run (fixtures/debian-matrix) again from its boots."""
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import script  # noqa: E402

HERE = script.HERE
dm = script.load("debian-matrix")
sys.path.insert(0, os.path.join(dm.TOP, "reports"))
from hugelab_report import stats  # noqa: E402

FIXTURE = os.path.join(HERE, "fixtures", "debian-matrix")

SEARCH = """\
linux-image-6.1.0-57-amd64 - Linux 6.1 for 64-bit PCs (signed)
linux-image-6.1.0-9-amd64 - Linux 6.1 for 64-bit PCs (signed)
linux-image-6.1.0-57-cloud-amd64 - Linux 6.1 for x86-64 cloud (signed)
linux-image-6.1.0-57-amd64-dbg - Debug symbols
linux-image-6.1.0-57-rt-amd64 - Linux 6.1 for 64-bit PCs (signed), PREEMPT_RT
linux-image-6.12-amd64 - Linux for 64-bit PCs (meta-package)
linux-image-6.12.118+deb12-amd64 - Linux 6.12 for 64-bit PCs (signed)
linux-image-6.12.100+deb12-amd64 - Linux 6.12 for 64-bit PCs (signed)
linux-image-6.12.118+deb12-amd64-unsigned - Linux 6.12 for 64-bit PCs
linux-image-amd64 - Linux for 64-bit PCs (meta-package)
"""


class Images(unittest.TestCase):
    def test_lines_and_order(self):
        self.assertEqual(dm.images(SEARCH, ["6.1", "6.12"]), [
            "linux-image-6.1.0-9-amd64", "linux-image-6.1.0-57-amd64",
            "linux-image-6.12.100+deb12-amd64",
            "linux-image-6.12.118+deb12-amd64"])

    def test_one_line_and_match(self):
        self.assertEqual(dm.images(SEARCH, ["6.12"], match=r"118"),
                         ["linux-image-6.12.118+deb12-amd64"])
        self.assertEqual(dm.images(SEARCH, ["6.1"], match="nothing"), [])

    def test_names(self):
        self.assertEqual(dm.upstream("6.1.192-3"), "6.1.192")
        self.assertEqual(dm.upstream("6.12.118-1~deb12u1"), "6.12.118")
        self.assertEqual(dm.guest_name("linux-image-6.12.118+deb12-amd64"),
                         "6.12.118-deb12")


CHANGELOG = """\
linux (6.1.192-3) bookworm-security; urgency=high

  * New upstream stable update:
    - mm/hugetlb: fix assertion splat in hugetlb_split()

linux (6.1.170-1) bookworm-security; urgency=high

    - mm/hugetlb: unshare page tables during VMA split, not before
      (CVE-2025-38084)

linux (6.1.147-1) bookworm-security; urgency=high

    - mm/hugetlb: unshare page tables during VMA split, not before
      (CVE-2025-38084)
"""


class Changelog(unittest.TestCase):
    def test_oldest_version_naming_each_change(self):
        self.assertEqual(dm.changelog_marks(CHANGELOG),
                         {"split_unshare": "6.1.147-1",
                          "split_fix": "6.1.192-3"})
        self.assertEqual(dm.changelog_marks(CHANGELOG.split("\n\n")[0]),
                         {"split_unshare": None, "split_fix": None})

    def test_words(self):
        marks = {"split_unshare": "6.1.147-1", "split_fix": None}
        self.assertEqual(dm.changelog_words(marks, "6.1.192"),
                         "since 6.1.147-1 / no")
        self.assertEqual(dm.changelog_words(marks, "6.12.118"),
                         "since 6.1.147-1 / not needed (6.1 only)")
        self.assertEqual(dm.changelog_words(None, "6.1.192"), "-")


def results(root, aligned, unshared, model_al=4096.0, model_un=8192.0,
            sharing=True):
    d = tempfile.mkdtemp(dir=root)
    os.makedirs(os.path.join(d, "results"))
    for name, pt, model in (("aligned", aligned, model_al),
                            ("unshared", unshared, model_un)):
        if pt is None:
            continue
        with open(os.path.join(d, "results", name + ".json"), "w") as f:
            json.dump({"config": {"sessions": 1000},
                       "pagetables_per_session": pt,
                       "model": {"per_session_bytes": model,
                                 "sharing": sharing}}, f)
    return d


class Savings(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def verdict(self, *a, **kw):
        return dm.savings_verdict(dm.savings(results(self.tmp.name, *a,
                                                     **kw)))

    def test_within_and_outside_five_percent(self):
        self.assertEqual(self.verdict(100.0, 4196.0), "ok")       # 4096
        self.assertEqual(self.verdict(100.0, 4496.0), "off")      # +7.3 %
        self.assertEqual(self.verdict(100.0, 3980.0), "off")      # -5.2 %

    def test_missing(self):
        self.assertEqual(self.verdict(100.0, None), "missing")
        self.assertEqual(self.verdict(100.0, 4196.0, sharing=False),
                         "missing")
        self.assertEqual(self.verdict(100.0, 4196.0, model_al=8192.0),
                         "missing")                               # model 0


class BootFailure(unittest.TestCase):
    def test_reached_user_space_or_not(self):
        with tempfile.TemporaryDirectory() as d:
            self.assertEqual(dm.boot_failure(d, dm.re.compile("Oops")),
                             {"status": "no guest.json", "finding": None})
            doc = {"status": "panic", "timings": {"boot_to_userspace_s":
                                                  None},
                   "kernel_log": {"excerpt": ["[ 1.8] sched_clock: x",
                                              "[ 1.8] Oops: int3: 0000"]}}
            with open(os.path.join(d, "guest.json"), "w") as f:
                json.dump(doc, f)
            self.assertEqual(dm.boot_failure(d, dm.re.compile("Oops")),
                             {"status": "panic",
                              "finding": "[ 1.8] Oops: int3: 0000"})
            doc["timings"]["boot_to_userspace_s"] = 2.0
            with open(os.path.join(d, "guest.json"), "w") as f:
                json.dump(doc, f)
            self.assertIsNone(dm.boot_failure(d, dm.re.compile("Oops")))


class Rows(unittest.TestCase):
    def boots(self, *outcomes):
        return [{"outcome": o} for o in outcomes]

    def test_counts_interval_and_words(self):
        r = dm.row({"package": "p", "savings": None, "upstream": "6.1.170",
                    "changelog": {"split_unshare": "6.1.147-1",
                                  "split_fix": None}},
                   self.boots("detected", "clean", "clean", "error"), stats)
        self.assertEqual((r["boots"], r["detected"], r["clean"], r["error"]),
                         (4, 1, 2, 1))
        self.assertEqual(r["detection_rate_ci95"], [0.008, 0.906])
        self.assertEqual(dm.affected(r), "affected (reproduced)")
        r = dm.row({"package": "p"}, self.boots("clean", "clean", "clean"),
                   stats)
        self.assertEqual(dm.affected(r), "not detected (rate at most 0.71)")
        r = dm.row({"package": "p"}, self.boots("error"), stats)
        self.assertEqual(dm.affected(r), "no outcome")

    def test_changelog_speaks_where_the_reproducer_did_not_hit(self):
        bug = {"split_unshare": "6.1.147-1", "split_fix": None}
        clean = self.boots("clean", "clean")
        r = dm.row({"package": "p", "upstream": "6.1.192",
                    "changelog": bug}, clean, stats)
        self.assertEqual(dm.affected(r), "affected by its changelog "
                         "(backport without the fix), not reproduced in "
                         "2 boots")
        fixed = dict(bug, split_fix="6.1.200-1")
        r = dm.row({"package": "p", "upstream": "6.1.200",
                    "changelog": fixed}, clean, stats)
        self.assertEqual(dm.affected(r), "not detected (rate at most 0.84)")
        r = dm.row({"package": "p", "upstream": "6.12.118",
                    "changelog": bug}, clean, stats)
        self.assertEqual(dm.affected(r), "not detected (rate at most 0.84)")
        # A detection where the code has no such race: a finding.
        r = dm.row({"package": "p", "upstream": "6.12.100",
                    "changelog": bug}, self.boots("clean", "detected"),
                   stats)
        self.assertEqual(dm.affected(r), "a failure in 1 of 2 boots, not "
                         "the 6.1 split race by its code: to investigate")


class Render(unittest.TestCase):
    def test_row_words(self):
        r = dm.row({"package": "linux-image-6.12.1+deb12-amd64",
                    "version": "6.12.1-1", "upstream": "6.12.1",
                    "changelog": {"split_unshare": "6.12.1-1",
                                  "split_fix": None},
                    "savings": {"sessions": 10, "measured": 4000.0,
                                "model": 4096.0, "sharing": True},
                    "savings_boot_failures": [
                        {"status": "panic", "guest": "g",
                         "finding": "[ 1.8] Oops: int3: 0000 [#1]"}]},
                   [{"outcome": "clean"}], stats)
        m = {"config": {"seconds": 30, "sessions": 10}, "kernels": [r],
             "boots": [{"kernel": r["package"], "outcome": "clean",
                        "discarded": [{"status": "fail", "reason":
                                       "emulator fault", "finding":
                                       "[ 2.0] WARNING: x"}]}]}
        line = dm.render(m).splitlines()[2]
        self.assertEqual(line, (
            "| linux-image-6.12.1+deb12-amd64 | 6.12.1-1 | 6.12.1 | 0 of 1 "
            "(1 booted again: emulator fault, WARNING: x) | 0.00-0.97 | "
            "not detected (rate at most 0.97) | 4000 / 4096 B "
            "(-2.3 %, ok); a boot failed before user space (panic: Oops: "
            "int3: 0000 [#1]) | since 6.12.1-1 / not needed (6.1 only) |"))


class Golden(unittest.TestCase):
    """The committed run: every row again from its boots, and its table."""

    def test_rows_and_table(self):
        with open(os.path.join(FIXTURE, "matrix.json")) as f:
            m = json.load(f)
        self.assertTrue(m["complete"])
        for r in m["kernels"]:
            mine = [b for b in m["boots"] if b["kernel"] == r["package"]]
            keep = {k: r[k] for k in ("package", "version", "upstream",
                                      "vmlinuz", "deb", "changelog",
                                      "savings", "savings_boot_failures")
                    if k in r}
            self.assertEqual(dm.row(keep, mine, stats), r, r["package"])
        with open(os.path.join(FIXTURE, "matrix.md")) as f:
            self.assertEqual(dm.render(m), f.read())


if __name__ == "__main__":
    unittest.main()
