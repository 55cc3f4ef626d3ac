#!/usr/bin/env python3
"""Unit tests of the smoke harness' pure logic (collect, check, pvh-vmlinux).

    python3 -m unittest discover -s workloads/smoke -p 'test_*.py'
"""

import base64
import hashlib
import importlib.machinery
import importlib.util
import io
import os
import struct
import tempfile
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
