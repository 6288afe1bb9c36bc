"""Triton 3.6's own MLIR parser reads the IR we print (skips where Triton is not installed).

Every example kernel's ttir and ttgir (cpu, cuda:80, cuda:90) is printed with locations and
parsed by ``triton._C.libtriton.ir.parse_mlir_module`` in a context with Triton's dialects,
pipelined loops included (their async copies, commit groups, waits and local loads hand on
``!ttg.async.token`` values as Triton's do). The fidelity suite (tests/fidelity) checks the
same for its kernels and has Triton compile our ttgir on to PTX.
"""
from __future__ import annotations

import pytest

import workbench as wb
from tests.ir.test_round_trip_examples import CASES

triton_ir = pytest.importorskip("triton._C.libtriton").ir


def _triton_parses(text: str, tmp_path) -> None:
    path = tmp_path / "kernel.mlir"
    path.write_text(text)
    ctx = triton_ir.context()
    triton_ir.load_dialects(ctx)
    triton_ir.parse_mlir_module(str(path), ctx)


@pytest.mark.parametrize("target", ["cpu", "cuda:80", "cuda:90"])
@pytest.mark.parametrize("name", list(CASES))
def test_triton_parses_our_ir(name, target, tmp_path):
    fn, sig, consts = CASES[name]
    kernel = wb.compile(wb.jit(fn.fn), *sig, target=target, **consts)
    for stage in ("ttir", "ttgir"):
        text = kernel.asm.get(stage)
        if text is None:
            continue
        _triton_parses(text, tmp_path)
