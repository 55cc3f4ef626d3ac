"""The report after each batch (playbooks/tasks/batch-collect.yml, the
collect role with collect_partial): run by ansible-playbook on local
stand-in guests (no libvirt, no guest): after the first of two batches
the run directory holds the first guest, a partial manifest naming the
second as still to come and a partial report; after the second nothing
is pending and the report is still partial; the final collect (site.yml's
Collect play) writes status ok, no pending, the complete report, and
every guest's phases with its collect phase."""

import json
import os
import subprocess
import time

import filters
from test_regress import TOP

GUEST_VARS = {"ansible_connection": "local", "hypervisor": "localhost",
              "memory_mib": 2048, "vcpus": 2, "hugepages_2m": 8,
              "hugepages_1g": 0, "default_hugepagesz": "2M",
              "cmdline_extra": "", "ansible_port": 22,
              "kernel": {"variant": "patched", "flavour": "perf"},
              "experiments": []}


def guest_facts(name):
    """What the fleet, install and run roles leave on a guest that went
    through (here set at once, with its phase marks)."""
    now = time.time()
    facts = {
        "guest_started": True,
        "guest_status": "ok",
        "guest_experiments": [],
        "guest_kernel_info": {"release": "6.1.192-hugelab-patched-perf",
                              "verified": True},
        "guest_batch": {"index": "{{ lab_batch }}",
                        "started_at": "2026-12-07T12:00:00.000Z"},
        "guest_phase_marks": {"start": str(now - 30),
                              "boot": str(now - 20),
                              "install": str(now - 10),
                              "experiments": str(now - 1),
                              "end": str(now)}}
    return {"ansible.builtin.set_fact": facts,
            "when": "lab_batch | int == %d" % {"hl-a": 0, "hl-b": 1}[name]}


def snapshot(tmp_path, run, n):
    """Copies of the manifest and report.md as they are after batch n."""
    return [{"ansible.builtin.copy": {"src": "%s/%s" % (run, f),
                                      "dest": str(tmp_path / (
                                          "%d-%s" % (n, f))),
                                      "mode": "0644"},
             "delegate_to": "localhost", "run_once": True}
            for f in ("manifest.json", "report.md")]


def play_ok(tmp_path, roles_path, timeout):
    """ansible-playbook of tmp_path/play.yml on tmp_path/hosts.yml with the
    lab's filters and ROLES_PATH; it must succeed."""
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(TOP, "ansible.cfg"),
               ANSIBLE_FILTER_PLUGINS=filters.DIR,
               ANSIBLE_ROLES_PATH=roles_path,
               ANSIBLE_STDOUT_CALLBACK="default",
               ANSIBLE_CALLBACKS_ENABLED="")
    p = subprocess.run(["ansible-playbook", "-i", str(tmp_path / "hosts.yml"),
                        str(tmp_path / "play.yml")], cwd=TOP, env=env,
                       capture_output=True, text=True, timeout=timeout)
    assert p.returncode == 0, p.stdout[-4000:] + p.stderr[-2000:]


def test_partial_reports_after_each_batch_then_final(tmp_path):
    runs = tmp_path / "runs"
    run = runs / "20261207T120000Z"
    inv = {"all": {
        "vars": {"lab_runs_dir": str(runs),
                 "guest_dir": str(tmp_path / "guests"),
                 "report_cmd": os.path.join(TOP, "reports",
                                            "hugelab-report"),
                 "guest_cpu_model": "qemu64",
                 "guest_cpu_features": ["pdpe1gb"]},
        "children": {
            "hypervisors": {"hosts": {"localhost": {
                "ansible_connection": "local",
                "libvirt_uri": "qemu:///system"}}},
            "guests": {"hosts": {
                "hl-a": dict(GUEST_VARS, domain_name="hl-a", lab_batch=0),
                "hl-b": dict(GUEST_VARS, domain_name="hl-b",
                             lab_batch=1)}}}}}
    (tmp_path / "hosts.yml").write_text(json.dumps(inv))
    lifecycle = os.path.join(TOP, "playbooks", "tasks", "batch-collect.yml")
    batch = []
    for n, name in enumerate(["hl-a", "hl-b"]):
        batch += [guest_facts(name),
                  {"ansible.builtin.include_tasks": lifecycle,
                   "vars": {"lab_batch_now": n}}]
        batch += snapshot(tmp_path, run, n)
    play = [
        {"name": "start", "hosts": "localhost", "gather_facts": False,
         "tasks": [{"ansible.builtin.set_fact": {
             "lab_run_id": "20261207T120000Z",
             "lab_started_at": "2026-12-07T12:00:00Z",
             "lab_stage_start": {"validate": "{{ lookup('pipe', "
                                 "'date +%s') | int - 100 }}",
                                 "guests": "{{ lookup('pipe', "
                                 "'date +%s') | int - 60 }}"}}}]},
        {"name": "guests", "hosts": "guests", "gather_facts": False,
         "tasks": batch},
        {"name": "collect", "hosts": "localhost", "gather_facts": False,
         "roles": [{"role": "stage", "stage": "collect"}, "collect"]}]
    (tmp_path / "play.yml").write_text(json.dumps(play))
    play_ok(tmp_path, os.path.join(TOP, "playbooks", "roles"), 600)

    first = json.loads((tmp_path / "0-manifest.json").read_text())
    assert first["status"] == "partial" and first["finished_at"] is None
    assert first["guests"] == ["hl-a"] and first["pending"] == ["hl-b"]
    assert set(first["timings"]) == {"validate", "guests"}
    md = (tmp_path / "0-report.md").read_text()
    assert "checks PARTIAL (0 failed so far)" in md.splitlines()[0]
    assert "still to come: hl-b" in md

    second = json.loads((tmp_path / "1-manifest.json").read_text())
    assert second["status"] == "partial" and second["pending"] == []
    assert second["guests"] == ["hl-a", "hl-b"]
    assert "PARTIAL REPORT" in (tmp_path / "1-report.md").read_text()

    final = json.loads((run / "manifest.json").read_text())
    assert final["status"] == "ok" and final["pending"] == []
    assert final["finished_at"].endswith("Z")
    assert "collect" in final["timings"]
    md = (run / "report.md").read_text()
    assert "checks OK" in md.splitlines()[0] and "PARTIAL" not in md
    summary = json.loads((run / "summary.json").read_text())
    assert summary["status"] == "ok" and summary["partial"] is None
    for g in ("hl-a", "hl-b"):
        doc = json.loads((run / "guests" / g / "guest.json").read_text())
        ph = doc["phases"]
        assert ph["boot"] == 10.0 and ph["experiments"] == 9.0
        assert ph["window"] == 30.0 and ph["failed_in"] is None
        # its files were in the run directory after its batch
        assert ph["collect"] is not None and ph["collect"] >= 0
    assert "## Timings" in md and "| hl-b | 1 | ok |" in md


# Stand-ins for the roles that need a real guest; the lifecycle, the
# rescue, the stage and collect roles are the lab's own.
STUB_ROLES = {
    "fleet": [{"name": "Boot (stand-in)",
               "ansible.builtin.command": "sleep 1",
               "changed_when": False}],
    "install": [{"name": "Install (stand-in)",
                 "ansible.builtin.command": "sleep 2",
                 "changed_when": False},
                {"name": "Fail the install of hl-bad",
                 "ansible.builtin.fail": {"msg": "stand-in failure"},
                 "when": "inventory_hostname == 'hl-bad'"}],
    "run": [{"name": "Run (stand-in)",
             "ansible.builtin.command": "sleep 1",
             "changed_when": False},
            {"ansible.builtin.set_fact": {
                "guest_status": "ok", "guest_experiments": [],
                "guest_console_warnings": 0,
                "guest_kernel_info": {"release": "r", "verified": True}}}]}


def test_lifecycle_marks_each_phase_and_reports_after_each_batch(tmp_path):
    """site.yml's guests play itself (its vars and its include of
    tasks/guest-lifecycle.yml per batch, read from site.yml) with stand-in
    fleet, install and run roles: three guests on one hypervisor, one at
    a time; hl-bad fails its install (rescued).  Each guest's phases come
    from the lifecycle's marks, the failed one's end in install, and the
    report after each batch names the guests still to come."""
    import yaml
    with open(os.path.join(TOP, "site.yml"), encoding="utf-8") as f:
        site = yaml.safe_load(f)
    guests_play = next(p for p in site if p.get("hosts") == "guests")
    for t in guests_play["tasks"]:
        inc = t.get("ansible.builtin.include_tasks")
        if inc:
            inc["file"] = os.path.join(TOP, inc["file"])
    roles = tmp_path / "roles"
    for name, tasks in STUB_ROLES.items():
        (roles / name / "tasks").mkdir(parents=True)
        (roles / name / "tasks" / "main.yml").write_text(json.dumps(tasks))
    runs = tmp_path / "runs"
    run = runs / "20261207T120000Z"
    hosts = ["hl-a", "hl-bad", "hl-c"]
    inv = {"all": {
        "vars": {"lab_runs_dir": str(runs),
                 "guest_dir": str(tmp_path / "guests"),
                 "report_cmd": os.path.join(TOP, "reports",
                                            "hugelab-report"),
                 "guest_cpu_model": "qemu64",
                 "guest_cpu_features": ["pdpe1gb"],
                 "guest_console_tail_lines": 400,
                 "guest_console_excerpt_lines": 30,
                 "console_fail_patterns": ["Kernel panic"]},
        "children": {
            "hypervisors": {"hosts": {"localhost": {
                "ansible_connection": "local", "lab_serial": 1,
                "libvirt_uri": "qemu:///system"}}},
            "guests": {"hosts": {h: dict(GUEST_VARS, domain_name=h)
                                 for h in hosts}}}}}
    (tmp_path / "hosts.yml").write_text(json.dumps(inv))
    copies = [{"ansible.builtin.copy": {
        "src": "%s/%s" % (run, f), "dest": str(tmp_path / ("after-%s" % f)),
        "mode": "0644"}, "delegate_to": "localhost", "run_once": True,
        "when": "lab_batch_now == 0"} for f in ("manifest.json", "report.md")]
    lifecycle = os.path.join(TOP, "playbooks", "tasks",
                             "guest-lifecycle.yml")
    # The report after batch 0, kept before batch 1 overwrites it: the
    # same include of the lifecycle as site.yml's, then the copies.
    inc = next(t for t in guests_play["tasks"]
               if "ansible.builtin.include_tasks" in t)
    inc["ansible.builtin.include_tasks"]["file"] = str(tmp_path / "batch.yml")
    (tmp_path / "batch.yml").write_text(json.dumps(
        [{"ansible.builtin.include_tasks": lifecycle}] + copies))
    play = [
        {"name": "start", "hosts": "localhost", "gather_facts": False,
         "tasks": [{"ansible.builtin.set_fact": {
             "lab_run_id": "20261207T120000Z",
             "lab_started_at": "2026-12-07T12:00:00Z"}}]},
        guests_play,
        {"name": "collect", "hosts": "localhost", "gather_facts": False,
         "roles": [{"role": "stage", "stage": "collect"}, "collect"]}]
    (tmp_path / "play.yml").write_text(json.dumps(play))
    lab_roles = os.path.join(TOP, "playbooks", "roles")
    play_ok(tmp_path, "%s:%s" % (roles, lab_roles), 900)

    after0 = json.loads((tmp_path / "after-manifest.json").read_text())
    assert after0["status"] == "partial"
    assert after0["guests"] == ["hl-a"]
    assert after0["pending"] == ["hl-bad", "hl-c"]
    assert "still to come: hl-bad, hl-c" in \
        (tmp_path / "after-report.md").read_text()

    final = json.loads((run / "manifest.json").read_text())
    assert final["status"] == "fail" and final["pending"] == []
    docs = {h: json.loads((run / "guests" / h / "guest.json").read_text())
            for h in hosts}
    for h in ("hl-a", "hl-c"):
        ph = docs[h]["phases"]
        assert ph["failed_in"] is None, ph
        assert ph["boot"] >= 1 and ph["install"] >= 2, ph
        assert ph["experiments"] >= 1 and ph["collect"] > 0, ph
        assert abs(ph["boot"] + ph["install"] + ph["experiments"] -
                   ph["window"]) <= 1.0
    bad = docs["hl-bad"]["phases"]
    assert bad["failed_in"] == "install" and bad["install"] >= 2, bad
    assert bad["experiments"] is None and bad["collect"] > 0
    assert docs["hl-bad"]["status"] != "ok"
    # one batch after the other
    assert [docs[h]["batch"]["index"] for h in hosts] == [0, 1, 2]
