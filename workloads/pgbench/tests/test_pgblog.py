"""pgblog.py: pgbench's summary and per-transaction log."""
import unittest

from pglab import pgblog

SUMMARY = """\
transaction type: <builtin: select only>
scaling factor: 2
query mode: simple
number of clients: 50
number of threads: 2
maximum number of tries: 1
duration: 5 s
number of transactions actually processed: 43474
number of failed transactions: 0 (0.000%)
latency average = 4.630 ms
initial connection time = 1099.528 ms
tps = 10799.220302 (without initial connection time)
"""
CHURN = """\
number of transactions actually processed: 156
number of failed transactions: 2 (1.266%)
latency average = 1642.175 ms
average connection time = 64.735 ms
tps = 30.447431 (including reconnection times)
"""
LOG = """\
0 1 1200 0 1764923409 100000
0 2 800 0 1764923409 300000
1 1 4000 0 1764923410 0
1 2 failed 0 1764923411 500000
2 1 skipped 0 1764923411 600000 12
"""


class Summary(unittest.TestCase):
    def test_plain(self):
        s = pgblog.parse_summary(SUMMARY)
        self.assertEqual(s["transactions"], 43474)
        self.assertEqual(s["tps"], 10799.220302)
        self.assertEqual(s["initial_connection_ms"], 1099.528)
        self.assertEqual(s["clients"], 50)
        self.assertEqual(s["tps_basis"], "without initial connection time")
        self.assertNotIn("average_connection_ms", s)

    def test_connect(self):
        s = pgblog.parse_summary(CHURN)
        self.assertEqual(s["failed"], 2)
        self.assertEqual(s["average_connection_ms"], 64.735)
        self.assertEqual(s["tps_basis"], "including reconnection times")

    def test_nothing(self):
        self.assertEqual(pgblog.parse_summary("pgbench: error: x"), {})


class Log(unittest.TestCase):
    def test_lines(self):
        lat, failed, skipped, first, last = pgblog.parse_log_lines(
            LOG.splitlines() + ["garbage"])
        self.assertEqual(lat, [1200, 800, 4000])
        self.assertEqual((failed, skipped), (1, 1))
        self.assertAlmostEqual(first, 1764923409.1)
        self.assertAlmostEqual(last, 1764923411.6)

    def test_histogram_matches_the_lab_rule(self):
        h = pgblog.histogram([0, 1, 3, 1000, 1000, 5000])
        self.assertEqual(h["count"], 6)
        self.assertEqual(h["min"], 0)
        self.assertEqual(h["max"], 5000)
        # bucket i holds [2^(i-1), 2^i - 1]: 1000 -> 1023, 5000 -> 8191
        self.assertEqual(h["buckets"], [[0, 1], [1, 1], [3, 1], [1023, 2],
                                        [8191, 1]])
        self.assertEqual(h["p50"], 3)        # rank 3
        self.assertEqual(h["p90"], 5000)     # clamped to max
        self.assertEqual(h["mean"], 7004 / 6)

    def test_empty_histogram(self):
        h = pgblog.histogram([])
        self.assertEqual((h["count"], h["p99"], h["buckets"]), (0, 0, []))

    def test_exact_percentiles(self):
        e = pgblog.exact_ms(list(range(1000, 101000, 1000)))  # 1..100 ms
        self.assertEqual(e["p50"], 50.0)
        self.assertEqual(e["p90"], 90.0)
        self.assertEqual(e["p99"], 99.0)
        self.assertEqual(e["max"], 100.0)
        self.assertIsNone(pgblog.exact_ms([]))


class Steady(unittest.TestCase):
    def test_window_starts_when_the_last_client_began(self):
        # client 0 starts at 100.0 s, client 1 only at 103.0 s (its
        # connection took long): the window is 103.0 .. 105.0 (2 s)
        lines = ["0 0 500000 0 100 500000",     # 100.0-100.5
                 "0 1 500000 0 101 0",          # 100.5-101.0
                 "1 0 1000000 0 104 0",         # 103.0-104.0
                 "0 2 1000000 0 104 500000",    # 103.5-104.5
                 "1 1 1500000 0 105 500000",    # 104.0-105.5: past t1
                 "0 3 failed 0 104 700000"]
        w = pgblog.steady(pgblog.records(lines), 2)
        self.assertEqual(w["clients_seen"], 2)
        self.assertEqual(w["start_s"], 3.0)
        self.assertEqual(w["seconds"], 2.0)
        self.assertEqual(w["transactions"], 2)
        self.assertEqual(w["tps"], 1.0)
        self.assertEqual(w["latency_ms"]["max"], 1000.0)

    def test_window_ends_with_the_log(self):
        lines = ["0 0 1000 0 10 0", "0 1 1000 0 11 0"]
        w = pgblog.steady(pgblog.records(lines), 60)
        self.assertAlmostEqual(w["seconds"], 1.001)
        self.assertEqual(w["transactions"], 2)

    def test_no_log(self):
        self.assertIsNone(pgblog.steady([], 10))


if __name__ == "__main__":
    unittest.main()
