"""roles/validate/files/validate-inventory on inventory data (issue 30):
the lab's groups, hosts in no group, keys given twice, the file that sets
a key, integers that are not (4096.0, "10m", "two"), libvirt failures, and
the memory check counting only this owner's running domains.  No
ansible-playbook, no libvirt (virsh is replaced)."""

import copy
import os

import pytest

from test_regress import TOP, VI, doc, twin

NS = "https://hugelab.invalid/xmlns/lab/1"
ME = "/work/a#/work/a/inventory"
OTHER = "/work/b#/work/b/inventory"


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


HOSTS = """all:
  children:
    hypervisors:
      hosts:
        localhost:
          ansible_connection: local
          libvirt_uri: qemu:///system
          lab_serial: two
    guests:
      vars:
        vcpus: 2
      hosts:
        hl-a: {memory_mib: 2048}
        hl-b: {}
"""


@pytest.fixture
def inv(tmp_path):
    top = tmp_path / "inv"
    write(str(top / "hosts.yml"), HOSTS)
    write(str(top / "host_vars" / "hl-b.yml"), "memory_mib: 4096.0\n")
    write(str(top / "group_vars" / "guests.yml"),
          "memory_mib: 1024\nguest_boot_timeout_s: 10m\n")
    write(str(top / "group_vars" / "all" / "00-lab.yml"),
          "guest_boot_timeout_s: 600\nvcpus: 1\n")
    return str(top)


def test_key_source_follows_ansible_precedence(inv):
    files = VI.InventoryFiles([inv], TOP)
    src = files.key_source
    # host_vars, then inline host vars, then the group's, then all's.
    assert src("hl-b", "memory_mib", ["guests"]) == os.path.join(
        inv, "host_vars", "hl-b.yml")
    assert src("hl-a", "memory_mib", ["guests"]) == os.path.join(
        inv, "hosts.yml")
    assert src("hl-a", "guest_boot_timeout_s", ["guests"]) == os.path.join(
        inv, "group_vars", "guests.yml")
    assert src("localhost", "guest_boot_timeout_s", ["hypervisors"]) == \
        os.path.join(inv, "group_vars", "all", "00-lab.yml")
    # Inline group vars come before all's.
    assert src("hl-a", "vcpus", ["guests"]) == os.path.join(inv,
                                                            "hosts.yml")
    assert src("localhost", "lab_serial", ["hypervisors"]) == os.path.join(
        inv, "hosts.yml")
    assert src("hl-a", "nothing", ["guests"]) is None
    assert files.listed_in("hl-b") == os.path.join(inv, "hosts.yml")
    # Inside the repository a path is shown relative to it.
    assert files.show(os.path.join(TOP, "inventory", "hosts.yml")) == \
        "inventory/hosts.yml"


def test_keys_given_twice(inv):
    write(os.path.join(inv, "hosts.yml"),
          HOSTS + "        hl-a: {}\n")
    write(os.path.join(inv, "host_vars", "hl-b.yml"),
          "memory_mib: 4096\nvcpus: 2\nmemory_mib: 2048\n")
    v = VI.Validator(dict(doc(), inventory_sources=[inv]))
    v.twice()
    assert v.errors == [
        "hl-a: listed twice in %s/hosts.yml (lines 13 and 15) (allowed: a "
        "host once in a group; YAML keeps the last entry only)" % inv,
        "hl-b: memory_mib: given twice in %s/host_vars/hl-b.yml (lines 1 "
        "and 3) (allowed: a key once; YAML keeps the last value only)"
        % inv]


def groups(**over):
    g = {"all": ["localhost", "hl-b", "hl-c"], "ungrouped": [],
         "hypervisors": ["localhost"], "guests": ["hl-b", "hl-c"]}
    g.update(over)
    return g


def test_missing_or_empty_groups_are_the_only_line():
    for gs, want in (
            (groups(hypervisors=[]), "inventory: group 'hypervisors' is "
             "missing or empty"),
            ({"all": ["localhost", "hl-b"], "hypervisor": ["localhost"],
              "guests": ["hl-b"]},
             "inventory: group 'hypervisors' is missing or empty, did you "
             "mean 'hypervisor'?"),
            ({"all": ["localhost", "hl-b"], "hypervisors": ["localhost"],
              "guest": ["hl-b"]},
             "inventory: group 'guests' is missing or empty, did you mean "
             "'guest'?")):
        v = VI.Validator(dict(doc(), groups=gs))
        v.run()
        assert len(v.errors) == 1 and v.errors[0].startswith(want), v.errors


def test_hosts_in_no_group_or_both():
    v = VI.Validator(dict(doc(), groups=groups(
        all=["localhost", "hl-b", "hl-c", "stray"],
        guests=["hl-b", "hl-c", "localhost"])))
    assert v.group_checks()
    assert v.errors == [
        "localhost: in both the hypervisors and the guests group (allowed: "
        "one of them)",
        "stray: in no group of the lab (allowed: a host of the hypervisors "
        "or the guests group)"]


@pytest.mark.parametrize("key,value", [
    ("memory_mib", 4096.0), ("memory_mib", "4G"), ("vcpus", 2.0),
    ("hugepages_2m", "600 "), ("ansible_port", 22241.5)])
def test_integers_are_integers(key, value):
    d = doc()
    d["guests"]["hl-b"][key] = value
    v = VI.Validator(d)
    v.per_guest()
    if value == "600 ":
        # A digit string (-e hugepages_2m=600) counts.
        assert v.errors == []
        return
    assert v.errors == ["hl-b: %s: %s is not allowed (allowed: %s)" % (
        key, VI.show(value), v.schema["properties"][key]["x-allowed"])]


def test_lab_keys_one_line_per_key_value_and_file(inv):
    d = dict(doc(), inventory_sources=[inv],
             groups={"all": ["localhost", "hl-a", "hl-b"],
                     "hypervisors": ["localhost"],
                     "guests": ["hl-a", "hl-b"]},
             lab_values={"localhost": {"lab_serial": "two",
                                       "guest_boot_timeout_s": 600},
                         "hl-a": {"guest_boot_timeout_s": "10m"},
                         "hl-b": {"guest_boot_timeout_s": "10m",
                                  "lab_serial": "3"}})
    v = VI.Validator(d)
    v.lab_keys()
    assert v.errors == [
        "hl-a, hl-b: guest_boot_timeout_s: '10m' is not allowed (allowed: "
        "an integer number of seconds >= 1 (no unit)) [set in %s]"
        % os.path.join(inv, "group_vars", "guests.yml"),
        "localhost: lab_serial: 'two' is not allowed (allowed: an integer "
        ">= 0 (guests of a hypervisor at once; 0: all)) [set in %s]"
        % os.path.join(inv, "hosts.yml")]


def test_reserve_with_a_unit_is_a_line_not_an_internal_error():
    d = doc()
    d["lab"]["guest_os_reserve_mib"] = "512M"
    v = VI.Validator(d)
    v.lab_keys()
    v.per_guest()
    assert v.errors == ["controller: guest_os_reserve_mib: '512M' is not "
                        "allowed (allowed: an integer >= 0 (MiB, no unit))"]


def test_cmdline_pools():
    d = doc()
    d["guests"]["hl-b"]["cmdline_extra"] = "hugepages=100 hugepagesz=2M"
    v = VI.Validator(d)
    v.per_guest()
    assert len(v.errors) == 1 and v.errors[0].startswith(
        "hl-b: cmdline_extra: 'hugepages=100' would override the huge page "
        "pools")


def dom(name, owner=None, lab=True):
    meta = ""
    if lab:
        meta = ("<metadata><hugelab:lab xmlns:hugelab='%s'>"
                "<hugelab:guest>%s</hugelab:guest>%s</hugelab:lab>"
                "</metadata>" % (NS, name, "<hugelab:owner>%s</hugelab:owner>"
                                 % owner if owner else ""))
    return "<domain><name>%s</name>%s</domain>" % (name, meta)


def fake_virsh(domains, running, fail=None):
    def virsh(uri, *args):
        if fail:
            raise RuntimeError(fail)
        if args[:2] == ("list", "--all"):
            return "\n".join(domains)
        if args[0] == "list":
            return "\n".join(running)
        return domains[args[1]]
    return virsh


def hv_doc():
    d = doc(guests={"hl-b": twin("baseline", 22241, memory_mib=4096,
                                 domain_name="hl-b"),
                    "hl-c": twin("candidate", 22242, memory_mib=4096,
                                 domain_name="hl-c")})
    d["lab"]["owner"] = ME
    d["hypervisors"] = {"localhost": {"libvirt_uri": "qemu:///system"}}
    d["memavail"] = [{"item": "localhost", "rc": 0, "stdout": "5000"}]
    return d


def checked(d, monkeypatch, **virsh):
    monkeypatch.setattr(VI, "virsh", fake_virsh(**virsh))
    v = VI.Validator(d)
    v.per_guest()
    v.hypervisor_checks()
    return v


def test_memory_counts_only_this_owners_running_domains(monkeypatch):
    # Both guests' domains run, both ours: 8192 needed, 5000 + 8192 - 2048
    # there.
    v = checked(hv_doc(), monkeypatch,
                domains={"hl-b": dom("hl-b", ME), "hl-c": dom("hl-c")},
                running=["hl-b", "hl-c"])
    assert v.errors == []
    # hl-c's domain is another checkout's: refused, and not counted back.
    v = checked(hv_doc(), monkeypatch,
                domains={"hl-b": dom("hl-b", ME), "hl-c": dom("hl-c", OTHER)},
                running=["hl-b", "hl-c"])
    assert len(v.errors) == 2
    assert v.errors[0].startswith(
        "hl-c: domain_name: 'hl-c' on localhost (qemu:///system) is another "
        "hugelab checkout's lab domain (owner %s; this is %s)" % (OTHER, ME))
    assert v.errors[1].startswith(
        "localhost: total guest memory 8192 MiB (hl-b, hl-c) is over the "
        "host's free memory: 5000 MiB available + 4096 MiB of lab guests "
        "already running - 2048 MiB reserved")


def test_libvirt_failures(monkeypatch):
    d = hv_doc()
    d["memavail"][0]["stdout"] = "20000"
    v = checked(d, monkeypatch, domains={}, running=[],
                fail="failed to connect to the hypervisor: no connection "
                "driver available for qemu:///sytem")
    assert len(v.errors) == 1 and v.errors[0].startswith(
        "localhost: libvirt_uri: 'qemu:///system': `virsh -c qemu:///system "
        "list` fails: failed to connect")
    v = checked(d, monkeypatch, domains={}, running=[],
                fail="failed to connect to the hypervisor: Failed to connect "
                "socket to '/var/run/libvirt/libvirt-sock': No such file or "
                "directory")
    assert v.errors == [] and v.notes[0].startswith(
        "note: localhost: libvirt at qemu:///system does not answer")
    # A fresh remote hypervisor without libvirt yet (the host stage
    # installs it): the remote helper is not found (libssh's words).
    for code in ("127", "-1"):
        v = checked(d, monkeypatch, domains={}, running=[],
                    fail="failed to connect to the hypervisor: libssh "
                    "transport error: Remote command terminated with "
                    "non-zero code: " + code)
        assert v.errors == [] and v.notes[0].startswith(
            "note: localhost: libvirt at qemu:///system does not answer")
    # A host key that is not the pinned one stays a mistake.
    v = checked(d, monkeypatch, domains={}, running=[],
                fail="failed to connect to the hypervisor: libssh "
                "transport error: host key for server changed")
    assert len(v.errors) == 1 and "fails: failed to connect" in v.errors[0]


def test_unknown_key_guest_is_not_asked_further():
    d = copy.deepcopy(doc())
    v = VI.Validator(d)
    v.suspect.add("hl-b")
    v.per_guest()
    assert "hl-b" in v.good and "hl-b" not in v.shaped
    assert "hl-c" in v.shaped


def test_stop_after_batch_takes_a_boolean_or_its_word(inv):
    def errors(value):
        d = dict(doc(), inventory_sources=[inv],
                 groups={"all": ["localhost", "hl-a"],
                         "hypervisors": ["localhost"], "guests": ["hl-a"]},
                 lab_values={"hl-a": {"lab_stop_after_batch": value}})
        v = VI.Validator(d)
        v.lab_keys()
        return v.errors
    for good in (True, False, "true", "false"):
        assert errors(good) == [], good
    assert [e.split(" [set in")[0] for e in errors("flase")] == [
        "hl-a: lab_stop_after_batch: 'flase' is not allowed (allowed: true "
        "or false (power a guest off when its batch ends))"]
