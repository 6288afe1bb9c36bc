"""The runner's pytest plugin for ``--backend triton`` (real Triton, no shim).

It loads ``suite_plugin``'s hooks from the folder above by file path (that folder also
holds the ``triton`` shim, which must stay off ``sys.path`` here), and gives the installed
Triton 3.6.0 wheel's ``triton._internal_testing`` the two hardware predicates that the
test files of commit 6cc4505 import and the wheel lacks (``is_hip_rdna3``,
``is_hip_rdna4``): on a CPU both answer False, as every other ``is_<gpu>`` does.
"""
from __future__ import annotations

import importlib.util
import os

import triton._internal_testing as _it

_spec = importlib.util.spec_from_file_location(
    "suite_plugin", os.path.join(os.path.dirname(os.path.dirname(__file__)), "suite_plugin.py"))
assert _spec is not None and _spec.loader is not None
_plugin = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_plugin)

pytest_collection_modifyitems = _plugin.pytest_collection_modifyitems
pytest_runtest_logreport = _plugin.pytest_runtest_logreport
pytest_collectreport = _plugin.pytest_collectreport

for _name in ("is_hip_rdna3", "is_hip_rdna4"):
    if not hasattr(_it, _name):
        setattr(_it, _name, lambda: False)
