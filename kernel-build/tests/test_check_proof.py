"""Unit tests of check_proof.py's pure logic (make -C kernel-build check).

The documents below are minimal shapes of shmdb results, built from the
sharing arithmetic itself (n sessions on one slot: n - 1 sharers, one PMD
page each when unshared), not measured figures.
"""

import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_proof  # noqa: E402

PAGE = check_proof.PAGE


class FakeGuest:
    def __init__(self, results):
        self.name = 'patched-debug'
        self.results = results

    def exp(self, name):
        return self.results.get(name)


def shmdb(n, pt_delta, share, unshare, gauge=None):
    """gauge: PMD tables shared at attach (no unshare yet by then)."""
    doc = {'config': {'sessions': n}, 'pagetables_delta': pt_delta,
           'vmstat_delta': {'htlb_pmd_share': share,
                            'htlb_pmd_unshare': unshare,
                            'htlb_pmd_share_backout': 0}}
    if gauge is not None:
        doc['vmstat_attached'] = {'htlb_pmd_share': gauge,
                                  'htlb_pmd_unshare': 0}
    return doc


def run_counters(aligned, unshared):
    p = check_proof.Proof()
    check_proof.check_counters(p, FakeGuest({'aligned': aligned,
                                             'unshared': unshared}))
    return p


class TestWithin(unittest.TestCase):
    def test_within(self):
        self.assertTrue(check_proof.within(104, 100))
        self.assertFalse(check_proof.within(106, 100))
        self.assertTrue(check_proof.within(0, 0))
        self.assertFalse(check_proof.within(1, 0))

    def test_rel(self):
        self.assertAlmostEqual(check_proof.rel(110, 100), 0.1)


class TestCounters(unittest.TestCase):
    n = 1000
    base = 40 * PAGE    # other page tables the run touched, same for both

    def test_saved_at_attach_is_share_minus_unshare(self):
        n = self.n
        al = shmdb(n, self.base + PAGE, n - 1, n - 1, gauge=n - 1)
        al['vmstat_attached']['htlb_pmd_unshare'] = 3
        un = shmdb(n, self.base + n * PAGE, 0, 0)
        p = run_counters(al, un)
        bad = [c['name'] for c in p.checks if not c['ok']]
        self.assertIn('patched-debug: saved tables at attach = share events',
                      bad)

    def test_consistent_sharing_passes(self):
        n = self.n
        al = shmdb(n, self.base + PAGE, n - 1, n - 1, gauge=n - 1)
        un = shmdb(n, self.base + n * PAGE, 0, 0)
        p = run_counters(al, un)
        self.assertTrue(p.ok, [c for c in p.checks if not c['ok']])

    def test_gauge_leak_fails(self):
        n = self.n
        # One share never undone: unshare events fall short of shares.
        al = shmdb(n, self.base + PAGE, n - 1, n - 2, gauge=n - 1)
        un = shmdb(n, self.base + n * PAGE, 0, 0)
        p = run_counters(al, un)
        self.assertFalse(p.ok)

    def test_gauge_against_pagetables_fails(self):
        n = self.n
        # PageTables says sharing saved only half of what the counters
        # claim.
        al = shmdb(n, self.base + n // 2 * PAGE, n - 1, n - 1, gauge=n - 1)
        un = shmdb(n, self.base + n * PAGE, 0, 0)
        p = run_counters(al, un)
        bad = [c['name'] for c in p.checks if not c['ok']]
        self.assertEqual(len(bad), 1)
        self.assertIn('PageTables', bad[0])

    def test_missing_counters_fail(self):
        n = self.n
        al = {'config': {'sessions': n}, 'pagetables_delta': PAGE,
              'vmstat_delta': {}}
        un = shmdb(n, n * PAGE, 0, 0)
        self.assertFalse(run_counters(al, un).ok)


def histogram(buckets):
    """A histogram object (workloads/SCHEMA.md) from [(upper_ns, count)]."""
    return {'unit': 'ns', 'count': sum(c for _, c in buckets),
            'max': max(b for b, _ in buckets),
            'buckets': [[b, c] for b, c in buckets]}


class CompareFaults(unittest.TestCase):
    """compare_faults() on histograms shaped like the two modes."""

    def setUp(self):
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(
            __file__)), '..', '..', 'reports'))
        from hugelab_report import stats
        self.stats = stats

    def test_i_mmap_stalls(self):
        vma = histogram([(1 << 14, 300), (1 << 15, 80), (1 << 20, 4)])
        immap = histogram([(1 << 14, 150), (1 << 24, 200), (1 << 26, 30)])
        out = check_proof.compare_faults(vma, immap, self.stats)
        self.assertTrue(out['ok'], out['why'])
        self.assertEqual(out['p50_ratio'], (1 << 24) / (1 << 14))

    def test_tail_only_is_not_enough(self):
        # Same median, slower tail: significant, but no stall of the
        # typical fault.
        vma = histogram([(1 << 14, 300), (1 << 15, 100)])
        immap = histogram([(1 << 14, 300), (1 << 24, 100)])
        out = check_proof.compare_faults(vma, immap, self.stats)
        self.assertFalse(out['ok'])
        self.assertEqual(out['p50_ratio'], 1.0)

    def test_same_distribution_fails(self):
        h = histogram([(1 << 14, 300), (1 << 15, 80), (1 << 20, 4)])
        out = check_proof.compare_faults(h, dict(h), self.stats)
        self.assertFalse(out['ok'])
        self.assertAlmostEqual(out['effect'], 0.5)

    def test_too_few_faults(self):
        vma = histogram([(1 << 14, 5)])
        immap = histogram([(1 << 24, 500)])
        out = check_proof.compare_faults(vma, immap, self.stats)
        self.assertFalse(out['ok'])
        self.assertIn('too few', out['why'])

    def test_faster_i_mmap_fails(self):
        vma = histogram([(1 << 24, 200)])
        immap = histogram([(1 << 14, 200)])
        out = check_proof.compare_faults(vma, immap, self.stats)
        self.assertFalse(out['ok'])


class FakeRunGuest:
    """A guest of check_clean(): guest.json, results, experiments."""

    def __init__(self, name, results, warnings=0):
        self.name = name
        self.results = results
        self.doc = {'status': 'ok', 'kernel_log': {'warnings': warnings},
                    'experiments': [{'name': n, 'status': 'ok'}
                                    for n in results]}

    def exp(self, name):
        return self.results.get(name)


class TestStock612(unittest.TestCase):
    """Stock 6.12 is checked like a patched guest without a fault lock."""

    def results(self, fault_lock=None):
        kernel = {'hugetlb_fault_lock': fault_lock} if fault_lock else {}
        ops = {'mprotect': 3, 'munmap': 2, 'dontneed': 4, 'punch': 5}
        return {
            'split-racer': {'kernel': kernel, 'kernel_log': {'warnings': 0}},
            'racer': {'kernel': kernel, 'kernel_log': {'warnings': 0},
                      'reads': 10, 'writes': 10, 'tag_errors': 0,
                      'unshare_ops': ops},
        }

    def test_clean_stock_passes(self):
        p = check_proof.Proof()
        check_proof.check_clean(
            p, FakeRunGuest('6.12-stock-debug', self.results()), None)
        self.assertTrue(p.ok, [c for c in p.checks if not c['ok']])
        self.assertIn('6.12-stock-debug: racer reports no fault lock mode '
                      '(stock kernel)', [c['name'] for c in p.checks])

    def test_warning_or_fault_lock_fails(self):
        for guest in (FakeRunGuest('6.12-stock-debug', self.results(),
                                   warnings=1),
                      FakeRunGuest('6.12-stock-debug',
                                   self.results('vma'))):
            p = check_proof.Proof()
            check_proof.check_clean(p, guest, None)
            self.assertFalse(p.ok)


class ReproGuest:
    """A guest directory holding the reproducer's output only."""

    def __init__(self, tmp, name, rc, lines):
        self.name = name
        self.dir = tmp
        os.makedirs(os.path.join(tmp, 'results'), exist_ok=True)
        self.entry = None
        if rc is not None:
            with open(os.path.join(tmp, 'results', 'repro.out'), 'w') as f:
                f.write('\n'.join(lines) + '\n')
            self.entry = {'name': 'repro', 'exit_code': rc,
                          'output': 'results/repro.out', 'seconds': 3.0}

    def exp_entry(self, name):
        return self.entry if name == 'repro' else None


# TAP of hugetlb-split-race: a passing run and a detecting one.
PASS_TAP = ['TAP version 13', '1..4', '# race started',
            'ok 1 no bad data', 'ok 2 no process died',
            'ok 3 huge pages returned', 'ok 4 kernel log clean',
            '# Totals: pass:4 fail:0 xfail:0 xpass:0 skip:0 error:0']
FAIL_TAP = ['TAP version 13', '1..4', '# race started',
            '# kernel: WARNING: CPU: 1 PID: 90 at mm/hugetlb.c:7001 '
            'huge_pmd_unshare+0x1/0x2',
            '# failure detected after 0.4 s', 'ok 1 no bad data',
            'ok 2 no process died', 'ok 3 huge pages returned',
            'not ok 4 kernel log clean']
SKIP_TAP = ['TAP version 13', '1..0 # SKIP needs 80 free huge pages, 12 free']


class TestCheckRepro(unittest.TestCase):
    def outcome(self, rc, lines, expect_failure):
        with tempfile.TemporaryDirectory() as tmp:
            p = check_proof.Proof()
            check_proof.check_repro(p, ReproGuest(tmp, 'g', rc, lines),
                                    expect_failure)
            return p.ok

    def test_stock_must_detect(self):
        self.assertTrue(self.outcome(1, FAIL_TAP, True))
        self.assertFalse(self.outcome(0, PASS_TAP, True))
        # A failure without a kernel finding (e.g. a crash of the test
        # itself) is not the race.
        self.assertFalse(self.outcome(1, [ln for ln in FAIL_TAP
                                          if 'kernel:' not in ln], True))

    def test_clean_kernels_must_pass(self):
        self.assertTrue(self.outcome(0, PASS_TAP, False))
        self.assertFalse(self.outcome(1, FAIL_TAP, False))
        # Exit 0 with fewer than the planned 4 results is not a pass.
        self.assertFalse(self.outcome(0, PASS_TAP[:4], False))

    def test_skip_or_missing_fails_both_ways(self):
        for expect_failure in (True, False):
            self.assertFalse(self.outcome(4, SKIP_TAP, expect_failure))
            self.assertFalse(self.outcome(None, [], expect_failure))


# Run manifest kernels: a lab build and Debian's image (the shapes
# kernel-build/build and tests/proof write; hashes are placeholders).
LAB = {'variant': 'stock', 'flavour': 'debug', 'pkgversion': '6.1.192-3+hl.1',
       'source': {'package': 'linux-source-6.1', 'line': '6.1'},
       'debs': [{'name': 'linux-headers-6.1.192-hugelab-stock-debug',
                 'sha256': 'h' * 64},
                {'name': 'linux-image-6.1.192-hugelab-stock-debug',
                 'sha256': 'a' * 64}]}
DEB = {'origin': 'debian', 'variant': 'stock', 'flavour': 'amd64',
       'package': 'linux-image-6.12.118+deb12-amd64',
       'version': '6.12.118-1~deb12u1', 'config': '/boot/config-x',
       'config_options': {'CONFIG_PROVE_LOCKING': 'n',
                          'CONFIG_DEBUG_VM': 'n'},
       'debs': [{'name': 'linux-image-6.12.118+deb12-amd64',
                 'sha256': 'b' * 64}]}
KERNELS = {'stock-debug': LAB, 'debian-6.12-amd64': DEB}


class DocGuest:
    """A guest of the row table and the skip notes: its guest.json."""

    def __init__(self, name, sha, status='ok', warnings=0, verified=True):
        self.name = name
        self.doc = {'status': status, 'kernel_log': {'warnings': warnings},
                    'kernel': {'package_sha256': sha, 'release': 'r',
                               'image_release': 'r', 'verified': verified}}


class TestRows(unittest.TestCase):
    def test_rows_say_debian_or_lab(self):
        deb = check_proof.row_of(DocGuest('debian-6.12-amd64', 'b' * 64),
                                 KERNELS)
        self.assertEqual((deb['origin'], deb['kernel'], deb['package'],
                          deb['version']),
                         ('debian', 'debian-6.12-amd64',
                          'linux-image-6.12.118+deb12-amd64',
                          '6.12.118-1~deb12u1'))
        lab = check_proof.row_of(DocGuest('stock-debug', 'a' * 64), KERNELS)
        self.assertEqual((lab['origin'], lab['kernel'], lab['package'],
                          lab['version'], lab['sha256']),
                         ('lab', 'stock-debug',
                          'linux-image-6.1.192-hugelab-stock-debug',
                          '6.1.192-3+hl.1', 'a' * 64))
        # A guest whose package is none of the run's kernels: unknown.
        self.assertIsNone(check_proof.row_of(DocGuest('x', 'c' * 64),
                                             KERNELS)['origin'])


class TestSkips(unittest.TestCase):
    def skips(self, name, sha):
        p = check_proof.Proof()
        g = DocGuest(name, sha)
        check_proof.skip_not_applicable(p, g,
                                        check_proof.kernel_of(g, KERNELS)[1])
        # A skip is said, never counted as a passed check.
        self.assertEqual(p.checks, [])
        return [s['name'] for s in p.skipped]

    def test_only_where_they_cannot_apply(self):
        self.assertEqual(self.skips('patched-debug', 'x' * 64), [])
        self.assertEqual(len(self.skips('stock-debug', 'a' * 64)), 1)
        deb = self.skips('debian-6.12-amd64', 'b' * 64)
        self.assertEqual(len(deb), 2)
        self.assertIn('debian-6.12-amd64: lockdep and DEBUG_VM findings',
                      deb)


def pt_doc(placement, sessions, per_session, model, sharing):
    return {'config': {'sessions': sessions, 'placement': placement},
            'pagetables_per_session': per_session,
            'model': {'per_session_bytes': model, 'sharing': sharing}}


class TestSharingPagetables(unittest.TestCase):
    """Debian's 6.12: savings from PageTables against shmdb's models."""

    def outcome(self, unshared_measured):
        n = 1000
        g = FakeGuest({
            'aligned': pt_doc('aligned', n, 260.0, PAGE / n, True),
            'unshared': pt_doc('skewed', n, unshared_measured, PAGE,
                               False)})
        g.name = 'debian-6.12-amd64'
        p = check_proof.Proof()
        check_proof.check_sharing_pagetables(p, g)
        return p.ok

    def test_model_difference_within_5_percent(self):
        # model: unshared one PMD page per session, aligned 4 KiB / n.
        model = PAGE - PAGE / 1000
        self.assertTrue(self.outcome(260.0 + model))
        self.assertTrue(self.outcome(260.0 + model * 1.04))
        self.assertFalse(self.outcome(260.0 + model * 1.06))
        # No saving measured: sharing did not happen.
        self.assertFalse(self.outcome(260.0))

    def test_missing_results_fail(self):
        p = check_proof.Proof()
        g = FakeGuest({})
        check_proof.check_sharing_pagetables(p, g)
        self.assertFalse(p.ok)


class TestDebianRace(unittest.TestCase):
    def outcome(self, rc, lines, status='ok', warnings=0):
        with tempfile.TemporaryDirectory() as tmp:
            g = ReproGuest(tmp, 'debian-6.1-amd64', rc, lines)
            g.doc = DocGuest(g.name, 'b' * 64, status, warnings).doc
            p = check_proof.Proof()
            check_proof.check_debian_race(p, g)
            return p.ok, p.skipped[0]['why']

    def test_recorded_not_checked(self):
        ok, why = self.outcome(1, FAIL_TAP, 'fail', 3)
        self.assertTrue(ok)
        self.assertTrue(why.startswith('recorded, not checked: race hit'))
        ok, why = self.outcome(0, PASS_TAP)
        self.assertTrue(ok)
        self.assertIn('not hit in this run', why)
        # A hang counts as a hit; a guest that never ran the test fails.
        self.assertTrue(self.outcome(None, [], 'timeout')[0])
        self.assertFalse(self.outcome(None, [], 'fail')[0])


if __name__ == '__main__':
    unittest.main()


class TestDiscarded(unittest.TestCase):
    def test_discarded_boot_is_a_note_not_a_check(self):
        g = FakeGuest({})
        g.doc = {'discarded_attempts': [{
            'guest_json': '/run/discarded/patched-debug-1/guest.json',
            'emulator_faults': ['WARNING: ... exc_debug_kernel+0xca']}]}
        p = check_proof.Proof()
        check_proof.note_discarded(p, g)
        self.assertEqual(p.checks, [])
        self.assertEqual(len(p.notes), 1)
        self.assertIn('exc_debug_kernel', p.notes[0]['detail'])
        self.assertIn('/run/discarded/patched-debug-1', p.notes[0]['detail'])

    def test_no_discarded_boot_no_note(self):
        g = FakeGuest({})
        g.doc = {}
        p = check_proof.Proof()
        check_proof.note_discarded(p, g)
        self.assertEqual(p.notes, [])


class StockGuest(FakeGuest):
    def __init__(self, kernel_log):
        super().__init__({})
        self.name = 'stock-debug'
        self.doc = {'kernel_log': kernel_log}

    def excerpt(self):
        return self.doc['kernel_log']['excerpt']


class TestStock(unittest.TestCase):
    LINE = '[ 9.0]  hugetlb_split+0x40/0x90'

    def lockdep_check(self, kernel_log):
        p = check_proof.Proof()
        check_proof.check_stock(p, StockGuest(kernel_log))
        return [c for c in p.checks
                if c['name'].endswith('lockdep warns from hugetlb_split')][0]

    def test_warning_naming_hugetlb_split_passes(self):
        self.assertTrue(self.lockdep_check(
            {'warnings': 1, 'excerpt': [self.LINE]})['ok'])

    def test_emulator_fault_through_hugetlb_split_fails(self):
        c = self.lockdep_check({'warnings': 1, 'excerpt': [self.LINE],
                                'emulator_faults': ['WARNING: x']})
        self.assertFalse(c['ok'], c)
