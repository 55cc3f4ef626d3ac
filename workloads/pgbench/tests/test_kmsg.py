"""kmsg.py: /dev/kmsg read from a cursor, records lost to overwrite are a
finding; cli.finish() fails the run on them (issue 29)."""
import unittest

from pglab import cli, kmsg


class FakeRing:
    """The kernel's printk ring as /dev/kmsg shows it: numbered records,
    the oldest dropped beyond `size`; each open() starts at the end."""

    def __init__(self, size):
        self.size = size
        self.records = []
        self.next_seq = 0

    def log(self, text):
        self.records.append((self.next_seq, text))
        self.next_seq += 1
        del self.records[:-self.size]

    def open(self):
        return FakeDev(self)


class FakeDev:
    def __init__(self, ring):
        self.ring = ring
        self.cursor = ring.next_seq     # lseek(SEEK_END)

    def read(self):
        recs = self.ring.records
        first = recs[0][0] if recs else self.ring.next_seq
        if self.cursor < first:
            self.cursor = first
            raise BrokenPipeError(32, "Broken pipe")
        if self.cursor >= self.ring.next_seq:
            return None
        seq, text = recs[self.cursor - first]
        self.cursor += 1
        return ("6,%d,%d,-;%s\n SUBSYSTEM=mm\n" % (seq, seq * 1000, text)
                ).encode()

    def close(self):
        pass


def full_ring(n=2000):
    ring = FakeRing(n)
    for i in range(n):
        ring.log("line %d" % i)
    return ring


BAD = "BUG: Bad page state in process postgres  pfn:1a2%02d"


class Kmsg(unittest.TestCase):
    def test_wrapped_ring_three_new_lines(self):
        """The issue's case: a full 2,000-line log, three new "BUG: Bad
        page" lines replace the three oldest; a line count sees none."""
        ring = full_ring()
        scan = kmsg.Scan(ring.open)
        for i in range(3):
            ring.log(BAD % i)
        doc = {"failures": [], "status": "ok"}
        cli.finish(doc, {}, scan)
        self.assertEqual(doc["kernel_log"]["warnings"], 3)
        self.assertEqual(doc["kernel_log"]["lost"], 0)
        self.assertEqual(doc["kernel_log"]["excerpt"],
                         [BAD % i for i in range(3)])
        self.assertEqual(doc["status"], "fail")

    def test_quiet_log_is_ok(self):
        ring = full_ring()
        scan = kmsg.Scan(ring.open)
        ring.log("hugetlbfs: nothing to see")
        doc = {"failures": [], "status": "ok"}
        cli.finish(doc, {}, scan)
        self.assertEqual(doc["kernel_log"],
                         {"available": True, "warnings": 0, "lost": 0,
                          "excerpt": [], "truncated": False})
        self.assertEqual(doc["status"], "ok")

    def test_overwritten_before_read_counts_lost(self):
        ring = full_ring()
        scan = kmsg.Scan(ring.open)
        for i in range(10):
            ring.log("early %d" % i)
        scan.poll()
        self.assertEqual((scan.warnings, scan.lost), (0, 0))
        ring.log(BAD % 0)               # overwritten before the next poll
        for i in range(2100):
            ring.log("flood %d" % i)
        doc = {"failures": [], "status": "ok"}
        cli.finish(doc, {}, scan)
        log = doc["kernel_log"]
        self.assertEqual(log["lost"], 101)
        self.assertEqual(log["warnings"], 1)
        self.assertEqual(log["excerpt"], [
            "kmsg records lost: 101 overwritten before they were read"])
        self.assertEqual(doc["status"], "fail")

    def test_overwritten_before_first_read(self):
        ring = full_ring()
        scan = kmsg.Scan(ring.open)
        for i in range(2005):
            ring.log("flood %d" % i)
        scan.poll()
        self.assertEqual((scan.warnings, scan.lost), (1, 1))
        self.assertEqual(scan.excerpt, [
            "kmsg records lost: at least 1 overwritten before they were "
            "read"])

    def test_unreadable(self):
        def refuse():
            raise PermissionError(1, "Operation not permitted")
        doc = {"failures": [], "status": "ok"}
        cli.finish(doc, {}, kmsg.Scan(refuse))
        self.assertFalse(doc["kernel_log"]["available"])
        self.assertIn("the kernel log could not be read (/dev/kmsg)",
                      doc["failures"])
        self.assertEqual(doc["status"], "fail")

    def test_real_device_if_readable(self):
        try:
            scan = kmsg.Scan()
        except OSError:
            self.skipTest("no /dev/kmsg")
        if not scan.available:
            self.skipTest("/dev/kmsg not readable")
        scan.poll()
        scan.close()
        self.assertEqual(scan.lost, 0)


if __name__ == "__main__":
    unittest.main()
