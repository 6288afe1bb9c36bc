"""Test helper: every libdevice symbol compiled by the CPU backend's extern emitters into one
LLVM module (a loop function per symbol), JIT-compiled once (unoptimised: IEEE semantics do
not depend on the optimisation level; the kernel tests cover O3), callable on numpy arrays;
and the interpreter's function for the same symbol. Used by the libdevice census and accuracy
tests."""
from __future__ import annotations

import ctypes
import functools

import llvmlite.binding as llvm
import numpy as np
from llvmlite import ir

from workbench.backends.interp.extern import extern_fn
from workbench.codegen.cpu import compile as cpu_compile
from workbench.codegen.cpu.extern import emit_extern
from workbench.codegen.cpu.llvmtypes import value_type
from workbench.ir.types import f32, f64, i32, i64
from workbench.language import dtypes as dt
from workbench.language.extra.libdevice import TABLE

IR = {dt.float32: f32, dt.float64: f64, dt.int32: i32, dt.uint32: i32, dt.int64: i64,
      dt.uint64: i64}
NP = {dt.float32: np.float32, dt.float64: np.float64, dt.int32: np.int32, dt.uint32: np.uint32,
      dt.int64: np.int64, dt.uint64: np.uint64}
#: symbol -> (function name, argument dtypes, result dtype)
SYMBOLS = {sym: (name, args, ret) for name, es in TABLE.items() for args, sym, ret in es}


def _loop_fn(module, sym, args, ret):
    ins = [IR[a] for a in args]
    out = IR[ret]
    ptr = ir.PointerType()
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [ptr] * (len(ins) + 1)
                                             + [ir.IntType(64)]), sym.lstrip("_"))
    entry, body, done = (fn.append_basic_block(n) for n in ("entry", "body", "done"))
    b = ir.IRBuilder(entry)
    n = fn.args[-1]
    zero = ir.Constant(ir.IntType(64), 0)
    b.cbranch(b.icmp_signed(">", n, zero), body, done)
    b.position_at_end(body)
    i = b.phi(ir.IntType(64))
    i.add_incoming(zero, entry)
    xs = [b.load(b.gep(p, [i], source_etype=value_type(t)), typ=value_type(t))
          for p, t in zip(fn.args[:-2], ins, strict=True)]
    r = emit_extern(b, module, {"symbol": sym}, xs, [t.scalar for t in ins], out)
    b.store(r, b.gep(fn.args[-2], [i], source_etype=value_type(out)))
    nxt = b.add(i, ir.Constant(ir.IntType(64), 1))
    i.add_incoming(nxt, body)
    b.cbranch(b.icmp_signed("<", nxt, n), body, done)
    b.position_at_end(done)
    b.ret_void()


@functools.cache
def jit_all():
    """(engine, {symbol: address}) for every symbol of TABLE."""
    module = ir.Module("libdevice_all")
    for sym, (_, args, ret) in SYMBOLS.items():
        _loop_fn(module, sym, args, ret)
    mod = llvm.parse_assembly(str(module))
    mod.verify()
    cpu_compile.target_machine()  # initialises the native target
    tm = llvm.Target.from_default_triple().create_target_machine(
        cpu=llvm.get_host_cpu_name(), features=cpu_compile.host_features(), opt=0, jit=True)
    mod.triple, mod.data_layout = tm.triple, str(tm.target_data)
    engine = llvm.create_mcjit_compiler(mod, tm)
    engine.finalize_object()
    return engine, {s: engine.get_function_address(s.lstrip("_")) for s in SYMBOLS}


def _out_np(ret):
    return {dt.uint32: np.int32, dt.uint64: np.int64}.get(ret, NP[ret])


def cpu(sym: str, *xs: np.ndarray) -> np.ndarray:
    """The CPU backend's ``sym`` on 1-D arrays ``xs`` (converted to the symbol's dtypes)."""
    _, args, ret = SYMBOLS[sym]
    arrs = [np.ascontiguousarray(np.asarray(x).astype(NP[a])) for x, a in zip(xs, args,
                                                                          strict=True)]
    out = np.zeros(len(arrs[0]), _out_np(ret))
    addr = jit_all()[1][sym]
    proto = ctypes.CFUNCTYPE(None, *([ctypes.c_void_p] * (len(arrs) + 1)), ctypes.c_int64)
    proto(addr)(*[a.ctypes.data for a in arrs], out.ctypes.data, len(out))
    return out


def interp(sym: str, *xs: np.ndarray) -> np.ndarray:
    """The interpreter's ``sym`` on 1-D arrays ``xs`` (unsigned operands held signed, as the
    interpreter holds them)."""
    _, args, ret = SYMBOLS[sym]
    arrs = [np.asarray(x).astype(NP[a]).view(_out_np(a) if a in (dt.uint32, dt.uint64)
                                              else NP[a]) for x, a in zip(xs, args,
                                                                          strict=True)]
    fn = extern_fn(sym, [IR[a] for a in args], IR[ret])
    return np.asarray(fn(*arrs))
