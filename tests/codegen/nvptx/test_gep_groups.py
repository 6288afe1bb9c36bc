"""The GEP-group rewrite that keeps LLVM 22's SLSR linear (workbench.codegen.nvptx.gep_groups):
which GEPs it rewrites, that the rewritten IR computes the same addresses (host JIT, random
inputs), and that the NVPTX back end still emits the same memory accesses."""
from __future__ import annotations

import ctypes
import re

import llvmlite.binding as llvm
import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.codegen.nvptx import ptx as nvptx_ptx
from workbench.codegen.nvptx.gep_groups import hide_large_gep_groups


@wb.jit
def tile_scale(x_ptr, out_ptr, adj, stride, BM: tl.constexpr, BN: tl.constexpr):
    """Attention-backward-like access: pointers of unknown alignment (``+ adj``), so each
    thread loads one column of the tile element by element: ``BM`` addresses per thread
    sharing one column offset."""
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    offs = adj + rows[:, None] * stride + cols[None, :]
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) * 2)


def _grid_fn(rows: int, offsets, addrspace: str = "", loads: bool = False,
             numbered: bool = False) -> str:
    """A function computing ``rows`` row pointers ``p + (k * s + offsets[k])`` halfs and one
    element ``row[k] + c`` of each (all sharing the index ``%c``: one group of ``rows``),
    returning ``sum_k (k + 1) * address_k`` (or, with ``loads``, storing loads of them);
    ``numbered``: the element GEPs are numbered values (``%0``, ``%1``...)."""
    pty = f"ptr{addrspace}"
    body = []
    acc = "0"
    for k in range(rows):
        e = f"%{k}" if numbered else f"%e{k}"
        body += [f"  %o{k} = mul i64 %s, {k}",
                 f"  %i{k} = add i64 %o{k}, {int(offsets[k])}",
                 f"  %r{k} = getelementptr half, {pty} %p, i64 %i{k}",
                 f"  {e} = getelementptr inbounds half, {pty} %r{k}, i64 %c, !addr !3"]
        if loads:
            body += [f"  %v{k} = load half, {pty} {e}, align 2",
                     f"  %d{k} = getelementptr half, {pty} %q, i64 {k}",
                     f"  store half %v{k}, {pty} %d{k}, align 2"]
        else:
            body += [f"  %a{k} = ptrtoint {pty} {e} to i64",
                     f"  %m{k} = mul i64 %a{k}, {k + 1}",
                     f"  %t{k} = add i64 {acc}, %m{k}"]
            acc = f"%t{k}"
    if loads:
        head = f"define void @f({pty} %p, {pty} %q, i64 %s, i64 %c) {{"
        tail = "  ret void"
    else:
        head = f"define i64 @f({pty} %p, i64 %s, i64 %c) {{"
        tail = f"  ret i64 {acc}"
    meta = ['!3 = !{!"addr"}']
    if loads:
        meta, body = [], [line.replace(", !addr !3", "") for line in body]
    return "\n".join([head, "entry:", *body, tail, "}", *meta]) + "\n"


def _jit(text: str):
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    mod = llvm.parse_assembly(text)
    mod.verify()
    tm = llvm.Target.from_default_triple().create_target_machine()
    engine = llvm.create_mcjit_compiler(mod, tm)
    engine.finalize_object()
    fn = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64)(
        engine.get_function_address("f"))
    return fn, engine


@pytest.mark.parametrize("numbered", [False, True])
def test_large_group_rewritten_and_same_addresses(numbered):
    rng = np.random.default_rng()
    rows = int(rng.integers(101, 180))
    text = _grid_fn(rows, rng.integers(-1000, 1000, rows), numbered=numbered)
    new, n = hide_large_gep_groups(text, 100, 100)
    # the rows' element GEPs share %c (a group of `rows`); the row GEPs share %p likewise
    assert n == 2 * rows
    assert new.count("extractelement <1 x ptr>") == 2 * rows
    assert new.count(", !addr !3") == rows          # metadata kept on the rewritten lines
    f_old, e_old = _jit(text)
    f_new, e_new = _jit(new)
    for _ in range(20):
        p, s, c = (int(v) for v in rng.integers(-2**40, 2**40, 3))
        assert f_new(p, s, c) == f_old(p, s, c)


def test_small_groups_untouched():
    rng = np.random.default_rng()
    rows = int(rng.integers(2, 50))
    text = _grid_fn(rows, rng.integers(0, 100, rows))
    new, n = hide_large_gep_groups(text, rows, rows)
    assert n == 0 and new is text
    new, n = hide_large_gep_groups(text, rows - 1, rows - 1)
    assert n == 2 * rows


def test_shared_memory_left_to_slsr():
    rng = np.random.default_rng()
    rows = int(rng.integers(70, 120))
    text = _grid_fn(rows, rng.integers(0, 64, rows), " addrspace(3)", loads=True)
    assert hide_large_gep_groups(text, 64, 64) == (text, 0)
    glob = text.replace("addrspace(3)", "addrspace(1)")
    assert hide_large_gep_groups(glob, 64, 64)[1] == 2 * rows


def test_separate_limits():
    """Index and base groups have their own limits: the grid's element GEPs share one index
    (a group of ``rows``), its row GEPs one base (also ``rows``), each element GEP has its own
    base and each row GEP its own index."""
    rng = np.random.default_rng()
    rows = int(rng.integers(20, 60))
    text = _grid_fn(rows, rng.integers(0, 64, rows))
    assert hide_large_gep_groups(text, rows - 1, rows)[1] == rows     # element GEPs only
    assert hide_large_gep_groups(text, rows, rows - 1)[1] == rows     # row GEPs only
    new, _ = hide_large_gep_groups(text, rows, rows - 1)
    assert all("<1 x i64> poison, i64 %i" in line for line in new.splitlines()
               if "insertelement" in line)


def test_limit_checked():
    with pytest.raises(ValueError):
        hide_large_gep_groups("", 0, 10)
    with pytest.raises(ValueError):
        hide_large_gep_groups("", 10, 0)


def test_nvptx_same_accesses():
    """The rewritten module still emits one global load per element, for both the original and
    the rewritten text, and SLSR's vector-GEP skip leaves the address count unchanged."""
    rng = np.random.default_rng()
    rows = 130
    text = _grid_fn(rows, rng.integers(0, 64, rows), " addrspace(1)", loads=True)
    new, n = hide_large_gep_groups(text, 100, 100)
    assert n == 2 * rows
    outs = []
    for t in (text, new):
        mod = nvptx_ptx.parse_optimised(t, 90)
        mod.verify()
        outs.append(nvptx_ptx.emit_ptx(mod, 90))
    for out in outs:
        assert len(re.findall(r"ld\.global\.b16", out)) == rows
        assert len(re.findall(r"st\.global\.b16", out)) == rows


def test_kernel_with_large_groups_compiles_to_one_access_per_element():
    """A kernel whose optimised LLVM IR has groups the rewrite takes (so its PTX was emitted
    from the rewritten module): one scalar global load and store per element per thread."""
    k = wb.compile(tile_scale, "*fp16", "*fp16", "i32", "i32", target="cuda:90", num_warps=4,
                   BM=128, BN=128)
    assert hide_large_gep_groups(k.asm["llir"])[1] >= 2 * 128
    assert len(re.findall(r"ld\.global\S*\.b16", k.asm["ptx"])) == 128
    assert len(re.findall(r"st\.global\S*\.b16", k.asm["ptx"])) == 128


@pytest.mark.gpu
def test_kernel_with_large_groups_runs():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng()
    bm, bn = 128, 128
    adj, stride = int(rng.integers(1, 64)), bn + int(rng.integers(0, 40))
    x = rng.standard_normal(adj + bm * stride).astype(np.float16)
    dx = torch.from_numpy(x).cuda()
    out = torch.full_like(dx, float("nan"))
    tile_scale[(1,)](dx, out, adj, stride, BM=bm, BN=bn)
    got = out.cpu().numpy()
    idx = adj + np.arange(bm)[:, None] * stride + np.arange(bn)[None, :]
    np.testing.assert_array_equal(got[idx], x[idx] * np.float16(2))
    untouched = np.ones(got.shape, bool)
    untouched[idx] = False
    assert np.isnan(got[untouched]).all()
