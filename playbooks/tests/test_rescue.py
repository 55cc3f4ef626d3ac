"""Guests that fail outside an experiment (issue 30): an unreachable guest
is rescued (the tasks that talk to a guest ignore UNREACHABLE and a check
after each fails the guest), a guest Ansible dropped anyway is recorded
and counted failed, and a panic at boot ends the boot wait at once
(roles/fleet/files/boot-wait)."""

import json
import os
import socket
import subprocess
import sys
import threading
import time

import yaml

import filters
from test_roles_filters import FakeHostVars, ansible_render
from test_regress import TOP

F = filters.load("hugelab_roles")
BOOT_WAIT = os.path.join(TOP, "playbooks", "roles", "fleet", "files",
                         "boot-wait")
PANIC = ("[    5.584985] Kernel panic - not syncing: Requested init "
         "/hugelab-no-such-init failed (error -2).")


def test_unreachable_msg_and_status():
    assert F.lab_unreachable_msg({"changed": False}, "g", "install") == ""
    assert F.lab_unreachable_msg({"unreachable": False}, "g", "x") == ""
    assert F.lab_unreachable_msg(None, "g", "x") == ""
    msg = F.lab_unreachable_msg(
        {"unreachable": True, "msg": "Failed to connect to the host via\n"
         "ssh: Connection timed out during banner exchange"},
        "hl-rs-stop", "install: dpkg -i")
    assert msg == ("hl-rs-stop: unreachable during install: dpkg -i: "
                   "Failed to connect to the host via ssh: Connection "
                   "timed out during banner exchange")
    # unreachable, although ssh's own message says "timed out"
    assert F.lab_failed_status("ok", msg) == "unreachable"
    # a status the guest already has stays (a timeout of an experiment)
    assert F.lab_failed_status("timeout", msg) == "timeout"
    # a panic on the console wins (guest-failed.yml: lab_console_status)
    assert F.lab_console_status([PANIC], "unreachable") == "panic"
    assert F.lab_unreachable_msg({"unreachable": True}, "g", "x") == \
        "g: unreachable during x: no answer"


def test_boot_failure():
    ok = json.dumps({"state": "ssh", "after_s": 12.0})
    assert F.lab_boot_failure(ok, "g", 600) == ""
    assert F.lab_boot_failure("noise\n" + ok + "\n", "g", 600) == ""
    panic = json.dumps({"state": "panic", "after_s": 7.1,
                        "lines": ["[    5.5] Run /sbin/init", PANIC]})
    msg = F.lab_boot_failure(panic, "hl-rs-bootpanic", 600)
    assert msg == ("hl-rs-bootpanic: kernel panic at boot, on the console "
                   "7.1 s after the domain started: " + PANIC)
    timeout = json.dumps({"state": "timeout", "after_s": 600.3,
                          "lines": ["\x1b[0mlogin:"]})
    msg = F.lab_boot_failure(timeout, "g", 600)
    assert "within 600 s: timed out" in msg and "\x1b" not in msg
    assert F.lab_failed_status("ok", msg) == "timeout"
    stopped = json.dumps({"state": "stopped", "after_s": 3, "lines": []})
    assert "the domain stopped 3 s after it started" in \
        F.lab_boot_failure(stopped, "g", 600)
    for bad in ("", "not json", json.dumps({"state": "?"})):
        assert "no verdict" in F.lab_boot_failure(bad, "g", 600)


def test_qemu_pidfile():
    assert F.lab_qemu_pidfile("qemu:///system", "hl-a") == \
        "/run/libvirt/qemu/hl-a.pid"
    assert F.lab_qemu_pidfile(
        "qemu+ssh://root@127.0.0.1:2222/system?no_verify=1", "b") == \
        "/run/libvirt/qemu/b.pid"
    assert F.lab_qemu_pidfile("qemu:///session", "b") == ""


# The collect role's collect_guests before lab_collect_guests.
OLD_COLLECT_GUESTS = (
    "{{ groups['guests'] | map('extract', hostvars)"
    " | selectattr('guest_kernel_info', 'defined')\n"
    "                    | map(attribute='inventory_hostname') | list\n"
    "                    | union(groups['guests'] | map('extract', hostvars)"
    " | selectattr('guest_status', 'defined')\n"
    "                    | map(attribute='inventory_hostname') | list) }}")

GUESTS = {
    "a": {"inventory_hostname": "a", "guest_status": "ok",
          "guest_kernel_info": {}, "guest_started": True},
    "b": {"inventory_hostname": "b", "guest_status": "panic",
          "guest_started": True},
    "c": {"inventory_hostname": "c"},
    "d": {"inventory_hostname": "d", "guest_kernel_info": {}},
    # dropped unreachable before its verification: no status
    "e": {"inventory_hostname": "e", "guest_started": True},
    "f": {"inventory_hostname": "f", "guest_started": "True",
          "guest_kernel_info": {}},
}


def test_collect_guests_as_old_jinja_plus_dropped():
    new = yaml.safe_load(open(os.path.join(
        TOP, "playbooks/roles/collect/defaults/main.yml")))["collect_guests"]
    for order in (["a", "b", "c", "d"], ["d", "c", "b", "a"], ["c"], []):
        variables = {"hostvars": GUESTS, "groups": {"guests": order}}
        old = ansible_render(OLD_COLLECT_GUESTS, variables)
        assert ansible_render(new, variables) == old
        assert F.lab_collect_guests(order, FakeHostVars(GUESTS)) == old
    # the old list left e out: a guest without a status, so the manifest
    # could say ok
    variables = {"hostvars": GUESTS, "groups": {"guests": list(GUESTS)}}
    assert "e" not in ansible_render(OLD_COLLECT_GUESTS, variables)
    assert ansible_render(new, variables) == ["a", "d", "f", "b", "e"]
    assert F.lab_collect_failures(["a", "d", "f", "b", "e"], GUESTS) == [
        "d: did not finish", "f: did not finish", "e: did not finish",
        "b: guest not ok"]


def test_vanished_and_outcome():
    hv = FakeHostVars(GUESTS)
    # e before its verification, f after it
    assert F.lab_vanished_guests(list(GUESTS), hv) == ["e", "f"]
    # collect did not run: the dropped guests still fail the run
    assert F.lab_outcome_failures([], list(GUESTS), hv) == [
        "b: guest not ok", "e: did not finish", "f: did not finish"]
    assert F.lab_outcome_failures(["e: did not finish"], ["e"], hv) == [
        "e: did not finish"]
    quiet = {"x": {"guest_status": "ok", "guest_started": True},
             "y": {}}
    assert F.lab_outcome_failures([], ["x", "y"], FakeHostVars(quiet)) == []


def task_list(path):
    with open(os.path.join(TOP, path)) as f:
        return yaml.safe_load(f)


def flat(tasks):
    out = []
    for t in tasks or []:
        if "block" in t:
            out += flat(t["block"])
        else:
            out.append(t)
    return out


# Modules that do not connect to the guest (controller-side or Ansible's
# own), and tasks whose unreachable result is handled otherwise.
LOCAL = {"ansible.builtin.set_fact", "ansible.builtin.fail",
         "ansible.builtin.assert", "ansible.builtin.debug",
         "ansible.builtin.include_role", "ansible.builtin.include_tasks",
         "ansible.builtin.wait_for_connection"}
HANDLED = {
    # the experiment's record reads run_job.unreachable (a dead guest is a
    # timed-out experiment) and the guest is then stopped
    ("playbooks/roles/run/tasks/experiment.yml",
     "Fetch the result of {{ exp.name }}"),
}
GUEST_TASK_FILES = [
    "playbooks/roles/fleet/tasks/domain.yml",
    "playbooks/roles/install/tasks/main.yml",
    "playbooks/roles/install/tasks/install.yml",
    "playbooks/roles/install/tasks/verify.yml",
    "playbooks/roles/run/tasks/main.yml",
    "playbooks/roles/run/tasks/experiment.yml",
]


def test_every_guest_task_fails_the_guest_when_unreachable():
    """Every task of fleet (after the boot), install, verify and run that
    talks to the guest ignores UNREACHABLE (else ansible-core 2.14 drops
    the host unrescued) and is followed by a check that fails the guest on
    its registered result's unreachable flag."""
    missing = []
    for path in GUEST_TASK_FILES:
        tasks = flat(task_list(path))
        for i, t in enumerate(tasks):
            module = [k for k in t if k.startswith("ansible.builtin.")
                      or k.startswith("community.")]
            if not module or module[0] in LOCAL or "delegate_to" in t:
                continue
            name = t.get("name")
            if t.get("ignore_unreachable") is not True:
                missing.append("%s: %s: no ignore_unreachable" % (path, name))
                continue
            if (path, name) in HANDLED:
                continue
            reg = t.get("register")
            nxt = tasks[i + 1] if i + 1 < len(tasks) else {}
            when = str(nxt.get("when", ""))
            if not reg or "ansible.builtin.fail" not in nxt or \
                    "%s.unreachable" % reg not in when or \
                    "lab_unreachable_msg" not in str(nxt):
                missing.append("%s: %s: no check of %s.unreachable after it"
                               % (path, name, reg))
    assert missing == []


def banner_server(banner=b"SSH-2.0-test\r\n", after=0.0):
    """A loopback TCP server that answers with banner once `after` seconds
    have passed (before: accepts and closes, as QEMU's port forward does
    while the guest's sshd is not up).  Returns (port, stop)."""
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    srv.settimeout(0.2)
    t0, stop = time.monotonic(), threading.Event()

    def serve():
        while not stop.is_set():
            try:
                c, _ = srv.accept()
            except OSError:
                continue
            if banner and time.monotonic() - t0 >= after:
                c.sendall(banner)
            c.close()
        srv.close()
    threading.Thread(target=serve, daemon=True).start()
    return srv.getsockname()[1], stop.set


def boot_wait(*args, timeout=60):
    p = subprocess.run([sys.executable, BOOT_WAIT] + [str(a) for a in args],
                       capture_output=True, text=True, timeout=timeout)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_boot_wait_ssh(tmp_path):
    console = tmp_path / "console.log"
    console.write_text("[    0.0] Linux version 6.1\n")
    port, stop = banner_server(after=2.0)
    try:
        doc = boot_wait(console, 0, port, 30)
    finally:
        stop()
    assert doc["state"] == "ssh" and 1.5 <= doc["after_s"] < 10


def test_boot_wait_panic_while_port_refuses(tmp_path):
    """The panic ends the wait within a second or two, long before the
    timeout; a panic of an earlier boot (before OFFSET) does not count."""
    console = tmp_path / "console.log"
    old = "[  1.0] Kernel panic - not syncing: an earlier boot\n"
    console.write_text(old)
    port, stop = banner_server(banner=b"")

    def later():
        time.sleep(2)
        with open(console, "a") as f:
            f.write("[    5.5] Run /hugelab-no-such-init as init process\n"
                    + PANIC + "\n")
    threading.Thread(target=later, daemon=True).start()
    t0 = time.monotonic()
    try:
        doc = boot_wait(console, len(old), port, 120)
    finally:
        stop()
    took = time.monotonic() - t0
    assert doc["state"] == "panic"
    assert doc["lines"][-1] == PANIC
    assert "Run /hugelab-no-such-init" in doc["lines"][0]
    assert 1.5 <= took < 8, took


def test_boot_wait_timeout_and_stopped(tmp_path):
    console = tmp_path / "console.log"
    console.write_text("[  1.0] Kernel panic - not syncing: earlier\nx\n")
    port, stop = banner_server(banner=b"")
    try:
        doc = boot_wait(console, console.stat().st_size, port, 3)
        assert doc["state"] == "timeout" and doc["after_s"] >= 3
        # the domain's QEMU seen alive, then gone
        proc = subprocess.Popen(["sleep", "2"])
        pidfile = tmp_path / "dom.pid"
        pidfile.write_text("%d\n" % proc.pid)

        def reap():
            proc.wait()
            pidfile.unlink()
        threading.Thread(target=reap, daemon=True).start()
        doc = boot_wait(console, console.stat().st_size, port, 60, pidfile)
        assert doc["state"] == "stopped" and doc["after_s"] < 10
    finally:
        stop()


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def write_inventory(tmp_path, gdir, guests, python=None):
    """tmp_path/hosts.yml: a local hypervisor with no libvirt (its
    ansible_python_interpreter when given), the guests (name -> host
    vars), the console settings of the rescue and guest_dir gdir."""
    hv = {"ansible_connection": "local",
          "libvirt_uri": "qemu:///session?socket=%s"
          % (tmp_path / "no-libvirt")}
    if python:
        hv["ansible_python_interpreter"] = python
    inv = {"all": {
        "vars": {"guest_console_tail_lines": 400,
                 "guest_console_excerpt_lines": 30,
                 "console_fail_patterns": ["Kernel panic", "BUG:"],
                 "guest_dir": str(gdir)},
        "children": {"hypervisors": {"hosts": {"localhost": hv}},
                     "guests": {"hosts": guests}}}}
    (tmp_path / "hosts.yml").write_text(json.dumps(inv))


def test_vanished_play_records_a_dropped_guest(tmp_path):
    """playbooks/vanished.yml (site.yml imports it after the guests play):
    a guest that Ansible dropped unreachable (here: a ping to a closed
    port, no ignore_unreachable) gets status unreachable, its console
    excerpt, a failure and its batch end; a guest with a status and one
    that began no stage are left alone; collect would list the dropped
    one."""
    gdir = tmp_path / "guests"
    (gdir / "hl-gone").mkdir(parents=True)
    (gdir / "hl-gone" / "console.log").write_text(
        "[    0.0] Linux version 6.1\nDebian GNU/Linux 12 hl-gone ttyS0\n"
        "[  99.1] BUG: soft lockup - CPU#0 stuck for 22s!\n")
    write_inventory(tmp_path, gdir, guests={
                "hl-gone": {"ansible_host": "127.0.0.1",
                            "ansible_port": free_port(),
                            "ansible_ssh_common_args":
                            "-o ConnectTimeout=3 "
                            "-o StrictHostKeyChecking=no",
                            "hypervisor": "localhost",
                            "domain_name": "hl-gone"},
                "hl-fine": {"ansible_connection": "local",
                            "hypervisor": "localhost",
                            "domain_name": "hl-fine"},
                "hl-idle": {"ansible_connection": "local",
                            "hypervisor": "localhost",
                            "domain_name": "hl-idle"}})
    out = tmp_path / "out.json"
    (tmp_path / "play.yml").write_text(json.dumps([
        {"name": "guests", "hosts": "hl-gone:hl-fine",
         "gather_facts": False, "tasks": [
             {"ansible.builtin.set_fact": {
                 "guest_started": True,
                 "guest_batch": {"index": 0, "started_at": "t0"}}},
             {"ansible.builtin.set_fact": {"guest_status": "ok"},
              "when": "inventory_hostname == 'hl-fine'"},
             {"ansible.builtin.ping": None}]},
        {"ansible.builtin.import_playbook": os.path.join(
            TOP, "playbooks", "vanished.yml")},
        {"name": "out", "hosts": "localhost", "gather_facts": False,
         "tasks": [{"ansible.builtin.copy": {
             "dest": str(out),
             "content": "{{ {'docs': dict(groups['guests'] | zip("
             "groups['guests'] | map('extract', hostvars)"
             " | map('lab_pick_rescue'))),"
             " 'collect': groups['guests'] | lab_collect_guests(hostvars),"
             " 'outcome': [] | lab_outcome_failures(groups['guests'],"
             " hostvars)} | to_json }}"}}]}]))
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "pick.py").write_text(
        "KEYS = ('guest_status', 'guest_failure', 'guest_console_excerpt',"
        " 'guest_batch')\n\n\n"
        "class FilterModule(object):\n"
        "    def filters(self):\n"
        "        return {'lab_pick_rescue': lambda g: "
        "{k: g[k] for k in KEYS if k in g}}\n")
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(TOP, "ansible.cfg"),
               ANSIBLE_FILTER_PLUGINS="%s:%s" % (filters.DIR, plugins),
               ANSIBLE_STDOUT_CALLBACK="default",
               ANSIBLE_CALLBACKS_ENABLED="",
               ANSIBLE_HOST_KEY_CHECKING="False")
    p = subprocess.run(["ansible-playbook", "-i", str(tmp_path / "hosts.yml"),
                        str(tmp_path / "play.yml")], cwd=TOP, env=env,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 4, p.stdout[-3000:]    # the ping's UNREACHABLE
    doc = json.loads(out.read_text())
    gone = doc["docs"]["hl-gone"]
    assert gone["guest_status"] == "unreachable"
    assert "dropped by Ansible without a status" in gone["guest_failure"]
    assert "[  99.1] BUG: soft lockup - CPU#0 stuck for 22s!" in \
        gone["guest_console_excerpt"]
    assert gone["guest_batch"]["started_at"] == "t0"
    assert gone["guest_batch"]["finished_at"].endswith("Z")
    assert doc["docs"]["hl-fine"] == {"guest_status": "ok",
                                      "guest_batch": {"index": 0,
                                                      "started_at": "t0"}}
    assert doc["docs"]["hl-idle"] == {}
    assert doc["collect"] == ["hl-gone", "hl-fine"]
    assert doc["outcome"] == ["hl-gone: guest not ok"]


def rescue_play(tmp_path, console, console_from, msg):
    """Runs tasks/guest-failed.yml (the guests play's rescue) for a guest
    whose console.log is `console`, after a task failed with `msg`;
    console_from: the guest_console_from it has (None: none).  Returns
    its guest_status, guest_failure and guest_console_excerpt."""
    gdir = tmp_path / "guests"
    (gdir / "hl-x").mkdir(parents=True, exist_ok=True)
    (gdir / "hl-x" / "console.log").write_text(console)
    out = tmp_path / "out.json"
    write_inventory(tmp_path, gdir, guests={"hl-x": {
                "ansible_connection": "local", "hypervisor": "localhost",
                "domain_name": "hl-x"}})
    setup = {"guest_status": "ok"}
    if console_from is not None:
        setup["guest_console_from"] = console_from
    (tmp_path / "play.yml").write_text(json.dumps([
        {"name": "guests", "hosts": "hl-x", "gather_facts": False,
         "tasks": [{"block": [
             {"ansible.builtin.set_fact": setup},
             {"ansible.builtin.fail": {"msg": msg}}],
             "rescue": [{"ansible.builtin.include_tasks": os.path.join(
                 TOP, "playbooks", "tasks", "guest-failed.yml")}]},
             {"ansible.builtin.copy": {
                 "dest": str(out),
                 "content": "{{ {'status': guest_status, 'failure': "
                 "guest_failure, 'excerpt': guest_console_excerpt}"
                 " | to_json }}"},
              "delegate_to": "localhost"}]}]))
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(TOP, "ansible.cfg"),
               ANSIBLE_FILTER_PLUGINS=filters.DIR,
               ANSIBLE_STDOUT_CALLBACK="default",
               ANSIBLE_CALLBACKS_ENABLED="")
    p = subprocess.run(["ansible-playbook", "-i", str(tmp_path / "hosts.yml"),
                        str(tmp_path / "play.yml")], cwd=TOP, env=env,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout[-3000:]
    doc = json.loads(out.read_text())
    doc["destroyed"] = destroy_ran(p.stdout)
    return doc


EARLIER = ("[    0.0] Linux version 6.1 (an earlier boot)\n"
           "[    6.4] Kernel panic - not syncing: an earlier boot's panic\n"
           "[    6.5] ---[ end Kernel panic - not syncing ]---\n")
LATER = ("[    0.0] Linux version 6.1 (this boot)\n"
         "hugelab-fault: killing sshd\n"
         "Debian GNU/Linux 12 hl-x ttyS0\n")
LOST = ("hl-x: unreachable during run: wait for kill-sshd: Failed to "
        "connect to the host via ssh: kex_exchange_identification: "
        "Connection closed by remote host")


def test_rescue_reads_only_this_boots_console(tmp_path):
    """The console log is appended to across boots: the rescue reads from
    guest_console_from (the start of this run's boot, set by the fleet
    role and at the batch's start), so the panic of an earlier boot does
    not label a later failure 'panic' nor fill its excerpt.  Before, it
    read the file's last 400 lines: status panic, the old panic in the
    excerpt."""
    doc = rescue_play(tmp_path, EARLIER + LATER, len(EARLIER.encode()), LOST)
    assert doc["status"] == "unreachable", doc
    assert not any("panic" in x for x in doc["excerpt"]), doc
    assert "hugelab-fault: killing sshd" in doc["excerpt"]
    assert doc["failure"].endswith(LOST)
    # a panic of this boot still counts
    doc = rescue_play(tmp_path, EARLIER + LATER + PANIC + "\n",
                      len(EARLIER.encode()), LOST)
    assert doc["status"] == "panic" and PANIC in doc["excerpt"], doc
    # no position known (a guest rescued before its batch noted one): the
    # whole log's end, as before
    doc = rescue_play(tmp_path, EARLIER + LATER, None, LOST)
    assert doc["status"] == "panic", doc
    # a log shorter than the position (removed and begun again): nothing
    doc = rescue_play(tmp_path, LATER, 10 ** 6, LOST)
    assert doc["status"] == "unreachable" and doc["excerpt"] == [], doc
    # the failure names a full disk (a task that failed on it)
    doc = rescue_play(tmp_path, LATER, 0, "failed to transfer file to "
                      "/root/x: scp: /root/x: No space left on device")
    assert doc["status"] == "fail", doc
    assert doc["failure"].endswith(
        ": the guest's disk is full (No space left on "
        "device): failed to transfer file to /root/x: scp: /root/x: No "
        "space left on device"), doc


def test_rescue_stops_whom_it_gives_up(tmp_path):
    """The rescue stops the domain of a guest that panicked, hung, became
    unreachable or whose disk is full (it can run nothing more: measured
    on a guest, rescue-during-20261207T153615Z, where it was left
    running), not one whose experiment merely failed (its user may log in
    and look)."""
    doc = rescue_play(tmp_path, LATER, 0, LOST)
    assert doc["status"] == "unreachable" and doc["destroyed"], doc
    doc = rescue_play(tmp_path, LATER, 0, "failed to transfer file to "
                      "/root/x: dd: error writing '/root/x': No space "
                      "left on device")
    assert doc["status"] == "fail" and doc["destroyed"], doc
    doc = rescue_play(tmp_path, LATER, 0, "hl-x: experiments not ok: "
                      "selftests (fail)")
    assert doc["status"] == "fail" and not doc["destroyed"], doc


def test_fleet_and_batch_set_the_console_position():
    """guest_console_from is set where the guest's batch begins and after
    each domain start of the fleet role (its size before the boot)."""
    life = flat(task_list("playbooks/tasks/guest-lifecycle.yml"))
    setters = [t for t in life if "guest_console_from" in str(
        t.get("ansible.builtin.set_fact", ""))]
    assert len(setters) == 1
    assert "guest_console_at_batch.stat.size" in str(setters[0])
    dom = task_list("playbooks/roles/fleet/tasks/domain.yml")
    names = [t.get("name") for t in dom]
    i = names.index("Start the domain")
    assert "guest_console_from" in str(dom[i + 1])
    assert "fleet_console_before.stat.size" in str(dom[i + 1])
    for path in ("playbooks/tasks/guest-failed.yml",
                 "playbooks/tasks/guest-vanished.yml"):
        assert "guest_console_from" in str(task_list(path)[0]), path


TERM = ("timeout: sending signal TERM to command "
        "\u2018/root/hugelab/bin/x\u2019")
KILL = "timeout: sending signal KILL to command 'x'"


def test_deadline_named():
    """An experiment that ignored its deadline is a timeout, and says how
    the deadline ended it; before (no timeout --verbose, no note) the
    SIGKILLed one (rc -9) and the one async_wrapper killed (no rc) were
    plain 'fail'."""
    d = F.lab_exp_deadline(["work", TERM, KILL], "", 20, 80)
    assert d == ("ignored its deadline: still running after SIGTERM at "
                 "its timeout_s (20 s), killed by SIGKILL 10 s later")
    assert F.lab_exp_status(False, -9, "", "", [], d) == "timeout"
    assert F.lab_exp_status(False, -9, "", "", []) == "fail"
    d = F.lab_exp_deadline([TERM], "", "30", "90")
    assert d == "stopped at its timeout_s (30 s) by SIGTERM"
    # hl-rs-hang's escape on a real guest: SIGTERM at 20 s, the job held
    # until 54.3 s by the leftover writing to its output (rc 124)
    d = F.lab_exp_deadline([TERM], "", 20, 80, "54.3")
    assert d == ("stopped at its timeout_s (20 s) by SIGTERM; the job ended "
                 "only 34.3 s after it (54.3 s in all): a process it left "
                 "kept the job's output open")
    assert F.lab_exp_status(False, 124, "", "", [], d) == "timeout"
    assert F.lab_exp_deadline([TERM, KILL], "", 20, 80, 30.2).endswith(
        "killed by SIGKILL 10 s later")
    d = F.lab_exp_deadline([], "Timeout exceeded", 20, 80)
    assert d.startswith("did not end within the lab's limit of 80 s "
                        "(timeout_s 20 + run_async_grace_s 60): the job "
                        "was killed by Ansible's async_wrapper")
    assert F.lab_exp_status(False, -1, "Timeout exceeded", "", [], d) == \
        "timeout"
    # ended by itself: no note, statuses as before
    assert F.lab_exp_deadline(["timeout: 3 left"], "", 20, 80) == ""
    assert F.lab_exp_deadline(None, None, 20, 80) == ""
    assert F.lab_exp_status(False, 0, "", "ok", [], "") == "ok"


def test_guest_status_after_an_experiment():
    # before: 'timeout' for any dead wait, 'ok' after a deadline timeout
    assert F.lab_run_guest_status([], "ok", "timeout", True) == \
        "unreachable"
    assert F.lab_run_guest_status([PANIC], "ok", "timeout", True) == "panic"
    assert F.lab_run_guest_status([], "ok", "timeout", False) == "timeout"
    assert F.lab_run_guest_status([], "ok", "fail", False) == "ok"
    assert F.lab_run_guest_status([], "ok", "ok", False) == "ok"
    # an earlier experiment's timeout stays
    assert F.lab_run_guest_status([], "timeout", "ok", False) == "timeout"


ENOSPC_TMP = ("mkdir: cannot create directory \u2018/root/.ansible/tmp/"
              "ansible-tmp-1\u2019: No space left on device")


def test_errors_name_a_full_disk():
    # Ansible says a guest whose disk is full is unreachable (no temporary
    # directory): the failure says the disk is full
    msg = F.lab_unreachable_msg({"unreachable": True, "msg": ENOSPC_TMP},
                                "hl-rs-full", "run: wait for fill-disk")
    assert msg == ("hl-rs-full: unreachable during run: wait for fill-disk: "
                   "the guest's disk is full (No space left on device): "
                   + ENOSPC_TMP)
    assert F.lab_failed_status("ok", msg) == "unreachable"
    # a module that cannot unpack: the cause is in module_stderr
    mod = {"failed": True, "msg": "MODULE FAILURE\nSee stdout/stderr for "
           "the exact error", "module_stderr": "Traceback (most recent "
           "call last):\n  File x\nOSError: [Errno 28] No space left on "
           "device: '/tmp/ansible_x'\n", "rc": 1}
    assert F.lab_error_text(mod) == (
        "the guest's disk is full (No space left on device): MODULE "
        "FAILURE See stdout/stderr for the exact error: OSError: [Errno "
        "28] No space left on device: '/tmp/ansible_x'")
    # the next experiment's start on the disk fill-disk left full (a real
    # guest, hl-rs-full): async_wrapper could not unpack itself, its
    # traceback on stdout
    start = {"changed": True, "module_stderr": "", "module_stdout":
             "Traceback (most recent call last):\r\n  File \"/root/.ansible"
             "/tmp/ansible-tmp-1/async_wrapper.py\", line 95, in "
             "_ansiballz_main\r\n    modlib.write(base64.b64decode(ZIPDATA)"
             ")\r\nOSError: [Errno 28] No space left on device\r\n",
             "msg": "MODULE FAILURE\nSee stdout/stderr for the exact error",
             "rc": 1}
    assert F.lab_error_text(start) == (
        "the guest's disk is full (No space left on device): MODULE "
        "FAILURE See stdout/stderr for the exact error: OSError: [Errno "
        "28] No space left on device")
    assert F.lab_disk_full(F.lab_error_text(start))
    assert not F.lab_disk_full("hl-x: experiments not ok: selftests (fail)")
    assert not F.lab_disk_full(None)
    assert F.lab_error_text({"msg": "x", "stderr": "x"}) == "x"
    assert F.lab_error_text({}) == "" and F.lab_error_text(None) == ""


def test_wait_failure_and_fetch_note():
    lost = {"unreachable": True, "msg": "Failed to connect to the host via "
            "ssh: kex_exchange_identification: Connection closed by remote "
            "host"}
    assert F.lab_wait_failure(lost, {}, "hl-rs-sshd", "kill-sshd") == (
        "hl-rs-sshd: unreachable during run: wait for kill-sshd: Failed to "
        "connect to the host via ssh: kex_exchange_identification: "
        "Connection closed by remote host")
    # the tick answered, the job's status read found the guest gone
    assert "unreachable during run: wait for e" in F.lab_wait_failure(
        {"stdout_lines": ["finished"]}, lost, "g", "e")
    # the job's status could not be read (a module failure)
    mod = {"failed": True, "msg": "MODULE FAILURE", "module_stderr":
           "OSError: [Errno 28] No space left on device"}
    assert F.lab_wait_failure({}, mod, "g", "e") == (
        "g: e did not finish: the guest's disk is full (No space left on "
        "device): MODULE FAILURE: OSError: [Errno 28] No space left on "
        "device")
    assert F.lab_wait_failure({}, {}, "g", "e") == \
        "g: e did not finish: no job status"
    # the fetch: skipped or fetched: nothing; a stat error it ignored, a
    # missing file, unreachable: named
    assert F.lab_fetch_note("e", {"skipped": True}) == []
    assert F.lab_fetch_note("e", {"changed": True, "dest": "/x"}) == []
    assert F.lab_fetch_note("e", {}) == []
    assert F.lab_fetch_note("e", {
        "msg": "the remote file does not exist, not transferring, "
        "ignored"}) == ["results/e.json: not fetched: the remote file does "
                        "not exist, not transferring, ignored"]
    assert F.lab_fetch_note("e", {
        "msg": "Failed to get information on remote file (/r/e.json): "
        "MODULE FAILURE, ignored"})[0].startswith(
            "results/e.json: not fetched: Failed to get information")
    assert F.lab_fetch_note("e", {"unreachable": True, "msg": ENOSPC_TMP}) \
        == ["results/e.json: not fetched: the guest's disk is full (No "
            "space left on device): " + ENOSPC_TMP]


def test_ssh_lost_is_unreachable():
    """A task whose SSH connection broke while it ran (the wait for an
    experiment whose guest's sshd was killed) fails, it is not
    unreachable: its message makes the rescue's status 'unreachable' (so
    the domain is stopped), not 'fail'; a hang's 'timed out' stays
    'timeout'."""
    for msg in ("Wait: g: e (e, timeout 120 s): Failed to connect to the "
                "host via ssh: kex_exchange_identification: Connection "
                "closed by remote host",
                "Failed to connect to the host via ssh: ssh: connect to "
                "host 127.0.0.1 port 22298: Connection refused",
                'Data could not be sent to remote host "127.0.0.1". Make '
                "sure this host can be reached over ssh: "):
        assert F.lab_failed_status("ok", msg) == "unreachable", msg
        assert F.lab_failed_status("timeout", msg) == "timeout"
    assert F.lab_failed_status("ok", "Failed to connect to the host via "
                               "ssh: Connection timed out during banner "
                               "exchange") == "timeout"
    assert F.lab_failed_status("ok", "g: experiments not ok: e (fail)") == \
        "fail"


# A "guest" program that kills the test's sshd (its listener, pid file
# $1, and every process under it: the sessions, Ansible's wait among
# them) 3 s after it starts, then runs on: what tests/e2e/faults/kill-sshd
# does to a guest's sshd.
KILL_SSHD = """#!/usr/bin/python3
import os, signal, sys, time
time.sleep(3)
top = int(open(sys.argv[1]).read())
kids = {}
for p in os.listdir('/proc'):
    if not p.isdigit():
        continue
    try:
        stat = open('/proc/%s/stat' % p).read()
        ppid = int(stat.rsplit(')', 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        continue
    kids.setdefault(ppid, []).append(int(p))
todo, tree = [top], []
while todo:
    p = todo.pop()
    tree.append(p)
    todo += kids.get(p, [])
for p in tree:
    try:
        os.kill(p, signal.SIGTERM)
    except OSError:
        pass
time.sleep(120)
"""

SSHD_CONFIG = """Port {port}
ListenAddress 127.0.0.1
HostKey {d}/hostkey
AuthorizedKeysFile {d}/client.pub
PidFile {d}/sshd.pid
UsePAM no
PermitRootLogin prohibit-password
StrictModes no
LogLevel ERROR
"""


def loopback_sshd(d):
    """An sshd of the test's own on a free loopback port (its own keys;
    /run/sshd, its privilege separation directory, on a tmpfs of its own
    mount namespace), or None when this machine cannot run one.  Returns
    (port, pidfile)."""
    import shutil
    if os.geteuid() != 0 or not shutil.which("unshare") or \
            not os.path.exists("/usr/sbin/sshd"):
        return None
    for key in ("hostkey", "client"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "",
                        "-f", str(d / key)], check=True)
    port = free_port()
    (d / "sshd_config").write_text(SSHD_CONFIG.format(port=port, d=d))
    subprocess.Popen(
        ["unshare", "-m", "--propagation", "private", "sh", "-c",
         "mount -t tmpfs tmpfs /run && mkdir -m 755 /run/sshd && "
         "exec /usr/sbin/sshd -D -e -f %s" % (d / "sshd_config")],
        stdout=subprocess.DEVNULL, stderr=open(d / "sshd.log", "w"))
    for _ in range(50):
        try:
            with socket.create_connection(("127.0.0.1", port), 1) as s:
                if s.recv(4) == b"SSH-":
                    return port, d / "sshd.pid"
        except OSError:
            pass
        time.sleep(0.2)
    return None


def loopback_guest_run(tmp_path, port, workdir, exp, programs,
                       pre_tasks=()):
    """Runs one experiment of the run role (roles/run/tasks/experiment.yml,
    its wait on the "guest" over SSH) with the guests play's rescue
    (tasks/guest-failed.yml) on guest hl-x, this machine reached through
    the loopback sshd on `port`; the guest's programs in `workdir`/bin
    (pre_tasks put them there), its console EARLIER + LATER.  Returns
    (ansible-playbook's result, {status, failure, exps, excerpt})."""
    gdir = tmp_path / "guests"
    (gdir / "hl-x").mkdir(parents=True)
    (gdir / "hl-x" / "console.log").write_text(EARLIER + LATER)
    (tmp_path / "host" / "results").mkdir(parents=True)
    out = tmp_path / "out.json"
    guest = {
        "ansible_host": "127.0.0.1", "ansible_port": port,
        "ansible_user": "root",
        "ansible_python_interpreter": "/usr/bin/python3",
        "ansible_ssh_private_key_file": str(tmp_path / "client"),
        "ansible_ssh_common_args":
        "-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null"
        " -o LogLevel=ERROR -o ConnectTimeout=10"
        " -o ServerAliveInterval=5 -o ServerAliveCountMax=3",
        "ansible_control_path": "%s/cp-%%%%h-%%%%p" % tmp_path,
        "hypervisor": "localhost", "domain_name": "hl-x",
        "guest_console_from": len(EARLIER.encode())}
    write_inventory(tmp_path, gdir, guests={"hl-x": guest},
                    python="/usr/bin/python3")
    extra = {
        "hugelab_repo": TOP, "lab_progress_s": 5, "experiment_timeout_s": 60,
        "guest_workdir": str(workdir),
        "run_guest_results": "%s/results" % workdir,
        "run_host_results": str(tmp_path / "host" / "results"),
        "fleet_guest_dir": str(gdir / "hl-x"),
        "lab_programs": {n: {"path": "%s/bin/%s" % (workdir, n),
                             "json_opt": "--json"} for n in programs},
        "exp": exp}
    (tmp_path / "play.yml").write_text(json.dumps([
        {"name": "guests", "hosts": "hl-x", "gather_facts": False,
         "tasks": [{"block": list(pre_tasks) + [
             {"ansible.builtin.set_fact": {
                 "guest_experiments": [], "guest_status": "ok",
                 "guest_console_warnings": 0, "guest_console_excerpt": []}},
             {"ansible.builtin.include_role": {
                 "name": "run", "tasks_from": "experiment"}}],
             "rescue": [{"ansible.builtin.include_tasks": os.path.join(
                 TOP, "playbooks", "tasks", "guest-failed.yml")}]},
             {"ansible.builtin.copy": {
                 "dest": str(out),
                 "content": "{{ {'status': guest_status, 'failure': "
                 "guest_failure | default(''), 'exps': guest_experiments,"
                 " 'excerpt': guest_console_excerpt} | to_json }}"},
              "delegate_to": "localhost"}]}]))
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(TOP, "ansible.cfg"),
               ANSIBLE_FILTER_PLUGINS=filters.DIR,
               ANSIBLE_ROLES_PATH=os.path.join(TOP, "playbooks", "roles"),
               ANSIBLE_STDOUT_CALLBACK="default",
               ANSIBLE_CALLBACKS_ENABLED="",
               ANSIBLE_LOCAL_TEMP=str(tmp_path / "ltmp"))
    p = subprocess.run(
        ["ansible-playbook", "-i", str(tmp_path / "hosts.yml"),
         str(tmp_path / "play.yml"), "-e", json.dumps(extra)],
        cwd=TOP, env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout[-4000:]
    return p, json.loads(out.read_text())


def destroy_ran(stdout):
    """Whether the rescue's destroy of the domain ran (it is skipped for a
    status 'fail')."""
    stop = stdout.split("TASK [Stop the broken guest's domain")[1]
    return stop.split("TASK [")[0].count("ok: [hl-x") == 1


def test_sshd_killed_during_the_wait(tmp_path):
    """The fault matrix's sshd case without a guest: the run role's
    experiment and the guests play's rescue on this machine, through an
    sshd of the test's own that the experiment kills (KILL_SSHD).  The
    wait's connection breaks under its running task, which then fails
    (not unreachable) and the rescue runs: status 'unreachable' (so the
    domain is stopped), the experiment a timeout, the failure naming
    ssh's error.  Before: status 'fail', the domain left running."""
    started = loopback_sshd(tmp_path)
    if started is None:
        import pytest
        pytest.skip("no sshd, unshare or root here")
    port, pidfile = started
    guest = tmp_path / "guest"
    for d in ("bin", "results"):
        (guest / d).mkdir(parents=True)
    prog = guest / "bin" / "killer"
    prog.write_text(KILL_SSHD)
    prog.chmod(0o755)
    t0 = time.monotonic()
    try:
        p, doc = loopback_guest_run(
            tmp_path, port, guest,
            {"name": "kill-sshd", "program": "killer",
             "args": str(pidfile), "timeout_s": 60}, ["killer"])
    finally:
        # the killer (under async_wrapper, outside sshd's tree) and a
        # listener it did not get
        subprocess.run(["pkill", "-f", str(prog)], check=False)
        try:
            os.kill(int(pidfile.read_text()), 9)
        except (OSError, ValueError):
            pass
    took = time.monotonic() - t0
    assert doc["status"] == "unreachable", (doc, p.stdout[-3000:])
    assert "ssh" in doc["failure"] and "kill-sshd" in doc["failure"], doc
    exps = {e["name"]: e for e in doc["exps"]}
    assert exps["kill-sshd"]["status"] == "timeout", doc
    assert "hugelab-fault: killing sshd" in doc["excerpt"]
    assert not any("earlier boot" in x for x in doc["excerpt"]), doc
    assert destroy_ran(p.stdout), p.stdout[-3000:]
    assert took < 120, took
