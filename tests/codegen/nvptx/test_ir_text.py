"""The fast text of an llvmlite module (:mod:`workbench.codegen.nvptx.ir_text`) is byte for
byte llvmlite's ``str(module)``: on random modules using every instruction kind it formats
itself (with and without metadata, flags, alignment, names that need quoting), and on the
lowered LLVM IR of real kernels (the fidelity suite, both architectures)."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest
from llvmlite import ir

import workbench as wb
from workbench.codegen.nvptx import lower
from workbench.codegen.nvptx.ir_text import instruction_text, module_text

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "fidelity"))
import fidelity_kernels as fk  # noqa: E402

I32, I64, F32 = ir.IntType(32), ir.IntType(64), ir.FloatType()


def _random_module(rng) -> ir.Module:
    m = ir.Module(name="m")
    ptr = ir.PointerType(F32, 1)
    fn = ir.Function(m, ir.FunctionType(ir.VoidType(), [I32, F32, ptr]), "k")
    entry, loop = fn.append_basic_block("entry"), fn.append_basic_block('odd "name"\\')
    b = ir.IRBuilder(entry)
    md = m.add_metadata([ir.MetaDataString(m, "x")])
    ints, floats = [fn.args[0]], [fn.args[1]]
    vec = ir.Constant(ir.VectorType(I32, 4), None)
    for _ in range(int(rng.integers(30, 80))):
        kind = int(rng.integers(0, 10))
        a, c = ints[int(rng.integers(0, len(ints)))], ints[int(rng.integers(0, len(ints)))]
        name = str(rng.choice(["", "v", "v.1", 'q"t', "a\\b"]))
        if kind == 0:
            v = b.add(a, c, name=name, flags=["nsw"] if rng.random() < 0.5 else [])
        elif kind == 1:
            v = b.xor(a, I32(int(rng.integers(-9, 9))), name=name)
        elif kind == 2:
            v = b.trunc(b.sext(a, I64), I32)
        elif kind == 3:
            v = b.fmul(floats[-1], F32(float(rng.normal())))
            floats.append(v)
            continue
        elif kind == 4:
            p = b.gep(fn.args[2], [a], inbounds=bool(rng.random() < 0.5), source_etype=F32)
            b.store(floats[-1], p).align = int(rng.choice([4, 8])) if rng.random() < 0.5 \
                else None
            ld = b.load(p, typ=F32)
            ld.align = 4 if rng.random() < 0.5 else None
            floats.append(ld)
            continue
        elif kind == 5:
            vec = b.insert_element(vec, a, I32(int(rng.integers(0, 4))))
            v = b.extract_element(vec, I32(int(rng.integers(0, 4))))
        elif kind == 6:
            s = ir.Constant(ir.LiteralStructType([I32, F32]), [7, 1.5])
            v = b.extract_value(b.insert_value(s, a, 0), 0)
        elif kind == 7:
            v = b.select(b.icmp_signed("<", a, c), a, c)  # left to llvmlite
        else:
            v = b.bitcast(floats[-1], I32)
        if rng.random() < 0.5 and isinstance(v, ir.Instruction):
            v.set_metadata("dbg" if rng.random() < 0.5 else "extra", md)
        ints.append(v)
    b.branch(loop)
    b2 = ir.IRBuilder(loop)
    phi = b2.phi(I32, name="p")
    phi.add_incoming(ints[-1], entry)
    phi.add_incoming(phi, loop)
    if rng.random() < 0.5:
        phi.set_metadata("dbg", md)
    b2.cbranch(b2.icmp_unsigned("==", phi, I32(0)), loop, loop)
    return m


def test_random_modules_print_as_llvmlite_prints_them():
    rng = np.random.default_rng()
    for _ in range(30):
        m = _random_module(rng)
        assert module_text(m) == str(m)
        for blk in m.get_global("k").blocks:
            for inst in blk.instructions:
                assert instruction_text(inst) == str(inst)


@pytest.mark.parametrize("arch", [80, 90])
def test_lowered_fidelity_kernels_print_as_llvmlite_prints_them(monkeypatch, arch):
    seen = []
    real = lower.remove_dead_instructions

    def check(module):
        n = real(module)
        seen.append(module_text(module) == str(module))
        return n
    monkeypatch.setattr(lower, "remove_dead_instructions", check)
    monkeypatch.setenv("WORKBENCH_DISK_CACHE", "0")
    for case in fk.CASES:
        wb.compile(wb.jit(case.kernel.fn), *case.signature, target=f"cuda:{arch}",
                   num_warps=4, **case.constexprs)
    assert len(seen) == len(fk.CASES) and all(seen)
