"""JUnit XML from a list of checks ({suite, name, status, message,
output?}); one <testsuite> per suite.

Written with Debian's python3-junit.xml (`junit_xml`), which escapes
markup and drops characters XML 1.0 cannot hold; console text is first
stripped of ANSI escape sequences and other control characters
(`plain_text`), so an excerpt of a coloured systemd line stays readable
and the document stays valid."""

import re
from collections import OrderedDict

import junit_xml

# CSI (ESC [ ... final byte), OSC (ESC ] ... BEL or ESC \), and two-byte
# ESC sequences; then any C0/C1 control character but tab and newline.
ANSI_RE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]"
                     r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
                     r"|\x1b[@-Z\\-_]")
CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# A lone UTF-16 surrogate (JSON "\ud800" without its pair): no UTF-8
# encoding exists, so writing it would crash; it becomes U+FFFD.
SURROGATE_RE = re.compile("[\ud800-\udfff]")


def plain_text(text):
    """text without ANSI escape sequences and control characters (tab and
    newline kept; a carriage return becomes nothing), a lone surrogate
    as U+FFFD."""
    if text is None:
        return None
    return SURROGATE_RE.sub("\ufffd", CONTROL_RE.sub(
        "", ANSI_RE.sub("", str(text))))


def suites_of(checks, name):
    suites = OrderedDict()
    for c in checks:
        suites.setdefault(c["suite"], []).append(c)
    out = []
    for sname, cs in suites.items():
        cases = []
        for c in cs:
            tc = junit_xml.TestCase(plain_text(c["name"]),
                                    classname="%s.%s" % (name, sname))
            msg = plain_text(c["message"])
            out_text = plain_text(c.get("output"))
            if c["status"] == "fail":
                tc.add_failure_info(message=msg, output=out_text or msg)
            elif c["status"] == "skip":
                tc.add_skipped_info(message=msg)
            elif out_text:
                tc.stdout = out_text
            cases.append(tc)
        out.append(junit_xml.TestSuite("%s.%s" % (name, sname), cases))
    return out


def to_string(checks, name):
    return junit_xml.to_xml_report_string(suites_of(checks, name),
                                          encoding="utf-8")


def write(checks, path, name):
    text = SURROGATE_RE.sub("\ufffd", to_string(checks, name))
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
