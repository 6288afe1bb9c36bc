"""Helpers for tests and users: example kernels (``workbench.testing.examples``) and
:func:`do_bench` (Triton's ``triton.testing.do_bench``, milliseconds)."""
from .bench import do_bench

__all__ = ["do_bench"]
