#!/usr/bin/python3
"""Regenerate tests/fixtures/<run>/golden/summary.json and
tests/fixtures/regress/<name>/golden/compare.json (review the diff)."""

import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from conftest import FIXTURES, fixture_runs  # noqa: E402
from golden import GOLDEN, normalise, render_copy  # noqa: E402
import regress_golden  # noqa: E402


def main():
    for name in fixture_runs():
        src = os.path.join(FIXTURES, name)
        doc, dst = render_copy(src)
        out = os.path.join(src, GOLDEN)
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, "summary.json"), "w",
                  encoding="utf-8") as f:
            json.dump(normalise(doc), f, indent=1, sort_keys=True)
            f.write("\n")
        shutil.rmtree(os.path.dirname(dst))
        print("golden: %s: %s, %d checks, %d failed" % (
            name, doc["status"], doc["counts"]["checks"],
            doc["counts"]["failed"]))
    # Regression runs (fixtures/regress/*): their compare.json.
    regress_golden.main(["regress_golden", "golden"])


if __name__ == "__main__":
    main()
