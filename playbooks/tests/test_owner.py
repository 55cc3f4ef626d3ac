"""Lab domain owners (playbooks/filter_plugins/hugelab_lab.py): two
checkouts on one host leave each other's domains alone.  Filters on XML
alone; tests/e2e's teardown test (test_teardown_leaves_other_owner) runs
teardown.yml against libvirt when it answers."""

import os
import shutil
import subprocess
import tempfile

import pytest

import filters
from filters import TOP

NS = "https://hugelab.invalid/xmlns/lab/1"
URI = "qemu:///system"


H = filters.load("hugelab_lab")
ME = H.lab_owner(TOP, [os.path.join(TOP, "inventory")])
OTHER = "/elsewhere/hugelab#/elsewhere/hugelab/inventory"


def xml(name, owner=None, config="c1", hypervisor="localhost", lab=True,
        guest_dir="/var/cache/hugelab/guests"):
    meta = ""
    if lab:
        meta = ("<metadata><hugelab:lab xmlns:hugelab='%s'>"
                "<hugelab:guest>%s</hugelab:guest>"
                "<hugelab:hypervisor>%s</hugelab:hypervisor>"
                "<hugelab:config>%s</hugelab:config>"
                "<hugelab:dir>%s/%s</hugelab:dir>%s"
                "</hugelab:lab></metadata>"
                % (NS, name, hypervisor, config, guest_dir, name,
                   "<hugelab:owner>%s</hugelab:owner>" % owner
                   if owner else ""))
    return ("<domain type='qemu'><name>%s</name>%s"
            "<memory unit='MiB'>64</memory><os><type arch='x86_64' "
            "machine='pc'>hvm</type></os></domain>" % (name, meta))


def test_owner_is_checkout_and_inventory():
    assert ME == "%s#%s" % (os.path.realpath(TOP),
                            os.path.realpath(os.path.join(TOP, "inventory")))
    # site.yml's playbook_dir and teardown.yml's (playbooks/) are one owner.
    assert H.lab_owner(os.path.join(TOP, "playbooks"),
                       os.path.join(TOP, "inventory")) == ME
    assert H.lab_owner(TOP, [os.path.join(TOP, "inventories", "pg")]) != ME


def test_two_clones_are_two_owners():
    with tempfile.TemporaryDirectory() as tmp:
        for clone in ("a", "b"):
            os.makedirs(os.path.join(tmp, clone, "playbooks"))
            open(os.path.join(tmp, clone, "site.yml"), "w").close()
        a = H.lab_owner(os.path.join(tmp, "a"), os.path.join(tmp, "a/inv"))
        b = H.lab_owner(os.path.join(tmp, "b", "playbooks"),
                        os.path.join(tmp, "b/inv"))
        assert a != b and a.startswith(os.path.realpath(tmp) + "/a#")
        # A symlinked path to the same checkout is the same owner.
        os.symlink(os.path.join(tmp, "a"), os.path.join(tmp, "link"))
        assert H.lab_owner(os.path.join(tmp, "link"),
                           os.path.join(tmp, "link/inv")) == a


def test_meta():
    m = H.lab_domain_meta(xml("hl-x", owner=ME), NS)
    assert m == {"lab": True, "owner": ME, "config": "c1",
                 "hypervisor": "localhost",
                 "dir": "/var/cache/hugelab/guests/hl-x"}
    assert H.lab_domain_meta(xml("hl-x", lab=False), NS)["lab"] is False
    assert H.lab_domain_meta("", NS)["lab"] is False


def test_refusal():
    assert H.lab_domain_refusal("", NS, ME, "hl-x", "localhost") == ""
    assert H.lab_domain_refusal(xml("hl-x", owner=ME), NS, ME, "hl-x",
                                "localhost") == ""
    # Defined before owners: adopted.
    assert H.lab_domain_refusal(xml("hl-x"), NS, ME, "hl-x", "lh") == ""
    msg = H.lab_domain_refusal(xml("hl-x", owner=OTHER), NS, ME, "hl-x",
                               "localhost (qemu:///system)")
    assert msg.startswith("domain 'hl-x' on localhost (qemu:///system) is "
                          "another hugelab checkout's lab domain (owner "
                          + OTHER)
    assert msg.endswith("tear that fleet down: cd /elsewhere/hugelab && "
                        "ansible-playbook -i /elsewhere/hugelab/inventory "
                        "playbooks/teardown.yml)")
    assert "\n" not in msg
    assert "not a lab domain" in H.lab_domain_refusal(
        xml("hl-x", lab=False), NS, ME, "hl-x", "localhost")


def test_needs_define_compares_config_and_owner():
    assert H.lab_needs_define("", NS, ME, "c1")
    assert not H.lab_needs_define(xml("hl-x", owner=ME), NS, ME, "c1")
    assert H.lab_needs_define(xml("hl-x", owner=ME), NS, ME, "c2")
    # No owner yet: redefined once to write it.
    assert H.lab_needs_define(xml("hl-x"), NS, ME, "c1")


def test_teardown_leaves_other_owners_domains():
    results = [{"item": "hl-savings", "get_xml": xml("hl-savings", OTHER)},
               {"item": "hl-pg", "get_xml": xml("hl-pg", ME)},
               {"item": "hl-old", "get_xml": xml("hl-old")},
               {"item": "hl-hv2", "get_xml": xml("hl-hv2", ME,
                                                 hypervisor="hv2")},
               {"item": "web", "get_xml": xml("web", lab=False)},
               {"item": "gone", "get_xml": None}]
    mine = ["hl-savings", "hl-pg", "hl-old", "hl-hv2", "web", "gone"]
    got = H.lab_teardown_pick(results, NS, ME, mine, "localhost",
                              "inventory")
    assert [d["name"] for d in got["remove"]] == ["hl-pg", "hl-old"]
    assert got["remove"][0]["dir"] == "/var/cache/hugelab/guests/hl-pg"
    assert got["others"] == ["hl-savings (owner %s)" % OTHER]
    got = H.lab_teardown_pick(results, NS, ME, [], "localhost", "all")
    assert [d["name"] for d in got["remove"]] == ["hl-pg", "hl-old",
                                                  "hl-hv2"]
    assert got["others"] == ["hl-savings (owner %s)" % OTHER]


def test_host_values():
    hv = {"a": {"x": 1, "y": 2}, "b": {"y": "3"}}
    assert H.lab_host_values(hv, ["a", "b"], ["x", "y", "z"]) == {
        "a": {"x": 1, "y": 2}, "b": {"y": "3"}}

    class Broken(dict):
        def __getitem__(self, key):
            raise ValueError("'nope' is undefined")
    got = H.lab_host_values({"c": Broken(x=1)}, ["c"], ["x"])
    assert got == {"c": {"x": "cannot be templated: 'nope' is undefined"}}


def virsh(*args, check=True):
    return subprocess.run(["virsh", "-q", "-c", URI] + list(args),
                          capture_output=True, text=True, check=check)


def libvirt_answers():
    if not shutil.which("virsh"):
        return False
    try:
        return virsh("list", "--all", "--name", check=False).returncode == 0
    except OSError:
        return False


@pytest.mark.skipif(not libvirt_answers(), reason="libvirt does not answer")
def test_teardown_leaves_other_owner():
    """Two owners' domains (defined, never started) of names of the test
    inventory: teardown.yml removes its own and leaves the other's."""
    pid = os.getpid()
    mine, theirs = "hl-own-%d" % pid, "hl-oth-%d" % pid
    with tempfile.TemporaryDirectory() as tmp:
        inv = os.path.join(tmp, "inv")
        os.makedirs(inv)
        os.symlink(os.path.join(TOP, "inventory", "group_vars"),
                   os.path.join(inv, "group_vars"))
        with open(os.path.join(inv, "hosts.yml"), "w") as f:
            f.write("all:\n  children:\n    hypervisors:\n      hosts:\n"
                    "        localhost:\n          ansible_connection: local\n"
                    "          libvirt_uri: %s\n    guests:\n      hosts:\n"
                    "        %s: {}\n        %s: {}\n" % (URI, mine, theirs))
        owner = H.lab_owner(TOP, inv)
        for name, who in ((mine, owner), (theirs, OTHER)):
            path = os.path.join(tmp, name + ".xml")
            with open(path, "w") as f:
                f.write(xml(name, who, guest_dir=tmp))
            virsh("define", path)
        try:
            proc = subprocess.run(
                ["ansible-playbook", "-i", inv,
                 os.path.join(TOP, "playbooks", "teardown.yml"),
                 "-e", "guest_dir=%s" % tmp],
                cwd=TOP, capture_output=True, text=True, check=False,
                timeout=300)
            names = virsh("list", "--all", "--name").stdout.split()
            assert proc.returncode == 0, proc.stdout[-2000:]
            assert mine not in names
            assert theirs in names
            assert "left %s (owner %s)" % (theirs, OTHER) in proc.stdout
        finally:
            for name in (mine, theirs):
                virsh("undefine", name, check=False)


@pytest.mark.skipif(not libvirt_answers(), reason="libvirt does not answer")
def test_fleet_refuses_other_owners_domain():
    """The fleet role's owner check (roles/fleet/tasks/owner.yml, before
    anything of the guest changes and before a define) on a domain
    (defined, never started) of the guest's name: another owner's is
    refused with its name and owner, this owner's passes."""
    name = "hl-fo-%d" % os.getpid()
    with tempfile.TemporaryDirectory() as tmp:
        inv = os.path.join(tmp, "inv")
        os.makedirs(os.path.join(inv, "host_vars"))
        os.symlink(os.path.join(TOP, "inventory", "group_vars"),
                   os.path.join(inv, "group_vars"))
        with open(os.path.join(inv, "hosts.yml"), "w") as f:
            f.write("all:\n  children:\n    hypervisors:\n      hosts:\n"
                    "        localhost:\n          ansible_connection: local\n"
                    "          libvirt_uri: %s\n    guests:\n      hosts:\n"
                    "        %s: {}\n" % (URI, name))
        play = os.path.join(tmp, "owner.yml")
        with open(play, "w") as f:
            f.write("- hosts: guests\n  gather_facts: false\n  tasks:\n"
                    "    - ansible.builtin.include_role:\n"
                    "        name: fleet\n        tasks_from: owner.yml\n")
        owner = H.lab_owner(TOP, inv)
        results = {}
        try:
            for who in (OTHER, owner):
                path = os.path.join(tmp, "dom.xml")
                with open(path, "w") as f:
                    f.write(xml(name, who, guest_dir=tmp))
                virsh("define", path)
                results[who] = subprocess.run(
                    ["ansible-playbook", "-i", inv, play,
                     "-e", "hugelab_repo=%s" % TOP],
                    cwd=TOP, capture_output=True, text=True, check=False,
                    timeout=300)
                virsh("undefine", name)
        finally:
            virsh("undefine", name, check=False)
        bad, good = results[OTHER], results[owner]
        assert bad.returncode != 0
        assert ("%s: domain '%s' on localhost (%s) is another hugelab "
                "checkout's lab domain (owner %s; this is %s)"
                % (name, name, URI, OTHER, owner)) in bad.stdout
        assert good.returncode == 0, good.stdout[-2000:]


@pytest.mark.skipif(not libvirt_answers(), reason="libvirt does not answer")
def test_two_clones_leave_each_others_guests_alone():
    """Two checkouts on one host, each with its own copy of the same
    inventory (one guest, the same domain name): this checkout and a
    second one (a copy of its playbooks, ansible.cfg, site.yml and
    inventory/group_vars).  The domain (defined, never started) that this
    checkout's fleet would have written survives the other clone's
    teardown, which names it, and goes with this checkout's own."""
    name = "hl-clone-%d" % os.getpid()
    with tempfile.TemporaryDirectory() as tmp:
        clone = os.path.join(tmp, "clone")
        os.makedirs(os.path.join(clone, "inventory"))
        shutil.copytree(os.path.join(TOP, "playbooks"),
                        os.path.join(clone, "playbooks"), symlinks=True)
        for f in ("ansible.cfg", "site.yml"):
            shutil.copy(os.path.join(TOP, f), clone)
        shutil.copytree(os.path.join(TOP, "inventory", "group_vars"),
                        os.path.join(clone, "inventory", "group_vars"))
        invs = {}
        for top, inv in ((TOP, os.path.join(tmp, "inv-here")),
                         (clone, os.path.join(clone, "inventory"))):
            os.makedirs(inv, exist_ok=True)
            if not os.path.exists(os.path.join(inv, "group_vars")):
                os.symlink(os.path.join(TOP, "inventory", "group_vars"),
                           os.path.join(inv, "group_vars"))
            with open(os.path.join(inv, "hosts.yml"), "w") as f:
                f.write("all:\n  children:\n    hypervisors:\n      hosts:\n"
                        "        localhost:\n"
                        "          ansible_connection: local\n"
                        "          libvirt_uri: %s\n    guests:\n"
                        "      hosts:\n        %s: {}\n" % (URI, name))
            invs[top] = inv
        here = H.lab_owner(TOP, invs[TOP])
        there = H.lab_owner(clone, invs[clone])
        assert here != there
        path = os.path.join(tmp, "dom.xml")
        with open(path, "w") as f:
            f.write(xml(name, here, guest_dir=tmp))
        virsh("define", path)

        def teardown(top):
            return subprocess.run(
                ["ansible-playbook", "-i", invs[top],
                 os.path.join(top, "playbooks", "teardown.yml"),
                 "-e", "guest_dir=%s" % tmp],
                cwd=top, capture_output=True, text=True, check=False,
                timeout=300)
        try:
            other = teardown(clone)
            assert other.returncode == 0, other.stdout[-2000:]
            assert name in virsh("list", "--all", "--name").stdout.split()
            assert "left %s (owner %s)" % (name, here) in other.stdout
            own = teardown(TOP)
            assert own.returncode == 0, own.stdout[-2000:]
            assert name not in virsh("list", "--all",
                                     "--name").stdout.split()
        finally:
            virsh("undefine", name, check=False)
