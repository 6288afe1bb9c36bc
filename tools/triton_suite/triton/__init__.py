"""A stand-in package named ``triton`` that is the workbench under Triton's name.

Put ``tools/triton_suite`` first on ``sys.path`` and ``import triton`` gives
``workbench``'s public API; ``triton.X.Y`` imports ``workbench.X.Y`` (the same module
object, not a copy), except for the few modules this folder defines itself (test
helpers that Triton's test files import). Nothing here fills a gap of the workbench:
a name the workbench lacks stays missing, so the runner can count it.

``TRITON_INTERPRET=1`` is what Triton's tests read to take their CPU paths; the runner
picks the workbench backend separately (``WORKBENCH_INTERPRET``).
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys

import workbench as _wb
from workbench import *  # noqa: F401,F403

_HERE = os.path.dirname(os.path.abspath(__file__))


class _AliasLoader(importlib.abc.Loader):
    """Hands back the already imported ``workbench`` module for ``triton.<rest>``."""

    def __init__(self, target):
        self.target = target
        self.spec = target.__spec__

    def create_module(self, spec):
        return self.target

    def exec_module(self, module):
        module.__spec__ = self.spec  # importlib set ours; the module keeps its own


class _AliasFinder(importlib.abc.MetaPathFinder):
    """``triton.<rest>`` -> ``workbench.<rest>`` unless this folder has a file for it."""

    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith("triton."):
            return None
        rest = fullname[len("triton."):]
        local = os.path.join(_HERE, *rest.split("."))
        if os.path.exists(local + ".py") or os.path.isdir(local):
            return None  # ours: the normal path finder loads it
        try:
            mod = importlib.import_module("workbench." + rest)
        except ModuleNotFoundError:
            return None
        spec = importlib.machinery.ModuleSpec(fullname, _AliasLoader(mod),
                                              is_package=hasattr(mod, "__path__"))
        return spec


if not any(isinstance(f, _AliasFinder) for f in sys.meta_path):
    sys.meta_path.insert(0, _AliasFinder())


def __getattr__(name):
    return getattr(_wb, name)


# the subpackages Triton's files reach as attributes after ``import triton``
language = importlib.import_module("triton.language")
runtime = importlib.import_module("triton.runtime")
testing = importlib.import_module("triton.testing")
compiler = importlib.import_module("triton.compiler")
