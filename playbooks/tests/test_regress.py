"""The fleet regression run's checks before any guest starts: the
regression rules of roles/validate/files/validate-inventory on inventory
data, and playbooks/regress-plan.yml and playbooks/regress on the
repository's regress inventories (validation only: ansible-playbook runs
the validate role, which builds the workloads and lists libvirt domains;
no kernel is built, no domain defined)."""

import copy
import importlib.machinery
import importlib.util
import json
import os
import subprocess

import pytest

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
VALIDATE = os.path.join(TOP, "playbooks", "roles", "validate", "files",
                        "validate-inventory")
DRIVER = os.path.join(TOP, "playbooks", "regress")
PROOFS = ("regress", "regress-canary", "regress-faultlock",
          "regress-faultlock-reverse")


def load_validator():
    loader = importlib.machinery.SourceFileLoader("validate_inventory",
                                                  VALIDATE)
    spec = importlib.util.spec_from_loader(loader.name, loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


VI = load_validator()
SPEC = {"kernel": {"variant": "patched", "flavour": "perf"},
        "cmdline_extra": ""}
EXPERIMENTS = [{"name": "punch", "program": "shmdb", "args": "--quiet"}]


def twin(side, port, spec=SPEC, **over):
    """A twin's values as inventories/regress templates them (its kernel
    and cmdline_extra from its side's spec, `| default`)."""
    spec = spec or {}
    g = {"ansible_port": port, "domain_name": "hl-%s" % side,
         "hypervisor": "localhost", "memory_mib": 3072, "vcpus": 2,
         "hugepages_2m": 600, "hugepages_1g": 0, "default_hugepagesz": "2M",
         "cmdline_extra": spec.get("cmdline_extra", ""),
         "kernel": copy.deepcopy(spec.get("kernel", {})),
         "experiments": copy.deepcopy(EXPERIMENTS),
         "regress_side": side, "regress_pair": "hl-rg"}
    g.update(over)
    return g


def doc(guests=None, required=True, repeats=3, baseline=SPEC,
        candidate=SPEC):
    if guests is None:
        guests = {"hl-b": twin("baseline", 22241, baseline),
                  "hl-c": twin("candidate", 22242, candidate)}
    return {
        "repo": TOP, "inventory_sources": [], "guests": guests,
        "hypervisors": {"localhost": {"libvirt_uri": "qemu:///system",
                                      "mem_available_mib": None}},
        "lab": {"kernel_variants": ["stock", "patched", "canary-noshare"],
                "kernel_flavours": ["perf", "debug", "kasan"],
                "kernel_sources": ["6.1", "6.12"],
                "kernel_build_cmd": os.path.join(TOP, "kernel-build",
                                                 "build"),
                "programs": {"shmdb": "", "racer": "", "selftest": ""},
                "check_programs": [], "workloads": "",
                "guest_os_reserve_mib": 512, "host_reserved_mib": 2048,
                "lab_metadata_ns": "https://hugelab.invalid/xmlns/lab/1"},
        "regress": {"required": required, "repeats": repeats,
                    "baseline": baseline, "candidate": candidate},
    }


def errors(d):
    """The regression-related steps of the validator, in its order."""
    v = VI.Validator(d)
    for step in (v.regress_specs, v.per_guest, v.regress_pairs,
                 v.kernel_checks):
        step()
    return v.errors


def test_a_a_and_a_b_fleets_pass():
    assert errors(doc()) == []
    lock = dict(SPEC, cmdline_extra="hugetlb_fault_lock=i_mmap")
    canary = {"kernel": {"variant": "canary-noshare", "flavour": "perf"},
              "cmdline_extra": ""}
    assert errors(doc(candidate=lock)) == []
    assert errors(doc(candidate=canary)) == []
    # Digit strings from -e count as integers.
    assert errors(doc(repeats="5")) == []


@pytest.mark.parametrize("repeats", [0, -1, "0", "three", True, None, 2.5])
def test_repeats_below_one_or_not_a_number(repeats):
    errs = errors(doc(repeats=repeats))
    assert len(errs) == 1
    assert errs[0].startswith("regress_repeats: ") and \
        "is not allowed (allowed: an integer >= 1" in errs[0]


def test_spec_typos_name_the_key_first():
    bad = {"kernel": {"variant": "patched", "flavour": "perf"},
           "cmdline_extras": "hugetlb_fault_lock=vma"}
    errs = errors(doc(baseline=bad))
    assert errs[0] == ("regress_baseline: unknown key 'cmdline_extras', "
                       "did you mean 'cmdline_extra'? (allowed: kernel, "
                       "cmdline_extra)")
    errs = errors(doc(candidate={"kernel": {"varient": "patched",
                                            "flavour": "perf"}}))
    assert errs[0].startswith("regress_candidate: kernel: ")
    assert any("unknown key 'varient', did you mean 'variant'?" in e
               for e in errs)
    errs = errors(doc(candidate={"kernel": {"variant": "canary",
                                            "flavour": "perf"}}))
    assert errs[0] == ("regress_candidate: kernel.variant: 'canary' is not "
                       "allowed (allowed: one of kernel_variants: stock, "
                       "patched, canary-noshare)")
    errs = errors(doc(candidate=None))
    assert errs[0].startswith("regress_candidate: missing")


def test_a_twin_must_run_its_sides_spec():
    d = doc()
    d["guests"]["hl-c"]["cmdline_extra"] = "hugetlb_fault_lock=i_mmap"
    (e,) = errors(d)
    assert e.startswith("hl-c: kernel ") and "is not regress_candidate" in e


@pytest.mark.parametrize("key,value", [("memory_mib", 2048),
                                       ("hugepages_2m", 1100),
                                       ("vcpus", 1),
                                       ("experiments", []),
                                       ("hypervisor", "hv2")])
def test_twins_must_be_alike(key, value):
    d = doc()
    d["hypervisors"]["hv2"] = dict(d["hypervisors"]["localhost"])
    d["guests"]["hl-c"][key] = value
    errs = errors(d)
    assert errs == ["pair hl-rg: hl-c's %s %s differs from hl-b's %s "
                    "(allowed: twins alike in shape, experiments and "
                    "hypervisor; only kernel and cmdline_extra differ)" % (
                        key, VI.show(value),
                        VI.show(doc()["guests"]["hl-b"][key]))]


def test_pairs_need_one_twin_a_side():
    d = doc()
    d["guests"]["hl-c"]["regress_side"] = "baseline"
    errs = errors(d)
    assert "pair hl-rg: 2 baseline guests (hl-b, hl-c) (allowed: one " \
        "baseline and one candidate guest per pair)" in errs
    assert "pair hl-rg: no candidate guests (allowed: one baseline and " \
        "one candidate guest per pair)" in errs
    d = doc()
    del d["guests"]["hl-c"]["regress_pair"]
    del d["guests"]["hl-c"]["regress_side"]
    errs = errors(d)
    assert errs[0].startswith("hl-c: not a twin: ")
    d = doc()
    d["guests"]["hl-c"]["regress_side"] = "control"
    errs = errors(d)
    assert errs == ["hl-c: regress_side: 'control' is not allowed (allowed: "
                    "baseline or candidate (a twin of a regression fleet, "
                    "playbooks/regress))"]


def test_not_a_regression_fleet():
    plain = {"hl-x": twin("baseline", 22241)}
    del plain["hl-x"]["regress_side"]
    del plain["hl-x"]["regress_pair"]
    # The default fleet: no twins, not required: nothing checked, even a
    # nonsense regress_repeats (nobody reads it).
    assert errors(doc(guests=copy.deepcopy(plain), required=False,
                      repeats=0)) == []
    # playbooks/regress on it: refused.
    errs = errors(doc(guests=copy.deepcopy(plain)))
    assert errs[0].startswith("hl-x: not a twin")
    assert errs[-1].startswith("inventory: no regression twins")


def test_kernels_are_asked_whether_they_can_be_built():
    canary612 = {"kernel": {"variant": "canary-noshare", "flavour": "perf",
                            "source": "6.12"}, "cmdline_extra": ""}
    errs = errors(doc(candidate=canary612))
    assert errs == ["hl-c: kernel: variant 'canary-noshare' has no series "
                    "for line 6.12 (patches/6.12/canary-noshare/series) "
                    "(kernel-build/build --check)"]


# --- the playbooks on the repository's inventories ---------------------------
def plan(inv, tmp_path, *extra):
    out = tmp_path / "plan.json"
    r = subprocess.run(["ansible-playbook", "-i", os.path.join(TOP, inv),
                        os.path.join(TOP, "playbooks", "regress-plan.yml"),
                        "-e", "regress_plan_out=%s" % out] + list(extra),
                       cwd=TOP, capture_output=True, text=True)
    return r.returncode, json.loads(out.read_text()) if out.exists() else None


@pytest.mark.parametrize("proof", PROOFS)
def test_plan_of_each_proof_inventory(proof, tmp_path):
    rc, p = plan("inventories/" + proof, tmp_path)
    assert rc == 0 and p["errors"] == []
    assert p["repeats"] == 3 and p["fresh_boot"] is True
    g = p["guests"]
    assert sorted(g) == ["hl-rg-base", "hl-rg-cand"]
    for name, side in (("hl-rg-base", "baseline"),
                       ("hl-rg-cand", "candidate")):
        assert g[name]["side"] == side and g[name]["pair"] == "hl-rg"
        assert g[name]["kernel"] == p[side]["kernel"]
        assert g[name]["cmdline_extra"] == p[side]["cmdline_extra"]
    assert g["hl-rg-base"]["experiments"] == g["hl-rg-cand"]["experiments"]
    b, c = p["baseline"], p["candidate"]
    if proof == "regress":
        assert b == c
    elif proof == "regress-canary":
        assert (b["kernel"]["variant"], c["kernel"]["variant"]) == (
            "patched", "canary-noshare")
    else:
        modes = (b["cmdline_extra"], c["cmdline_extra"])
        vma, immap = "hugetlb_fault_lock=vma", "hugetlb_fault_lock=i_mmap"
        assert modes == ((immap, vma) if proof.endswith("reverse") else
                         (vma, immap))


def test_plan_takes_e_overrides(tmp_path):
    spec = {"kernel": {"variant": "canary-noshare", "flavour": "perf"},
            "cmdline_extra": ""}
    rc, p = plan("inventories/regress", tmp_path, "-e",
                 json.dumps({"regress_candidate": spec,
                             "regress_repeats": 4}))
    assert rc == 0 and p["candidate"] == spec and p["repeats"] == 4
    assert p["guests"]["hl-rg-cand"]["kernel"] == spec["kernel"]


@pytest.mark.parametrize("extra,first", [
    (["-e", "regress_repeats=0"], "regress_repeats: '0' is not allowed"),
    (["-e", json.dumps({"regress_candidate": {
        "kernel": {"variant": "bogus", "flavour": "perf"}}})],
     "regress_candidate: kernel.variant: 'bogus' is not allowed"),
    (["-e", json.dumps({"regress_baseline": {
        "kernel": {"variant": "patched", "flavour": "perf"},
        "cmdline_extras": "hugetlb_fault_lock=vma"}})],
     "regress_baseline: unknown key 'cmdline_extras'"),
    (["-i", "inventory"], "hl-lat-immap: not a twin"),
])
def test_driver_refuses_bad_input_before_any_guest(extra, first, tmp_path):
    """exit 2, the last line names the first mistake, no run directory
    and no regression directory written."""
    runs = os.path.join(TOP, "reports", "runs")
    before = set(os.listdir(runs)) if os.path.isdir(runs) else set()
    r = subprocess.run([DRIVER] + extra, cwd=TOP, capture_output=True,
                       text=True)
    assert r.returncode == 2
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("regress: bad input, nothing started: " + first)
    after = set(os.listdir(runs)) if os.path.isdir(runs) else set()
    assert after == before


# --- the driver's verdict from compare's exit status -------------------------
FAKE_ANSIBLE = """#!/bin/sh
# a stand-in for ansible-playbook: the plan, or a round's run directory
for a in "$@"; do
    case $a in
    regress_plan_out=*) out=${a#*=} ;;
    run_id=*) rid=${a#*=} ;;
    esac
done
if [ -n "$out" ]; then
    cat >"$out" <<EOP
{"errors": [], "repeats": 3, "runs_dir": "%(runs)s",
 "regress_dir": "%(regress)s", "report_cmd": "%(report)s",
 "baseline": "b", "candidate": "c"}
EOP
    exit 0
fi
mkdir -p "%(runs)s/$rid" && echo '{}' >"%(runs)s/$rid/manifest.json"
"""


@pytest.mark.parametrize("compare_exit,want,verdict", [
    (0, 0, "no regression"), (1, 1, "REGRESSION"),
    (3, 3, "inconclusive"), (2, 2, "no verdict (compare exit 2)"),
    (5, 2, "no verdict (compare exit 5)")])
def test_driver_reports_each_compare_exit(compare_exit, want, verdict,
                                          tmp_path):
    """compare's 0/1/3 pass through with their own verdict; anything
    else (2: bad input or a failure of the tool) is no verdict, exit 2:
    never read as a regression or a pass."""
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    report = bin_ / "report"
    report.write_text("#!/bin/sh\nexit %d\n" % compare_exit)
    fake = bin_ / "ansible-playbook"
    fake.write_text(FAKE_ANSIBLE % {"runs": tmp_path / "runs",
                                    "regress": tmp_path / "regress",
                                    "report": report})
    for f in (report, fake):
        f.chmod(0o755)
    env = dict(os.environ, PATH="%s:%s" % (bin_, os.environ["PATH"]))
    r = subprocess.run([DRIVER, "--id", "t1"], cwd=TOP, env=env,
                       capture_output=True, text=True)
    assert r.returncode == want, r.stderr
    assert r.stderr.strip().splitlines()[-1].startswith(
        "regress: t1: " + verdict)
    rec = json.loads((tmp_path / "regress" / "t1-regress" /
                      "regress.json").read_text())
    assert rec["verdict"].startswith(verdict)
    assert rec["compare_exit"] == want


def test_driver_no_verdict_on_a_partial_round(tmp_path):
    """A round whose site.yml died after a batch of guests leaves a
    partial run directory (manifest status partial): no verdict, exit 2,
    and compare is never asked."""
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    report = bin_ / "report"
    report.write_text("#!/bin/sh\ntouch %s\nexit 0\n"
                      % (tmp_path / "compared"))
    fake = bin_ / "ansible-playbook"
    fake.write_text((FAKE_ANSIBLE % {"runs": tmp_path / "runs",
                                     "regress": tmp_path / "regress",
                                     "report": report}).replace(
        "echo '{}'", "echo '{\"status\": \"partial\"}'"))
    for f in (report, fake):
        f.chmod(0o755)
    env = dict(os.environ, PATH="%s:%s" % (bin_, os.environ["PATH"]))
    r = subprocess.run([DRIVER, "--id", "t1"], cwd=TOP, env=env,
                       capture_output=True, text=True)
    assert r.returncode == 2, r.stderr
    assert "no verdict: round 1 did not finish: its run directory is " \
        "partial" in r.stderr.strip().splitlines()[-1]
    assert not (tmp_path / "compared").exists()
