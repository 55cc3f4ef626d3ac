"""A throw-away PostgreSQL cluster: initdb into a temporary directory,
postmaster on a Unix socket only (no TCP), stopped and cleaned up whatever
happened; every process left behind is found by its working directory
(backends run in the data directory) and killed."""
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time

from . import procfs

PORT = 5432   # only names the socket file, inside the cluster's directory


class StartFailed(Exception):
    """PostgreSQL did not start; args[0] is the reason, .log_tail the log."""

    def __init__(self, reason, log_tail):
        super().__init__(reason)
        self.log_tail = log_tail


class Cluster:
    def __init__(self, pgbin, user, workdir, keep=False):
        self.pgbin = pgbin
        self.pw = pwd.getpwnam(user)
        self.user = user
        self.dir = tempfile.mkdtemp(prefix="hugelab-pg.", dir=workdir)
        os.chown(self.dir, self.pw.pw_uid, self.pw.pw_gid)
        self.data = os.path.join(self.dir, "data")
        self.log = os.path.join(self.dir, "postgres.log")
        self.keep = keep
        self.proc = None
        self.children = []

    # --- running programs as the cluster's user ---------------------------
    def env(self):
        e = {"PATH": "/usr/bin:/bin", "HOME": self.dir, "LANG": "C.UTF-8",
             "PGHOST": self.dir, "PGPORT": str(PORT), "PGUSER": "postgres",
             "PGDATABASE": "postgres"}
        return e

    def popen(self, argv, **kw):
        kw.setdefault("stdout", subprocess.PIPE)
        kw.setdefault("stderr", subprocess.STDOUT)
        p = subprocess.Popen(argv, user=self.pw.pw_uid, group=self.pw.pw_gid,
                             extra_groups=[], env=self.env(), cwd=self.dir,
                             text=True, start_new_session=True, **kw)
        self.children.append(p)
        return p

    def run(self, argv, timeout=None):
        """(exit status, output)."""
        p = self.popen(argv)
        try:
            out, _ = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            out, _ = p.communicate()
            return None, out
        return p.returncode, out

    def bin(self, name):
        return os.path.join(self.pgbin, name)

    def psql(self, sql, timeout=None):
        rc, out = self.run([self.bin("psql"), "-X", "-Atq", "-v",
                            "ON_ERROR_STOP=1", "-c", sql], timeout)
        if rc != 0:
            raise RuntimeError("psql %r: exit %s: %s"
                               % (sql, rc, out.strip()[-300:]))
        return out.strip()

    # --- lifecycle ----------------------------------------------------------
    def initdb(self):
        rc, out = self.run([self.bin("initdb"), "-D", self.data, "-A",
                            "trust", "-U", "postgres", "--no-sync",
                            "-E", "UTF8", "--locale", "C.UTF-8"])
        if rc != 0:
            raise RuntimeError("initdb failed (exit %s): %s"
                               % (rc, out.strip()[-300:]))

    def show(self, settings, name):
        """A value PostgreSQL computes for these settings (postgres -C)."""
        rc, out = self.run([self.bin("postgres"), "-D", self.data, "-C",
                            name] + settings_argv(settings))
        return out.strip() if rc == 0 else None

    def start(self, settings, timeout_s):
        """Start the postmaster; StartFailed when it exits or is not ready
        within timeout_s (then nothing of it is left running)."""
        logf = open(self.log, "a")
        self.proc = self.popen([self.bin("postgres"), "-D", self.data]
                               + settings_argv(settings),
                               stdout=logf, stderr=subprocess.STDOUT)
        logf.close()
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise StartFailed(
                    "postgres exited with status %d during start"
                    % self.proc.returncode, self.log_tail())
            if self.ready():
                return self.proc.pid
            time.sleep(0.2)
        self.stop(5)
        raise StartFailed("postgres was not ready within %d s" % timeout_s,
                          self.log_tail())

    def ready(self):
        lines = procfs.read(os.path.join(self.data, "postmaster.pid"))
        lines = lines.splitlines()
        return len(lines) >= 8 and lines[7].strip() == "ready"

    def log_tail(self, n=30):
        return procfs.read(self.log).splitlines()[-n:]

    def leftovers(self):
        """Processes working in the data directory (backends and helpers
        of this cluster, including orphans of a killed postmaster)."""
        return sorted(procfs.pids_by_cwd(
            lambda cwd: cwd == self.data or cwd.startswith(self.data + "/")))

    def stop(self, timeout_s):
        """Fast shutdown, then immediate, then SIGKILL; returns the PIDs
        still there afterwards (stuck in the kernel)."""
        for p in self.children:
            if p is not self.proc and p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                p.wait()
        if self.proc and self.proc.poll() is None:
            for sig in (signal.SIGINT, signal.SIGQUIT, signal.SIGKILL):
                try:
                    self.proc.send_signal(sig)
                    self.proc.wait(timeout=timeout_s)
                    break
                except subprocess.TimeoutExpired:
                    continue
        deadline = time.monotonic() + timeout_s
        left = self.leftovers()
        while left and time.monotonic() < deadline:
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.2)
            left = self.leftovers()
        return left

    def remove(self):
        if not self.keep:
            shutil.rmtree(self.dir, ignore_errors=True)


def settings_argv(settings):
    out = []
    for k, v in settings.items():
        out += ["-c", "%s=%s" % (k, v)]
    return out
