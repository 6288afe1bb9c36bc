"""Differential check of one program: the numpy reference against the interpreter and the
CPU backend, and PTX for cuda:80 and cuda:90 (assembled by ptxas when it is installed)."""
from __future__ import annotations

import importlib.util
import os
import sys
import tempfile
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...backends import nvidia_tools
from ...runtime.aot import compile as wb_compile
from . import build, reference
from . import types as ft
from .program import Program

_DIR = None


@dataclass
class Outcome:
    """What happened to one program: ``failures`` maps a stage ("interpreter", "cpu",
    "cuda:80", ...) to its message; ``passed`` lists the stages that agreed; ``unsupported``
    maps a stage to the backend's own "not implemented" message (a known gap, reported, not
    a wrong result)."""
    seed: int
    passed: list = field(default_factory=list)
    failures: dict = field(default_factory=dict)
    unsupported: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """True when every stage agreed."""
        return not self.failures


def load_kernel(prog: Program):
    """Write the program's source to a file (so the frontend reads it like a user's file) and
    return its ``kern``."""
    global _DIR
    if _DIR is None:
        _DIR = tempfile.mkdtemp(prefix="wb-fuzz-")
    text = build.source(prog)
    name = f"fuzz_{prog.seed}_{abs(hash(text)) % 10**8}"
    path = os.path.join(_DIR, name + ".py")
    with open(path, "w") as f:
        f.write(text)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod.kern


def launch_args(prog: Program, args: dict) -> tuple:
    """Positional arguments of ``kern`` and its constexpr keywords."""
    pos = list(args["inputs"]) + [args["out"]]
    if prog.uses("dot"):
        pos += [args["da"], args["db"]]
    if prog.uses("atomic"):
        pos.append(args["atom"])
    pos += [prog.M, prog.N, build.stride(prog), prog.it, prog.flag]
    return tuple(pos), {"BM": prog.BM, "BN": prog.BN, "BK": prog.BK}


def compare(prog: Program, got: dict, want: dict) -> str | None:
    """None when the outputs agree: integers and exact floats bit for bit (-0 == 0), inexact
    floats within the error their bounds allow; else a description of the first mismatch."""
    for key in ("out", "atom"):
        g, w = got[key], want[key]
        if key == "out" and ft.is_float(prog.out_dtype) and not prog.info(prog.result).exact:
            v = prog.info(prog.result)
            tol = 64 * max(v.eps, ft.EPS[prog.out_dtype]) * (v.bound + 1)
            bad = ~(np.abs(g.astype(np.float64) - w.astype(np.float64)) <= tol)
        else:
            bad = ~((g == w) | (np.isnan(g) & np.isnan(w) if g.dtype.kind == "f" else False))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            return (f"{key}[{i}]: got {g[i]!r}, expected {w[i]!r} "
                    f"({int(bad.sum())} of {bad.size} differ)")
    return None


def run_backend(prog: Program, kern, args: dict, interpret: bool) -> dict:
    """Launch ``kern`` on copies of ``args`` (the interpreter when ``interpret``, else the CPU
    backend); returns the ``{"out", "atom"}`` arrays it left behind."""
    mine = {"inputs": [a.copy() for a in args["inputs"]], "out": args["out"].copy(),
            "atom": args["atom"].copy(), **{k: args[k] for k in ("da", "db") if k in args}}
    pos, kw = launch_args(prog, mine)
    compiled = wb_compile(kern, *pos, target="interpreter" if interpret else "cpu", **kw)
    compiled[build.grid(prog)](*pos, **kw)
    return {"out": mine["out"], "atom": mine["atom"]}


def run_cuda(prog: Program, kern, args: dict) -> dict:
    """Launch ``kern`` on the GPU (the CUDA backend, through the user's launch path) with
    device copies of ``args``; returns the ``{"out", "atom"}`` arrays copied back. Needs a GPU
    and ``cuda-bindings`` (else :class:`~workbench.errors.ToolMissingError`)."""
    from ... import cuda as wcuda
    dev: dict[str, Any] = {"inputs": [wcuda.to_device(a) for a in args["inputs"]],
           "out": wcuda.to_device(args["out"]), "atom": wcuda.to_device(args["atom"]),
           **{k: wcuda.to_device(args[k]) for k in ("da", "db") if k in args}}
    pos, kw = launch_args(prog, dev)
    kern[build.grid(prog)](*pos, **kw)
    wcuda.synchronize()
    return {"out": dev["out"].to_numpy(), "atom": dev["atom"].to_numpy()}


def check(prog: Program, ptx_archs=(80, 90), ptxas: str | None = None,
          data_seed: int | None = None, cuda: bool = False) -> Outcome:
    """Run ``prog`` everywhere (the interpreter, the CPU backend, PTX for ``ptx_archs`` and,
    with ``cuda``, the GPU as stage ``"cuda"``) and compare; never raises for a program's
    failure."""
    res = Outcome(prog.seed)
    rng = np.random.default_rng(prog.seed if data_seed is None else data_seed)
    try:
        kern = load_kernel(prog)
        args = reference.make_args(prog, rng)
        want = reference.expected(prog, args)
    except Exception as e:  # noqa: BLE001 - a generator bug is reported as a failure too
        res.failures["generator"] = f"{type(e).__name__}: {e}"
        return res
    for stage, interp in (("interpreter", True), ("cpu", False)):
        try:
            msg = compare(prog, run_backend(prog, kern, args, interp), want)
        except Exception as e:  # noqa: BLE001
            msg = f"{type(e).__name__}: {e}"
        _record(res, stage, msg)
    if cuda:
        try:
            msg = compare(prog, run_cuda(prog, kern, args), want)
        except Exception as e:  # noqa: BLE001
            msg = f"{type(e).__name__}: {e}"
        _record(res, "cuda", msg)
    for arch in ptx_archs:
        _record(res, f"cuda:{arch}", _ptx(prog, kern, args, arch, ptxas))
    return res


def _record(res: Outcome, stage: str, msg: str | None) -> None:
    if msg is not None and msg.startswith("UnsupportedError") and "not implemented" in msg:
        res.unsupported[stage] = msg
    elif msg is None:
        res.passed.append(stage)
    else:
        res.failures[stage] = msg


def _ptx(prog, kern, args, arch, ptxas):
    pos, kw = launch_args(prog, args)
    try:
        ck = wb_compile(kern, *pos, target=f"cuda:{arch}", **kw)
        if ptxas:
            nvidia_tools.assemble(ck.asm["ptx"], arch, ptxas)
    except Exception as e:  # noqa: BLE001
        return f"{type(e).__name__}: {str(e)[:2000]}"
    return None
