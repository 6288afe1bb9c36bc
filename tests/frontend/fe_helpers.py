"""Helpers for the frontend tests: specialisations built by hand, ttir text, FileCheck."""
from __future__ import annotations

import tempfile

from workbench.frontend import KernelSource, generate_ttir
from workbench.ir.printer import print_module
from workbench.runtime.specialization import ArgSpec, Specialization


def ptr(name, ty="*fp32", div16=True):
    return ArgSpec(name, "pointer", ty, divisible_by_16=div16)


def scalar(name, ty="i32", div16=False, one=False):
    return ArgSpec(name, "scalar", ty, divisible_by_16=div16, equal_to_1=one)


def const(name, value):
    return ArgSpec(name, "constexpr", "constexpr", value=value)


def ttir(fn, *args, locations=False, **opts):
    """The printed ttir of ``fn`` specialised by the ArgSpecs ``args``."""
    from workbench.config import Options
    module = generate_ttir(KernelSource.from_function(fn), Specialization(tuple(args)),
                           Options(**opts))
    return print_module(module, locations=locations)


def filecheck(text: str, checks: str) -> None:
    """Run FileCheck (the ``filecheck`` package, in process): ``checks`` holds ``CHECK:``
    lines; raises AssertionError with filecheck's report when ``text`` does not match."""
    import contextlib
    import io

    from filecheck.matcher import Matcher
    from filecheck.options import parse_argv_options

    with tempfile.TemporaryDirectory() as d:
        check_path, input_path = f"{d}/checks.txt", f"{d}/input.txt"
        with open(check_path, "w") as f:
            f.write(checks)
        with open(input_path, "w") as f:
            f.write(text)
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(err):
            rc = Matcher.from_opts(parse_argv_options(
                ["filecheck", check_path, "--input-file", input_path])).run()
    assert rc == 0, f"FileCheck failed:\n{err.getvalue()}\n--- input ---\n{text}"
