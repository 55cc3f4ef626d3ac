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


def load_selftest_run():
    import importlib.machinery
    import importlib.util
    loader = importlib.machinery.SourceFileLoader("selftest_run",
                                                  SELFTEST_RUN)
    spec = importlib.util.spec_from_loader("selftest_run", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


class FakeKmsg:
    """/dev/kmsg over a ring buffer of `size` records: a reader opened at
    the end reads the records logged since; once the ring overwrote the
    record it would read next, read() raises BrokenPipeError (EPIPE) and
    moves the reader to the oldest record left, as the kernel does."""

    def __init__(self, size, old):
        self.size = size
        self.records = []
        self.seq = 0
        for i in range(old):
            self.log("old line %d" % i)
        self.cursor = self.seq
        self.closed = False

    def log(self, text):
        self.records.append((self.seq, "6,%d,%d,-;%s\n" % (
            self.seq, 1000000 + self.seq * 1500, text)))
        self.records = self.records[-self.size:]
        self.seq += 1

    def open(self):
        return self

    def read(self):
        first = self.records[0][0]
        if self.cursor < first:
            self.cursor = first
            raise BrokenPipeError()
        if self.cursor >= self.seq:
            return None
        rec = self.records[self.cursor - first][1]
        self.cursor += 1
        return rec.encode()

    def close(self):
        self.closed = True


def test_kernel_log_sees_new_lines_in_a_wrapped_ring(monkeypatch):
    S = load_selftest_run()
    monkeypatch.setattr(S, "dmesg_lines", lambda: 1 / 0)  # not used
    kmsg = FakeKmsg(size=2000, old=2000)
    log = S.KernelLog(open_dev=kmsg.open)
    kmsg.log("hugetlb: test starts")
    for i in range(3):
        kmsg.log("BUG: Bad page state in process hugepage-mremap pfn:%d"
                 % (0x1000 + i))
    # The ring is full: each new line replaced an old one, so dmesg's line
    # count did not change (the old way saw nothing).
    assert len(kmsg.records) == 2000
    hits = log.hits()
    assert hits == [
        "[    4.001500] BUG: Bad page state in process hugepage-mremap "
        "pfn:4096",
        "[    4.003000] BUG: Bad page state in process hugepage-mremap "
        "pfn:4097",
        "[    4.004500] BUG: Bad page state in process hugepage-mremap "
        "pfn:4098"]
    assert log.hits() == []
    log.close()
    assert kmsg.closed


def test_kernel_log_lost_records_are_a_finding():
    S = load_selftest_run()
    kmsg = FakeKmsg(size=2000, old=2000)
    log = S.KernelLog(open_dev=kmsg.open)
    for i in range(2005):
        kmsg.log("noise %d" % i)
    # EPIPE: the reader's next record was overwritten.
    assert log.hits() == [
        "kmsg records lost: at least 1 overwritten before they were read"]
    # A jump in the sequence numbers after a record read: exact count.
    kmsg.log("one")
    assert log.hits() == []
    kmsg.cursor += 2
    kmsg.log("two")
    kmsg.log("three")
    kmsg.log("WARNING: CPU: 1 PID: 7 at mm/hugetlb.c:100")
    assert log.hits() == [
        "kmsg records lost: 2 overwritten before they were read",
        "[    7.012000] WARNING: CPU: 1 PID: 7 at mm/hugetlb.c:100"]


def test_kernel_log_without_kmsg_counts_dmesg_lines(monkeypatch):
    S = load_selftest_run()
    lines = ["[    0.1] a", "[    0.2] b"]
    monkeypatch.setattr(S, "dmesg_lines", lambda: list(lines))

    def no_kmsg():
        raise PermissionError(13, "Permission denied")
    log = S.KernelLog(open_dev=no_kmsg)
    lines += ["[    1.0] BUG: Bad page map", "[    1.1] c"]
    assert log.hits() == ["[    1.0] BUG: Bad page map"]
    log.close()


def test_kernel_log_record_text_as_dmesg_prints_it():
    S = load_selftest_run()
    kmsg = FakeKmsg(size=10, old=0)
    log = S.KernelLog(open_dev=kmsg.open)
    kmsg.records.append((0, "4,0,12345678,-;Oops: a\\x0ab\n"
                         " SUBSYSTEM=mm\n"))
    kmsg.seq = 1
    assert log.new_lines() == ["[   12.345678] Oops: a", "b"]
