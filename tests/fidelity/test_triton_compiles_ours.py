"""Triton 3.6 accepts the ttgir the workbench prints and carries it on to PTX: our ttgir of a
fidelity kernel, written to a ``.ttgir`` file, goes through ``triton.compile`` (Triton's
``IRSource`` parses it with Triton's MLIR parser, then Triton runs its own ``make_llir`` and
``make_ptx``) for the same target. No GPU needed.

By default the kernels whose ttgir carries the most of our decisions (software-pipelined K
loops with async copies, commit groups, waits and their ``!ttg.async.token`` values, and a
reduction) on sm_80 and sm_90 with 4 warps; ``-m slow`` runs every kernel of the
suite on both targets with 4 and 8 warps (104 compiles, about 2 s each). Every configuration's
text is also parsed by Triton in ``test_fidelity.py``."""
from __future__ import annotations

import pytest

triton = pytest.importorskip("triton", reason="Triton 3.6 (the triton extra) compiles our "
                                              "ttgir here")

from fidelity_kernels import CASES, TARGETS, WARPS  # noqa: E402

import workbench as wb  # noqa: E402

_QUICK = ("matmul_f16", "attention", "softmax")


def _triton_ptx(case, target: str, warps: int, tmp_path) -> tuple[str, str]:
    from triton.backends.compiler import GPUTarget
    ours = wb.compile(case.kernel, *case.signature, target=target, num_warps=warps,
                      **case.constexprs)
    path = tmp_path / f"{case.name}.ttgir"
    path.write_text(ours.asm["ttgir"])
    cc = int(target.split(":")[1])
    k = triton.compile(str(path), target=GPUTarget("cuda", cc, 32))
    return ours.asm["ttgir"], k.asm["ptx"]


def _check(case, target, warps, tmp_path) -> None:
    ttgir, ptx = _triton_ptx(case, target, warps, tmp_path)
    cc = target.split(":")[1]
    assert f".target sm_{cc}" in ptx and f".entry {case.kernel.src.name}" in ptx
    if "ttg.async_copy_global_to_local" in ttgir:  # Triton kept our pipeline
        assert "cp.async.cg.shared.global" in ptx and "cp.async.wait_group" in ptx


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", _QUICK)
def test_triton_compiles_our_ttgir(name, target, tmp_path):
    case = next(c for c in CASES if c.name == name)
    _check(case, target, 4, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("case,target,warps", [(c, t, w) for c in CASES for t in TARGETS
                                               for w in WARPS],
                         ids=[f"{c.name}-{t}-w{w}" for c in CASES for t in TARGETS
                              for w in WARPS])
def test_triton_compiles_every_fidelity_kernel(case, target, warps, tmp_path):
    _check(case, target, warps, tmp_path)


@pytest.mark.parametrize("target", TARGETS)
def test_our_parser_reads_tritons_pipelined_ttgir(target):
    # the other direction: Triton's own pipelined ttgir (tokens, masks, contiguity) parses
    # with our parser and prints back with the same async ops
    from workbench.ir.parser import parse_module
    from workbench.ir.printer import print_module
    case = next(c for c in CASES if c.name == "matmul_f16")
    theirs = wb.compare(case.kernel, *case.signature, target=target, num_warps=4,
                        **case.constexprs).theirs["ttgir"]
    text = print_module(parse_module(theirs), locations=False)
    for op in ("ttg.async_copy_global_to_local", "ttg.async_commit_group tokens",
               "ttg.async_wait %"):
        assert text.count(op) == theirs.count(op) > 0, op
    # sm_80 reads the slots with local_load (naming the wait's token); sm_90's wgmma reads
    # them from shared memory
    assert text.count(" token %") == theirs.count(" token %") == (2 if target == "cuda:80"
                                                                  else 0)
    assert text.count("!ttg.async.token") == theirs.count("!ttg.async.token")
