"""roles/run/files/selftest-run's command line: the lab's JSON option
(lab_programs.selftest.json_opt) with an empty path is refused, exit 2 and
one line, before anything runs (no hugetlbfs mount, no test)."""

import os
import subprocess

from test_regress import TOP

SELFTEST_RUN = os.path.join(TOP, "playbooks", "roles", "run", "files",
                            "selftest-run")


def test_empty_json_refused(tmp_path):
    for argv in (["--json", ""], ["--json="]):
        r = subprocess.run(
            ["/usr/bin/python3", SELFTEST_RUN] + argv +
            ["--bindir", str(tmp_path / "none"),
             "--mnt", str(tmp_path / "mnt"), "hugepage-mmap"],
            cwd=tmp_path, capture_output=True, text=True)
        assert (r.returncode, r.stderr) == (
            2, "selftest-run: --json: empty file name\n")
        assert os.listdir(tmp_path) == []


def check(*args):
    r = subprocess.run(["/usr/bin/python3", SELFTEST_RUN, "--check",
                        "--guest-shape", "mem_mib=2048,hugepages_2m=600,"
                        "hugepages_1g=0,vcpus=2"] + list(args),
                       capture_output=True, text=True)
    return r.returncode, r.stdout.strip(), r.stderr.strip()


def test_check_accepts_the_inventories_arguments():
    assert check("--mremap-mb", "1024", "hugepage-mremap", "hugepage-shm",
                 "map_hugetlb") == (0, '{"ok": true}', "")
    assert check("--split-race-s", "30", "--split-race-arg=-s",
                 "hugetlb-split-race")[0] == 0


def test_check_refuses_option_and_test_typos():
    assert check("--mremap-mbs", "1024", "hugepage-mremap") == (
        2, "", "selftest: unknown option '--mremap-mbs', did you mean "
        "'--mremap-mb'?")
    # No abbreviation either: --mremap is not --mremap-mb.
    assert check("--mremap", "1024", "hugepage-mremap")[0] == 2
    rc, _, err = check("hugepage-mremap", "map-hugetlb")
    assert rc == 2 and err.startswith(
        "selftest: unknown test 'map-hugetlb', did you mean 'map_hugetlb'?")
    rc, _, err = check("--mremap-mb", "lots", "hugepage-mremap")
    assert rc == 2 and "\n" not in err and "--mremap-mb" in err


def test_known_tests_are_selftest_names():
    import yaml
    with open(os.path.join(TOP, "inventory", "group_vars", "all.yml")) as f:
        names = yaml.safe_load(f)["selftest_names"]
    src = open(SELFTEST_RUN).read()
    assert all('"%s"' % n in src.split("KNOWN_TESTS = (")[1].split(")")[0]
               for n in names)
