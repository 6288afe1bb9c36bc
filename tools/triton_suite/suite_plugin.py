"""A pytest plugin the runner loads (``-p suite_plugin``): keeps every Nth collected case
(``SUITE_EVERY``, ``SUITE_OFFSET``), or the node ids listed one a line in the file
``SUITE_IDS`` names, and writes one JSON line per case to ``SUITE_OUT``:
node id, test function, outcome, seconds the phase took, and for failures the exception
type and first line."""
from __future__ import annotations

import json
import os


def pytest_configure(config):
    """Under real Triton (``SUITE_REAL_TRITON``): the test files of the 3.6 source tree import
    two AMD predicates the 3.6.0 wheel's ``_internal_testing`` lacks; both are false on a
    CPU, so they are added as such (nothing else is touched). Under the shim with
    ``SUITE_COMPILE_TARGET`` (``cuda:90``): :func:`compile_for`."""
    if os.environ.get("SUITE_REAL_TRITON"):
        import triton._internal_testing as t
        for name in ("is_hip_rdna3", "is_hip_rdna4"):
            if not hasattr(t, name):
                setattr(t, name, lambda: False)
    elif os.environ.get("SUITE_COMPILE_TARGET"):
        compile_for(int(os.environ["SUITE_COMPILE_TARGET"].split(":")[-1]))


def compile_for(arch: int) -> None:
    """Make the shim's ``triton.compile`` (and ``triton.compiler.compile``) compile for
    ``GPUTarget("cuda", arch, 32)`` when given no target, as Triton does on that GPU, and
    ``torch.cuda.get_device_capability()`` answer ``(arch // 10, arch % 10)`` (the tests read
    it beside ``is_cuda()``, which the shim's helpers answer from the same variable). Only
    compile-only tests are meaningful so: nothing can launch on the absent GPU."""
    import torch
    import triton
    import triton.compiler

    real = triton.compile
    target = triton.compiler.GPUTarget("cuda", arch, 32)

    def compile(src, *args, **kwargs):  # noqa: A001 - triton.compile's name
        if isinstance(src, triton.compiler.ASTSource) and kwargs.get("target") is None:
            kwargs["target"] = target
        return real(src, *args, **kwargs)

    triton.compile = triton.compiler.compile = compile
    torch.cuda.get_device_capability = lambda *a, **k: (arch // 10, arch % 10)


def pytest_collection_modifyitems(session, config, items):
    every = int(os.environ.get("SUITE_EVERY", "1"))
    offset = int(os.environ.get("SUITE_OFFSET", "0"))
    ids_file = os.environ.get("SUITE_IDS")
    if ids_file:
        with open(ids_file) as f:
            wanted = {line.strip() for line in f if line.strip()}
        items[:] = [it for it in items if it.nodeid in wanted]
        return
    if every > 1:
        items[:] = [it for i, it in enumerate(items) if i % every == offset % every]


def _reason(report) -> tuple[str, str]:
    exc = getattr(report.longrepr, "reprcrash", None)
    text = exc.message if exc is not None else str(report.longrepr)
    lines = text.strip().splitlines()
    errs = [ln[1:].strip() for ln in str(report.longrepr).splitlines() if ln.startswith("E ")]
    first = errs[-1] if exc is None and errs else (lines[0] if lines else "")
    kind = first.split(":", 1)[0] if ":" in first else first[:60]
    return kind, first[:300]


def pytest_runtest_logreport(report):
    path = os.environ.get("SUITE_OUT")
    if not path:
        return
    if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
        outcome = report.outcome
        if report.when == "setup" and outcome == "failed":
            outcome = "error"
        kind, msg = _reason(report) if outcome in ("failed", "error") else ("", "")
        if outcome == "skipped":
            msg = str(report.longrepr[-1]) if isinstance(report.longrepr, tuple) else ""
        func = report.nodeid.split("::")[-1].split("[")[0]
        with open(path, "a") as f:
            f.write(json.dumps({"id": report.nodeid, "func": func, "outcome": outcome,
                                "kind": kind, "msg": msg,
                                "seconds": round(report.duration, 3)}) + "\n")


def pytest_collectreport(report):
    path = os.environ.get("SUITE_OUT")
    if path and report.outcome == "failed":
        kind, msg = _reason(report)
        with open(path, "a") as f:
            f.write(json.dumps({"id": report.nodeid, "func": "<collect>", "outcome": "error",
                                "kind": kind, "msg": msg}) + "\n")
