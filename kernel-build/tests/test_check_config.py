#!/usr/bin/env python3
"""Unit tests of check_config.py on small made-up configs (no kernel tree)."""
import contextlib
import io
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_config  # noqa: E402

DEBIAN = """CONFIG_NUMA=y
CONFIG_HZ=250
CONFIG_ZSMALLOC=m
# CONFIG_CMA is not set
CONFIG_PARAVIRT_XXL=y
"""
KCONFIG = """config NUMA
\tbool "NUMA"
menuconfig HZ
\tint
config CMA
\tbool
"""
EQUAL = """# comment
kconfig mm/Kconfig
CONFIG_ZSMALLOC
CONFIG_PARAVIRT_XXL
"""
CRITICAL = """CONFIG_NUMA
CONFIG_PROVE_LOCKING debug
"""


class CheckConfigTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        os.makedirs(os.path.join(self.dir, 'src/mm'))
        self.write('src/mm/Kconfig', KCONFIG)
        self.write('debian', DEBIAN)
        self.write('equal.list', EQUAL)
        self.write('critical.list', CRITICAL)
        self.write('perf.config', '')
        self.write('debug.config', '')

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name, text):
        path = os.path.join(self.dir, name)
        with open(path, 'w') as f:
            f.write(text)
        return path

    def run_check(self, differences, **configs):
        args = ['--src', os.path.join(self.dir, 'src'),
                '--debian', os.path.join(self.dir, 'debian'),
                '--equal', os.path.join(self.dir, 'equal.list'),
                '--differences', self.write('differences.list', differences),
                '--critical', os.path.join(self.dir, 'critical.list')]
        for name, text in configs.items():
            args.append('%s=%s' % (name, self.write(name + '.dot', text)))
        err = io.StringIO()
        with contextlib.redirect_stderr(err), \
                contextlib.redirect_stdout(io.StringIO()):
            rc = check_config.main(args)
        return rc, err.getvalue()

    LAB = """CONFIG_NUMA=y
CONFIG_HZ=250
CONFIG_ZSMALLOC=y
"""
    XXL = 'CONFIG_PARAVIRT_XXL n * Xen only\n'

    def test_equal_with_recorded_difference_passes(self):
        # =m in Debian equals =y; CMA absent equals "is not set".
        rc, err = self.run_check(self.XXL, perf=self.LAB)
        self.assertEqual((rc, err), (0, ''))

    def test_unrecorded_difference_fails(self):
        rc, err = self.run_check(self.XXL,
                                 perf=self.LAB.replace('250', '1000'))
        self.assertEqual(rc, 1)
        self.assertIn('CONFIG_HZ is 1000, Debian has 250', err)

    def test_module_left_out_fails(self):
        rc, err = self.run_check(
            self.XXL, perf=self.LAB.replace('CONFIG_ZSMALLOC=y\n', ''))
        self.assertIn('CONFIG_ZSMALLOC is n, Debian has m', err)

    def test_stale_or_wrong_entry_fails(self):
        rc, err = self.run_check(
            self.XXL, perf=self.LAB + 'CONFIG_PARAVIRT_XXL=y\n')
        self.assertIn('equals Debian now', err)
        rc, err = self.run_check('CONFIG_PARAVIRT_XXL y * x\n',
                                 perf=self.LAB)
        self.assertIn('records y', err)

    def test_flavour_scoped_entry(self):
        diff = self.XXL + 'CONFIG_HZ 1000 debug lab reason\n'
        rc, err = self.run_check(
            diff, perf=self.LAB, debug=self.LAB.replace('250', '1000') +
            'CONFIG_PROVE_LOCKING=y\n')
        self.assertEqual((rc, err), (0, ''))
        rc, err = self.run_check(
            diff, perf=self.LAB.replace('250', '1000'),
            debug=self.LAB.replace('250', '1000') +
            'CONFIG_PROVE_LOCKING=y\n')
        self.assertIn('perf: CONFIG_HZ is 1000', err)

    def test_entry_outside_equal_list_and_bad_flavour_fail(self):
        rc, err = self.run_check(self.XXL + 'CONFIG_FOO y * x\n'
                                 'CONFIG_HZ 100 nosuch x\n', perf=self.LAB)
        self.assertIn('CONFIG_FOO is not in', err)
        self.assertIn('unknown flavour nosuch', err)

    def test_guest_critical(self):
        rc, err = self.run_check(
            self.XXL, perf=self.LAB.replace('CONFIG_NUMA=y',
                                            '# CONFIG_NUMA is not set'))
        self.assertIn('perf: guest-critical CONFIG_NUMA is n', err)
        rc, err = self.run_check(self.XXL, debug=self.LAB)
        self.assertIn('debug: guest-critical CONFIG_PROVE_LOCKING is n', err)


if __name__ == '__main__':
    unittest.main()
