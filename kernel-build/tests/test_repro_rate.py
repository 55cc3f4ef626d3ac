"""Unit tests of tests/repro-rate: classify() of one boot's directory and
summarize() of a run's boots (no guest is booted)."""
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import script  # noqa: E402

rr = script.load("repro-rate")


def guest_dir(root, status="ok", rc=0, out="", console="", start=2.0):
    """A guest directory as workloads/smoke/boot writes it."""
    d = tempfile.mkdtemp(dir=root)
    os.makedirs(os.path.join(d, "results"))
    doc = {"status": status,
           "timings": {"boot_to_userspace_s": start},
           "experiments": [] if rc is None else
           [{"name": "repro", "exit_code": rc}]}
    with open(os.path.join(d, "guest.json"), "w") as f:
        json.dump(doc, f)
    with open(os.path.join(d, "results", "repro.out"), "w") as f:
        f.write(out)
    with open(os.path.join(d, "console.log"), "w") as f:
        f.write(console)
    return d


class Classify(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def test_clean(self):
        d = guest_dir(self.root, out="ok 1 race\nok 2 pool\n",
                      console="[    1.000000] Linux version 6.1\n")
        self.assertEqual(rr.classify(d), ("clean", None, False, ""))

    def test_reproducer_failure_with_its_time(self):
        d = guest_dir(self.root, rc=1,
                      out="# failure detected after 12.9 s\n"
                          "not ok 3 huge pages returned\n",
                      console="[   20.100000] BUG: non-zero pgtables_bytes "
                              "on freeing mm: -4096\n")
        outcome, secs, approx, ev = rr.classify(d)
        self.assertEqual((outcome, secs, approx), ("detected", 12.9, False))
        self.assertIn("huge pages returned", ev)
        self.assertIn("non-zero pgtables_bytes", ev)

    def test_panic_time_from_the_console(self):
        # No reproducer output: the time is the first finding's kernel
        # timestamp minus the start of user space, marked approximate.
        d = guest_dir(self.root, status="panic", rc=None,
                      console="[    2.500000] Run /init as init process\n"
                              "[   55.100000] BUG: unable to handle page "
                              "fault for address: 0000\n", start=2.5)
        outcome, secs, approx, ev = rr.classify(d)
        self.assertEqual((outcome, approx), ("detected", True))
        self.assertAlmostEqual(secs, 52.6)
        self.assertTrue(ev.startswith("panic: "))

    def test_console_finding_alone_is_detected(self):
        # The reproducer passed but the kernel logged an RCU stall.
        d = guest_dir(self.root, out="ok 1 race\n",
                      console="[   60.000000] rcu: INFO: rcu_preempt "
                              "detected stalls on CPUs/tasks:\n")
        self.assertEqual(rr.classify(d)[0], "detected")

    def test_timeout_is_detected(self):
        d = guest_dir(self.root, status="timeout", rc=None)
        self.assertEqual(rr.classify(d)[:2], ("detected", None))

    def test_skip_and_error(self):
        d = guest_dir(self.root, rc=4, out="# SKIP need 80 huge pages\n")
        self.assertEqual(rr.classify(d),
                         ("skip", None, False, "# SKIP need 80 huge pages"))
        d = guest_dir(self.root, status="error", rc=2)
        self.assertEqual(rr.classify(d)[0], "error")
        self.assertEqual(rr.classify(os.path.join(self.root, "none"))[0],
                         "error")


class Summarize(unittest.TestCase):
    @staticmethod
    def rows(name, outcomes, seconds=()):
        secs = list(seconds)
        return [{"kernel": name, "outcome": o,
                 "seconds": secs.pop(0) if o == "detected" and secs
                 else None} for o in outcomes]

    def test_rates_and_interval(self):
        rows = self.rows("stock", ["detected"] * 9 + ["clean"],
                         [2.1, 2.9, 9.3, 12.9, 29.1, 43.7, 52.6, 75.3, 82.1])
        rows += self.rows("patched", ["clean"] * 10)
        stock, patched = rr.summarize([("stock", "a"), ("patched", "b")],
                                      rows)
        self.assertEqual((stock["boots"], stock["detected"],
                          stock["clean"]), (10, 9, 1))
        self.assertEqual(stock["detection_rate"], 0.9)
        self.assertEqual(stock["detection_rate_ci95"], [0.555, 0.997])
        self.assertEqual(stock["mean_s_to_detection"], 34.4)
        self.assertEqual(patched["detection_rate"], 0.0)
        self.assertEqual(patched["detection_rate_ci95"], [0.0, 0.308])
        self.assertIsNone(patched["mean_s_to_detection"])

    def test_skips_and_errors_are_not_in_the_rate(self):
        rows = self.rows("k", ["detected", "skip", "error", "clean"], [5.0])
        (t,) = rr.summarize([("k", "img")], rows)
        self.assertEqual((t["boots"], t["skip"], t["error"]), (4, 1, 1))
        self.assertEqual(t["detection_rate"], 0.5)
        (t,) = rr.summarize([("k", "img")], self.rows("k", ["skip"]))
        self.assertIsNone(t["detection_rate"])
        self.assertIsNone(t["detection_rate_ci95"])


class Resolve(unittest.TestCase):
    """Debian's images are fetched by their metapackage (a stand-in
    fetch-kernel prints its argument into the image's name)."""

    def test_debian_kernels_by_metapackage(self):
        with tempfile.TemporaryDirectory() as tmp:
            fetch = os.path.join(tmp, "fetch-kernel")
            with open(fetch, "w") as f:
                f.write('#!/bin/sh\nimg="%s/vmlinuz-$1"\n: >"$img"\n'
                        'echo "$img deb pkg ver"\n' % tmp)
            os.chmod(fetch, 0o755)
            saved, rr.FETCH = rr.FETCH, fetch
            try:
                self.assertEqual(
                    rr.resolve("debian-6.12"),
                    ("debian-6.12",
                     os.path.join(tmp, "vmlinuz-linux-image-6.12-amd64")))
                self.assertEqual(
                    rr.resolve("debian"),
                    ("debian", os.path.join(tmp,
                                            "vmlinuz-linux-image-amd64")))
            finally:
                rr.FETCH = saved


if __name__ == "__main__":
    unittest.main()
