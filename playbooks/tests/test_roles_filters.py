"""The roles' filters (playbooks/filter_plugins/hugelab_roles.py): the
logic that was Jinja inside the roles' YAML (kernel ids, result files,
console verdicts, manifest.json and guest.json)."""

import json
import os

import filters
from test_regress import TOP

F = filters.load("hugelab_roles")


def test_kernel_id_by_line():
    assert F.lab_kernel_id({"variant": "patched", "flavour": "perf"}) == \
        "patched-perf"
    assert F.lab_kernel_id({"variant": "stock", "flavour": "debug",
                            "source": "6.1"}) == "stock-debug"
    assert F.lab_kernel_id({"variant": "stock", "flavour": "perf",
                            "source": "6.12"}) == "6.12-stock-perf"


def test_kernels_wanted_once_in_order():
    hv = {
        "a": {"kernel": {"variant": "patched", "flavour": "perf"}},
        "b": {"kernel": {"variant": "stock", "flavour": "perf",
                         "source": "6.12"}},
        "c": {"kernel": {"variant": "patched", "flavour": "perf",
                         "source": "6.1"}},
    }
    assert F.lab_kernels_wanted(hv, ["a", "b", "c"]) == [
        {"id": "patched-perf", "source": "6.1", "variant": "patched",
         "flavour": "perf"},
        {"id": "6.12-stock-perf", "source": "6.12", "variant": "stock",
         "flavour": "perf"}]
    assert F.lab_kernels_wanted(hv, []) == []


def test_json_file(tmp_path):
    cases = {"ok.json": '{"status": "ok", "n": 1}', "empty.json": "",
             "cut.json": '{"status": "ok", "levels": [{"n": 1}',
             "list.json": "[1, 2]"}
    for name, text in cases.items():
        (tmp_path / name).write_text(text)
    assert F.lab_json_file(str(tmp_path / "ok.json")) == {
        "status": "ok", "n": 1}
    for name in ("empty.json", "cut.json", "list.json", "missing.json"):
        assert F.lab_json_file(str(tmp_path / name)) == {}, name
    assert F.lab_json_file(str(tmp_path)) == {}


def test_console_hits_are_literal():
    lines = ["[ 1.0] Kernel panic - not syncing", "BUG: x", "a.b",
             "axb", "plain"]
    assert F.lab_console_hits(lines, ["Kernel panic", "BUG:", "a.b"]) == \
        ["[ 1.0] Kernel panic - not syncing", "BUG: x", "a.b"]
    assert F.lab_console_hits(lines, []) == lines
    assert F.lab_console_hits([], ["BUG:"]) == []


def test_console_status():
    assert F.lab_console_status(["x", "Kernel panic - not"], "ok") == \
        "panic"
    assert F.lab_console_status(["BUG: x"], "timeout") == "timeout"
    assert F.lab_console_status([], "fail") == "fail"


def test_pick_and_timings():
    hv = {"g": {"a": 1, "b": [2], "c": 3}}
    assert F.lab_pick(hv, ["g"], ["a", "b"]) == {"g": {"a": 1, "b": [2]}}
    starts = {"host": "110", "validate": "100", "kernel": "150"}
    assert F.lab_stage_timings(starts, "200") == {
        "validate": 10, "host": 40, "kernel": 50}
    assert F.lab_stage_timings({}, 5) == {}


def guest(**over):
    g = {"hypervisor": "hv", "memory_mib": "2048", "vcpus": 2,
         "hugepages_2m": 8, "hugepages_1g": 0, "guest_cpu_model": "qemu64",
         "guest_cpu_features": ["pdpe1gb"],
         "kernel": {"variant": "patched", "flavour": "perf"}}
    g.update(over)
    return g


HV = {"hv": {"libvirt_uri": "qemu:///system", "hv_domain_type": "qemu"}}


def test_guest_doc_minimal():
    doc = F.lab_guest_doc(guest(), "g", HV)
    assert doc["schema"] == "hugelab.guest/1" and doc["name"] == "g"
    assert doc["status"] == "fail" and doc["failure"] == ""
    assert doc["shape"] == {"memory_mib": 2048, "vcpus": 2,
                            "hugepages_2m": 8, "hugepages_1g": 0,
                            "cpu_model": "qemu64,+pdpe1gb",
                            "domain_type": "qemu"}
    assert doc["kernel"] == {"source": "6.1", "variant": "patched",
                             "flavour": "perf", "release": "",
                             "package_sha256": "", "cmdline": "",
                             "verified": False}
    assert doc["boot_to_ssh_s"] is None and doc["experiments"] == []
    assert "regress" not in doc and "batch" not in doc
    json.dumps(doc)


def test_guest_doc_full():
    g = guest(guest_status="panic",
              guest_console_excerpt=["\x1b[31mKernel panic\x1b[0m", "x"],
              guest_console_warnings="2",
              guest_kernel_info={"release": "6.1.0", "verified": "True"},
              fleet_boot_to_ssh_s="12.5", regress_side="baseline",
              regress_pair="p1",
              guest_batch={"index": "1", "started_at": "t0"},
              guest_experiments=[{"name": "a", "program": "shmdb",
                                  "status": "ok", "result": "results/a.json",
                                  "seconds": "1.5", "rc": "0",
                                  "stderr_tail": []}])
    doc = F.lab_guest_doc(g, "g", HV)
    assert doc["console_excerpt"] == ["Kernel panic", "x"]
    assert doc["console_warnings"] == 2
    assert doc["kernel"]["verified"] is True
    assert doc["boot_to_ssh_s"] == 12.5
    assert doc["regress"] == {"side": "baseline", "pair": "p1"}
    assert doc["batch"] == {"index": 1, "started_at": "t0",
                            "finished_at": None}
    assert doc["experiments"][0]["seconds"] == 1.5
    assert doc["experiments"][0]["rc"] == 0
    # An ok guest's console excerpt is left out.
    ok = F.lab_guest_doc(guest(guest_status="ok",
                               guest_console_excerpt=["x"]), "g", HV)
    assert ok["console_excerpt"] == []


def test_ssh_proxy():
    assert F.lab_ssh_proxy({"ansible_connection": "local"}, "localhost") \
        == ""
    assert F.lab_ssh_proxy({}, "hv1") == \
        '-o ProxyCommand="ssh -W %h:%p -p 22  -l root hv1"'
    hv = {"ansible_port": 2222, "ansible_ssh_private_key_file": "/k",
          "ansible_ssh_common_args": "-o A=b", "ansible_user": "lab",
          "ansible_host": "127.0.0.1"}
    assert F.lab_ssh_proxy(hv, "hv2") == \
        '-o ProxyCommand="ssh -W %h:%p -p 2222 -i /k -o A=b -l lab 127.0.0.1"'


def test_regress_twins():
    g = {"regress_side": "baseline", "regress_pair": "p",
         "kernel": {"variant": "patched", "flavour": "perf"},
         "cmdline_extra": "", "hypervisor": "localhost",
         "memory_mib": "2048", "other": "not read",
         "experiments": [{"name": "a", "program": "shmdb"}, {"name": "b"}]}
    assert F.lab_regress_twins({"g": g}, ["g"]) == {"g": {
        "side": "baseline", "pair": "p",
        "kernel": {"variant": "patched", "flavour": "perf"},
        "cmdline_extra": "", "hypervisor": "localhost", "memory_mib": 2048,
        "experiments": ["a", "b"]}}


class FakeHostVars(object):
    """Ansible's lazy hostvars: hostvars[h] is a mapping of h's variables
    (only item access and `in`, no attributes)."""

    def __init__(self, hosts):
        self._hosts = hosts

    def __getitem__(self, h):
        return self._hosts[h]


def test_collect_failures_unfinished_then_not_ok():
    hv = FakeHostVars({
        "a": {"inventory_hostname": "a", "guest_status": "ok"},
        "b": {"inventory_hostname": "b", "guest_status": "panic"},
        "c": {"inventory_hostname": "c"},
        "d": {"inventory_hostname": "d", "guest_status": "timeout"},
        "e": {"inventory_hostname": "e"}})
    # The old Jinja: every guest without guest_status, then every guest
    # whose guest_status is not 'ok', each in collect_guests' order.
    assert F.lab_collect_failures(["a", "b", "c", "d", "e"], hv) == [
        "c: did not finish", "e: did not finish",
        "b: guest not ok", "d: guest not ok"]
    assert F.lab_collect_failures(["e", "d", "a"], hv) == [
        "e: did not finish", "d: guest not ok"]
    assert F.lab_collect_failures(["a"], hv) == []
    assert F.lab_collect_failures([], hv) == []


def test_exp_status():
    # timeout: the guest died, rc 124, or the job never completed; it
    # wins over everything else.
    assert F.lab_exp_status(True, 0, "", "ok", []) == "timeout"
    assert F.lab_exp_status(False, "124", "", "ok", []) == "timeout"
    assert F.lab_exp_status(False, 124, "", "ok", []) == "timeout"
    assert F.lab_exp_status(
        False, -1, "async task did not complete within the requested time",
        "", []) == "timeout"
    # ok: rc 0, the result's status ok, no console hit.
    assert F.lab_exp_status(False, "0", "", "ok", []) == "ok"
    assert F.lab_exp_status(False, 0, None, "ok", []) == "ok"
    # fail: anything else (rc, missing status, a console hit).
    assert F.lab_exp_status(False, 1, "", "ok", []) == "fail"
    assert F.lab_exp_status(False, -1, "", "ok", []) == "fail"
    assert F.lab_exp_status(False, 0, "", "", []) == "fail"
    assert F.lab_exp_status(False, 0, "", "fail", []) == "fail"
    assert F.lab_exp_status(False, 0, "", "ok", ["BUG: x"]) == "fail"
    # rc as Jinja's int filter reads it ("abc" is 0).
    assert F.lab_exp_status(False, "abc", "", "ok", []) == "ok"


OLD_FLEET_POOLS = (
    "{{ 'hugepagesz=2M hugepages=' ~ hugepages_2m"
    " if (hugepages_2m | int) > 0 else '' }}\n"
    "{{ 'hugepagesz=1G hugepages=' ~ hugepages_1g"
    " if (hugepages_1g | int) > 0 else '' }}\n"
    "default_hugepagesz={{ default_hugepagesz }}")


def old_fleet_pools(h2m, h1g, default):
    """The fleet role's old fleet_pools: its YAML folded scalar (>-: the
    lines joined by blanks) rendered by Jinja."""
    import jinja2
    text = OLD_FLEET_POOLS.replace("\n", " ")
    return jinja2.Environment().from_string(text).render(
        hugepages_2m=h2m, hugepages_1g=h1g, default_hugepagesz=default)


def cmdline(pools, base="root=/dev/vda rw console=ttyS0,115200",
            extra="mitigations=off"):
    """fleet_cmdline from fleet_pools (blanks squeezed, trimmed)."""
    import re
    return re.sub(r"\s+", " ", base + " " + pools + " " + extra).strip()


def test_fleet_pools_exact_old_rendering():
    assert F.lab_fleet_pools(0, 0, "2M") == "  default_hugepagesz=2M"
    assert F.lab_fleet_pools(600, 1, "2M") == \
        "hugepagesz=2M hugepages=600 hugepagesz=1G hugepages=1" \
        " default_hugepagesz=2M"
    assert F.lab_fleet_pools(0, 2, "1G") == \
        " hugepagesz=1G hugepages=2 default_hugepagesz=1G"
    assert F.lab_fleet_pools(520, 0, "2M") == \
        "hugepagesz=2M hugepages=520  default_hugepagesz=2M"
    combos = [(0, 0, "2M"), (600, 0, "2M"), (0, 1, "1G"), (1200, 2, "1G"),
              ("600", "1", "2M"), ("0", "0", "1G"), (-1, 0, "2M"),
              ("abc", "", "2M"), (1.0, 0, "2M")]
    for h2m, h1g, default in combos:
        old = old_fleet_pools(h2m, h1g, default)
        assert F.lab_fleet_pools(h2m, h1g, default) == old
        assert cmdline(F.lab_fleet_pools(h2m, h1g, default)) == cmdline(old)
    assert cmdline(F.lab_fleet_pools(0, 0, "2M")) == \
        "root=/dev/vda rw console=ttyS0,115200 default_hugepagesz=2M" \
        " mitigations=off"


def test_peers_in_play_order():
    hv = FakeHostVars({"g1": {"hypervisor": "hv1"},
                       "g2": {"hypervisor": "hv2"},
                       "g3": {"hypervisor": "hv1"},
                       "g4": {"hypervisor": "localhost"}})
    assert F.lab_peers(["g3", "g2", "g1", "g4"], hv, "hv1") == ["g3", "g1"]
    assert F.lab_peers(["g1", "g2", "g3", "g4"], hv, "hv2") == ["g2"]
    assert F.lab_peers(["g1", "g2"], hv, "hv9") == []


def find_key(node, key):
    """The values of every `key` in a loaded YAML document."""
    found = []
    if isinstance(node, dict):
        for k, v in node.items():
            if k == key:
                found.append(v)
            found.extend(find_key(v, key))
    elif isinstance(node, list):
        for v in node:
            found.extend(find_key(v, key))
    return found


def yaml_expr(relpath, key):
    """The Jinja expression the checkout's YAML file gives `key` (the only
    one of that name in the file)."""
    import yaml
    with open(os.path.join(TOP, relpath)) as f:
        values = find_key(yaml.safe_load(f), key)
    assert len(values) == 1, (relpath, key, values)
    return values[0]


def ansible_render(template, variables):
    """A template rendered by Ansible's own templar, with Ansible's filters
    and the lab's (playbooks/filter_plugins), as a play would."""
    from ansible.parsing.dataloader import DataLoader
    from ansible.plugins.loader import filter_loader
    from ansible.template import Templar
    filter_loader.add_directory(filters.DIR)
    return Templar(loader=DataLoader(), variables=variables).template(template)


# site.yml's Outcome play before lab_outcome_failures (YAML folded, so
# the whole value is this one expression).
OLD_OUTCOME_FAILURES = (
    "{{ (hostvars['localhost'].lab_run_failures | default([])\n"
    "    + groups['guests'] | map('extract', hostvars)"
    " | selectattr('guest_status', 'defined')\n"
    "      | rejectattr('guest_status', 'equalto', 'ok')"
    " | map(attribute='inventory_hostname')\n"
    "      | map('regex_replace', '$', ': guest not ok') | list)"
    " | unique | list }}")


def test_outcome_failures_as_old_jinja():
    guests = {
        "a": {"inventory_hostname": "a", "guest_status": "ok"},
        "b": {"inventory_hostname": "b", "guest_status": "panic"},
        "c": {"inventory_hostname": "c"},
        "d": {"inventory_hostname": "d", "guest_status": "timeout"}}
    new = yaml_expr("site.yml", "lab_outcome_failures")
    assert "\n" not in new
    cases = [
        # collect ran: its failures, a guest's own line only once
        ["c: did not finish", "b: guest not ok", "d: guest not ok"],
        # collect did not run (--skip-tags collect)
        None,
        [],
        # duplicates in collect's list are dropped too
        ["x: y", "x: y", "d: guest not ok"],
        # Ansible's unique ignores case: the first spelling stays
        ["X: Y", "x: y", "D: guest not ok", "B: Guest Not OK"],
    ]
    for order in (["a", "b", "c", "d"], ["d", "c", "b", "a"], ["a"], []):
        for run_failures in cases:
            local = {} if run_failures is None else \
                {"lab_run_failures": run_failures}
            hostvars = dict(guests, localhost=local)
            variables = {"hostvars": hostvars, "groups": {"guests": order}}
            old = ansible_render(OLD_OUTCOME_FAILURES, variables)
            assert ansible_render(new, variables) == old
            assert F.lab_outcome_failures(
                run_failures or [], order, FakeHostVars(hostvars)) == old
    hostvars = dict(guests, localhost={"lab_run_failures": ["c: x"]})
    assert ansible_render(new, {
        "hostvars": hostvars, "groups": {"guests": ["a", "b", "c", "d"]}}) \
        == ["c: x", "b: guest not ok", "d: guest not ok"]


# teardown.yml's teardown_mine and teardown_pick before (YAML folded).
OLD_TEARDOWN_MINE = (
    "{{ groups['guests'] | default([]) | map('extract', hostvars)\n"
    "   | selectattr('hypervisor', 'equalto', inventory_hostname)\n"
    "   | map(attribute='domain_name') | list }}")
OLD_TEARDOWN_PICK = (
    "{{ teardown_xml.results | lab_teardown_pick(lab_metadata_ns,"
    " lab_owner_id, teardown_mine,\n"
    "                                            inventory_hostname,"
    " teardown_scope) }}")


def test_teardown_mine_as_old_jinja():
    hostvars = {
        "g1": {"hypervisor": "localhost", "domain_name": "hl-g1"},
        "g2": {"hypervisor": "hv2", "domain_name": "hl-g2"},
        "g3": {"hypervisor": "localhost", "domain_name": "hl-g3"},
        "localhost": {}, "hv2": {}}
    new = yaml_expr("playbooks/teardown.yml", "teardown_mine")
    assert "\n" not in new
    for groups in ({"guests": ["g1", "g2", "g3"]},
                   {"guests": ["g3", "g1"]}, {"guests": []}, {}):
        for hv in ("localhost", "hv2", "hv9"):
            variables = {"groups": groups, "hostvars": hostvars,
                         "inventory_hostname": hv}
            old = ansible_render(OLD_TEARDOWN_MINE, variables)
            assert ansible_render(new, variables) == old
            assert F.lab_teardown_mine(groups.get("guests", []),
                                       FakeHostVars(hostvars), hv) == old
    assert F.lab_teardown_mine(["g1", "g2", "g3"], FakeHostVars(hostvars),
                               "localhost") == ["hl-g1", "hl-g3"]


def test_teardown_pick_one_line_as_old():
    from test_owner import ME, NS, OTHER, xml
    results = [{"item": "hl-a", "get_xml": xml("hl-a", OTHER)},
               {"item": "hl-b", "get_xml": xml("hl-b", ME)},
               {"item": "hl-c", "get_xml": xml("hl-c")},
               {"item": "hl-d", "get_xml": xml("hl-d", ME,
                                               hypervisor="hv2")},
               {"item": "web", "get_xml": xml("web", lab=False)},
               {"item": "gone", "get_xml": None}]
    new = yaml_expr("playbooks/teardown.yml", "teardown_pick")
    assert "\n" not in new
    for scope in ("inventory", "all"):
        for mine in (["hl-a", "hl-b", "hl-c", "hl-d", "web"], ["hl-b"], []):
            variables = {"teardown_xml": {"results": results},
                         "lab_metadata_ns": NS, "lab_owner_id": ME,
                         "teardown_mine": mine, "teardown_scope": scope,
                         "inventory_hostname": "localhost"}
            old = ansible_render(OLD_TEARDOWN_PICK, variables)
            assert ansible_render(new, variables) == old
    assert [d["name"] for d in old["remove"]] == ["hl-b", "hl-c", "hl-d"]


# regress-plan.yml's regress_errors before (YAML folded).
OLD_REGRESS_ERRORS = (
    "{{ (validate_run.stdout | from_json).errors\n"
    "   if (validate_run.stdout | default('')).startswith('{')\n"
    "   else [ansible_failed_result.msg | default('validation failed')] }}")


def test_regress_errors_as_old_jinja():
    verdict = {"schema": "hugelab.validate/1", "guests": 2,
               "errors": ["guests/g1: memory_mib: not an integer",
                          "guests/g2: hypervisor 'hv9' is not a host"]}
    new = yaml_expr("playbooks/regress-plan.yml", "regress_errors")
    assert "\n" not in new
    runs = [{"stdout": json.dumps(verdict)},
            {"stdout": json.dumps(dict(verdict, errors=[]))},
            {"stdout": "Traceback (most recent call last):"},
            {"stdout": ""}, {}, None]
    faileds = [{"msg": "non-zero return code"}, {}, None]
    for run in runs:
        for failed in faileds:
            variables = {}
            if run is not None:
                variables["validate_run"] = run
            if failed is not None:
                variables["ansible_failed_result"] = failed
            old = ansible_render(OLD_REGRESS_ERRORS, variables)
            assert ansible_render(new, variables) == old
            msg = (failed or {}).get("msg", "validation failed")
            assert F.lab_regress_errors(
                (run or {}).get("stdout", ""), msg) == old
    assert F.lab_regress_errors(json.dumps(verdict), "x") == verdict["errors"]
    assert F.lab_regress_errors("", "x") == ["x"]


# The kernel role's kernel_manifest before (build.yml, YAML folded).
OLD_KERNEL_MANIFEST = (
    "{{ job_result.stdout_lines[-1] if kernel_run | bool\n"
    "   else hugelab_cache ~ '/kernel/' ~ kernel_vf ~ '/manifest.json' }}")


def test_kernel_manifest_as_old_jinja():
    new = yaml_expr("playbooks/roles/kernel/tasks/build.yml",
                    "kernel_manifest")
    assert "\n" not in new
    built = {"stdout_lines": ["building", "/c/kernel/patched-perf/m.json"]}
    skipped = {"skipped": True, "changed": False}
    # kernel_run as a play gets it: a bool, -e's strings, a number.
    for run in (True, False, "true", "false", "yes", "no", "1", "0", 1, 0):
        on = run in (True, "true", "yes", "1", 1)
        for job in ((built,) if on else (built, skipped, None)):
            for vf in ("patched-perf", "6.12-stock-debug"):
                variables = {"kernel_run": run, "kernel_vf": vf,
                             "hugelab_cache": "/var/cache/hugelab"}
                if job is not None:
                    variables["job_result"] = job
                old = ansible_render(OLD_KERNEL_MANIFEST, variables)
                assert ansible_render(new, variables) == old
                lines = (job or {}).get("stdout_lines", [])
                assert F.lab_kernel_manifest(
                    on, lines, "/var/cache/hugelab", vf) == old
    assert F.lab_kernel_manifest(False, [], "/c", "stock-perf") == \
        "/c/kernel/stock-perf/manifest.json"
    assert F.lab_kernel_manifest(True, ["a", "/m.json"], "/c", "x") == \
        "/m.json"


# The run role's run_bundle_files before (tasks/main.yml, YAML folded).
OLD_BUNDLE_FILES = (
    "{{ (run_programs | zip(run_programs"
    " | map('extract', lab_programs, 'path')) | flatten)\n"
    "   + (run_selftests | map('regex_replace', '^', 'selftests/')\n"
    "      | zip(run_selftests | map('regex_replace', '^',"
    " selftest_build_dir ~ '/bin/')) | flatten) }}")


def test_bundle_files_as_old_jinja():
    new = yaml_expr("playbooks/roles/run/tasks/main.yml", "run_bundle_files")
    assert "\n" not in new
    top = "/srv/hugelab"
    lab_programs = {
        "shmdb": {"path": top + "/workloads/build/shmdb", "json_opt": "--out"},
        "racer": {"path": top + "/workloads/build/racer",
                  "json_opt": "--json"},
        "selftest": {"path": top + "/playbooks/roles/run/files/selftest-run",
                     "json_opt": "--json"},
        "crash": {"path": "/tmp/e2e/crash trigger", "json_opt": "--json"}}
    names = ["hugepage-mremap", "hugepage-shm", "map_hugetlb",
             "hugetlb-madvise", "hugetlb-split-race"]
    for programs in (["shmdb", "racer"], ["selftest"],
                     ["racer", "selftest", "crash"], []):
        for selftests in ((names, names[:1], []) if "selftest" in programs
                          else ([],)):
            for build_dir in ("/var/cache/hugelab/selftests/6.1.158",
                              "/c/s t"):
                variables = {"run_programs": programs,
                             "lab_programs": lab_programs,
                             "run_selftests": selftests,
                             "selftest_build_dir": build_dir}
                old = ansible_render(OLD_BUNDLE_FILES, variables)
                assert ansible_render(new, variables) == old
                assert F.lab_bundle_files(
                    programs, lab_programs, selftests, build_dir) == old
    assert F.lab_bundle_files(["racer", "selftest"], lab_programs,
                              ["map_hugetlb"], "/b") == [
        "racer", top + "/workloads/build/racer",
        "selftest", top + "/playbooks/roles/run/files/selftest-run",
        "selftests/map_hugetlb", "/b/bin/map_hugetlb"]


# playbooks/tasks/guest-failed.yml's three expressions before (folded).
OLD_CONSOLE_EXCERPT = (
    "{{ (guest_console_excerpt | default([])\n"
    "    + failed_lines | lab_console_hits(console_fail_patterns)\n"
    "    + failed_lines[-guest_console_excerpt_lines:]) | unique | list }}")
OLD_FAILED_EXPERIMENTS = (
    "{{ guest_experiments | default([])\n"
    "   + ([{'name': run_current.name, 'program': run_current.program,"
    " 'status': 'timeout',\n"
    "        'result': 'results/' ~ run_current.name ~ '.json',"
    " 'seconds': 0, 'rc': -1,\n"
    "        'stderr_tail': [ansible_failed_result.msg"
    " | default('failed')]}]\n"
    "      if (run_current | default({})).name is defined\n"
    "         and run_current.name not in (guest_experiments | default([])"
    " | map(attribute='name') | list)\n"
    "      else []) }}")
OLD_FAILED_STATUS = (
    "{{ guest_status if guest_status | default('ok') != 'ok'\n"
    "   else ('timeout' if (ansible_failed_result.msg | default(''))"
    " is search('timed out') else 'fail') }}")
PATTERNS = ["Kernel panic", "Oops:", "BUG:", "WARNING:",
            "possible circular locking", "rcu: INFO:", "Bad page"]


def guest_failed_vars(**kw):
    """The variables of guest-failed.yml's Record task, None ones unset."""
    return {k: v for k, v in kw.items() if v is not None}


def test_console_excerpt_as_old_jinja():
    new = yaml_expr("playbooks/tasks/guest-failed.yml",
                    "guest_console_excerpt")
    assert "\n" not in new
    console = ["[    0.0] Linux version 6.1.0", "login: ok",
               "[   12.1] BUG: unable to handle page fault",
               "[   12.2] Oops: 0000 [#1] SMP", "login: ok",
               "[   12.3] bug: lower case is no hit",
               "[   12.4] Kernel panic - not syncing: Fatal exception",
               "[   12.4] KERNEL PANIC - not syncing: Fatal exception",
               "---[ end Kernel panic ]---"]
    for lines in (console, console[:2], []):
        for previous in (None, [], ["[   12.2] Oops: 0000 [#1] SMP", "x"],
                         ["LOGIN: OK"]):
            for patterns in (PATTERNS, []):
                for count in (30, 3, 1, 0):
                    variables = guest_failed_vars(
                        failed_lines=lines, guest_console_excerpt=previous,
                        console_fail_patterns=patterns,
                        guest_console_excerpt_lines=count)
                    old = ansible_render(OLD_CONSOLE_EXCERPT, variables)
                    assert ansible_render(new, variables) == old
                    assert F.lab_console_excerpt(
                        lines, previous or [], patterns, count) == old
    assert F.lab_console_excerpt(console, [], PATTERNS, 1) == [
        console[2], console[3], console[6], console[8]]


def test_failed_experiments_as_old_jinja():
    new = yaml_expr("playbooks/tasks/guest-failed.yml", "guest_experiments")
    assert "\n" not in new
    done = {"name": "shm", "program": "shmdb", "status": "ok",
            "result": "results/shm.json", "seconds": 12, "rc": 0,
            "stderr_tail": []}
    for recorded in (None, [], [done]):
        for current in (None, {}, {"name": "shm", "program": "shmdb"},
                        {"name": "race", "program": "racer"}):
            for failed in (None, {}, {"msg": "Data could not be sent"},
                           {"msg": "", "unreachable": True},
                           {"msg": None}):
                variables = guest_failed_vars(
                    guest_experiments=recorded, run_current=current,
                    ansible_failed_result=failed)
                old = ansible_render(OLD_FAILED_EXPERIMENTS, variables)
                assert ansible_render(new, variables) == old
                assert F.lab_failed_experiments(
                    recorded or [], current or {}, failed or {}) == old
    got = F.lab_failed_experiments(
        [done], {"name": "race", "program": "racer"}, {"msg": "gone"})
    assert got == [done, {
        "name": "race", "program": "racer", "status": "timeout",
        "result": "results/race.json", "seconds": 0, "rc": -1,
        "stderr_tail": ["gone"]}]
    assert list(got[1]) == ["name", "program", "status", "result",
                            "seconds", "rc", "stderr_tail"]


def test_failed_status_as_old_jinja():
    new = yaml_expr("playbooks/tasks/guest-failed.yml", "failed_otherwise")
    assert "\n" not in new
    for status in (None, "ok", "timeout", "panic", "fail"):
        for failed in (None, {}, {"msg": "Timeout (12s) waiting for"},
                       {"msg": "ssh: connect timed out"},
                       {"msg": "the job timed out after 600 s"},
                       {"msg": "TIMED OUT"}, {"msg": "non-zero return"}):
            variables = guest_failed_vars(guest_status=status,
                                          ansible_failed_result=failed)
            old = ansible_render(OLD_FAILED_STATUS, variables)
            assert ansible_render(new, variables) == old
            assert F.lab_failed_status(
                status or "ok", (failed or {}).get("msg", "")) == old
    assert F.lab_failed_status("ok", "x timed out") == "timeout"
    assert F.lab_failed_status("panic", "x timed out") == "panic"
    assert F.lab_failed_status("ok", "") == "fail"


# The run role's run_doc_note before (tasks/experiment.yml, YAML folded).
OLD_DOC_NOTE = (
    "{{ ['results/' ~ exp.name ~ '.json: not a result (empty or not JSON)']\n"
    "   if run_result_file is file and run_result_doc.status is not defined"
    " else [] }}")


def test_doc_note_as_old_jinja(tmp_path):
    new = yaml_expr("playbooks/roles/run/tasks/experiment.yml",
                    "run_doc_note")
    assert "\n" not in new
    files = {"ok.json": '{"status": "ok", "x": 1}',
             "fail.json": '{"status": "fail"}',
             "null.json": '{"status": null}',
             "empty.json": "", "cut.json": '{"status": "o',
             "list.json": "[1, 2]", "nostatus.json": '{"x": 1}'}
    for fname, text in files.items():
        (tmp_path / fname).write_text(text)
    (tmp_path / "dir.json").mkdir()
    for fname in list(files) + ["dir.json", "missing.json"]:
        path = str(tmp_path / fname)
        doc = F.lab_json_file(path)
        variables = {"exp": {"name": fname[:-5], "program": "shmdb"},
                     "run_result_file": path, "run_result_doc": doc}
        old = ansible_render(OLD_DOC_NOTE, variables)
        assert ansible_render(new, variables) == old
        assert F.lab_doc_note(fname[:-5], os.path.isfile(path), doc) == old
    assert F.lab_doc_note("cut", True, {}) == [
        "results/cut.json: not a result (empty or not JSON)"]
    assert F.lab_doc_note("gone", False, {}) == []
    assert F.lab_doc_note("ok", True, {"status": "ok"}) == []


# inventory/group_vars/all.yml's selftest_src before (YAML folded: the
# line breaks kept fall inside the expression).
OLD_SELFTEST_SRC = (
    "{{ hugelab_cache }}/kernel/src/{{ hostvars['localhost']"
    ".lab_kernels.values()\n"
    "   | selectattr('source.package', 'equalto', 'linux-source-6.1')\n"
    "   | map(attribute='source.version') | first | default('none') }}"
    "/linux")


def test_selftest_src_as_old_jinja():
    new = yaml_expr("inventory/group_vars/all.yml", "selftest_src")
    assert "\n" not in new

    def manifest(package, version=None):
        source = {"package": package, "line": package[-3:]}
        if version is not None:
            source["version"] = version
        return {"schema": "hugelab.kernel/1", "kernelrelease": "x",
                "source": source}
    k61 = manifest("linux-source-6.1", "6.1.158-1")
    k612 = manifest("linux-source-6.12", "6.12.57-1~bpo12+1")
    kernel_sets = [
        {"patched-perf": k61, "stock-perf": dict(k61, kernelrelease="y")},
        {"6.12-stock-perf": k612, "patched-perf": k61},
        {"6.12-stock-perf": k612},
        {"a": manifest("linux-source-6.1")},
        {"c": manifest("linux-source-6.1", "6.1.1-1"),
         "d": manifest("linux-source-6.1", "6.1.2-1")},
        {}]
    for kernels in kernel_sets:
        variables = {"hugelab_cache": "/var/cache/hugelab",
                     "hostvars": {"localhost": {"lab_kernels": kernels}}}
        old = ansible_render(OLD_SELFTEST_SRC, variables)
        assert ansible_render(new, variables) == old
        assert "/var/cache/hugelab/kernel/src/%s/linux" % \
            F.lab_source_version(kernels, "linux-source-6.1") == old
    # A version of null renders empty, both ways.
    variables = {"hugelab_cache": "/c", "hostvars": {"localhost": {
        "lab_kernels": {"a": manifest("linux-source-6.1", "x")}}}}
    variables["hostvars"]["localhost"]["lab_kernels"]["a"]["source"][
        "version"] = None
    assert ansible_render(new, variables) == \
        ansible_render(OLD_SELFTEST_SRC, variables) == "/c/kernel/src//linux"
    # A manifest without a source package fails, both ways (Ansible's
    # undefined variable before, the filter's KeyError or TypeError now).
    for bad in ({"schema": "hugelab.kernel/1"}, {"source": "6.1"},
                {"source": {"line": "6.1"}}):
        variables = {"hugelab_cache": "/c", "hostvars": {"localhost": {
            "lab_kernels": {"a": bad, "b": k61}}}}
        for expr in (OLD_SELFTEST_SRC, new):
            try:
                ansible_render(expr, variables)
            except Exception:
                continue
            raise AssertionError((expr, bad))
    assert F.lab_source_version(kernel_sets[1], "linux-source-6.1") == \
        "6.1.158-1"
    assert F.lab_source_version(kernel_sets[4], "linux-source-6.1") == \
        "6.1.1-1"
    assert F.lab_source_version({}, "linux-source-6.1") == "none"


# The run role's two build conditions before (tasks/main.yml, plain YAML
# over two lines: folded into one).
OLD_WORKLOADS_WHEN = (
    "groups['guests'] | map('extract', hostvars, 'experiments') | flatten"
    " | map(attribute='program') | select('in', run_workloads_programs)"
    " | list | length > 0")
OLD_SELFTEST_WHEN = (
    "groups['guests'] | map('extract', hostvars, 'experiments') | flatten"
    " | map(attribute='program') | select('equalto', 'selftest')"
    " | list | length > 0")


def run_main_whens():
    """The `when` of each of the run role's tasks, by task name."""
    import yaml
    path = os.path.join(TOP, "playbooks", "roles", "run", "tasks",
                        "main.yml")
    with open(path) as f:
        return {t["name"]: t.get("when") for t in yaml.safe_load(f)}


def test_build_whens_as_old_jinja():
    whens = run_main_whens()
    new_workloads = whens[
        "Build the workloads on the controller (make -C workloads)"]
    new_selftest = whens[
        "Build the kernel's hugetlb selftests on the controller"]
    for expr in (new_workloads, new_selftest):
        assert isinstance(expr, str) and "\n" not in expr

    def exp(program):
        return {"name": program + "-1", "program": program, "args": []}
    hostvars = {
        "g1": {"experiments": [exp("shmdb"), exp("racer")]},
        "g2": {"experiments": [exp("selftest")]},
        "g3": {"experiments": []},
        "g4": {"experiments": [exp("crash"), None]},
        "g5": {"experiments": [exp("pgbench"), exp("selftest")]}}
    programs = ["shmdb", "racer", "forktouch", "pgbench"]
    for guests in (["g1", "g2", "g3", "g4", "g5"], ["g1"], ["g2"], ["g3"],
                   ["g4"], ["g4", "g5"], ["g3", "g2"], []):
        variables = {"groups": {"guests": guests}, "hostvars": hostvars,
                     "run_workloads_programs": programs}
        for old, new in ((OLD_WORKLOADS_WHEN, new_workloads),
                         (OLD_SELFTEST_WHEN, new_selftest)):
            want = ansible_render("{{ %s }}" % old, variables)
            assert isinstance(want, bool)
            assert ansible_render("{{ %s }}" % new, variables) is want
        assert F.lab_guest_programs(guests, FakeHostVars(hostvars)) == \
            ansible_render("{{ groups['guests'] | map('extract', hostvars,"
                           " 'experiments') | flatten"
                           " | map(attribute='program') | list }}",
                           variables)
    assert F.lab_guest_programs(["g1", "g4", "g5"], hostvars) == [
        "shmdb", "racer", "crash", "pgbench", "selftest"]


JOB_WAIT = os.path.join(TOP, "playbooks", "roles", "job_wait", "files",
                        "job-wait")


def job_wait(tmp_path, doc):
    """Run job-wait on a status file holding doc (None: no file)."""
    import subprocess
    adir = tmp_path / "async"
    adir.mkdir()
    if doc is not None:
        (adir / "123.456").write_text(json.dumps(doc))
    r = subprocess.run(["python3", JOB_WAIT, "123.456", "5", "0", "exp"],
                       env=dict(os.environ, ANSIBLE_ASYNC_DIR=str(adir)),
                       capture_output=True, text=True, check=True,
                       timeout=60)
    return r.stdout.splitlines()


def test_job_result_as_async_status_gives_it(tmp_path):
    # The command module's document as async_wrapper writes it.
    doc = {"changed": True, "rc": 124, "stdout": "", "delta": "0:00:30.1",
           "stderr": "timeout: sending signal TERM to command 'x'\n",
           "msg": "non-zero return code", "cmd": ["timeout", "x"]}
    lines = job_wait(tmp_path, doc)
    assert lines[-1] == "finished"
    r = F.lab_job_result(lines, "123.456")
    assert r["finished"] == 1 and r["ansible_job_id"] == "123.456"
    assert (r["rc"], r["delta"], r["msg"]) == (124, "0:00:30.1",
                                               "non-zero return code")
    assert r["stderr_lines"] == [
        "timeout: sending signal TERM to command 'x'"]
    assert r["stdout_lines"] == []
    # The async limit's document (no stdout): kept as it is.
    limit = {"failed": 1, "finished": 1, "msg": "Timeout exceeded"}
    r = F.lab_job_result(["result " + json.dumps(limit), "finished"], "j")
    assert (r["msg"], r["finished"]) == ("Timeout exceeded", 1)
    assert "stdout_lines" not in r


def test_job_result_asks_again_when_the_wait_read_none(tmp_path):
    # No status file: finished for the wait, async_status must tell why.
    lines = job_wait(tmp_path, None)
    assert lines[-1] == "finished"
    assert F.lab_job_result(lines, "123.456") == {}
    # A job still running prints no result (the wait gives up after 5 s).
    sub = tmp_path / "running"
    sub.mkdir()
    running = job_wait(sub, {"started": 1, "finished": 0})
    assert "finished" not in running
    assert F.lab_job_result(running, "123.456") == {}
    assert F.lab_job_result(["result {not json", "finished"], "j") == {}
    assert F.lab_job_result(["result [1, 2]", "finished"], "j") == {}
    assert F.lab_job_result(None, "j") == {}


def test_job_result_is_no_template():
    # A job's output that looks like Jinja stays text (wrap_var).
    r = F.lab_job_result(['result {"rc": 0, "stdout": "{{ lookup(1) }}"}'],
                         "j")
    assert type(r["stdout"]).__name__ == "AnsibleUnsafeText"
    assert type(r["stdout_lines"][0]).__name__ == "AnsibleUnsafeText"
