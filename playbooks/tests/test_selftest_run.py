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
