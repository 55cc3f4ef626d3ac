"""The layers of hugelab_report (issue 33, reports/README.md "Layers"):
analysis (runs -> figures and verdicts) never imports presentation
(figures -> md, html, plots, junit); fmt and latest are leaves."""

import ast
import os

import pytest

PACKAGE = os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "hugelab_report")

ANALYSIS = {"rundir", "model", "stats", "latency", "sweep", "savings",
            "attribution", "timing", "latency_map",
            "correctness", "postgres", "provenance", "headline", "summary",
            "comparable", "maxt", "compare"}
PRESENTATION = {"render", "compare_report", "pages", "plots", "junit"}
# Leaves, for both layers: fmt spells numbers (a check message is a
# verdict's own words), latest moves RUNS_DIR/latest.
LEAVES = {"fmt", "latest"}
TOP = {"__init__", "cli"}
# Libraries only presentation may use.
PRESENTATION_LIBRARIES = {"jinja2", "markupsafe", "matplotlib", "junit_xml"}


def modules():
    return sorted(f[:-3] for f in os.listdir(PACKAGE) if f.endswith(".py"))


def imports(name):
    """(modules of this package, top-level libraries) a module imports,
    wherever in the module the import statement is."""
    with open(os.path.join(PACKAGE, name + ".py"), encoding="utf-8") as f:
        tree = ast.parse(f.read())
    own, libs = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                top, _, rest = a.name.partition(".")
                if top == "hugelab_report":
                    own.add(rest.partition(".")[0] or "__init__")
                else:
                    libs.add(top)
        elif isinstance(node, ast.ImportFrom):
            mod = node.module or ""
            if node.level == 0 and not mod.startswith("hugelab_report"):
                libs.add(mod.partition(".")[0])
                continue
            if node.level == 0:
                mod = mod.partition(".")[2]
            if mod:
                own.add(mod.partition(".")[0])
            else:           # from . import a, b
                own.update(a.name for a in node.names)
    own &= set(modules()) | {"__init__"}
    return own, libs


def test_every_module_has_a_layer():
    placed = ANALYSIS | PRESENTATION | LEAVES | TOP
    assert set(modules()) - placed == set()
    assert placed - set(modules()) == set()


def test_imports_are_parsed():
    own, libs = imports("render")
    assert {"summary", "pages", "fmt"} <= own
    assert "json" in libs


@pytest.mark.parametrize("name", sorted(ANALYSIS))
def test_analysis_does_not_import_presentation(name):
    own, libs = imports(name)
    assert own & (PRESENTATION | TOP) == set()
    assert libs & PRESENTATION_LIBRARIES == set()


@pytest.mark.parametrize("name", sorted(LEAVES))
def test_leaves_import_nothing_of_the_package(name):
    assert imports(name)[0] == set()


def test_model_is_arithmetic():
    own, libs = imports("model")
    assert own == set() and libs <= {"math"}


@pytest.mark.parametrize("name", sorted(PRESENTATION))
def test_presentation_does_not_import_the_command_line(name):
    assert imports(name)[0] & TOP == set()
