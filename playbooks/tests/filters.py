"""Load one of the lab's filter plugins (playbooks/filter_plugins/NAME.py)
as a module, for the tests that call its filters directly."""
import importlib.util
import os

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DIR = os.path.join(TOP, "playbooks", "filter_plugins")


def load(name):
    path = os.path.join(DIR, name + ".py")
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
