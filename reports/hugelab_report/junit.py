"""JUnit XML from a list of checks ({suite, name, status, message,
output?}); one <testsuite> per suite."""

import xml.etree.ElementTree as ET
from collections import OrderedDict


def write(checks, path, name):
    suites = OrderedDict()
    for c in checks:
        suites.setdefault(c["suite"], []).append(c)
    root = ET.Element("testsuites", name=name,
                      tests=str(len(checks)),
                      failures=str(sum(c["status"] == "fail"
                                       for c in checks)))
    for sname, cs in suites.items():
        s = ET.SubElement(root, "testsuite", name="%s.%s" % (name, sname),
                          tests=str(len(cs)),
                          failures=str(sum(c["status"] == "fail"
                                           for c in cs)),
                          skipped=str(sum(c["status"] == "skip"
                                          for c in cs)),
                          errors="0")
        for c in cs:
            tc = ET.SubElement(s, "testcase",
                               classname="%s.%s" % (name, sname),
                               name=c["name"])
            if c["status"] == "fail":
                f = ET.SubElement(tc, "failure", message=c["message"])
                f.text = c.get("output") or c["message"]
            elif c["status"] == "skip":
                ET.SubElement(tc, "skipped", message=c["message"])
            elif c.get("output"):
                ET.SubElement(tc, "system-out").text = c["output"]
    tree = ET.ElementTree(root)
    ET.indent(tree)
    tree.write(path, encoding="utf-8", xml_declaration=True)
