"""Triton's frontend test helpers (``triton._filecheck``) for the workbench: ``run_parser``
gives the workbench frontend's ttir for a kernel (before any pass), and the FileCheck
helpers match its printed text against the ``# CHECK:`` lines of the kernel's own source
with the Python ``filecheck`` package (LLVM FileCheck's clone) instead of LLVM's binary.
"""
from __future__ import annotations

import contextlib
import functools
import inspect
import io
import os
import tempfile

from filecheck.matcher import Matcher
from filecheck.options import Options

from workbench.frontend import generate_ttir
from workbench.ir.printer import print_module

stub_target = "cuda:100"  # Triton's stub GPU target for frontend tests; the ttir ignores it


class ParsedModule:
    """The frontend's ``builtin.module``; ``str_nodebug()`` prints it without locations,
    ``str()`` with them (what Triton's ``ir.module`` offers the tests)."""

    def __init__(self, op):
        self.op = op

    def str_nodebug(self) -> str:
        return print_module(self.op, False)

    def __str__(self) -> str:
        return print_module(self.op, True)


def run_parser(kernel_fn, args=(), kwargs=None, target=stub_target):
    """Bind ``args``/``kwargs`` to the ``@jit`` kernel ``kernel_fn``, specialise it as a
    launch would, and return its ttir (a :class:`ParsedModule`) straight from the frontend.
    Raises the frontend's CompilationError for a bad kernel."""
    _values, options, bound, _target = kernel_fn._bind(tuple(args), dict(kwargs or {}))
    return ParsedModule(generate_ttir(kernel_fn.src, bound.spec, options))


def run_filecheck(name, module_str, check_template):
    """Match ``module_str`` against the FileCheck directives in ``check_template``; raises
    ValueError with filecheck's messages when they do not hold."""
    with tempfile.TemporaryDirectory() as d:
        checks, text = os.path.join(d, "expected"), os.path.join(d, "module")
        with open(checks, "w") as f:
            f.write(check_template)
        with open(text, "w") as f:
            f.write(module_str)
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(err):
            code = Matcher.from_opts(Options(match_filename=checks, input_file=text)).run()
    if code != 0:
        raise ValueError(f"{name}: FileCheck failed\n{err.getvalue()}\n--- input ---\n"
                         f"{module_str}")


def run_filecheck_test(kernel_fn):
    """Compile ``kernel_fn`` with :func:`run_parser` and check its ttir against the
    ``# CHECK`` comments of its source."""
    check_template = inspect.getsource(kernel_fn.fn)
    module = run_parser(kernel_fn)
    run_filecheck(kernel_fn.fn.__name__, module.str_nodebug(), check_template)


def filecheck_test(fn):
    """A pytest test function running :func:`run_filecheck_test` on the kernel ``fn``."""

    @functools.wraps(fn)
    def test_fn():
        run_filecheck_test(fn)

    return test_fn
