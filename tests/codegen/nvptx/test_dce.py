"""Dead-instruction removal before printing the lowered LLVM IR: random expression graphs
(what is removed is exactly what no side effect reads; the module still verifies) and the
lowering of a real kernel (nothing dead is left, the optimised IR is unchanged)."""
from __future__ import annotations

import llvmlite.binding as llvm
import numpy as np
from llvmlite import ir

import workbench as wb
from workbench.codegen.nvptx import dce, lower
from workbench.codegen.nvptx.dce import remove_dead_instructions
from workbench.testing.examples import matmul_fp16_kernel

I32 = ir.IntType(32)


def _random_module(rng):
    """A function of random i32 arithmetic over its arguments, a loop-free chain plus a phi
    join; a random subset of the values is stored (the side effects). Returns (module,
    function, the values stored)."""
    m = ir.Module(name="t")
    fn = ir.Function(m, ir.FunctionType(ir.VoidType(), [I32, I32, ir.PointerType(I32)]), "f")
    entry, other, join = (fn.append_basic_block(n) for n in ("entry", "other", "join"))
    b = ir.IRBuilder(entry)
    vals = [fn.args[0], fn.args[1]]
    ops = ["add", "sub", "mul", "and_", "or_", "xor", "shl", "lshr", "udiv", "urem"]
    for _ in range(int(rng.integers(20, 60))):
        x, y = (vals[int(i)] for i in rng.integers(0, len(vals), size=2))
        kind = rng.integers(0, 4)
        if kind == 0:
            v = b.select(b.icmp_unsigned("<", x, y), x, y)
        elif kind == 1:
            v = b.trunc(b.zext(x, ir.IntType(64)), I32)
        else:
            v = getattr(b, ops[int(rng.integers(0, len(ops)))])(x, y)
        vals.append(v)
    cond = b.icmp_signed("<", vals[-1], vals[-2])
    b.cbranch(cond, other, join)
    b2 = ir.IRBuilder(other)
    w = b2.add(vals[int(rng.integers(2, len(vals)))], I32(1))
    b2.branch(join)
    b3 = ir.IRBuilder(join)
    phi = b3.phi(I32)
    phi.add_incoming(vals[int(rng.integers(2, len(vals)))], entry)
    phi.add_incoming(w, other)
    stored = [vals[int(i)] for i in rng.integers(2, len(vals), size=int(rng.integers(0, 4)))]
    if rng.random() < 0.5:
        stored.append(phi)
    for v in stored:
        b3.store(v, fn.args[2])
    b3.ret_void()
    return m, fn, stored


def _live(fn) -> set:
    """ids of the instructions read, transitively, by a non-removable instruction."""
    live: set = set()
    work = [i for blk in fn.blocks for i in blk.instructions if i.opname not in dce.PURE]
    while work:
        i = work.pop()
        if id(i) in live:
            continue
        live.add(id(i))
        work.extend(dce._reads(i))
    return live


def test_random_graphs_keep_exactly_what_side_effects_read():
    rng = np.random.default_rng()
    llvm.initialize_native_target()
    for _ in range(40):
        m, fn, stored = _random_module(rng)
        before = [i for blk in fn.blocks for i in blk.instructions]
        live = _live(fn)
        n = remove_dead_instructions(m)
        after = [i for blk in fn.blocks for i in blk.instructions]
        assert {id(i) for i in after} == live
        assert n == len(before) - len(after)
        assert all(id(v) in live for v in stored if isinstance(v, ir.Instruction))
        llvm.parse_assembly(str(m)).verify()
        assert remove_dead_instructions(m) == 0  # nothing left to remove


def test_matmul_lowering_leaves_nothing_dead_and_the_same_optimised_ir(monkeypatch):
    args = ("*fp16:16", "*fp16:16", "*fp16:16", "i32:16", "i32:16", "i32:16")
    kw = dict(target="cuda:90", num_warps=8, num_stages=3, BM=128, BN=256, BK=64, GROUP_M=8)
    monkeypatch.setenv("WORKBENCH_DISK_CACHE", "0")
    seen = []
    real = lower.remove_dead_instructions

    def spy(module):
        n = real(module)
        seen.append((n, real(module)))
        return n
    monkeypatch.setattr(lower, "remove_dead_instructions", spy)
    with_dce = wb.compile(wb.jit(matmul_fp16_kernel.fn), *args, **kw)
    (removed, again), = seen
    assert removed > 1000 and again == 0  # the per-element addresses the copies never read
    monkeypatch.setattr(lower, "remove_dead_instructions", lambda module: 0)
    without = wb.compile(wb.jit(matmul_fp16_kernel.fn), *args, **kw)
    assert str(with_dce.asm["llir"]) == str(without.asm["llir"])
    assert str(with_dce.asm["ptx"]) == str(without.asm["ptx"])
