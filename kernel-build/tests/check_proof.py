#!/usr/bin/env python3
"""Check a kernel proof run directory (kernel-build/tests/proof).

    check_proof.py RUN_DIR

Reads RUN_DIR/guests/<guest>/guest.json and results/*.json (layout:
reports/RUNDIR.md, documents: workloads/SCHEMA.md), prints every figure it
checks, writes RUN_DIR/proof.json (figures + checks) and sets the run
manifest's status.  Exit 0 when every check passed, 1 otherwise, 2 for a
directory that is not a proof run.

Guests (by name): stock-<flavour> (expected to warn from
hugetlb_split), patched-<flavour> (hugetlb_fault_lock=vma, the default) and
patched-<flavour>-immap (hugetlb_fault_lock=i_mmap), 6.12-stock-<flavour>
and debian-6.12-amd64 (stock 6.12, the fixed reference, built by the lab
or Debian's own image: no kernel findings, no fault lock mode),
6.12-patched-<flavour> (the 6.12 series: checked as patched-<flavour>),
debian-6.1-amd64 (Debian's own 6.1 image, reproducer only: its outcome
is recorded, not checked: without lockdep the race is hit by chance).  In
each, the reproducer hugetlb-split-race (experiment "repro") must fail on
stock 6.1 and pass on the others.  Missing guests skip their checks,
missing experiments of a present guest fail them.  Checks that cannot
apply to a row (the series' counters on a stock kernel, lockdep on
Debian's images) are printed as SKIP with the reason and listed in
proof.json "skipped"; the first lines are the row table (guest, kernel,
Debian's image or lab build, package and sha256; "rows" in proof.json).
"""

import json
import os
import sys

PAGE = 4096
# Relative tolerance of measured page-table figures against each other.
TOLERANCE = 0.05
# The series' vm events (no gauge: the PMD tables currently saved by sharing
# are htlb_pmd_share - htlb_pmd_unshare).
COUNTERS = ('htlb_pmd_share', 'htlb_pmd_share_backout', 'htlb_pmd_unshare')


class Proof:
    """Collects figures and check outcomes."""

    def __init__(self):
        self.checks = []
        self.figures = {}
        self.skipped = []
        self.notes = []

    def check(self, name, ok, detail):
        self.checks.append({'name': name, 'ok': bool(ok), 'detail': detail})
        print('%s  %s: %s' % ('PASS' if ok else 'FAIL', name, detail))
        return ok

    def skip(self, name, why):
        """A check that cannot apply to this row: said, never passed."""
        self.skipped.append({'name': name, 'why': why})
        print('SKIP  %s: %s' % (name, why))

    def note(self, name, detail):
        """Said beside the checks, changes no verdict."""
        self.notes.append({'name': name, 'detail': detail})
        print('NOTE  %s: %s' % (name, detail))

    def figure(self, key, value):
        self.figures[key] = value

    @property
    def ok(self):
        return all(c['ok'] for c in self.checks)


def load(path):
    with open(path, encoding='utf-8') as f:
        return json.load(f)


def within(measured, expected, tol=TOLERANCE):
    """True when measured is within tol (relative) of expected."""
    if expected == 0:
        return measured == 0
    return abs(measured - expected) <= tol * abs(expected)


def rel(measured, expected):
    if expected == 0:
        return float('inf') if measured else 0.0
    return (measured - expected) / expected


class Guest:
    """One guest of the run: guest.json and its results."""

    def __init__(self, run, name):
        self.name = name
        self.dir = os.path.join(run, 'guests', name)
        self.doc = load(os.path.join(self.dir, 'guest.json'))
        self.results = {}
        for e in self.doc.get('experiments', []):
            if e.get('result'):
                self.results[e['name']] = load(
                    os.path.join(self.dir, e['result']))

    def exp(self, name):
        return self.results.get(name)

    def exp_entry(self, name):
        for e in self.doc.get('experiments', []):
            if e.get('name') == name:
                return e
        return None

    def excerpt(self):
        """Kernel findings from the console and from every result."""
        lines = list(self.doc.get('kernel_log', {}).get('excerpt', []))
        for r in self.results.values():
            lines += r.get('kernel_log', {}).get('excerpt', [])
        return lines


def kernel_of(g, kernels):
    """(key, record) of the run manifest's kernel the guest booted: the
    one whose linux-image package has the guest's package sha256."""
    sha = g.doc.get('kernel', {}).get('package_sha256')
    for key, k in sorted(kernels.items()):
        if sha and any(d.get('sha256') == sha for d in k.get('debs') or []):
            return key, k
    return None, None


def row_of(g, kernels):
    """One row of the table: which kernel a guest ran and where it came
    from (Debian's image, or a lab build of Debian's source)."""
    key, k = kernel_of(g, kernels)
    k = k or {}
    debian = k.get('origin') == 'debian'
    deb = ([d for d in k.get('debs') or []
            if str(d.get('name', '')).startswith('linux-image-')] or [{}])[0]
    return {
        'guest': g.name, 'kernel': key,
        'origin': 'debian' if debian else ('lab' if key else None),
        'package': deb.get('name'),
        'version': k.get('version') if debian else k.get('pkgversion'),
        'sha256': deb.get('sha256'),
        'release': g.doc.get('kernel', {}).get('release'),
    }


def print_rows(rows):
    print('rows (Debian: Debian\'s own linux-image from the archive; lab: '
          'built by kernel-build/build from Debian\'s linux-source):')
    for r in rows:
        print('  %-22s %-6s %-20s %s=%s sha256 %s' % (
            r['guest'], r['origin'] or '?', r['kernel'] or '?',
            r['package'] or '?', r['version'] or '?', r['sha256'] or '?'))


def skip_not_applicable(p, g, k):
    """Say which checks this row cannot run, and why."""
    if not g.name.startswith(('patched-', '6.12-patched-')):
        p.skip(g.name + ': PMD sharing counters (htlb_pmd_share, ...) and '
               'hugetlb_fault_lock modes',
               'the lab\'s series adds them; a stock kernel has neither '
               '(checked instead: it reports no fault lock mode%s)'
               % ('; the savings of sharing by PageTables'
                  if g.name.startswith('debian-6.12-') else ''))
    if (k or {}).get('origin') == 'debian':
        opts = k.get('config_options') or {}
        off = [o for o, v in sorted(opts.items()) if v != 'y']
        line = (k.get('source') or {}).get('line')
        if off:
            p.skip(g.name + ': lockdep and DEBUG_VM findings',
                   '%s not set in Debian\'s %s: "no kernel warnings" '
                   'covers what a production kernel reports, not lock '
                   'assertions (the lab\'s debug build has them: guest '
                   '%s)' % (', '.join(off), k.get('config'),
                            'stock-6.12' if line == '6.12' else 'stock'))


def note_discarded(p, g):
    """Boots of this guest discarded (smoke/boot: an emulator fault, or a
    kernel that never reached user space): named, with the reason and the
    fault; the checks read the last boot only."""
    for d in g.doc.get('discarded_attempts', []):
        fault = ((d.get('emulator_faults') or [None])[0] or
                 d.get('first_finding') or d.get('error', 'no finding'))
        p.note('%s: a boot was discarded (%s) and the guest booted again'
               % (g.name, d.get('reason', 'emulator fault')),
               '%s, status %s (kept in %s)'
               % (fault, d.get('status'),
                  os.path.dirname(d.get('guest_json', '?'))))


def check_debian_race(p, g):
    """Debian's 6.1 image and the reproducer: recorded, not checked (no
    lockdep: the race is hit by chance, tests/repro-rate measures how
    often).  Checked: the guest booted the image and the reproducer ran
    to an outcome."""
    k = g.doc.get('kernel', {})
    p.check(g.name + ': booted the recorded image', k.get('verified'),
            'release=%s image_release=%s' % (k.get('release'),
                                             k.get('image_release')))
    e, out = repro_output(g)
    rc = e.get('exit_code') if e else None
    detected = [ln for ln in out if 'detected after' in ln]
    findings = g.doc.get('kernel_log', {}).get('warnings')
    p.figure(g.name + '.repro', {
        'exit_code': rc, 'seconds': e and e.get('seconds'),
        'guest_status': g.doc.get('status'), 'kernel_warnings': findings,
        'detected': detected[0][2:] if detected else None})
    hit = rc == 1 or g.doc.get('status') in ('panic', 'timeout') or \
        bool(findings)
    p.check(g.name + ': reproducer ran to an outcome',
            rc in (0, 1) or g.doc.get('status') in ('panic', 'timeout'),
            'exit=%s guest=%s' % (rc, g.doc.get('status')))
    p.skip(g.name + ': reproducer verdict',
           'recorded, not checked: %s (exit %s, %s kernel findings, guest '
           '%s); without lockdep the race is hit in about half of the '
           '30 s runs' % ('race hit' if hit else 'not hit in this run', rc,
                          findings, g.doc.get('status')))


def vmstat(res, key):
    return res.get('vmstat_delta', {}).get(key)


def hist(res, *path):
    h = res
    for p in path:
        h = h.get(p) if isinstance(h, dict) else None
    return h if isinstance(h, dict) else None


def check_stock(p, g):
    """The stock debug kernel must warn from hugetlb_split()."""
    ex = g.excerpt()
    hits = [ln for ln in ex if 'hugetlb_split' in ln]
    log = g.doc.get('kernel_log', {})
    # An emulator fault's trace may pass through hugetlb_split too: it
    # is no warning of the kernel's (workloads/smoke/README.md).
    real = (log.get('warnings') or 0) - len(log.get('emulator_faults') or [])
    p.figure(g.name + '.kernel_warnings', log.get('warnings'))
    p.check(g.name + ': lockdep warns from hugetlb_split', hits and real > 0,
            '%d excerpt lines name hugetlb_split, e.g. %r; %d findings '
            'not emulator faults' % (len(hits), hits[0] if hits else None,
                                     real))
    racer = g.exp('split-racer')
    if p.check(g.name + ': split-racer ran', racer is not None,
               'result present' if racer else 'no result'):
        p.check(g.name + ': split-racer flags the kernel log',
                racer.get('kernel_log', {}).get('warnings', 0) > 0,
                'racer kernel_log.warnings=%s status=%s'
                % (racer.get('kernel_log', {}).get('warnings'),
                   racer.get('status')))
    for r in g.results.values():
        p.check(g.name + ': ' + r.get('program', '?') +
                ' reports no fault lock mode (stock kernel)',
                r.get('kernel', {}).get('hugetlb_fault_lock') is None,
                'hugetlb_fault_lock=%r'
                % r.get('kernel', {}).get('hugetlb_fault_lock'))
        break


def check_clean(p, g, mode):
    """A patched guest (or stock 6.12, mode None: no fault lock mode): no
    kernel findings, every experiment ok."""
    warn = g.doc.get('kernel_log', {}).get('warnings')
    p.figure(g.name + '.kernel_warnings', warn)
    p.check(g.name + ': no kernel warnings on the console', warn == 0,
            'warnings=%s excerpt=%r'
            % (warn, g.doc.get('kernel_log', {}).get('excerpt', [])[:3]))
    p.check(g.name + ': guest status ok', g.doc.get('status') == 'ok',
            'status=%s' % g.doc.get('status'))
    for e in g.doc.get('experiments', []):
        p.check('%s: experiment %s ok' % (g.name, e['name']),
                e.get('status') == 'ok',
                'status=%s exit=%s seconds=%s' % (
                    e.get('status'), e.get('exit_code'), e.get('seconds')))
    for name, r in sorted(g.results.items()):
        fl = r.get('kernel', {}).get('hugetlb_fault_lock')
        p.check('%s: %s %s' % (
            g.name, name, 'runs with hugetlb_fault_lock=%s' % mode if mode
            else 'reports no fault lock mode (stock kernel)'),
            fl == mode, 'kernel reports %r' % fl)
        kl = r.get('kernel_log', {}).get('warnings')
        p.check('%s: %s saw no kernel log findings' % (g.name, name),
                kl == 0, 'kernel_log.warnings=%s' % kl)
        for size, hp in sorted(r.get('hugepages', {}).items()):
            if isinstance(hp, dict) and 'returned' in hp:
                p.check('%s: %s returned every %s-byte huge page'
                        % (g.name, name, size), hp['returned'],
                        'before=%s after=%s' % (hp.get('before'),
                                                hp.get('after')))
    racer = g.exp('racer')
    if p.check(g.name + ': racer ran', racer is not None,
               'result present' if racer else 'no result'):
        ops = racer.get('unshare_ops', {})
        p.figure(g.name + '.racer', {
            'reads': racer.get('reads'), 'writes': racer.get('writes'),
            'tag_errors': racer.get('tag_errors'), 'unshare_ops': ops})
        p.check(g.name + ': racer has zero tag errors',
                racer.get('tag_errors') == 0,
                'reads=%s tag_errors=%s unshare_ops=%s'
                % (racer.get('reads'), racer.get('tag_errors'), ops))
        p.check(g.name + ': racer ran every unshare operation',
                ops and all(v > 0 for v in ops.values()),
                'unshare_ops=%s' % ops)


def repro_output(g):
    """The reproducer's experiment entry and its TAP output lines."""
    e = g.exp_entry('repro')
    if e is None or not e.get('output'):
        return e, []
    try:
        with open(os.path.join(g.dir, e['output']), errors='replace') as f:
            return e, f.read().splitlines()
    except OSError:
        return e, []


def check_repro(p, g, expect_failure):
    """hugetlb-split-race (patch 0005): fails (exit 1) with a finding on
    stock 6.1, passes every test (exit 0) on patched 6.1 and stock 6.12;
    a skip (exit 4: not enough huge pages) fails either way."""
    e, out = repro_output(g)
    if not p.check(g.name + ': reproducer ran', e is not None and
                   e.get('exit_code') is not None,
                   'entry=%s' % (e and {k: e.get(k) for k in
                                        ('status', 'exit_code',
                                         'seconds')})):
        return
    rc = e['exit_code']
    failed = [ln for ln in out if ln.startswith('not ok ')]
    passed = [ln for ln in out if ln.startswith('ok ')]
    kernel = [ln for ln in out if ln.startswith('# kernel: ')]
    detected = [ln for ln in out if 'detected after' in ln]
    p.figure(g.name + '.repro', {
        'exit_code': rc, 'seconds': e.get('seconds'), 'passed': len(passed),
        'failed': len(failed), 'kernel_findings': len(kernel),
        'detected': detected[0][2:] if detected else None})
    if expect_failure:
        p.check(g.name + ': reproducer detects the race (exit 1, a '
                'kernel finding)', rc == 1 and failed and kernel,
                'exit=%s failed=%r first finding=%r'
                % (rc, failed[:2], kernel[0][2:] if kernel else None))
    else:
        p.check(g.name + ': reproducer passes every test (exit 0)',
                rc == 0 and len(passed) == 4 and not failed,
                'exit=%s passed=%d failed=%r findings=%r'
                % (rc, len(passed), failed[:2], kernel[:2]))


def check_counters(p, g):
    """PMD sharing counters of the patched kernel against PageTables."""
    al, un = g.exp('aligned'), g.exp('unshared')
    if not p.check(g.name + ': aligned and unshared results present',
                   al is not None and un is not None,
                   'aligned=%s unshared=%s' % (al is not None,
                                               un is not None)):
        return
    n = al['config']['sessions']
    # shmdb's own reading at the moment every session had attached, as a
    # delta from its start (independent of earlier experiments' counts).
    # PMD tables saved by sharing at that moment: shares minus unshares.
    att = al.get('vmstat_attached', {})
    gauge = (att['htlb_pmd_share'] - att.get('htlb_pmd_unshare', 0)
             if 'htlb_pmd_share' in att else None)
    share = vmstat(al, 'htlb_pmd_share')
    unshare = vmstat(al, 'htlb_pmd_unshare')
    backout = vmstat(al, 'htlb_pmd_share_backout')
    pt_al = al['pagetables_delta']
    pt_un = un['pagetables_delta']
    diff = pt_un - pt_al
    p.figure(g.name + '.counters', {
        'sessions': n, 'saved_attached': gauge,
        'htlb_pmd_share': share, 'htlb_pmd_unshare': unshare,
        'htlb_pmd_share_backout': backout,
        'pagetables_delta_aligned': pt_al,
        'pagetables_delta_unshared': pt_un,
        'pagetables_difference': diff,
        'saved_bytes': gauge * PAGE if gauge is not None else None,
        'share_unshared_run': vmstat(un, 'htlb_pmd_share'),
    })
    for c in COUNTERS:
        p.check('%s: /proc/vmstat has %s' % (g.name, c),
                c in al.get('vmstat_delta', {}),
                'vmstat_delta[%s]=%s' % (c, vmstat(al, c)))
    if gauge is None or share is None:
        p.check(g.name + ': sharing counters at attach', False,
                'vmstat_attached=%r' % att)
        return
    # One slot, n sessions: every session but the first to fault the slot
    # shares its PMD table (n - 1 sharers; n when the coordinator, which
    # also maps the segment, faulted first).  The first faults can race
    # (huge_pmd_share() looks for a table under i_mmap_rwsem held for
    # read) and allocate a few tables: allow 1 %.
    p.check(g.name + ': share events = sessions - 1 (1 % for racing '
            'first faults)', 0.99 * (n - 1) <= share <= n,
            'htlb_pmd_share=%d sessions=%d' % (share, n))
    p.check(g.name + ': saved tables at attach = share events',
            gauge == share, 'share - unshare at attach=%d htlb_pmd_share=%d'
            % (gauge, share))
    p.check(g.name + ': every share undone at teardown',
            unshare == share,
            'htlb_pmd_unshare=%s htlb_pmd_share=%d' % (unshare, share))
    p.check(g.name + ': saved bytes = PageTables(unshared) - '
            'PageTables(aligned) within %d%%' % (TOLERANCE * 100),
            within(gauge * PAGE, diff),
            'saved %d B vs PageTables difference %d B (%+.2f%%)'
            % (gauge * PAGE, diff, 100 * rel(gauge * PAGE, diff)))
    ush = vmstat(un, 'htlb_pmd_share')
    p.check(g.name + ': no sharing when the slot is not covered',
            ush == 0, 'htlb_pmd_share=%s in the unshared run' % ush)
    split = g.exp('split-shmdb')
    if split is not None:
        su = vmstat(split, 'htlb_pmd_unshare')
        ss = vmstat(split, 'htlb_pmd_share')
        p.figure(g.name + '.split_counters', {
            'htlb_pmd_share': ss, 'htlb_pmd_unshare': su,
            'mprotect_ops': split.get('disruptor', {}).get('ops', {})
            .get('mprotect', {}).get('count')})
        p.check(g.name + ': partial mprotect unshares (split events)',
                su is not None and su > 0 and su == ss,
                'htlb_pmd_unshare=%s htlb_pmd_share=%s' % (su, ss))
    punch = g.exp('punch-shared')
    if punch is not None:
        pu = vmstat(punch, 'htlb_pmd_unshare')
        ps = vmstat(punch, 'htlb_pmd_share')
        ops = punch.get('disruptor', {}).get('ops', {}).get('punch', {})
        p.figure(g.name + '.punch_counters', {
            'htlb_pmd_share': ps, 'htlb_pmd_unshare': pu,
            'punch_ops': ops.get('count')})
        p.check(g.name + ': hole punch unshares every sharer and faults '
                're-share', pu is not None and pu > n - 1 and pu == ps,
                'htlb_pmd_unshare=%s htlb_pmd_share=%s punches=%s '
                'sessions=%d' % (pu, ps, ops.get('count'), n))


def check_sharing_pagetables(p, g):
    """PMD sharing on a kernel without the series' counters (Debian's
    6.12): PageTables per session of the unshared run over the aligned
    one against the same difference of shmdb's models, within 5 %."""
    al, un = g.exp('aligned'), g.exp('unshared')
    if not p.check(g.name + ': aligned and unshared results present',
                   al is not None and un is not None,
                   'aligned=%s unshared=%s' % (al is not None,
                                               un is not None)):
        return
    measured = un['pagetables_per_session'] - al['pagetables_per_session']
    model = (un['model']['per_session_bytes'] -
             al['model']['per_session_bytes'])
    p.figure(g.name + '.sharing', {
        'sessions': al['config']['sessions'],
        'pagetables_per_session_aligned': al['pagetables_per_session'],
        'pagetables_per_session_unshared': un['pagetables_per_session'],
        'measured_saved_per_session': measured,
        'model_saved_per_session': model})
    p.check(g.name + ': PMD sharing saves the model\'s page-table bytes '
            '(PageTables, no counters) within %d%%' % (TOLERANCE * 100),
            al['model'].get('sharing') and model > 0 and
            within(measured, model),
            'unshared - aligned = %.1f B/session, model %.1f (%+.2f%%), '
            '%d sessions' % (measured, model, 100 * rel(measured, model),
                             al['config']['sessions']))


def lat(h):
    if not h:
        return None
    return {k: h.get(k) for k in ('count', 'p50', 'p99', 'p999', 'max')}


# hugetlb_fault_lock=i_mmap against vma: the latency of the page faults
# taken while a hole punch ran (shmdb --count-faults: first reads that moved
# ru_minflt; --active keeps the mappers asleep, so the CPU queue does not
# swamp the lock), compared with a one-sided Mann-Whitney U test on the
# histogram samples (reports/hugelab_report/stats.py).
LAT_MIN_FAULTS = 30     # faults per side for a meaningful test
LAT_ALPHA = 0.001       # i_mmap faults are slower: p below this
LAT_MIN_RATIO = 2.0     # and the median i_mmap fault this times vma's


def compare_faults(vma_h, immap_h, stats):
    """Figures and verdict for two 'faulting during punch' histograms."""
    out = {}
    for side, h in (('vma', vma_h), ('i_mmap', immap_h)):
        n = stats.hist_count(h)
        out[side] = {'count': n}
        if n:
            out[side].update({
                'p50': stats.percentile(h, 50), 'p90': stats.percentile(h, 90),
                'p99': stats.percentile(h, 99), 'max': h.get('max')})
    nv, ni = out['vma']['count'], out['i_mmap']['count']
    if nv < LAT_MIN_FAULTS or ni < LAT_MIN_FAULTS:
        out['ok'] = False
        out['why'] = 'too few faults during punches (vma %d, i_mmap %d, ' \
            'need %d each)' % (nv, ni, LAT_MIN_FAULTS)
        return out
    mw = stats.mann_whitney_greater(stats.expand(immap_h),
                                    stats.expand(vma_h))
    out['mann_whitney_p'], out['effect'] = mw[1], mw[2]
    for q in ('p50', 'p90', 'p99'):
        out[q + '_ratio'] = out['i_mmap'][q] / out['vma'][q]
    out['ok'] = mw[1] < LAT_ALPHA and out['p50_ratio'] >= LAT_MIN_RATIO
    out['why'] = 'Mann-Whitney p=%.2g (need < %g), P(i_mmap > vma)=%.2f, ' \
        'median %.3g ms vs %.3g ms = x%.1f (need >= x%.0f), p90 x%.1f, ' \
        'p99 x%.1f' % (
            mw[1], LAT_ALPHA, mw[2], out['i_mmap']['p50'] / 1e6,
            out['vma']['p50'] / 1e6, out['p50_ratio'], LAT_MIN_RATIO,
            out['p90_ratio'], out['p99_ratio'])
    return out


def check_latency(p, vma, immap):
    """Fault latency during hole punching per hugetlb_fault_lock mode."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(
        __file__)), '..', '..', 'reports'))
    from hugelab_report import stats  # numpy, scipy: Debian packages
    rows, faulting = {}, {}
    for mode, g in (('vma', vma), ('i_mmap', immap)):
        r = g.exp('punch') if g else None
        if r is None:
            p.check('punch result for hugetlb_fault_lock=%s' % mode, False,
                    'missing')
            return
        faulting[mode] = hist(r, 'during_disruption', 'by_op', 'punch',
                              'faulting')
        rows[mode] = {
            'sessions': r['config']['sessions'],
            'active': r['config'].get('active'),
            'faulting_during': lat(faulting[mode]),
            'reads_during': lat(hist(r, 'during_disruption', 'faults')),
            'txn_during': lat(hist(r, 'during_disruption', 'transactions')),
            'punch_op': lat(hist(r, 'disruptor', 'ops', 'punch',
                                 'duration')),
            'transactions_per_s': r.get('transactions', {}).get('per_s'),
        }
    p.figure('latency', rows)
    for mode, row in rows.items():
        print('      %-6s faults during punch %s' % (mode,
                                                     row['faulting_during']))
        print('      %-6s punch op duration   %s' % (mode, row['punch_op']))
    cmp = compare_faults(faulting['vma'], faulting['i_mmap'], stats)
    p.figure('latency_i_mmap_vs_vma', cmp)
    p.check('hole punch with %d mappers stalls faults longer with '
            'hugetlb_fault_lock=i_mmap than with vma'
            % rows['vma']['sessions'], cmp['ok'], cmp['why'])


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    run = argv[1]
    try:
        manifest = load(os.path.join(run, 'manifest.json'))
        names = manifest['guests']
        kernels = manifest.get('kernels') or {}
    except (OSError, ValueError, KeyError) as e:
        print('check_proof: %s is not a proof run directory: %s' % (run, e),
              file=sys.stderr)
        return 2
    p = Proof()
    guests = {}
    for n in names:
        try:
            guests[n] = Guest(run, n)
        except (OSError, ValueError) as e:
            p.check(n + ': guest.json readable', False, str(e))
    rows = [row_of(g, kernels) for g in guests.values()]
    print_rows(rows)
    vma = immap = None
    for n, g in guests.items():
        p.figure(n + '.boot_to_userspace_s',
                 g.doc.get('timings', {}).get('boot_to_userspace_s'))
        note_discarded(p, g)
        skip_not_applicable(p, g, kernel_of(g, kernels)[1])
        if n.startswith('debian-6.1-'):
            check_debian_race(p, g)
            continue
        if n.startswith(('6.12-stock-', 'debian-6.12-')):
            check_clean(p, g, None)
            if n.startswith('debian-6.12-'):
                check_sharing_pagetables(p, g)
        elif n.startswith('stock-'):
            check_stock(p, g)
        elif n.endswith('-immap'):
            immap = g
            check_clean(p, g, 'i_mmap')
        elif n.startswith(('patched-', '6.12-patched-')):
            if n.startswith('patched-'):
                vma = g
            check_clean(p, g, 'vma')
            check_counters(p, g)
        # Only stock 6.1 lacks the split fix.
        check_repro(p, g, expect_failure=n.startswith('stock-'))
    if vma is not None and immap is not None:
        check_latency(p, vma, immap)
    out = {'schema': 'hugelab.kernel-proof/1', 'ok': p.ok,
           'rows': rows, 'checks': p.checks, 'skipped': p.skipped,
           'notes': p.notes,
           'figures': p.figures}
    with open(os.path.join(run, 'proof.json'), 'w', encoding='utf-8') as f:
        json.dump(out, f, indent=1)
        f.write('\n')
    manifest['status'] = 'ok' if p.ok else 'fail'
    with open(os.path.join(run, 'manifest.json'), 'w',
              encoding='utf-8') as f:
        json.dump(manifest, f, indent=1)
        f.write('\n')
    failed = [c['name'] for c in p.checks if not c['ok']]
    print('proof: %d checks, %d failed, %d skipped (not applicable)%s' % (
        len(p.checks), len(failed), len(p.skipped),
        (': ' + '; '.join(failed)) if failed else ''))
    return 0 if p.ok else 1


if __name__ == '__main__':
    sys.exit(main(sys.argv))
