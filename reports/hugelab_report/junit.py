"""JUnit XML from a list of checks ({suite, name, status, message,
output?}); one <testsuite> per suite.

Written with Debian's python3-junit.xml (`junit_xml`), which escapes
markup and drops characters XML 1.0 cannot hold; console text is first
stripped of ANSI escape sequences and other control characters
(`plain_text`), so an excerpt of a coloured systemd line stays readable
and the document stays valid."""

from collections import OrderedDict

import junit_xml

# plain_text: junit.plain_text, as before it moved to fmt
from .fmt import SURROGATE_RE, plain_text  # noqa: F401


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
