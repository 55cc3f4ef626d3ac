"""Shared helpers of the reports tests."""

import json
import os
import shutil
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

# HUGELAB_REPORT_FIXTURES points the tests at other run directories (for
# trying new real runs before they are trimmed into fixtures/).
FIXTURES = os.environ.get("HUGELAB_REPORT_FIXTURES",
                          os.path.join(HERE, "fixtures"))


def fixture_runs():
    """Names of the real run directories under fixtures/."""
    if not os.path.isdir(FIXTURES):
        return []
    return sorted(n for n in os.listdir(FIXTURES)
                  if os.path.isfile(os.path.join(FIXTURES, n,
                                                 "manifest.json")))


def copy_run(name, dest):
    """Copy fixture run `name` (without its golden/ outputs) to dest."""
    shutil.copytree(os.path.join(FIXTURES, name), dest,
                    ignore=shutil.ignore_patterns("golden"))
    return str(dest)


def load_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def dump_json(path, doc):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)


@pytest.fixture
def real_run(tmp_path):
    """A writable copy of the first real fixture run."""
    names = fixture_runs()
    assert names, "no real run fixture under reports/tests/fixtures"
    return copy_run(names[0], tmp_path / names[0])
