#!/usr/bin/env python3
"""Unit tests of the smoke harness' pure logic (collect, check, pvh-vmlinux).

    python3 -m unittest discover -s workloads/smoke -p 'test_*.py'
"""

import base64
import hashlib
import importlib.machinery
import importlib.util
import io
import json
import os
import struct
import subprocess
import tempfile
import time
import unittest
from contextlib import redirect_stdout

HERE = os.path.dirname(os.path.abspath(__file__))


def load(name):
    path = os.path.join(HERE, name)
    loader = importlib.machinery.SourceFileLoader(name.replace('-', '_'),
                                                  path)
    spec = importlib.util.spec_from_loader(loader.name, loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


collect = load('collect')
check = load('check')
pvh = load('pvh-vmlinux')
watch = load('watch')


def channel(doc_bytes, name='exp', rc=0, corrupt=False):
    b64 = base64.encodebytes(doc_bytes).decode()
    sha = hashlib.sha256(doc_bytes).hexdigest()
    if corrupt:
        b64 = 'A' + b64[1:]
    return ('@@HUGELAB BOOT uptime=2.5 release=6.1.0-x\r\n'
            '@@HUGELAB CMDLINE console=ttyS0 panic=-1\r\n'
            '@@HUGELAB EXP name=%s rc=%d start=3.0 end=4.5\r\n'
            '@@HUGELAB BEGIN name=%s sha256=%s\r\n%s'
            '@@HUGELAB END name=%s\r\n'
            '@@HUGELAB DONE uptime=5.0\r\n'
            % (name, rc, name, sha, b64.replace('\n', '\r\n'), name))


class TestCollect(unittest.TestCase):
    def test_channel_roundtrip(self):
        doc = b'{"status": "ok", "x": 1}\n'
        info, exps, blobs = collect.parse_channel(channel(doc))
        self.assertEqual(info['boot']['release'], '6.1.0-x')
        self.assertEqual(info['cmdline'], 'console=ttyS0 panic=-1')
        self.assertIn('done', info)
        self.assertEqual(exps, [{'name': 'exp', 'rc': '0', 'start': '3.0',
                                 'end': '4.5'}])
        data, err = collect.decode_blob(blobs['exp'])
        self.assertIsNone(err)
        self.assertEqual(data, doc)

    def test_channel_corrupt_and_truncated(self):
        _, _, blobs = collect.parse_channel(channel(b'{"a": 2}', corrupt=True))
        data, err = collect.decode_blob(blobs['exp'])
        self.assertIsNone(data)
        self.assertIsNotNone(err)
        # A guest that died inside a result: no END, no blob, no DONE.
        text = channel(b'{"a": 2}').split('@@HUGELAB END')[0]
        info, exps, blobs = collect.parse_channel(text)
        self.assertEqual(blobs, {})
        self.assertNotIn('done', info)
        self.assertEqual(len(exps), 1)

    def test_kernel_lines_skip_program_output(self):
        console = ('[    1.0] WARNING: CPU: 0 PID: 1 at mm/hugetlb.c:4908\n'
                   '|| racer: WARNING: copied from the kernel log\n'
                   'hugelab-init: experiment x: BUG: in the arguments\n'
                   '[    2.0] possible circular locking dependency\n'
                   '[    3.0] ordinary line\n')
        lines = collect.kernel_lines(console)
        self.assertEqual(len(lines), 3)
        n, excerpt = collect.scan_console(lines)
        self.assertEqual(n, 2)
        self.assertIn('[    3.0] ordinary line', excerpt)
        self.assertEqual(collect.scan_console(['[ 1.0] all fine'])[0], 0)

    def test_experiment_status(self):
        self.assertEqual(collect.experiment_status(0, None), 'ok')
        self.assertEqual(collect.experiment_status(1, None), 'fail')
        self.assertEqual(collect.experiment_status(0, {'status': 'fail'}),
                         'fail')
        self.assertEqual(collect.experiment_status(2, {'status': 'error'}),
                         'error')
        # A document claiming ok from a program that exited non-zero.
        self.assertEqual(collect.experiment_status(139, {'status': 'ok'}),
                         'fail')

    def test_guest_status_precedence(self):
        ok = [{'status': 'ok'}]
        self.assertEqual(collect.guest_status(False, False, True, ok, 0),
                         'ok')
        self.assertEqual(collect.guest_status(True, True, False, ok, 0),
                         'panic')
        self.assertEqual(collect.guest_status(True, False, False, ok, 0),
                         'timeout')
        self.assertEqual(collect.guest_status(False, False, False, ok, 0),
                         'fail')
        self.assertEqual(collect.guest_status(False, False, True, ok, 1),
                         'fail')
        self.assertEqual(collect.guest_status(
            False, False, True, [{'status': 'missing'}], 0), 'fail')

    def test_image_release(self):
        with tempfile.TemporaryDirectory() as d:
            img = bytearray(0x5000)
            img[0x202:0x206] = b'HdrS'
            struct.pack_into('<H', img, 0x20e, 0x3000)
            ver = b'6.1.0-57-amd64 (builder@host) #1 SMP\0'
            img[0x3200:0x3200 + len(ver)] = ver
            path = os.path.join(d, 'vmlinuz')
            with open(path, 'wb') as f:
                f.write(img)
            self.assertEqual(collect.image_release(path), '6.1.0-57-amd64')
            with open(path, 'wb') as f:
                f.write(b'\x7fELF' + b'\0' * 100 +
                        b'Linux version 6.1.0-dbg (x) #2\0')
            self.assertEqual(collect.image_release(path), '6.1.0-dbg')
            with open(path, 'wb') as f:
                f.write(b'not a kernel' * 100)
            self.assertIsNone(collect.image_release(path))


def elf_with_note(name, ntype):
    """Minimal little-endian ELF64 with one PT_NOTE segment."""
    desc = b'\0' * 4
    nm = name + b'\0'
    note = struct.pack('<III', len(nm), len(desc), ntype)
    note += nm + b'\0' * (-len(nm) % 4) + desc
    phoff, phentsize = 64, 56
    off = phoff + phentsize
    hdr = bytearray(64)
    hdr[:6] = b'\x7fELF\x02\x01'
    struct.pack_into('<Q', hdr, 0x20, phoff)
    struct.pack_into('<HH', hdr, 0x36, phentsize, 1)
    ph = struct.pack('<IIQQQQQQ', pvh.PT_NOTE, 0, off, 0, 0, len(note),
                     len(note), 4)
    return bytes(hdr) + ph + note


def testdata(name):
    with open(os.path.join(HERE, 'testdata', name), encoding='utf-8') as f:
        return f.read()


class TestEmulatorFault(unittest.TestCase):
    """A QEMU TCG fault (testdata/emulator-fault.console, proof run
    20261207T075205Z) is told apart from kernel findings."""

    def lines(self, text=None):
        return collect.kernel_lines(text or testdata('emulator-fault.console'))

    def test_recorded_fault_is_an_emulator_fault(self):
        lines = self.lines()
        n, _ = collect.scan_console(lines)
        faults = collect.emulator_faults(lines)
        self.assertEqual(n, 1)
        self.assertEqual(len(faults), 1)
        self.assertIn('exc_debug_kernel', faults[0])

    def test_possible_eflags_is_a_kernel_finding(self):
        # The same warning with EFLAGS hardware can hold: a kernel matter.
        text = testdata('emulator-fault.console')
        text = text.replace('EFLAGS: 15ccb002', 'EFLAGS: 00000002')
        text = text.replace('EFLAGS: 15ccbb42', 'EFLAGS: 00000b42')
        self.assertEqual(collect.emulator_faults(self.lines(text)), [])

    def test_other_warning_with_bad_eflags_is_a_kernel_finding(self):
        text = testdata('emulator-fault.console').replace(
            'arch/x86/kernel/traps.c:1120 exc_debug_kernel',
            'mm/hugetlb.c:5110 __unmap_hugepage_range')
        self.assertEqual(collect.emulator_faults(self.lines(text)), [])

    def test_bad_eflags_of_the_next_finding_does_not_count(self):
        # A finding's block ends where the next one starts.
        lines = ['[ 1.0] WARNING: CPU: 0 PID: 1 at arch/x86/kernel/'
                 'traps.c:1120 exc_debug_kernel+0xca/0x160',
                 '[ 1.0] RSP: 0000:fffffe0000010f28 EFLAGS: 00000002',
                 '[ 2.0] BUG: unable to handle page fault',
                 '[ 2.0] RSP: 0018:ffffc90004547800 EFLAGS: 15ccbb42']
        self.assertEqual(collect.emulator_faults(lines), [])

    def test_retry_only_when_the_fault_is_all(self):
        ok = [{'status': 'ok'}]
        f = ['WARNING: ... exc_debug_kernel']
        retry = collect.retry_for_emulator
        self.assertTrue(retry('fail', 1, f, ok, True))
        self.assertFalse(retry('fail', 2, f, ok, True))      # another one
        self.assertFalse(retry('fail', 1, f, [{'status': 'fail'}], True))
        self.assertFalse(retry('fail', 1, f, ok, False))     # no DONE
        self.assertFalse(retry('panic', 1, f, ok, True))
        self.assertFalse(retry('timeout', 1, f, ok, True))
        self.assertFalse(retry('fail', 0, [], ok, True))

    def test_fallout_of_a_fault_is_retried(self):
        # CI proof run 20261207T174721Z: the fault came first, then three
        # oopses on the frame it left, then a hang to --timeout.
        lines = self.lines(testdata('emulator-fallout.console'))
        emulated = collect.emulator_faults(lines)
        self.assertEqual(collect.scan_console(lines)[0], 5)
        self.assertEqual(len(emulated), 1)
        self.assertTrue(collect.first_finding_emulated(lines, emulated))
        exps = [{'status': 'ok'}, {'status': 'missing'}]
        for status in ('timeout', 'panic', 'fail'):
            self.assertEqual(
                collect.retry_reason(status, 5, emulated, exps, False, True,
                                     fallout=True),
                'emulator fault, then its fallout')
        self.assertIsNone(collect.retry_reason('timeout', 5, emulated, exps,
                                               False, True))

    def test_kernel_finding_before_the_fault_is_no_fallout(self):
        lines = self.lines(testdata('emulator-fallout.console'))
        lines.insert(1, '[   90.000001] WARNING: CPU: 0 PID: 9 at '
                     'mm/hugetlb.c:5110 __unmap_hugepage_range+0x1/0x2')
        emulated = collect.emulator_faults(lines)
        self.assertEqual(len(emulated), 1)
        self.assertFalse(collect.first_finding_emulated(lines, emulated))
        self.assertFalse(collect.first_finding_emulated(
            ['[ 1.0] fine'], []))


class TestWatch(unittest.TestCase):
    """smoke/watch stops a guest hung after an oops, nothing else."""

    def test_oops_lines(self):
        text = testdata('emulator-fallout.console')
        self.assertEqual(watch.first_oops(text),
                         '[   91.194257] Oops: Oops: 0000 [#1] PREEMPT SMP '
                         'NOPTI')
        # A warning is no oops; program and init output are not the kernel.
        self.assertIsNone(watch.first_oops(
            testdata('emulator-fault.console')))
        self.assertIsNone(watch.first_oops('|| [ 1.0] Oops: fake\n'
                                           'hugelab-init: Oops\n'))

    def test_stop_only_after_quiet(self):
        oops = '[ 1.0] Oops: 0000'
        self.assertFalse(watch.should_stop(None, 1000, 0, 60))
        self.assertFalse(watch.should_stop(oops, 59, 0, 60))
        self.assertTrue(watch.should_stop(oops, 60, 0, 60))


FAKE_QEMU = r"""#!/bin/sh
# Stand-in for qemu-system-x86_64: the boot numbered by $COUNT writes
# console $CONSOLE_<n> and a channel saying the one experiment ended ok,
# or (CHANNEL_<n>=none) nothing: a kernel that never reached user space.
n=$(($(cat "$COUNT") + 1)); echo $n >"$COUNT"
eval "src=\$CONSOLE_$n"
eval "chan=\${CHANNEL_$n:-full}"
set -- "$@"
out=''
for a; do
  case $a in file:*) out="$out ${a#file:}" ;; esac
done
set -- $out
cp "$src" "$1"
if [ "$chan" = full ]; then
  printf '@@HUGELAB BOOT uptime=1.0 release=6.1.0-x
@@HUGELAB EXP name=e rc=0 start=1 end=2
@@HUGELAB DONE uptime=3.0
' >"$2"
elif [ "$chan" = hang ]; then
  # User space started, then the guest hangs without a word.
  printf '@@HUGELAB BOOT uptime=1.0 release=6.1.0-x\n' >"$2"
  exec sleep 120
else
  : >"$2"
fi
"""


class TestBootRetry(unittest.TestCase):
    """smoke/boot boots again once after an emulator fault, never more,
    with QEMU and busybox stood in (no guest)."""

    def boot(self, consoles, channels=(), extra=()):
        tmp = tempfile.mkdtemp()
        fakes = os.path.join(tmp, 'bin')
        os.mkdir(fakes)
        for name, text in (('qemu-system-x86_64', FAKE_QEMU),
                           ('busybox', '#!/bin/sh\nexit 0\n')):
            with open(os.path.join(fakes, name), 'w') as f:
                f.write(text)
            os.chmod(os.path.join(fakes, name), 0o755)
        env = dict(os.environ, PATH=fakes + ':' + os.environ['PATH'],
                   HUGELAB_CACHE=os.path.join(tmp, 'cache'),
                   COUNT=os.path.join(tmp, 'count'))
        with open(env['COUNT'], 'w') as f:
            f.write('0\n')
        for i, chan in enumerate(channels, 1):
            env['CHANNEL_%d' % i] = chan
        for i, text in enumerate(consoles, 1):
            env['CONSOLE_%d' % i] = os.path.join(tmp, 'console%d' % i)
            with open(env['CONSOLE_%d' % i], 'w') as f:
                f.write(text)
        for name, text in (('vmlinuz', 'not a kernel'), ('exps', 'e true\n')):
            with open(os.path.join(tmp, name), 'w') as f:
                f.write(text)
        os.mkdir(os.path.join(tmp, 'progs'))
        r = subprocess.run(
            [os.path.join(HERE, 'boot'), '--kernel',
             os.path.join(tmp, 'vmlinuz'), '--name', 'g', '--out',
             os.path.join(tmp, 'run'), '--bin', os.path.join(tmp, 'progs'),
             '--no-pvh', '--timeout', '60'] + list(extra) +
            [os.path.join(tmp, 'exps')],
            env=env, capture_output=True, text=True, check=False)
        with open(env['COUNT']) as f:
            boots = int(f.read())
        gjson = os.path.join(tmp, 'run', 'guests', 'g', 'guest.json')
        with open(gjson) as f:
            return r.returncode, boots, json.load(f), tmp

    def test_fault_then_clean_boots_twice(self):
        fault = testdata('emulator-fault.console')
        rc, boots, doc, tmp = self.boot([fault, '[ 1.0] fine\n'])
        self.assertEqual((rc, boots, doc['status']), (0, 2, 'ok'))
        d = doc['discarded_attempts']
        self.assertEqual(len(d), 1)
        self.assertIn('exc_debug_kernel', d[0]['emulator_faults'][0])
        self.assertTrue(os.path.exists(
            os.path.join(tmp, 'run', 'discarded', 'g-1', 'console.log')))

    def test_two_faults_fail(self):
        fault = testdata('emulator-fault.console')
        rc, boots, doc, _ = self.boot([fault, fault, '[ 1.0] fine\n'])
        self.assertEqual((rc, boots, doc['status']), (1, 2, 'fail'))

    def test_boot_failure_before_user_space_boots_again(self):
        panic = ('[ 1.8] Oops: int3: 0000 [#1] PREEMPT SMP NOPTI\n'
                 '[ 1.8] Kernel panic - not syncing: Fatal exception\n')
        rc, boots, doc, _ = self.boot([panic, '[ 1.0] fine\n'],
                                      channels=['none'])
        self.assertEqual((rc, boots, doc['status']), (0, 2, 'ok'))
        d = doc['discarded_attempts'][0]
        self.assertEqual((d['reason'], d['status']),
                         ('boot failure before user space', 'panic'))
        self.assertIn('Oops: int3', d['first_finding'])

    def test_panic_after_user_space_is_not_retried(self):
        panic = '[ 9.0] Kernel panic - not syncing: Fatal exception\n'
        rc, boots, doc, _ = self.boot([panic, '[ 1.0] fine\n'])
        self.assertEqual((rc, boots, doc['status']), (1, 1, 'panic'))

    def test_hang_after_fault_fallout_stopped_and_booted_again(self):
        fallout = testdata('emulator-fallout.console')
        t0 = time.monotonic()
        rc, boots, doc, _ = self.boot([fallout, '[ 1.0] fine\n'],
                                      channels=['hang'],
                                      extra=['--oops-quiet', '2'])
        self.assertLess(time.monotonic() - t0, 30)      # not --timeout 60
        self.assertEqual((rc, boots, doc['status']), (0, 2, 'ok'))
        d = doc['discarded_attempts'][0]
        self.assertEqual((d['reason'], d['status']),
                         ('emulator fault, then its fallout', 'timeout'))
        with open(d['guest_json']) as f:
            first = json.load(f)
        self.assertIn('quiet for 2 s after a kernel oops', first['stopped'])
        self.assertIn('Oops: Oops: 0000', first['stopped'])

    def test_hang_after_kernel_oops_stopped_not_retried(self):
        oops = ('[ 5.0] BUG: kernel NULL pointer dereference\n'
                '[ 5.0] Oops: 0000 [#1] PREEMPT SMP NOPTI\n')
        t0 = time.monotonic()
        rc, boots, doc, _ = self.boot([oops, '[ 1.0] fine\n'],
                                      channels=['hang'],
                                      extra=['--oops-quiet', '2'])
        self.assertLess(time.monotonic() - t0, 30)
        self.assertEqual((rc, boots, doc['status']), (1, 1, 'timeout'))
        self.assertIn('stopped by smoke/watch', doc['stopped'])

    def test_expected_warnings_after_a_fault_are_not_met(self):
        # A stock guest expects kernel warnings: the fallout of an emulator
        # fault is none of them; the boot is repeated and the next one
        # (no findings) does not meet the expectation either.
        fallout = testdata('emulator-fallout.console')
        rc, boots, doc, _ = self.boot([fallout, '[ 1.0] fine\n'],
                                      channels=['full', 'full'],
                                      extra=['--expect-kernel-warnings'])
        self.assertEqual((rc, boots), (1, 2))
        self.assertEqual(doc['discarded_attempts'][0]['reason'],
                         'emulator fault, then its fallout')

    def test_kernel_finding_is_not_retried(self):
        fault = testdata('emulator-fault.console').replace(
            'EFLAGS: 15ccb002', 'EFLAGS: 00000002').replace(
            'EFLAGS: 15ccbb42', 'EFLAGS: 00000b42')
        rc, boots, doc, _ = self.boot([fault, '[ 1.0] fine\n'])
        self.assertEqual((rc, boots, doc['status']), (1, 1, 'fail'))
        self.assertNotIn('discarded_attempts', doc)


class TestPvh(unittest.TestCase):
    def test_note(self):
        self.assertTrue(pvh.has_pvh_note(elf_with_note(b'Xen', 18)))
        self.assertFalse(pvh.has_pvh_note(elf_with_note(b'Xen', 17)))
        self.assertFalse(pvh.has_pvh_note(elf_with_note(b'GNU', 18)))
        self.assertFalse(pvh.has_pvh_note(b'MZ' + b'\0' * 200))

    def test_payload_xz(self):
        import lzma
        elf = elf_with_note(b'Xen', 18)
        image = b'setup' * 100 + lzma.compress(elf) + b'\x00\x10\x00\x00'
        self.assertEqual(pvh.payload(image), elf)
        self.assertIsNone(pvh.payload(b'no payload here'))


def shmdb_doc(placement, per_session, model, sessions=1000, page=2 << 20,
              pmd=1):
    return {'config': {'size': 1 << 30, 'page_size': page,
                       'sessions': sessions, 'backing': 'shm',
                       'placement': placement},
            'pagetables_per_session': per_session,
            'model': {'per_session_bytes': model,
                      'pmd_pages_per_session': pmd}}


class TestChecks(unittest.TestCase):
    def run_check(self, fn, *args):
        c = check.Checks()
        with redirect_stdout(io.StringIO()):
            fn(c, *args)
        return c

    def test_sharing(self):
        aligned = shmdb_doc('aligned', 4.1, 4.096, pmd=0)
        skewed = shmdb_doc('skewed', 8200.0, 8192.0, pmd=2)
        self.assertEqual(
            self.run_check(check.check_sharing, aligned, skewed).failed(), [])
        # No sharing in the aligned run: both cost the same.
        broken = shmdb_doc('aligned', 8190.0, 4.096, pmd=0)
        self.assertEqual(
            self.run_check(check.check_sharing, broken, skewed).failed(),
            ['pmd-sharing-2m'])
        # Runs that differ in more than placement are not comparable.
        other = shmdb_doc('skewed', 8200.0, 8192.0, sessions=999, pmd=2)
        self.assertEqual(
            self.run_check(check.check_sharing, aligned, other).failed(),
            ['pmd-sharing-2m'])

    def test_model_tolerance(self):
        good = shmdb_doc('aligned', 528384.0 * 1.04, 528384.0)
        bad = shmdb_doc('aligned', 528384.0 * 1.06, 528384.0)
        self.assertEqual(self.run_check(check.check_model, 'pte-4k',
                                        good).failed(), [])
        self.assertEqual(self.run_check(check.check_model, 'pte-4k',
                                        bad).failed(), ['pte-4k'])

    def test_1g(self):
        ok = shmdb_doc('aligned', 98.0, 0.0, page=1 << 30, pmd=0)
        pmd = shmdb_doc('aligned', 4096.0, 0.0, page=1 << 30, pmd=0)
        self.assertEqual(self.run_check(check.check_1g, ok, None).failed(),
                         [])
        self.assertEqual(self.run_check(check.check_1g, pmd, None).failed(),
                         ['no-pmd-1g'])

    def test_racer(self):
        ops = ['dontneed', 'mprotect', 'munmap', 'punch']
        doc = {'status': 'ok', 'tag_errors': 0,
               'config': {'duration_s': 60, 'ops': ops},
               'unshare_ops': {'dontneed': 5, 'mprotect': 3, 'munmap': 2,
                               'punch': 1},
               'elapsed_s': 61.0, 'reads': 10, 'strict_reads': 9,
               'weak_reads': 1, 'writes': 3, 'faults': {'minor': 7},
               'failures': []}
        self.assertEqual(self.run_check(check.check_racer, doc).failed(), [])
        idle = dict(doc, unshare_ops=dict(doc['unshare_ops'], punch=0))
        self.assertEqual(self.run_check(check.check_racer, idle).failed(),
                         ['racer-clean'])
        short = dict(doc, config={'duration_s': 10, 'ops': ops})
        self.assertEqual(self.run_check(check.check_racer, short).failed(),
                         ['racer-clean'])
        # the smoke racer's two operations, both ran
        two = dict(doc, config={'duration_s': 60,
                                'ops': ['dontneed', 'punch']},
                   unshare_ops={'dontneed': 5, 'punch': 1})
        self.assertEqual(self.run_check(check.check_racer, two).failed(), [])
        # an operation that was asked for but never counted
        lost = dict(two, unshare_ops={'dontneed': 5})
        self.assertEqual(self.run_check(check.check_racer, lost).failed(),
                         ['racer-clean'])


if __name__ == '__main__':
    unittest.main()
