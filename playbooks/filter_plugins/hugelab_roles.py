"""hugelab filters for the roles: the logic that used to be Jinja programs
inside the roles' YAML (ansible.cfg's filter_plugins; unit tests in
playbooks/tests/test_roles_filters.py).

- lab_kernel_id, lab_kernels_wanted: a guest kernel's id (its cache
  directory and key in lab_kernels) and the kernels a fleet needs (the
  kernel role's kernel_wanted, the fleet role's fleet_kernel_id);
- lab_json_file: a result file as a mapping, {} when it is missing, empty
  or not JSON (the run role's run_result_doc);
- lab_console_hits, lab_console_status: the console lines that mark a
  guest broken and a guest's status from its console (the run role's
  experiment record and playbooks/tasks/guest-failed.yml);
- lab_pick, lab_stage_timings: manifest.json's inventory and timings (the
  collect role);
- lab_guest_doc: a guest's guest.json (reports/RUNDIR.md, hugelab.guest/1;
  the collect role's templates/guest.json.j2);
- lab_ssh_proxy: the SSH option that reaches a guest through its remote
  hypervisor (inventory/group_vars/guests.yml);
- lab_regress_twins: the twins of a regression plan (regress-plan.yml);
- lab_collect_failures: the run's failures (the collect role);
- lab_exp_status, lab_exp_deadline, lab_run_guest_status: an experiment's
  status, how its deadline ended it, and its guest's status after it (the
  run role's experiment record);
- lab_error_text, lab_wait_failure, lab_fetch_note: what went wrong in a
  task result on the guest (ENOSPC named; also a failed guest's failure,
  playbooks/tasks/guest-failed.yml), why the wait for an experiment gave
  the guest up, why its result was not fetched (the run role);
- lab_job_result: an async job's result from the line job-wait printed
  (the job_wait role);
- lab_fleet_pools: a guest's hugepage pools on its kernel command line (the
  fleet role's fleet_pools);
- lab_peers: the guests of a hypervisor in a play (site.yml's lab_peers);
- lab_outcome_failures: the failures the run ends on (site.yml's Outcome);
- lab_teardown_mine: the domain names of a hypervisor's guests (teardown.yml);
- lab_regress_errors: the mistakes a refused regression plan records
  (regress-plan.yml);
- lab_kernel_manifest: the manifest a kernel build wrote or the cached one
  (the kernel role's build.yml);
- lab_bundle_files: the DEST SRC pairs of a guest's program bundle (the run
  role's run_bundle_files);
- lab_console_excerpt, lab_failed_experiments, lab_failed_status: a failed
  guest's console excerpt, experiments and status
  (playbooks/tasks/guest-failed.yml);
- lab_doc_note: the note on a result file that is not a result (the run
  role's experiment record);
- lab_source_version: the source version of the kernels built from a
  linux-source package (inventory/group_vars/all.yml's selftest_src);
- lab_guest_programs: the programs the guests' experiments run (the run
  role's builds on the controller);
- lab_unreachable_msg: the failure of a guest that stopped answering SSH
  (the install and run roles' checks after their ignore_unreachable tasks);
- lab_boot_failure, lab_qemu_pidfile: the verdict of the fleet role's
  boot wait (files/boot-wait: SSH, a kernel panic on the console, the
  domain gone, or the boot timeout) and the pid file it watches;
- lab_collect_guests, lab_vanished_guests: the guests of this run (also
  those that never got a status) and those that vanished without one (the
  collect role, site.yml's play for guests dropped unreachable);
- lab_guest_phases: the seconds of a guest's phases (boot, install,
  experiments, collect) from the marks its lifecycle recorded
  (playbooks/tasks/guest-lifecycle.yml; guest.json's phases);
- lab_batch_members, lab_batch_pending: the guests of one batch and those
  whose batch has not begun (the report after each batch:
  playbooks/tasks/batch-collect.yml).
"""
import json
import re

try:
    # What a guest printed is data, never a template (Ansible marks
    # registered results so; a filter's fresh strings must be marked too).
    from ansible.utils.unsafe_proxy import wrap_var
except ImportError:     # the unit tests without Ansible
    def wrap_var(v):
        return v

# Terminal escape sequences, dropped from guest.json's console excerpt.
ANSI = re.compile('\x1b\\[[0-9;]*[A-Za-z]')

# The kernel source line a guest runs when its kernel names none.
DEFAULT_SOURCE = '6.1'
# The console line of a kernel panic: the guest's status is 'panic'.
PANIC_PATTERN = 'Kernel panic'


def lab_kernel_id(kernel):
    """A guest kernel's id ({variant, flavour, source}): VARIANT-FLAVOUR on
    the 6.1 line, LINE-VARIANT-FLAVOUR on another (kernel-build/build's
    cache directory name)."""
    src = str(kernel.get('source', DEFAULT_SOURCE))
    prefix = '' if src == DEFAULT_SOURCE else src + '-'
    return '%s%s-%s' % (prefix, kernel['variant'], kernel['flavour'])


def lab_kernels_wanted(hostvars, guests):
    """The kernels the guests use, each once, in inventory order, as
    {id, source, variant, flavour}."""
    out, ids = [], set()
    for g in guests:
        k = hostvars[g]['kernel']
        kid = lab_kernel_id(k)
        if kid in ids:
            continue
        ids.add(kid)
        out.append({'id': kid,
                    'source': str(k.get('source', DEFAULT_SOURCE)),
                    'variant': k['variant'], 'flavour': k['flavour']})
    return out


def lab_json_file(path):
    """The JSON document in a file (on the controller) when it is a
    mapping; {} when the file is missing, unreadable, empty or not JSON (a
    workload killed while writing, an earlier pass's file cut short)."""
    try:
        with open(path, encoding='utf-8') as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return {}
    return doc if isinstance(doc, dict) else {}


def console_regex(patterns):
    """One regex matching any of the console patterns (literal text)."""
    return '|'.join(re.escape(p) for p in patterns)


def lab_console_hits(lines, patterns):
    """The console lines that contain any of the patterns (literal text,
    console_fail_patterns), in order."""
    if not patterns:
        # Ansible's search with an empty regex matches every line.
        return list(lines)
    rx = re.compile(console_regex(patterns))
    return [line for line in lines if rx.search(line)]


def lab_console_status(lines, otherwise):
    """'panic' when a console line shows a kernel panic, else otherwise."""
    if any(PANIC_PATTERN in line for line in lines):
        return 'panic'
    return otherwise


def lab_pick(hostvars, hosts, keys):
    """{host: {key: value}} of the given keys of each host's variables."""
    return {h: {k: hostvars[h][k] for k in keys} for h in hosts}


def lab_stage_timings(starts, now):
    """Seconds each stage took: starts is {stage: start epoch s}; a stage
    ends when the next one (by start time) starts, the last one at now."""
    order = sorted(starts.items(), key=lambda kv: int(kv[1]))
    out = {}
    for i, (stage, t0) in enumerate(order):
        end = int(order[i + 1][1]) if i + 1 < len(order) else int(now)
        out[stage] = end - int(t0)
    return out


def as_int(value):
    """Jinja's int filter: the number, 0 when it is none."""
    try:
        if isinstance(value, str):
            return int(value, 10)
        return int(value)
    except (TypeError, ValueError):
        try:
            return int(float(value))
        except (TypeError, ValueError):
            return 0


def as_float(value):
    """Jinja's float filter: the number, 0.0 when it is none."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return 0.0


def lab_guest_doc(g, name, hostvars):
    """guest.json of guest name (g: its variables, hostvars: every host's,
    for its hypervisor's)."""
    hv = hostvars[g['hypervisor']]
    status = g['guest_status'] if 'guest_status' in g else 'fail'
    exps = [{'name': e['name'], 'program': e['program'],
             'status': e['status'], 'result': e['result'],
             'seconds': as_float(e['seconds']), 'rc': as_int(e['rc']),
             'stderr_tail': e['stderr_tail'],
             **({'started_at': e['started_at']} if 'started_at' in e
                else {})}
            for e in (g['guest_experiments']
                      if 'guest_experiments' in g else [])]
    excerpt = []
    if status != 'ok' and 'guest_console_excerpt' in g:
        excerpt = [ANSI.sub('', str(line))
                   for line in g['guest_console_excerpt']]
    kinfo = g['guest_kernel_info'] if 'guest_kernel_info' in g else {}
    kernel = g['kernel']

    def opt_float(key):
        return as_float(g[key]) if key in g else None

    doc = {
        'schema': 'hugelab.guest/1',
        'name': name,
        'hypervisor': hv['libvirt_uri'],
        'shape': {
            'memory_mib': as_int(g['memory_mib']),
            'vcpus': as_int(g['vcpus']),
            'hugepages_2m': as_int(g['hugepages_2m']),
            'hugepages_1g': as_int(g['hugepages_1g']),
            'cpu_model': str(g['guest_cpu_model']) + ''.join(
                ',+%s' % f for f in g['guest_cpu_features']),
            'domain_type': (hv['hv_domain_type']
                            if 'hv_domain_type' in hv else ''),
        },
        'kernel': {
            'source': str(kernel.get('source', DEFAULT_SOURCE)),
            'variant': kernel['variant'],
            'flavour': kernel['flavour'],
            'release': kinfo.get('release', ''),
            'package_sha256': kinfo.get('package_sha256', ''),
            'cmdline': kinfo.get('cmdline', ''),
            'verified': str(kinfo.get('verified', False)).lower() == 'true',
        },
        'status': status,
        'failure': g['guest_failure'] if 'guest_failure' in g else '',
        'console_excerpt': excerpt,
        'console_warnings': as_int(g['guest_console_warnings']
                                   if 'guest_console_warnings' in g else 0),
        'boot_to_ssh_s': opt_float('fleet_boot_to_ssh_s'),
        'reboot_to_ssh_s': opt_float('fleet_reboot_to_ssh_s'),
        'boot_sshd_up_s': opt_float('fleet_boot_to_ssh_s_sshd'),
        'reboot_sshd_up_s': opt_float('fleet_reboot_to_ssh_s_sshd'),
        'experiments': exps,
    }
    if 'guest_phase_marks' in g:
        doc['phases'] = lab_guest_phases(g['guest_phase_marks'])
    # A twin of a regression fleet: its side and pair (compare --twins).
    if 'regress_side' in g and 'regress_pair' in g:
        doc['regress'] = {'side': g['regress_side'],
                          'pair': g['regress_pair']}
    if 'guest_batch' in g:
        b = g['guest_batch']
        doc['batch'] = {'index': as_int(b['index']),
                        'started_at': b['started_at'],
                        'finished_at': b.get('finished_at')}
    return doc


def lab_ssh_proxy(hv, hypervisor):
    """'-o ProxyCommand="ssh -W %h:%p ..."' through the hypervisor (hv: its
    variables, hypervisor: its name) for a guest of a remote hypervisor;
    '' for a local one (ansible_connection local)."""
    def get(key, default):
        return hv[key] if key in hv else default
    if get('ansible_connection', 'ssh') == 'local':
        return ''
    key = ''
    if 'ansible_ssh_private_key_file' in hv:
        key = ' -i %s' % hv['ansible_ssh_private_key_file']
    return '-o ProxyCommand="ssh -W %%h:%%p -p %s%s %s -l %s %s"' % (
        get('ansible_port', 22), key, get('ansible_ssh_common_args', ''),
        get('ansible_user', 'root'), get('ansible_host', hypervisor))


def lab_regress_twins(hostvars, guests):
    """{guest: {side, pair, kernel, cmdline_extra, hypervisor, memory_mib,
    experiments (names)}} of a regression fleet's guests (only these keys
    are read: a guest's other variables are templated for its own
    plays)."""
    out = {}
    for n in guests:
        g = hostvars[n]
        out[n] = {'side': g['regress_side'], 'pair': g['regress_pair'],
                  'kernel': g['kernel'], 'cmdline_extra': g['cmdline_extra'],
                  'hypervisor': g['hypervisor'],
                  'memory_mib': as_int(g['memory_mib']),
                  'experiments': [e['name'] for e in g['experiments']]}
    return out


def lab_collect_failures(guests, hostvars):
    """The run's failures: 'HOST: did not finish' of each guest without a
    guest_status, then 'HOST: guest not ok' of each guest whose
    guest_status is not 'ok' (guests in the given order)."""
    unfinished = [h for h in guests if 'guest_status' not in hostvars[h]]
    not_ok = [h for h in guests if 'guest_status' in hostvars[h]
              and hostvars[h]['guest_status'] != 'ok']
    return ([h + ': did not finish' for h in unfinished]
            + [h + ': guest not ok' for h in not_ok])


def lab_exp_status(dead, rc, msg, doc_status, hits, deadline=''):
    """An experiment's status: 'timeout' when the guest died (dead), the
    job timed out (rc 124), never completed (msg) or was ended by its
    deadline (deadline: lab_exp_deadline's note); else 'ok' when rc is 0,
    the result document's status is 'ok' and no console line hit; else
    'fail'."""
    if dead or as_int(rc) == 124 or re.search('did not complete', str(msg)) \
            or deadline:
        return 'timeout'
    if as_int(rc) == 0 and doc_status == 'ok' and len(hits) == 0:
        return 'ok'
    return 'fail'


# GNU timeout --verbose's line for each signal it sends at the deadline
# (the run role starts every experiment under timeout --verbose
# --kill-after=10).
TIMEOUT_SIGNAL = re.compile(r'timeout: sending signal (\w+) to command')
# Ansible's async_wrapper's result when a job outlives its async limit.
ASYNC_LIMIT = 'Timeout exceeded'


def lab_exp_deadline(stderr_lines, msg, timeout_s, async_s, seconds=None):
    """How an experiment's deadline ended it, as a note for its
    stderr_tail, or '' when it ended by itself: stopped at timeout_s
    (timeout's SIGTERM), killed 10 s later when it ignored that
    (SIGKILL), or killed by Ansible's async_wrapper at async_s when
    something it started outlived timeout and held the job (msg 'Timeout
    exceeded').  seconds: how long the job took; a job that ended more
    than 15 s after timeout's last signal was held by something the
    program left (its output kept open), and the note says so."""
    if ASYNC_LIMIT in str(msg):
        return ('did not end within the lab\'s limit of %s s (timeout_s %s '
                '+ run_async_grace_s %s): the job was killed by Ansible\'s '
                'async_wrapper (a process it started outlived timeout and '
                'kept the job running)'
                % (async_s, timeout_s, as_int(async_s) - as_int(timeout_s)))
    sigs = []
    for line in stderr_lines or []:
        m = TIMEOUT_SIGNAL.search(str(line))
        if m:
            sigs.append(m.group(1))
    if 'KILL' in sigs:
        note = ('ignored its deadline: still running after SIGTERM at its '
                'timeout_s (%s s), killed by SIGKILL 10 s later'
                % timeout_s)
        last = as_int(timeout_s) + 10
    elif sigs:
        note = 'stopped at its timeout_s (%s s) by SIG%s' % (
            timeout_s, sigs[0])
        last = as_int(timeout_s)
    else:
        return ''
    if seconds is not None and as_float(seconds) > last + 15:
        note += ('; the job ended only %.1f s after it (%s s in all): a '
                 'process it left kept the job\'s output open'
                 % (as_float(seconds) - last, seconds))
    return note


def lab_run_guest_status(lines, status, exp_status, unreachable):
    """A guest's status after one of its experiments: 'panic' when the
    console written during it shows a kernel panic; else 'unreachable'
    when the wait for it found the guest unreachable (SSH gone: sshd
    killed, a hang, a full disk Ansible cannot work on); else 'timeout'
    when it did not finish or its deadline ended it (exp_status timeout);
    else the status so far (an earlier experiment's timeout stays)."""
    if unreachable:
        status = 'unreachable'
    elif exp_status == 'timeout' and status == 'ok':
        status = 'timeout'
    return lab_console_status(lines, status)


# A message from the guest that shows its root file system is full (Ansible
# cannot create its temporary directory there, a module cannot unpack).
DISK_FULL = re.compile(r'No space left on device|\[Errno 28\]')


def lab_disk_full(text):
    """Whether a failure's text shows the guest's disk is full (the
    rescue stops such a guest: it can run nothing more)."""
    return DISK_FULL.search(str(text or '')) is not None


def lab_error_text(result):
    """One line of what went wrong in a task result: its msg and the last
    line of its module_stderr, module_stdout or stderr (a MODULE
    FAILURE's msg alone does not say why; a module that could not unpack
    itself on a full disk has its traceback on stdout), prefixed with
    "the guest's disk is full" when the text shows ENOSPC; '' for a
    result without either."""
    if not isinstance(result, dict):
        return ''
    parts = [' '.join(str(result.get('msg') or '').split())]
    for key in ('module_stderr', 'module_stdout', 'stderr'):
        tail = [x.strip() for x in str(result.get(key) or '').splitlines()
                if x.strip()]
        if tail and tail[-1] not in parts[0]:
            parts.append(tail[-1])
            break
    text = ': '.join(p for p in parts if p)
    if lab_disk_full(text):
        text = "the guest's disk is full (No space left on device): " + text
    return text


def lab_wait_failure(tick, result, name, what):
    """Why the wait for an experiment gave the guest up: 'NAME:
    unreachable during run: wait for WHAT: MSG' when the wait (tick) or
    the job's status (result) found it unreachable, else 'NAME: WHAT did
    not finish: MSG' (the job's status could not be read, e.g. a full
    disk, or the job never ended)."""
    for r in (tick, result):
        if isinstance(r, dict) and r.get('unreachable'):
            return lab_unreachable_msg(r, name, 'run: wait for ' + what)
    why = lab_error_text(result) or 'no job status'
    return '%s: %s did not finish: %s' % (name, what, why)


def lab_job_result(lines, jid):
    """The async job's result as async_status returns it, from the
    "result JSON" line job-wait prints when the job has finished
    (playbooks/roles/job_wait/files/job-wait), else {} (no such line, or
    not a JSON mapping): finished 1, the job id, and stdout_lines /
    stderr_lines split from stdout / stderr."""
    for line in lines or []:
        if not isinstance(line, str) or not line.startswith('result '):
            continue
        try:
            doc = json.loads(line[len('result '):])
        except ValueError:
            return {}
        if not isinstance(doc, dict):
            return {}
        doc = dict(doc, finished=1, ansible_job_id=jid)
        for key in ('stdout', 'stderr'):
            if isinstance(doc.get(key), str) and key + '_lines' not in doc:
                doc[key + '_lines'] = doc[key].splitlines()
        return wrap_var(doc)
    return {}


def lab_fetch_note(name, fetched):
    """The note on experiment NAME's result when its fetch did not bring
    it (fetched: the fetch task's result: skipped, unreachable, failed or
    a stat error it ignored), else []."""
    if not isinstance(fetched, dict) or fetched.get('skipped'):
        return []
    text = lab_error_text(fetched)
    if fetched.get('unreachable') or fetched.get('failed') or \
            str(fetched.get('msg') or '').endswith('ignored'):
        return ['results/%s.json: not fetched: %s'
                % (name, text or 'no message')]
    return []


def lab_fleet_pools(hugepages_2m, hugepages_1g, default_hugepagesz):
    """The hugepage options of a guest's kernel command line, exactly as
    the fleet role's Jinja wrote them (a pool of 0 pages is left out, its
    place a blank: fleet_cmdline squeezes the blanks)."""
    p2m = ('hugepagesz=2M hugepages=' + str(hugepages_2m)
           if as_int(hugepages_2m) > 0 else '')
    p1g = ('hugepagesz=1G hugepages=' + str(hugepages_1g)
           if as_int(hugepages_1g) > 0 else '')
    return '%s %s default_hugepagesz=%s' % (p2m, p1g, default_hugepagesz)


def lab_peers(hosts, hostvars, hypervisor):
    """The hosts (a play's, in its order) whose hypervisor is the given
    one."""
    return [h for h in hosts if hostvars[h]['hypervisor'] == hypervisor]


def ansible_unique(items):
    """Ansible's unique filter (Jinja's with case_sensitive false): the
    items in order, each once, a text equal to an earlier one but for case
    counting as a repeat."""
    seen, out = set(), []
    for item in items:
        key = item.lower() if isinstance(item, str) else item
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out


def lab_outcome_failures(run_failures, guests, hostvars):
    """The failures the run ends on: the collect role's failures, then
    'HOST: guest not ok' of each guest whose guest_status is not 'ok'
    (guests in the given order), then 'HOST: did not finish' of each
    guest that began the guests stage (guest_started) and has no status,
    each once, first place kept (as Ansible's unique: case aside).  A
    guest without a status is never counted ok."""
    not_ok = [h + ': guest not ok' for h in guests
              if 'guest_status' in hostvars[h]
              and hostvars[h]['guest_status'] != 'ok']
    unfinished = [h + ': did not finish'
                  for h in lab_vanished_guests(guests, hostvars)]
    return ansible_unique(list(run_failures) + not_ok + unfinished)


def lab_teardown_mine(guests, hostvars, hypervisor):
    """The domain names of the guests (in the given order) whose
    hypervisor is the given one."""
    return [hostvars[h]['domain_name'] for h in guests
            if 'hypervisor' in hostvars[h]
            and hostvars[h]['hypervisor'] == hypervisor]


def lab_regress_errors(stdout, failed_msg):
    """The validator's mistakes: the errors of its JSON verdict when its
    output is one (starts with '{'), else the failed task's message."""
    if stdout.startswith('{'):
        return json.loads(stdout)['errors']
    return [failed_msg]


def lab_kernel_manifest(built, stdout_lines, cache, kernel_vf):
    """The path of a kernel's manifest: the last line kernel-build/build
    printed when it ran (built), else the cached CACHE/kernel/ID/manifest.json
    (stdout_lines are then not read)."""
    if built:
        return stdout_lines[-1]
    return '%s/kernel/%s/manifest.json' % (cache, kernel_vf)


def lab_bundle_files(programs, lab_programs, selftests, build_dir):
    """The bundle's files as one flat list of DEST SRC pairs: each program
    and its path (lab_programs), then selftests/TEST and BUILD_DIR/bin/TEST
    of each selftest."""
    out = []
    for p in programs:
        out += [p, lab_programs[p]['path']]
    for t in selftests:
        out += ['selftests/' + str(t), str(build_dir) + '/bin/' + str(t)]
    return out


def lab_console_excerpt(lines, previous, patterns, count):
    """A failed guest's console excerpt: the excerpt so far, the console
    lines that hit a pattern, then the last `count` lines (all of them when
    count is 0, as Jinja's lines[-0:]), each once (Ansible's unique)."""
    return ansible_unique(list(previous) + lab_console_hits(lines, patterns)
                          + list(lines[-count:]))


def lab_failed_experiments(experiments, current, failed):
    """A failed guest's experiments: the recorded ones, then the one under
    way (current: {name, program}) as a timeout with the failed task's
    message (failed: its result; 'failed' without a msg), unless there is
    none or it is recorded already."""
    experiments = list(experiments)
    if 'name' not in current:
        return experiments
    name = current['name']
    if name in [e['name'] for e in experiments if 'name' in e]:
        return experiments
    return experiments + [{
        'name': name, 'program': current['program'], 'status': 'timeout',
        'result': 'results/' + str(name) + '.json', 'seconds': 0, 'rc': -1,
        'stderr_tail': [failed.get('msg', 'failed')]}]


# The text lab_unreachable_msg puts in a failure message, which makes
# lab_failed_status say 'unreachable'.
UNREACHABLE = ': unreachable during '


# Ansible's words for an SSH connection that failed or broke (the
# guest's sshd gone: connection refused, closed or reset).
SSH_LOST = re.compile('Failed to connect to the host via ssh'
                      '|Data could not be sent to remote host')


def lab_failed_status(status, msg):
    """A failed guest's status when its console shows no panic: its own
    when not 'ok', else 'unreachable' when the failure came from a check
    after a task that found the guest unreachable (lab_unreachable_msg),
    'timeout' when the failure message says 'timed out' (a guest that
    hangs), 'unreachable' when it is another SSH failure (a task whose
    connection broke while it ran fails instead of being unreachable,
    e.g. the wait for an experiment when the guest's sshd was killed),
    else 'fail'."""
    if status != 'ok':
        return status
    if UNREACHABLE in str(msg):
        return 'unreachable'
    if re.search('timed out', str(msg)):
        return 'timeout'
    return 'unreachable' if SSH_LOST.search(str(msg)) else 'fail'


def lab_doc_note(name, is_file, doc):
    """The note on experiment NAME's result file when it is a file
    (is_file) but not a result (doc, its JSON document, has no status)."""
    if is_file and 'status' not in doc:
        return ['results/' + str(name)
                + '.json: not a result (empty or not JSON)']
    return []


def lab_source_version(kernels, package):
    """The source.version of the first kernel manifest (lab_kernels, in
    its order) whose source.package is the given one; 'none' when there is
    none or it names no version.  A manifest without a source package is an
    error (as it was to the Jinja this replaces)."""
    for manifest in kernels.values():
        source = manifest['source']
        if source['package'] == package:
            return source.get('version', 'none')
    return 'none'


def lab_guest_programs(guests, hostvars):
    """The program of each experiment of each guest, in order (repeats
    kept; a null experiment skipped, as Ansible's flatten does)."""
    return [exp['program'] for h in guests
            for exp in hostvars[h]['experiments']
            if exp not in (None, 'None', 'null')]


def lab_unreachable_msg(result, name, what):
    """'NAME: unreachable during WHAT: MSG' when result (a registered task
    result, of a task with ignore_unreachable) says the guest did not
    answer, else ''.  An UNREACHABLE task inside a block is not rescued
    (ansible-core 2.14 drops the host): the task ignores it and the check
    after it fails with this message, so the rescue runs.  Ansible also
    reports a guest whose disk is full as unreachable (it cannot create
    its temporary directory): MSG then begins with "the guest's disk is
    full"."""
    if not isinstance(result, dict) or not result.get('unreachable'):
        return ''
    msg = lab_error_text(result)
    return '%s%s%s: %s' % (name, UNREACHABLE, what, msg or 'no answer')


def lab_boot_failure(stdout, name, timeout):
    """Why a boot failed, from files/boot-wait's JSON line (stdout), or ''
    when SSH answered.  A panic names the console's panic line; a timeout
    says 'timed out' (status timeout, lab_failed_status)."""
    try:
        doc = json.loads(str(stdout).strip().splitlines()[-1])
    except (IndexError, ValueError):
        return '%s: the boot wait gave no verdict: %r' % (name, stdout)
    state, after = doc.get('state'), doc.get('after_s')
    lines = [ANSI.sub('', str(x)).strip() for x in doc.get('lines') or []]
    if state == 'ssh':
        return ''
    if state == 'panic':
        return ('%s: kernel panic at boot, on the console %s s after the '
                'domain started: %s' % (name, after, lines[-1] if lines
                                        else '?'))
    if state == 'stopped':
        return ('%s: the domain stopped %s s after it started, before SSH '
                'answered (last console line: %s)' % (
                    name, after, lines[-1] if lines else 'none'))
    if state == 'timeout':
        return ('%s: SSH did not answer within %s s: timed out (last '
                'console line: %s)' % (name, timeout,
                                       lines[-1] if lines else 'none'))
    return '%s: the boot wait gave no verdict: %r' % (name, stdout)


def lab_qemu_pidfile(uri, name):
    """libvirt's pid file of domain NAME's QEMU on its hypervisor for a
    system URI (qemu:///system, qemu+ssh://HOST/system), else '' (the boot
    wait then does not watch the process)."""
    path = str(uri).split('?', 1)[0]
    if path.endswith('/system'):
        return '/run/libvirt/qemu/%s.pid' % name
    return ''


def started(hostvars, h):
    return 'guest_started' in hostvars[h] and \
        str(hostvars[h]['guest_started']).lower() == 'true'


def lab_collect_guests(guests, hostvars):
    """The guests of this run, in the given order as the collect role's
    old Jinja had them (a --limit leaves others out): those with a
    verified kernel (guest_kernel_info), then those with a status
    (guest_status), then those that began the guests stage
    (guest_started) without either: a guest dropped unreachable before
    its verification is one of the run's guests (no status: failed)."""
    kinfo = [h for h in guests if 'guest_kernel_info' in hostvars[h]]
    status = [h for h in guests if 'guest_status' in hostvars[h]]
    out = kinfo + [h for h in status if h not in kinfo]
    return out + [h for h in guests if started(hostvars, h)
                  and h not in out]


def lab_vanished_guests(guests, hostvars):
    """The guests that began the guests stage (guest_started) and have no
    status: Ansible dropped them (unreachable outside a checked task), so
    neither their rescue nor their record ran."""
    return [h for h in guests if started(hostvars, h)
            and 'guest_status' not in hostvars[h]]


# A guest's phases in order, each named by the mark its end sets
# (playbooks/tasks/guest-lifecycle.yml): the fleet stage (disk, seed,
# domain start until SSH answered), the install stage (kernel package,
# reboot into it, verification), the run stage (the experiments and what
# the lab does around them).
PHASES = ('boot', 'install', 'experiments')


def mark_time(marks, key):
    """The epoch seconds of one mark, None when it is missing or not a
    number."""
    try:
        return float(marks[key])
    except (KeyError, TypeError, ValueError):
        return None


def lab_guest_phases(marks):
    """guest.json's phases from a guest's marks (epoch seconds): start
    (its batch began), boot, install, experiments (that phase ended), end
    (its batch ended, after a rescue too), collect (its files were in the
    run directory, playbooks/tasks/batch-collect.yml).  Each phase lasts
    from the previous mark to its own; the phase under way when the guest
    failed (its mark missing) lasts until end, and is failed_in; the
    phases after it are None, and so is every phase without a start.
    window: start to end; collect: end to collect.  Seconds rounded to
    0.1."""
    marks = marks if isinstance(marks, dict) else {}
    out = {p: None for p in PHASES + ('collect', 'window')}
    out['failed_in'] = None
    prev = mark_time(marks, 'start')
    end = mark_time(marks, 'end')
    if prev is None:
        return out
    for p in PHASES:
        t = mark_time(marks, p)
        if t is None:
            out['failed_in'] = p
            if end is not None:
                out[p] = round(max(end - prev, 0.0), 1)
            break
        out[p] = round(max(t - prev, 0.0), 1)
        prev = t
    if end is not None:
        out['window'] = round(max(end - mark_time(marks, 'start'), 0.0), 1)
        t = mark_time(marks, 'collect')
        if t is not None:
            out['collect'] = round(max(t - end, 0.0), 1)
    return out


def batch_index(hostvars, h):
    """The batch number a guest recorded (guest_batch.index), else None."""
    if 'guest_batch' not in hostvars[h]:
        return None
    b = hostvars[h]['guest_batch']
    try:
        return int(b['index'])
    except (KeyError, TypeError, ValueError):
        return None


def lab_batch_members(hosts, hostvars, index):
    """The hosts (in the given order) whose batch is the given one (by
    the guest_batch each recorded when its batch began)."""
    return [h for h in hosts if batch_index(hostvars, h) == as_int(index)]


def lab_batch_pending(hosts, hostvars):
    """The hosts (in the given order) whose batch has not begun: the
    guests still to come."""
    return [h for h in hosts if batch_index(hostvars, h) is None]


class FilterModule(object):
    def filters(self):
        return {
            'lab_kernel_id': lab_kernel_id,
            'lab_kernels_wanted': lab_kernels_wanted,
            'lab_json_file': lab_json_file,
            'lab_console_hits': lab_console_hits,
            'lab_console_status': lab_console_status,
            'lab_pick': lab_pick,
            'lab_stage_timings': lab_stage_timings,
            'lab_guest_doc': lab_guest_doc,
            'lab_ssh_proxy': lab_ssh_proxy,
            'lab_regress_twins': lab_regress_twins,
            'lab_collect_failures': lab_collect_failures,
            'lab_exp_status': lab_exp_status,
            'lab_exp_deadline': lab_exp_deadline,
            'lab_run_guest_status': lab_run_guest_status,
            'lab_error_text': lab_error_text,
            'lab_disk_full': lab_disk_full,
            'lab_wait_failure': lab_wait_failure,
            'lab_job_result': lab_job_result,
            'lab_fetch_note': lab_fetch_note,
            'lab_fleet_pools': lab_fleet_pools,
            'lab_peers': lab_peers,
            'lab_outcome_failures': lab_outcome_failures,
            'lab_teardown_mine': lab_teardown_mine,
            'lab_regress_errors': lab_regress_errors,
            'lab_kernel_manifest': lab_kernel_manifest,
            'lab_bundle_files': lab_bundle_files,
            'lab_console_excerpt': lab_console_excerpt,
            'lab_failed_experiments': lab_failed_experiments,
            'lab_failed_status': lab_failed_status,
            'lab_doc_note': lab_doc_note,
            'lab_source_version': lab_source_version,
            'lab_guest_programs': lab_guest_programs,
            'lab_unreachable_msg': lab_unreachable_msg,
            'lab_boot_failure': lab_boot_failure,
            'lab_qemu_pidfile': lab_qemu_pidfile,
            'lab_collect_guests': lab_collect_guests,
            'lab_vanished_guests': lab_vanished_guests,
            'lab_guest_phases': lab_guest_phases,
            'lab_batch_members': lab_batch_members,
            'lab_batch_pending': lab_batch_pending,
        }
