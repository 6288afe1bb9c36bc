"""Helpers for the frontend tests: specialisations built by hand, ttir text, FileCheck."""
from __future__ import annotations

import subprocess
import sys
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
    """Run the ``filecheck`` tool: ``checks`` holds ``CHECK:`` lines; raises AssertionError
    with filecheck's report when the text does not match."""
    with tempfile.NamedTemporaryFile("w", suffix=".check", delete=False) as f:
        f.write(checks)
        path = f.name
    r = subprocess.run([sys.executable, "-m", "filecheck", path], input=text, text=True,
                       capture_output=True)
    assert r.returncode == 0, f"FileCheck failed:\n{r.stderr}\n--- input ---\n{text}"
