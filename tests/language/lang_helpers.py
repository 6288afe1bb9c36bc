"""Helpers for the end-to-end language tests: launch on the test's backend (the ``backend``
fixture of tests/conftest.py: "cpu" or "interpreter"), turning "the CPU backend does not
support <op> yet" into an xfail (the CPU backend is growing op by op)."""
from __future__ import annotations

import pytest

from workbench.errors import UnsupportedError


def launch(backend, kernel, grid, *args, **kwargs):
    """``kernel[grid](*args, **kwargs)``; on the CPU backend an op it cannot lower yet makes
    the test xfail with the backend's message as the reason."""
    try:
        return kernel[grid](*args, **kwargs)
    except UnsupportedError as e:
        if backend == "cpu" and "CPU backend" in str(e):
            pytest.xfail(f"CPU backend: {str(e).splitlines()[0]}")
        raise

