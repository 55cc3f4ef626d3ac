"""The run role's reading of a result file (roles/run/tasks/experiment.yml,
"Keep the existing result" and "Read the result"): a file that is empty or
not JSON (a workload killed by timeout --kill-after while writing, an
earlier pass's file cut short) is a failed experiment, not a play that dies
in from_json.  The experiment tasks run on localhost with a local
connection: the "guest" program is a shell script, the "console" an empty
file; no guest, no kernel."""

import json
import os
import subprocess
import textwrap
import time

from test_regress import TOP

# The fake program: argv MODE --out FILE; writes what MODE says.
FAKE = textwrap.dedent("""\
    #!/bin/sh
    mode=$1 out=$3
    case $mode in
    ok) printf '{"status": "ok", "n": 1}\\n' > "$out" ;;
    cut) printf '{"status": "ok", "levels": [{"n": 1}' > "$out" ;;
    hang) : > "$out"; exec sleep 60 ;;
    esac
    """)

PLAY = textwrap.dedent("""\
    - name: Experiments on localhost
      hosts: localhost
      gather_facts: false
      tasks:
        - name: Start the record
          ansible.builtin.set_fact:
            guest_experiments: []
            guest_status: ok
            guest_console_warnings: 0
            guest_console_excerpt: []
        - name: Run the experiments
          ansible.builtin.include_role:
            name: run
            tasks_from: experiment
          loop: "{{ exps }}"
          loop_control:
            loop_var: exp
        - name: Write the record
          ansible.builtin.copy:
            content: "{{ guest_experiments | to_json }}"
            dest: "{{ out }}"
            mode: "0644"
        - name: Write the guest's status
          ansible.builtin.copy:
            content: "{{ guest_status | to_json }}"
            dest: "{{ out | dirname }}/guest-status"
            mode: "0644"
    """)


def play(tmp_path, exps, programs=None, **over):
    """Runs the experiments, returns (rc, output, {name: record}).
    programs: {name: path} besides the fake program; over: extra vars."""
    guest, host = tmp_path / "guest", tmp_path / "host"
    for d in (guest / "bin", guest / "results", host / "results",
              host / "fleet", tmp_path / "async", tmp_path / "tmp"):
        d.mkdir(parents=True, exist_ok=True)
    fake = guest / "bin" / "fake"
    fake.write_text(FAKE)
    fake.chmod(0o755)
    (host / "fleet" / "console.log").touch()
    (tmp_path / "play.yml").write_text(PLAY)
    (tmp_path / "hosts").write_text(
        "localhost ansible_connection=local "
        "ansible_python_interpreter=/usr/bin/python3\n")
    out = tmp_path / "record.json"
    if out.exists():
        out.unlink()
    extra = {
        "exps": exps, "out": str(out), "hugelab_repo": TOP,
        "lab_progress_s": 1, "experiment_timeout_s": 30,
        "guest_workdir": str(guest),
        "run_guest_results": str(guest / "results"),
        "run_host_results": str(host / "results"),
        "fleet_guest_dir": str(host / "fleet"),
        "hypervisor": "localhost", "domain_name": "hl-test",
        "lab_programs": {"fake": {"path": str(fake), "json_opt": "--out"}},
        "console_fail_patterns": ["Kernel panic", "BUG:"],
    }
    for name, path in (programs or {}).items():
        # the run role's bundle puts bin/NAME in the guest
        os.symlink(path, guest / "bin" / name)
        extra["lab_programs"][name] = {"path": path, "json_opt": "--json"}
    extra.update(over)
    env = dict(os.environ, ANSIBLE_ASYNC_DIR=str(tmp_path / "async"),
               HUGELAB_FAULT_KMSG=str(tmp_path / "kmsg"),
               ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp"),
               ANSIBLE_REMOTE_TEMP=str(tmp_path / "tmp"),
               ANSIBLE_ROLES_PATH=os.path.join(TOP, "playbooks", "roles"))
    r = subprocess.run(["ansible-playbook", "-i", str(tmp_path / "hosts"),
                        str(tmp_path / "play.yml"),
                        "-e", json.dumps(extra)],
                       cwd=TOP, env=env, capture_output=True, text=True)
    recs = json.loads(out.read_text()) if out.exists() else []
    return r.returncode, r.stdout + r.stderr, {x["name"]: x for x in recs}


def exp(name, mode, **over):
    e = {"name": name, "program": "fake", "args": mode}
    e.update(over)
    return e


def test_results_read_and_kept(tmp_path):
    # hang: killed by the timeout after creating its file empty, as a
    # workload SIGKILLed before it wrote (what the old lib/outfile.c left)
    exps = [exp("ok", "ok"), exp("cut", "cut"),
            exp("hang", "hang", timeout_s=1)]
    rc, output, recs = play(tmp_path, exps)
    assert rc == 0, output[-3000:]
    assert {n: r["status"] for n, r in recs.items()} == {
        "ok": "ok", "cut": "fail", "hang": "timeout"}
    results = tmp_path / "host" / "results"
    assert (results / "hang.json").read_text() == ""
    assert (results / "cut.json").read_text().startswith('{"status": "ok"')
    for name in ("cut", "hang"):
        assert recs[name]["stderr_tail"][-1] == (
            "results/%s.json: not a result (empty or not JSON)" % name), \
            recs[name]
    assert not any("JSON" in x for x in recs["ok"]["stderr_tail"])

    # A second pass of the same run keeps every file it finds, the empty
    # and the cut-short ones as failed experiments.
    rc, output, kept = play(tmp_path, exps)
    assert rc == 0, output[-3000:]
    assert {n: r["status"] for n, r in kept.items()} == {
        "ok": "ok", "cut": "fail", "hang": "fail"}
    for name in ("cut", "hang"):
        assert kept[name]["rc"] == -1
        assert kept[name]["stderr_tail"] == [
            "result kept from an earlier pass of this run id: "
            "results/%s.json: not a result (empty or not JSON)" % name], \
            kept[name]
    assert kept["ok"]["stderr_tail"] == [
        "result kept from an earlier pass of this run id"]


HANG = os.path.join(TOP, "tests", "e2e", "faults", "hang")


def kill_leftovers(tmp_path):
    """Kills what a test's programs left running: the processes whose
    environment names this test's HUGELAB_FAULT_KMSG (the escaped writer
    of hang escape, and the command module that reads it, which Ansible's
    async_wrapper misses when the module started before its setpgid).
    Returns how many there were."""
    mark = ("HUGELAB_FAULT_KMSG=%s" % (tmp_path / "kmsg")).encode()
    n = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open("/proc/%s/environ" % pid, "rb") as f:
                env = f.read().split(b"\0")
        except OSError:
            continue
        if mark in env:
            try:
                os.kill(int(pid), 9)
                n += 1
            except OSError:
                pass
    return n


def test_workloads_that_never_exit_are_bounded_and_named(tmp_path):
    """tests/e2e/faults/hang, the fault matrix's workloads that never exit:
    one ignores SIGTERM (timeout's SIGKILL ends it 10 s after timeout_s:
    rc -9, before timeout --verbose a plain "fail"), one leaves a process
    in its own session writing to the job's output (Ansible's
    async_wrapper ends the job at timeout_s + run_async_grace_s: "Timeout
    exceeded", no rc, before a plain "fail" of 0 s).  Both are timeouts
    now, each named in its stderr_tail, and the guest's status after them
    is timeout."""
    exps = [{"name": "ignore-term", "program": "hang", "args": "term",
             "timeout_s": 1},
            {"name": "escape", "program": "hang", "args": "escape",
             "timeout_s": 1}]
    t0 = time.monotonic()
    try:
        # run_async_grace_s above timeout's --kill-after (10 s)
        rc, output, recs = play(tmp_path, exps, {"hang": HANG},
                                lab_progress_s=5, run_async_grace_s=15)
    finally:
        kill_leftovers(tmp_path)
    took = time.monotonic() - t0
    assert rc == 0, output[-3000:]
    term, esc = recs["ignore-term"], recs["escape"]
    assert term["status"] == "timeout", term
    assert int(term["rc"]) == -9
    assert "ignore-term: ignored its deadline: still running after " \
        "SIGTERM at its timeout_s (1 s), killed by SIGKILL 10 s later" in \
        term["stderr_tail"], term
    assert 10 <= float(term["seconds"]) < 20, term
    assert esc["status"] == "timeout", esc
    assert "escape: did not end within the lab's limit of 16 s (timeout_s " \
        "1 + run_async_grace_s 15): the job was killed by Ansible's " \
        "async_wrapper (a process it started outlived timeout and kept the " \
        "job running)" in esc["stderr_tail"], esc
    assert int(esc["rc"]) == -1
    assert 16 <= float(esc["seconds"]) < 40, esc
    assert took < 120, took
    guest = json.loads((tmp_path / "guest-status").read_text())
    assert guest == "timeout", guest
    marks = (tmp_path / "kmsg").read_text()
    assert "hugelab-fault: hang term" in marks
    assert "hugelab-fault: hang escape" in marks
