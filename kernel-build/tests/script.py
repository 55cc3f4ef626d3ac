"""Load one of this directory's scripts (no .py name) as a module."""
import importlib.machinery
import importlib.util
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def load(name):
    """tests/NAME as the module NAME with dashes as underscores."""
    loader = importlib.machinery.SourceFileLoader(
        name.replace("-", "_"), os.path.join(HERE, name))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod
