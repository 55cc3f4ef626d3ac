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
    """)


def play(tmp_path, exps):
    """Runs the experiments, returns (rc, output, {name: record})."""
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
    env = dict(os.environ, ANSIBLE_ASYNC_DIR=str(tmp_path / "async"),
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
