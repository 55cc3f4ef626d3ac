"""Kernel log scanner reading /dev/kmsg from a cursor, as the C programs
do (workloads/lib/kmsg.c): open at the end of the log, read the new
records without blocking, and count records overwritten before they were
read (EPIPE, or a jump in the sequence numbers) as a finding."""
import os

PATTERNS = ("WARNING:", "BUG:", "Oops", "Bad page", "possible circular",
            "possible recursive", "suspicious RCU", "blocked for more",
            "rcu: INFO:", "detected stalls")
MAX_EXCERPT = 400


class DevKmsg:
    """/dev/kmsg opened at its end: only records logged from now on."""

    def __init__(self, path="/dev/kmsg"):
        self.fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        try:
            os.lseek(self.fd, 0, os.SEEK_END)
        except OSError:
            os.close(self.fd)
            raise

    def read(self):
        """One record (bytes), or None when there is nothing new; raises
        BrokenPipeError when records were overwritten before this read."""
        try:
            return os.read(self.fd, 8192)
        except BlockingIOError:
            return None

    def close(self):
        os.close(self.fd)


class Scan:
    """Findings in the records logged after the start.  open_dev returns
    an object with read() and close() like DevKmsg (the tests pass a
    fake)."""

    def __init__(self, open_dev=DevKmsg):
        self.warnings = 0
        self.lost = 0
        self.excerpt = []
        self.truncated = False
        self.last_seq = None
        self.overrun = False
        try:
            self.dev = open_dev()
        except OSError:
            self.dev = None
        self.available = self.dev is not None

    def poll(self):
        """Read every new record."""
        while self.dev is not None:
            try:
                rec = self.dev.read()
            except BrokenPipeError:
                self.overrun = True
                continue
            except InterruptedError:
                continue
            except OSError:
                self.available = False
                break
            if not rec:
                break
            self.feed_record(rec.decode("utf-8", "replace"))
        if self.overrun:
            self._lost(None)

    def feed_record(self, rec):
        """One record "pri,seq,ts,flags;text\\n[continuation]"."""
        head, _, text = rec.partition(";")
        text = text.split("\n", 1)[0]
        try:
            seq = int(head.split(",")[1])
        except (IndexError, ValueError):
            seq = None
        self._lost(seq)
        if seq is not None:
            self.last_seq = seq
        if any(p in text for p in PATTERNS):
            self.warnings += 1
            self._add(text)

    def _lost(self, seq):
        """Records lost before the one numbered seq (None: unknown)."""
        if (seq is not None and self.last_seq is not None
                and seq > self.last_seq + 1):
            n, how = seq - self.last_seq - 1, ""
        elif self.overrun:
            n, how = 1, "at least "
        else:
            return
        self.overrun = False
        self.lost += n
        self.warnings += 1
        line = ("kmsg records lost: %s%d overwritten before they were read"
                % (how, n))
        self._add(line)

    def _add(self, line):
        if len(self.excerpt) < MAX_EXCERPT:
            self.excerpt.append(line)
        else:
            self.truncated = True

    def report(self):
        """The "kernel_log" object of the result (workloads/SCHEMA.md)."""
        return {"available": self.available, "warnings": self.warnings,
                "lost": self.lost, "excerpt": self.excerpt,
                "truncated": self.truncated}

    def close(self):
        if self.dev is not None:
            self.dev.close()
            self.dev = None
