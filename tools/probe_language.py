"""Probe every public name of ``triton.language`` with typical valid and wrong calls.

    python tools/probe_language.py --target interpreter --target cpu
    python tools/probe_language.py --target cuda:90 --target cuda:80 --verbose
    python tools/probe_language.py --target cpu --triton     # also ask real Triton (cuda:90)
    python tools/probe_language.py --only dot --show-all     # the calls of one name

Each case is one line of a small kernel (fp32 tiles ``x``, ``y`` [16] and ``X``, ``Y`` [16, 16],
int32 tiles ``xi``, ``yi`` [16] and ``XI`` [16, 16], the pointers they come from, an int
``n``): a valid call of a ``tl`` function, a tensor method, an operator or a
``tl.extra.cuda``/``libdevice`` function, or a typical wrong one (wrong dtype, shape or rank,
a missing argument, a runtime value where a compile-time one is needed, an unknown option).
The kernels are written to a temporary file, compiled for each target with
:func:`workbench.compile` and, on the host targets, launched once with numpy arrays.

Outcomes: ``ok`` (a valid call compiled and ran; with both host targets, the CPU's results
equal the interpreter's), ``clean`` (a wrong call raised a workbench error naming its line),
``unsupported`` (a valid call this target cannot do, refused at its line with an error saying
so), ``refused`` (a valid-looking call refused at its line; with ``--triton``: Triton refuses
it too), ``accepted`` (a wrong call that compiled; with ``--triton``, ``lenient`` when Triton
accepts it too) and the BAD ones, in upper case: ``REFUSED`` (with ``--triton``: Triton
accepts it), ``INTERNAL`` (an exception from inside the package: AttributeError, TypeError,
ValueError...), ``NOLINE`` (a workbench error without the kernel's line), ``MISMATCH`` (CPU
and interpreter disagree), ``TIMEOUT``. The exit status is 1 when there is a BAD outcome. A
crash of the process (a segfault in LLVM) stops the probe at the case that caused it: rerun
with ``--start``.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import signal
import sys
import tempfile
import traceback
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# the cases ---------------------------------------------------------------------------------
#: how a case's value ``res`` is stored (empty: the line is a statement)
S1 = "tl.store(out_ptr + r, res)"
S2 = "tl.store(out_ptr + r[:, None] * 16 + r[None, :], res)"
SS = "tl.store(out_ptr, res)"
S32 = "tl.store(out_ptr + tl.arange(0, 32), res)"
S8 = "tl.store(out_ptr + tl.arange(0, 8), res)"
SN = ""
T2 = "tl.store(out_ptr + r, res[0])\n    tl.store(out_ptr + 16 + r, res[1])"

#: (name probed, the call, how its value is stored, valid?)
C: list[tuple[str, str, str, bool]] = []


def V(name, expr, store=S1):  # noqa: N802 (V: a valid call)
    C.append((name, expr, store, True))


def W(name, expr, store=S1):  # noqa: N802 (W: a wrong call)
    C.append((name, expr, store, False))


# elementwise math
for f in ["abs", "ceil", "cos", "erf", "exp", "exp2", "floor", "log", "log2", "rsqrt", "sigmoid",
          "sin", "sqrt", "sqrt_rn"]:
    V(f, f"tl.{f}(x)")
    W(f, f"tl.{f}(x_ptr)")
    W(f, f"tl.{f}()")
    if f not in ("abs",):
        W(f, f"tl.{f}(xi)")   # int input: Triton rejects most float math on ints
V("abs", "tl.abs(xi)")
V("softmax", "tl.softmax(x)")
W("softmax", "tl.softmax(xi)")
V("softmax", "tl.softmax(X)", S2)
V("fdiv", "tl.fdiv(x, y)")
W("fdiv", "tl.fdiv(xi, yi)")
V("fdiv", "tl.fdiv(x, y, ieee_rounding=True)")
V("div_rn", "tl.div_rn(x, y)")
W("div_rn", "tl.div_rn(xi, yi)")
V("fma", "tl.fma(x, y, x)")
W("fma", "tl.fma(x, y)")
W("fma", "tl.fma(x, y, X)")
V("clamp", "tl.clamp(x, 0.2, 0.5)")
V("clamp", "tl.clamp(x, y * 0, y)")
W("clamp", "tl.clamp(xi, 0, 5)")
W("clamp", "tl.clamp(x, 0.2)")
V("maximum", "tl.maximum(x, y)")
V("maximum", "tl.maximum(x, y, propagate_nan=tl.PropagateNan.ALL)")
W("maximum", "tl.maximum(x, X[:8, :])")
W("maximum", "tl.maximum(x)")
V("minimum", "tl.minimum(xi, yi)")
W("minimum", "tl.minimum(x, x_ptr)")
V("umulhi", "tl.umulhi(xi, yi)")
W("umulhi", "tl.umulhi(x, y)")
V("cdiv", "tl.cdiv(xi, 7)")
V("cdiv", "tl.cdiv(n, 7) + x")
W("cdiv", "tl.cdiv(x_ptr, 3)")
V("add", "tl.add(x, y)")
V("sub", "tl.sub(x, 1.0)")
V("mul", "tl.mul(x, y, sanitize_overflow=False)")
W("add", "tl.add(x, X[:4, :4])")
W("add", "tl.add(x)")
V("cast", "tl.cast(x, tl.int32)")
V("cast", "tl.cast(xi, tl.float16, fp_downcast_rounding='rtne')")
V("cast", "tl.cast(x, tl.int8, bitcast=False)")
W("cast", "tl.cast(x, tl.int16, bitcast=True)")
W("cast", "tl.cast(x, 'float32x')")
W("cast", "tl.cast(x, 3)")
W("cast", "tl.cast(x, tl.float16, fp_downcast_rounding='up')")
W("cast", "tl.cast(xi, tl.float16, fp_downcast_rounding='rtz')")
V("to", "x.to(tl.float16)")
V("to", "x.to(tl.uint32, bitcast=True)")
W("to", "x.to(tl.float64, bitcast=True)")
W("to", "x.to()")
W("to", "x.to('int33')")
V("where", "tl.where(x > 0.5, x, y)")
V("where", "tl.where(x > 0.5, x, 0)")
W("where", "tl.where(x > 0.5, x)")
W("where", "tl.where(x > 0.5, X[:4, :], y)")
V("xor_sum", "tl.xor_sum(xi, 0)", SS)
W("xor_sum", "tl.xor_sum(x, 0)", SS)
# creation
V("arange", "tl.arange(0, 16) + x")
W("arange", "tl.arange(0, 10) + x")
W("arange", "tl.arange(0, n)")
W("arange", "tl.arange(0.0, 16)")
W("arange", "tl.arange(16, 0)")
W("arange", "tl.arange(0, 2**20)", SN)
V("full", "tl.full((16,), 3.0, tl.float32)")
V("full", "tl.full([16, 16], 2, tl.int32)", S2)
W("full", "tl.full((n,), 3.0, tl.float32)")
W("full", "tl.full((16,), 3.0)")
W("full", "tl.full((16,), 3.0, 'flt')")
W("full", "tl.full((12,), 3.0, tl.float32)", SN)
W("full", "tl.full(16.0, 3.0, tl.float32)", SN)
V("zeros", "tl.zeros((16,), dtype=tl.float32) + x")
W("zeros", "tl.zeros((16,))")
W("zeros", "tl.zeros((16,), x)")
V("zeros_like", "tl.zeros_like(x)")
W("zeros_like", "tl.zeros_like(3)")
W("zeros_like", "tl.zeros_like(x_ptr)", SN)
# shapes
V("broadcast", "tl.broadcast(x[None, :], X)[0]", S2)
W("broadcast", "tl.broadcast(x, X[:4, :4])[0]", SN)
V("broadcast_to", "tl.broadcast_to(x[None, :], (16, 16))", S2)
W("broadcast_to", "tl.broadcast_to(x, (16, 8))", SN)
W("broadcast_to", "tl.broadcast_to(x, 16.0)", SN)
V("broadcast_to", "x[None, :].broadcast_to(16, 16)", S2)
V("expand_dims", "tl.sum(tl.expand_dims(x, 0), 0)")
V("expand_dims", "tl.sum(tl.expand_dims(x, (0, 2)), (0, 2))")
W("expand_dims", "tl.expand_dims(x, 5)", SN)
W("expand_dims", "tl.expand_dims(x, n)", SN)
W("expand_dims", "tl.expand_dims(x, 0.0)", SN)
V("reshape", "tl.reshape(X, (256,)).reshape(16, 16)", S2)
V("reshape", "X.reshape([256]).reshape((16, 16), can_reorder=False)", S2)
W("reshape", "tl.reshape(X, (16, 15))", SN)
W("reshape", "tl.reshape(X, (n, 16))", SN)
W("reshape", "tl.reshape(X, (16, 16.0))", SN)
W("reshape", "tl.reshape(X)", SN)
V("view", "tl.view(X, (256,)).reshape(16, 16)", S2)
W("view", "tl.view(X, (3, 16))", SN)
V("ravel", "tl.ravel(X).reshape(16, 16)", S2)
W("ravel", "tl.ravel(X, 1)", SN)
V("trans", "tl.trans(X)", S2)
V("trans", "X.trans(1, 0)", S2)
V("trans", "X.T", S2)
W("trans", "tl.trans(X, 0, 0)", SN)
W("trans", "tl.trans(X, (0, 2))", SN)
W("trans", "tl.trans(X, 1, 0, 2)", SN)
V("permute", "tl.permute(X, (1, 0))", S2)
V("permute", "X.permute(1, 0)", S2)
W("permute", "tl.permute(X, (1, 1))", SN)
W("permute", "tl.permute(X, (0,))", SN)
W("permute", "tl.permute(X, (0, 5))", SN)
W("permute", "tl.permute(X)", SN)
V("cat", "tl.cat(x, y, can_reorder=True)", S32)
W("cat", "tl.cat(x, y)", S32)
W("cat", "tl.cat(x, X, can_reorder=True)", SN)
V("join", "tl.join(x, y)", "tl.store(out_ptr + r[:, None] * 2 + tl.arange(0, 2)[None, :], res)")
W("join", "tl.join(x, X)", SN)
W("join", "tl.join(x)", SN)
V("split", "tl.split(tl.join(x, y))", T2)
W("split", "tl.split(X[:, :2])[0] + tl.split(X)[0]", SN)
W("split", "tl.split(x)", SN)
V("split", "tl.join(x, y).split()", T2)
V("interleave", "tl.interleave(x, y)", S32)
W("interleave", "tl.interleave(x, X)", SN)
V("flip", "tl.flip(x)")
V("flip", "tl.flip(X, 1)", S2)
V("flip", "x.flip(0)")
W("flip", "tl.flip(X, 2)", SN)
W("flip", "tl.flip(X, n)", SN)
V("gather", "tl.gather(x, xi % 16, 0)")
W("gather", "tl.gather(x, x, 0)", SN)
W("gather", "tl.gather(x, xi % 16, 1)", SN)
W("gather", "tl.gather(X, xi % 16, 0)", SN)
W("gather", "tl.gather(x, xi % 16)", SN)
V("swizzle2d", "tl.swizzle2d(xi % 4, yi % 4, 4, 4, 2)[0].to(tl.float32)")
W("swizzle2d", "tl.swizzle2d(xi, yi, 4, 4)", SN)
# reductions
for f in ["sum", "max", "min", "argmax", "argmin", "xor_sum", "reduce_or"]:
    arg = "xi" if f in ("xor_sum", "reduce_or") else "x"
    Arg = "XI" if f in ("xor_sum", "reduce_or") else "X"
    V(f, f"tl.{f}({arg}, 0)", SS)
    V(f, f"tl.{f}({Arg}, axis=1)")
    V(f, f"{Arg}.{f}(0, keep_dims=True).reshape(16)")
    W(f, f"tl.{f}({arg}, 1)", SN)
    W(f, f"tl.{f}({arg}, n)", SN)
    W(f, f"tl.{f}({arg}, 0.0)", SN)
    W(f, f"tl.{f}(x_ptr, 0)", SN)
V("sum", "tl.sum(X)", SS)
V("sum", "tl.sum(X, axis=None, keep_dims=True).reshape(1) + x")
V("sum", "tl.sum(xi, 0, dtype=tl.int64)", SS)
W("sum", "tl.sum(xi, 0, dtype='int64')", SS)
V("max", "tl.max(X, 1, return_indices=True)[1]")
W("argmax", "tl.argmax(x)", SS)
V("max", "tl.max(x, 0, propagate_nan=True)", SS)
V("reduce", "tl.reduce(x, 0, _add)", SS)
V("reduce", "tl.reduce((x, xi), 0, _add2)[0]", SS)
W("reduce", "tl.reduce(x, 0, _add2)", SS)
W("reduce", "tl.reduce(x, 0, _not_jit)", SS)
W("reduce", "tl.reduce(x, 2, _add)", SS)
W("reduce", "tl.reduce(x, 0)", SS)
W("reduce", "tl.reduce(x, 0, _bad_ret)", SS)
V("associative_scan", "tl.associative_scan(x, 0, _add)")
V("associative_scan", "tl.associative_scan(x, 0, _add, reverse=True)")
W("associative_scan", "tl.associative_scan(x, 1, _add)", SN)
W("associative_scan", "tl.associative_scan(x, 0, _add2)", SN)
W("associative_scan", "tl.associative_scan(x, 0, 3)", SN)
for f in ["cumsum", "cumprod"]:
    V(f, f"tl.{f}(x, 0)")
    V(f, f"tl.{f}(X, 1, reverse=True)", S2)
    V(f, f"x.{f}(0)")
    W(f, f"tl.{f}(x, 1)", SN)
    W(f, f"tl.{f}(x, n)", SN)
    W(f, f"tl.{f}(x_ptr, 0)", SN)
V("cumsum", "tl.cumsum(xi, 0, dtype=tl.int64)")
V("sort", "tl.sort(x)")
V("sort", "tl.sort(X, 1, descending=True)", S2)
W("sort", "tl.sort(X, 0)", SN)
W("sort", "tl.sort(x, 2)", SN)
W("sort", "tl.sort(x, descending=n > 0)", SN)
V("topk", "tl.topk(x, 8)", S8)
W("topk", "tl.topk(x, 5)", SN)
W("topk", "tl.topk(x, n)", SN)
W("topk", "tl.topk(x, 32)", SN)
V("bitonic_merge", "tl.bitonic_merge(tl.sort(x))")
W("bitonic_merge", "tl.bitonic_merge(x, 5)", SN)
V("histogram", "tl.histogram(xi % 8, 8).to(tl.float32)", S8)
W("histogram", "tl.histogram(x, 8)", SN)
W("histogram", "tl.histogram(xi, n)", SN)
W("histogram", "tl.histogram(XI, 8)", SN)
W("histogram", "tl.histogram(xi, 6)", SN)
# dot
V("dot", "tl.dot(X, Y)", S2)
V("dot", "tl.dot(X, Y, acc=X)", S2)
V("dot", "tl.dot(X, Y, input_precision='ieee')", S2)
V("dot", "tl.dot(X.to(tl.float16), Y.to(tl.float16), out_dtype=tl.float32)", S2)
V("dot", "X.dot(Y)", S2)
W("dot", "tl.dot(x, y)", SN)
W("dot", "tl.dot(X, x)", SN)
W("dot", "tl.dot(X, Y[:8, :])", SN)
W("dot", "tl.dot(X.to(tl.float64), Y.to(tl.float64))", SN)
W("dot", "tl.dot(X, Y, input_precision='fast')", SN)
W("dot", "tl.dot(X, Y, out_dtype=tl.int32)", SN)
W("dot", "tl.dot(X, Y, acc=x)", SN)
W("dot", "tl.dot(X, Y.to(tl.float16))", S2)
W("dot", "tl.dot(X, XI)", SN)
W("dot", "tl.dot(X[:4, :4], Y[:4, :4])", SN)
V("dot_scaled",
  "tl.dot_scaled(X.to(tl.bfloat16), None, 'bf16', Y.to(tl.bfloat16), None, 'bf16')", S2)
W("dot_scaled", "tl.dot_scaled(X, None, 'fp32', Y, None, 'fp32')", SN)
W("dot_scaled",
  "tl.dot_scaled(X.to(tl.bfloat16), None, 'fp99', Y.to(tl.bfloat16), None, 'bf16')", SN)
W("dot_scaled", "tl.dot_scaled(X.to(tl.bfloat16), None, 'bf16', Y.to(tl.bfloat16))", SN)
# memory
V("load", "tl.load(x_ptr + r, mask=r < n, other=0.0)")
V("load", "tl.load(x_ptr + r, cache_modifier='.cg', eviction_policy='evict_last', volatile=True)")
V("load", "tl.load(x_ptr + pid)", SS)
W("load", "tl.load(x)", SN)
W("load", "tl.load(x_ptr + r, mask=r)", SN)
W("load", "tl.load(x_ptr + r, mask=X > 0)", SN)
W("load", "tl.load(x_ptr + r, other=0.0)", SN)
W("load", "tl.load(x_ptr + r, cache_modifier='.zz')", SN)
W("load", "tl.load(x_ptr + r, eviction_policy='never')", SN)
W("load", "tl.load(x_ptr + x)", SN)
W("load", "tl.load(x_ptr + r, boundary_check=(0,))", SN)
W("load", "tl.load(x_ptr + r, padding_option='zero')", SN)
W("load", "tl.load(x_ptr + r, mask=r < n, other=x_ptr)", SN)
V("store", "tl.store(out_ptr + r, x, mask=r < n)", SN)
V("store", "tl.store(out_ptr + r, 1.5)", SN)
W("store", "tl.store(x, x)", SN)
W("store", "tl.store(out_ptr + r, X)", SN)
W("store", "tl.store(out_ptr + r, x, other=0.0)", SN)
W("store", "tl.store(out_ptr + r, x, mask=X > 0)", SN)
W("store", "tl.store(out_ptr + r, x, cache_modifier='.ca')", SN)
W("store", "tl.store(out_ptr + r, x_ptr)", SN)
W("store", "tl.store(out_ptr + r)", SN)
for f in ["atomic_add", "atomic_max", "atomic_min", "atomic_xchg"]:
    V(f, f"tl.{f}(out_ptr + r, x)")
    V(f, f"tl.{f}(out_ptr + r, x, mask=r < n, sem='relaxed', scope='gpu')")
    W(f, f"tl.{f}(x, x)", SN)
    W(f, f"tl.{f}(out_ptr + r, X)", SN)
    W(f, f"tl.{f}(out_ptr + r, x, sem='weird')", SN)
    W(f, f"tl.{f}(out_ptr + r, x, scope='planet')", SN)
    W(f, f"tl.{f}(out_ptr + r)", SN)
for f in ["atomic_and", "atomic_or", "atomic_xor"]:
    V(f, f"tl.{f}(i_out + r, xi)", "tl.store(out_ptr + r, res.to(tl.float32))")
    W(f, f"tl.{f}(out_ptr + r, x)", SN)
    W(f, f"tl.{f}(i_out + r, x)", SN)
V("atomic_add", "tl.atomic_add(h_out + r, x.to(tl.float16))")
W("atomic_add", "tl.atomic_add(d_ptr + r, x)", SN)
V("atomic_add", "tl.atomic_add(out_ptr, 1.0)", SS)
V("atomic_cas", "tl.atomic_cas(i_out + r, xi * 0, yi)", "tl.store(out_ptr + r, res.to(tl.float32))")
W("atomic_cas", "tl.atomic_cas(i_out + r, xi)", SN)
W("atomic_cas", "tl.atomic_cas(x, xi, yi)", SN)
W("atomic_cas", "tl.atomic_cas(i_out + r, xi, yi, sem='xx')", SN)
V("make_block_ptr",
  "tl.load(tl.make_block_ptr(x_ptr, (16, 16), (16, 1), (0, 0), (16, 16), (1, 0)))", S2)
V("advance",
  "tl.load(tl.advance(tl.make_block_ptr(x_ptr, (16, 16), (16, 1), (0, 0), (8, 16), (1, 0)), "
  "(8, 0)))", "tl.store(out_ptr + tl.arange(0, 8)[:, None] * 16 + r[None, :], res)")
V("make_block_ptr",
  "tl.load(tl.make_block_ptr(x_ptr, (16, 16), (16, 1), (0, 0), (16, 16), (1, 0)), "
  "boundary_check=(0, 1), padding_option='zero')", S2)
W("make_block_ptr", "tl.make_block_ptr(x_ptr, (16, 16), (16, 1), (0,), (16, 16), (1, 0))", SN)
W("make_block_ptr", "tl.make_block_ptr(x_ptr, (16, 16), (16, 1), (0, 0), (n, 16), (1, 0))", SN)
W("make_block_ptr", "tl.make_block_ptr(x_ptr, (16, 16), (16, 1), (0, 0), (12, 16), (1, 0))", SN)
W("make_block_ptr", "tl.make_block_ptr(x, (16, 16), (16, 1), (0, 0), (16, 16), (1, 0))", SN)
W("make_block_ptr",
  "tl.load(tl.make_block_ptr(x_ptr, (16, 16), (16, 1), (0, 0), (16, 16), (1, 0)), "
  "boundary_check=(2,))", SN)
W("make_block_ptr",
  "tl.load(tl.make_block_ptr(x_ptr, (16, 16), (16, 1), (0, 0), (16, 16), (1, 0)), "
  "padding_option='one')", SN)
W("make_block_ptr",
  "tl.load(tl.make_block_ptr(x_ptr, (16, 16), (16, 1), (0, 0), (16, 16), (1, 0)), mask=X > 0)", SN)
W("advance",
  "tl.advance(tl.make_block_ptr(x_ptr, (16, 16), (16, 1), (0, 0), (16, 16), (1, 0)), (8,))", SN)
W("advance", "tl.advance(x_ptr, (8, 0))", SN)
V("make_tensor_descriptor",
  "tl.make_tensor_descriptor(x_ptr, [16, 16], [16, 1], [16, 16]).load([0, 0])", S2)
W("make_tensor_descriptor",
  "tl.make_tensor_descriptor(x_ptr, [16, 16], [16, 2], [16, 16]).load([0, 0])", SN)
W("make_tensor_descriptor",
  "tl.make_tensor_descriptor(x_ptr, [16, 16], [16, 1], [16]).load([0, 0])", SN)
W("make_tensor_descriptor",
  "tl.make_tensor_descriptor(x_ptr, [16, 16], [16, 1], [16, 16]).load([0])", SN)
W("make_tensor_descriptor", "tl.make_tensor_descriptor(x, [16, 16], [16, 1], [16, 16])", SN)
V("load_tensor_descriptor",
  "tl.load_tensor_descriptor(tl.make_tensor_descriptor(x_ptr, [16, 16], [16, 1], [16, 16]), "
  "[0, 0])", S2)
V("store_tensor_descriptor",
  "tl.store_tensor_descriptor(tl.make_tensor_descriptor(out_ptr, [16, 16], [16, 1], [16, 16]), "
  "[0, 0], X)", SN)
W("store_tensor_descriptor",
  "tl.store_tensor_descriptor(tl.make_tensor_descriptor(out_ptr, [16, 16], [16, 1], [16, 16]), "
  "[0, 0], x)", SN)
W("store_tensor_descriptor",
  "tl.make_tensor_descriptor(out_ptr, [16, 16], [16, 1], [16, 16]).store([0, 0], "
  "X.to(tl.float16))", SN)
# programs and hints
V("program_id", "tl.program_id(0) + x")
V("program_id", "tl.program_id(axis=2) + x")
W("program_id", "tl.program_id(3)", SN)
W("program_id", "tl.program_id(n)", SN)
W("program_id", "tl.program_id(0.0)", SN)
W("program_id", "tl.program_id()", SN)
V("num_programs", "tl.num_programs(0) + x")
W("num_programs", "tl.num_programs(4)", SN)
W("num_programs", "tl.num_programs(x)", SN)
V("multiple_of", "tl.load(x_ptr + tl.multiple_of(r, 16))")
V("max_contiguous", "tl.load(x_ptr + tl.max_contiguous(r, 16))")
V("max_constancy", "tl.load(x_ptr + tl.max_constancy(r // 4, 4))")
W("multiple_of", "tl.multiple_of(r, n)", SN)
W("multiple_of", "tl.multiple_of(r, (16, 16))", SN)
W("max_contiguous", "tl.max_contiguous(x_ptr, 1.5)", SN)
W("multiple_of", "tl.multiple_of(r)", SN)
V("assume", "tl.assume(n > 0)", SN)
W("assume", "tl.assume(x)", SN)
W("assume", "tl.assume(n)", SN)
V("debug_barrier", "tl.debug_barrier()", SN)
W("debug_barrier", "tl.debug_barrier(1)", SN)
V("static_assert", "tl.static_assert(True, 'ok')", SN)
W("static_assert", "tl.static_assert(False, 'boom')", SN)
W("static_assert", "tl.static_assert(n > 0)", SN)
V("static_print", "tl.static_print('hi', 3)", SN)
V("device_assert", "tl.device_assert(x >= 0, 'negative')", SN)
W("device_assert", "tl.device_assert(x < 0, 'negative')", SN)
W("device_assert", "tl.device_assert(x >= 0, x)", SN)
V("device_print", "tl.device_print('v', n)", SN)
W("device_print", "tl.device_print(n)", SN)
W("device_print", "tl.device_print('v', n, hex=3)", SN)
V("inline_asm_elementwise",
  "tl.inline_asm_elementwise('mov.b32 $0, $1;', '=r,r', [xi], dtype=tl.int32, is_pure=True, "
  "pack=1).to(tl.float32)")
W("inline_asm_elementwise",
  "tl.inline_asm_elementwise('mov.b32 $0, $1;', '=r,r', [xi], dtype=tl.int32)", SN)
W("inline_asm_elementwise",
  "tl.inline_asm_elementwise('mov.b32 $0, $1;', '=r,r', xi, dtype=tl.int32, is_pure=True, "
  "pack=1)", SN)
V("map_elementwise", "tl.map_elementwise(_scalar_fn, x, y)")
W("map_elementwise", "tl.map_elementwise(_scalar_fn, x)", SN)
W("map_elementwise", "tl.map_elementwise(_scalar_fn, x, X)", SN)
# random
V("rand", "tl.rand(7, r)")
V("randn", "tl.randn(7, r)")
V("randint", "tl.randint(7, r).to(tl.float32)")
V("rand4x", "tl.rand4x(7, r)[0]")
V("randn4x", "tl.randn4x(7, r)[2]")
V("randint4x", "tl.randint4x(7, r)[1].to(tl.float32)")
V("philox", "tl.philox(7, r, r, r, r)[0].to(tl.float32)")
V("philox_impl",
  "tl.philox_impl(r.to(tl.uint32), r.to(tl.uint32), r.to(tl.uint32), r.to(tl.uint32), "
  "r.to(tl.uint32), r.to(tl.uint32))[0].to(tl.float32)")
V("uint_to_uniform_float", "tl.uint_to_uniform_float(xi.to(tl.uint32))")
V("pair_uniform_to_normal", "tl.pair_uniform_to_normal(x, y)[0]")
W("rand", "tl.rand(7.5, r)", SN)
W("rand", "tl.rand(7, x)", SN)
W("rand", "tl.rand(7)", SN)
W("randint", "tl.randint(x, r)", SN)
W("philox", "tl.philox(7, r, r, r)", SN)
W("uint_to_uniform_float", "tl.uint_to_uniform_float(x)", SN)
W("pair_uniform_to_normal", "tl.pair_uniform_to_normal(x)", SN)
# misc
V("str_to_ty", "x.to(tl.str_to_ty('fp16'))")
W("str_to_ty", "tl.str_to_ty('fp99')", SN)
V("item", "tl.full((1,), 5.0, tl.float32).item() + x")
W("item", "x.item()", SN)
V("logical_and", "(x > 0.5).logical_and(y > 0.5).to(tl.float32)")
V("logical_or", "(x > 0.5).logical_or(y > 0.5).to(tl.float32)")
W("logical_and", "x.logical_and()", SN)
V("range", "_loop_sum(x)")
V("static_range", "_static_loop(x)")
W("range", "_bad_range(x)")
W("static_range", "_bad_static_range(x, n)")
V("extra.cuda.num_threads", "tl.extra.cuda.num_threads() + x")
V("extra.cuda.num_warps", "tl.extra.cuda.num_warps() + x")
V("extra.cuda.globaltimer", "(tl.extra.cuda.globaltimer() * 0).to(tl.float32) + x")
V("extra.cuda.smid", "(tl.extra.cuda.smid() * 0).to(tl.float32) + x")
V("extra.cuda.gdc_wait", "tl.extra.cuda.gdc_wait()", SN)
V("extra.cuda.gdc_launch_dependents", "tl.extra.cuda.gdc_launch_dependents()", SN)
for f in ["tanh", "erfinv", "pow", "isnan", "signbit", "fast_expf", "llrint", "ilogb", "j0",
          "nextafter", "fmod", "hypot", "cbrt", "round", "trunc", "exp10", "popc", "clz", "brev"]:
    if f in ("pow", "nextafter", "fmod", "hypot"):
        V("libdevice." + f, f"tl.extra.libdevice.{f}(x, y)")
        W("libdevice." + f, f"tl.extra.libdevice.{f}(x)", SN)
    elif f in ("popc", "clz", "brev"):
        V("libdevice." + f, f"tl.extra.libdevice.{f}(xi).to(tl.float32)")
        W("libdevice." + f, f"tl.extra.libdevice.{f}(x)", SN)
    else:
        V("libdevice." + f, f"tl.extra.libdevice.{f}(x).to(tl.float32)")
        W("libdevice." + f, f"tl.extra.libdevice.{f}(x_ptr)", SN)
V("libdevice.pow", "tl.extra.libdevice.pow(x, 2)")
V("libdevice.pow", "tl.extra.libdevice.pow(x.to(tl.float64), y.to(tl.float64)).to(tl.float32)")
W("libdevice.tanh", "tl.extra.libdevice.tanh(xi)", SN)
W("libdevice.tanh", "tl.extra.libdevice.tanh(x.to(tl.float16))", SN)
# tensor operators and indexing
V("__getitem__", "x[None, :].reshape(16)")
W("__getitem__", "x[3]", SN)
W("__getitem__", "x[0:8]", SN)
W("__getitem__", "x[None, None, None, :, None]", SN)
W("__getitem__", "x[:, :]", SN)
V("__neg__", "-x")
V("__invert__", "(~xi).to(tl.float32)")
W("__invert__", "~x", SN)
V("__mod__", "x % y")
V("__floordiv__", "xi // 3")
V("__lshift__", "(xi << 2).to(tl.float32)")
W("__lshift__", "x << 2", SN)
W("__rshift__", "xi >> x", SN)
W("__and__", "x & xi", SN)
W("__matmul__", "X @ Y", SN)
W("__bool__", "_if_on_tensor(x)")
W("__binop_ptr", "x_ptr + x_ptr", SN)
W("__binop_ptr", "x_ptr * 2", SN)
W("__binop_ptr", "x_ptr + 1.5", SN)
V("__cmp_ptr", "((x_ptr + r) < (x_ptr + 8)).to(tl.float32)")
W("__unknown_attr", "tl.no_such_thing(x)", SN)
W("__unknown_method", "x.no_such_method()", SN)
W("__unknown_attr2", "x.shape_x", SN)
V("__shape_attr", "x + x.shape[0] + x.numel + x.dtype.primitive_bitwidth")
W("__call_tensor", "x(3)", SN)
W("__python_fn", "_plain_python(x)", SN)
W("__print", "print(x)", SN)
W("__len", "len(x)", SN)
V("__len_tuple", "x + len((1, 2))")
W("__range_tensor", "_range_over_tensor(x)")
# ---- batch 2: more typical mistakes -----------------------------------------------------
V("x.reduce_or", "XI.reduce_or(1).to(tl.float32)")
V("x.softmax", "x.softmax()")
V("x.sqrt_rn", "x.sqrt_rn()")
V("x.store", "(out_ptr + r).store(x)", SN)
V("x.atomic_add", "(out_ptr + r).atomic_add(x)")
W("static_range", "_static_loop_tensor(x)")
W("full", "tl.full((16,), 3.0, tl.pointer_type(tl.float32))", SN)
W("full", "tl.full((16,), x, tl.float32)", SN)
W("full", "tl.full((16,), float('nan'), tl.int32)", SN)
W("full", "tl.full((16,), 2**40, tl.int32)", SN)
V("full", "tl.full((16,), -1, tl.uint8).to(tl.float32)")
W("full", "tl.full((-16,), 1, tl.int32)", SN)
W("full", "tl.full((0,), 1, tl.int32)", SN)
W("full", "tl.full((16,), 1, tl.void)", SN)
W("arange", "tl.arange(0, xi)", SN)
W("arange", "tl.arange(-16, 0)", SN)
W("arange", "tl.arange(0, 16, 2)", SN)
W("reshape", "tl.reshape(X, (-1, 16))", SN)
W("reshape", "tl.reshape(X, (16, 16, 0))", SN)
W("reshape", "tl.reshape(x, [])", SN)
W("view", "tl.view(X, tl.float16)", SN)
W("__getitem__", "x[1:]", SN)
W("__getitem__", "X[..., None]", SN)
W("__getitem__", "x[n]", SN)
W("__getitem__", "x[r]", SN)
W("__getitem__", "x[None, :, 'a']", SN)
W("where", "tl.where(xi, x, y)")
W("where", "tl.where(x, x, y)")
W("where", "tl.where(x > 0, x_ptr + r, y)", SN)
V("where", "tl.where(x > 0.5, x_ptr + r, y_ptr + r)", SN)
W("cast", "x.to(tl.pointer_type(tl.float32))", SN)
W("cast", "(x_ptr + r).to(tl.float32)", SN)
V("cast.pointer_to_int", "(x_ptr + r).to(tl.int64).to(tl.float32)")
V("cast", "x.to(tl.float8e5).to(tl.float32)")
V("cast", "x.to(tl.float8e4nv).to(tl.float32)")
W("cast", "x.to(tl.float8e4b8).to(tl.float32)")
V("cast", "x.to(tl.bfloat16).to(tl.float32)")
W("cast", "x.to(tl.void)", SN)
W("cast", "x.to(tl.float32, bitcast=True, fp_downcast_rounding='rtz')", SN)
W("cast", "xi.to(tl.float16, bitcast=True)", SN)
W("dot", "tl.dot(X.reshape(2, 8, 16), Y)", SN)
V("dot", "tl.dot(X.reshape(2, 8, 16), Y.reshape(2, 16, 8)).reshape(16, 16)", S2)
W("dot", "tl.dot(X.to(tl.int8), Y.to(tl.int8), out_dtype=tl.float32)", SN)
V("dot", "tl.dot(X.to(tl.int8), Y.to(tl.int8)).to(tl.float32)", S2)
V("dot", "tl.dot(X.to(tl.float8e5), Y.to(tl.float8e5))", S2)
W("dot", "tl.dot(X, Y, allow_tf32=True, input_precision='tf32')", SN)
W("dot", "tl.dot(X, Y, max_num_imprecise_acc=-1)", SN)
W("dot", "tl.dot(X.to(tl.int1), Y.to(tl.int1))", SN)
W("dot", "tl.dot(X, Y, acc=XI)", SN)
W("dot", "tl.dot(X.reshape(1, 256), Y.reshape(256, 1))", SN)
W("dot", "tl.dot(X, Y, acc=X.reshape(2, 8, 16))", SN)
V("dot_scaled",
  "tl.dot_scaled(X.to(tl.float8e5), None, 'e5m2', Y.to(tl.float8e5), None, 'e5m2')", S2)
W("dot_scaled",
  "tl.dot_scaled(X.to(tl.float8e5), None, 'e4m3', Y.to(tl.float8e5), None, 'e5m2')", SN)
W("dot_scaled", "tl.dot_scaled(X.to(tl.float8e5), x, 'e5m2', Y.to(tl.float8e5), None, 'e5m2')", SN)
W("load", "tl.load(x_ptr + r, mask=r < n, other=x_ptr)", SN)
W("load", "tl.load(i_ptr + r, mask=r < n, other=float('nan'))", SN)
W("load", "tl.load(x_ptr + r, mask=xi)", SN)
W("load", "tl.load(x_ptr + r, mask=(r < n).to(tl.int8))", SN)
W("load", "tl.load(x_ptr + r, volatile=x > 0)", SN)
W("load", "tl.load(x_ptr + r, mask=r < n, other=X)", SN)
W("load", "tl.load(x_ptr + r, cache_modifier=3)", SN)
W("load", "tl.load(x_ptr + 1.5)", SN)
W("load", "tl.load(n)", SN)
W("load", "tl.load(x_ptr + r, mask=x)", SN)
W("store", "tl.store(out_ptr + r, x, mask=xi)", SN)
W("store", "tl.store(out_ptr + r, x, eviction_policy='evict_what')", SN)
W("store", "tl.store(out_ptr + r, x, boundary_check=(0,))", SN)
W("store", "tl.store(n, x)", SN)
W("store", "tl.store(out_ptr + r, X[0:1, :])", SN)
V("store", "tl.store(out_ptr + r, xi)", SN)
W("atomic_add", "tl.atomic_add(out_ptr + r, x, mask=xi)", SN)
W("atomic_add", "tl.atomic_add(out_ptr + r, x, sem=3)", SN)
W("atomic_add", "tl.atomic_add(out_ptr + r, x, mask=X > 0)", SN)
W("atomic_max", "tl.atomic_max(h_out + r, x.to(tl.float16))", SN)
W("atomic_cas", "tl.atomic_cas(out_ptr + r, x, y)", SN)
V("atomic_xchg", "tl.atomic_xchg(i_out + r, xi).to(tl.float32)")
W("atomic_cas", "tl.atomic_cas(i_out + r, xi, y)", SN)
W("reduce", "tl.reduce(x, 0, _add, keep_dims=3)", SS)
W("reduce", "tl.reduce(x, None, _add)", SS)
W("reduce", "tl.reduce((x, X), 0, _add2)[0]", SS)
W("reduce", "tl.reduce(x, 0, _scalar_fn3)", SS)
W("associative_scan", "tl.associative_scan(x, 0, _bad_ret)")
W("associative_scan", "tl.associative_scan((x, X), 0, _add2)[0]")
W("sort", "tl.sort(xi.to(tl.int1))", SN)
W("sort", "tl.sort(x_ptr + r)", SN)
W("topk", "tl.topk(X, 4)", SN)
W("gather", "tl.gather(x, (xi % 16).to(tl.float32), 0)", SN)
W("gather", "tl.gather(x, XI % 16, 0)", SN)
W("cat", "tl.cat(x, xi, can_reorder=True)", S32)
W("cat", "tl.cat(x, y, can_reorder=n > 0)", SN)
W("join", "tl.join(x, xi)", SN)
W("join", "tl.join(x, 1.0)", SN)
W("interleave", "tl.interleave(x, xi)", SN)
W("split", "tl.split(tl.join(x, y).reshape(32))", SN)
W("split", "tl.split(X.reshape(16, 8, 2).reshape(256))", SN)
W("permute", "tl.permute(X, 1, 0, 2)", SN)
W("permute", "tl.permute(X, (n, 0))", SN)
W("trans", "tl.trans(x, 1, 0)", SN)
W("flip", "tl.flip(X, (0, 1))", SN)
W("flip", "tl.flip(X, -3)", SN)
W("expand_dims", "tl.expand_dims(x, (0, 0))", SN)
W("broadcast_to", "tl.broadcast_to(X, (16,))", SN)
W("broadcast_to", "tl.broadcast_to(x, (n, 16))", SN)
W("broadcast_to", "tl.broadcast_to(x, (16, 16), 3)", SN)
W("__binop", "x + X[:4, :]", SN)
W("__binop", "x + 'a'", SN)
W("__binop", "x + None", SN)
W("__binop", "x + (1, 2)", SN)
W("__binop", "x_ptr + r.to(tl.float32)", SN)
W("__binop", "(x_ptr + r) - (y_ptr + r)", SN)
W("__binop", "(x_ptr + r) - (i_ptr + r)", SN)
W("__binop", "x % xi.to(tl.uint32) + (xi.to(tl.uint64) // xi)", SN)
W("__binop", "xi << 40", SN)
W("__binop", "x @ Y", SN)
W("__binop", "xi // 0", SN)
W("__binop", "n // 0", SN)
W("__binop", "x ** 2", SN)
W("__cmp", "x < 'a'", SN)
W("__cmp", "x_ptr < 3", SN)
W("__unary", "-x_ptr", SN)
W("__unary", "~(x_ptr + r)", SN)
W("__unary", "not x", SN)
W("maximum", "tl.maximum(x, xi.to(tl.uint32))", SN)
W("maximum", "tl.maximum(x_ptr + r, y_ptr + r)", SN)
W("maximum", "tl.maximum(x, y, propagate_nan=3)", SN)
W("minimum", "tl.minimum(x, 'a')", SN)
W("fma", "tl.fma(xi, yi, xi)", SN)
W("fma", "tl.fma(x, y, 'a')", SN)
W("umulhi", "tl.umulhi(xi, x)", SN)
W("umulhi", "tl.umulhi(xi.to(tl.int64), yi)", SN)
W("cdiv", "tl.cdiv(x, 2)", SN)
W("multiple_of", "tl.multiple_of(x, 16)", SN)
W("multiple_of", "tl.multiple_of(r, -4)", SN)
W("multiple_of", "tl.multiple_of(X, (16,))", SN)
W("max_contiguous", "tl.max_contiguous(X, (16, 16, 16))", SN)
W("program_id", "tl.program_id(-1)", SN)
W("program_id", "tl.program_id('x')", SN)
W("debug_barrier", "tl.debug_barrier(x)", SN)
W("static_assert", "tl.static_assert(x)", SN)
W("static_assert", "tl.static_assert(True, 3)", SN)
W("static_print", "tl.static_print(x.nope)", SN)
W("device_assert", "tl.device_assert(x_ptr)", SN)
W("device_assert", "tl.device_assert()", SN)
W("device_print", "tl.device_print(x, 'v')", SN)
W("device_print", "tl.device_print('v', x_ptr + r, X)", SN)
W("inline_asm_elementwise",
  "tl.inline_asm_elementwise('mov.b32 $0, $1;', '=r,r', [xi, X], dtype=tl.int32, is_pure=True, "
  "pack=1)", SN)
W("inline_asm_elementwise",
  "tl.inline_asm_elementwise('mov.b32 $0, $1;', '=r,r', [xi], dtype=3, is_pure=True, pack=1)", SN)
W("inline_asm_elementwise",
  "tl.inline_asm_elementwise('mov.b32 $0, $1;', '=r,r', [xi], dtype=tl.int32, is_pure=True, "
  "pack=3)", SN)
W("inline_asm_elementwise",
  "tl.inline_asm_elementwise('bogus $0, $1;', '=r,r', [xi], dtype=tl.int32, is_pure=True, "
  "pack=1)", SN)
W("map_elementwise", "tl.map_elementwise(3, x)", SN)
W("map_elementwise", "tl.map_elementwise(_if_on_tensor, x)", SN)
W("rand", "tl.rand(x, r)", SN)
W("rand", "tl.rand(7, r, n_rounds=n)", SN)
W("randint4x", "tl.randint4x(7, r.to(tl.float32))", SN)
W("philox", "tl.philox(7, x, x, x, x)", SN)
W("make_block_ptr", "tl.make_block_ptr(x_ptr, (16, 16), (16, 1), (0, 0), (16, 16), (2, 0))", SN)
W("make_block_ptr", "tl.make_block_ptr(x_ptr, (16, 16), (16, 1), (0, 0), (16, 16))", SN)
W("make_block_ptr", "tl.make_block_ptr(x_ptr, (16, 16), (16, 1.5), (0, 0), (16, 16), (1, 0))", SN)
W("make_block_ptr", "tl.make_block_ptr(x_ptr, (16, x), (16, 1), (0, 0), (16, 16), (1, 0))", SN)
W("make_block_ptr",
  "tl.store(tl.make_block_ptr(out_ptr, (16, 16), (16, 1), (0, 0), (16, 16), (1, 0)), x)", SN)
W("make_block_ptr",
  "tl.store(tl.make_block_ptr(out_ptr, (16, 16), (16, 1), (0, 0), (16, 16), (1, 0)), "
  "XI.to(tl.int64))", SN)
W("make_block_ptr", "tl.make_block_ptr(x_ptr, (16, 16), (16, 1), (0, 0), (16, 16), (1, 0)) + 1", SN)
W("make_tensor_descriptor", "tl.make_tensor_descriptor(x_ptr, [16, 16], [16, 1], [16, 15])", SN)
W("make_tensor_descriptor", "tl.make_tensor_descriptor(x_ptr, [16, 16], [16, 1], [n, 16])", SN)
W("make_tensor_descriptor",
  "tl.make_tensor_descriptor(x_ptr, [16, 16], [16, 1], [16, 16], padding_option='one')", SN)
W("make_tensor_descriptor",
  "tl.make_tensor_descriptor(x_ptr, [16, 16], [16, 1], [16, 16]).load([0, x])", SN)
W("make_tensor_descriptor",
  "tl.make_tensor_descriptor(x_ptr, [16, 16], [16, 1], [16, 16]).store([0, 0], x)", SN)
W("make_tensor_descriptor",
  "tl.make_tensor_descriptor(x_ptr, [16, 16], [16, 1], [16, 16]).gather(r, 0)", SN)
W("make_tensor_descriptor",
  "tl.make_tensor_descriptor(x_ptr, [16, 16], [16, 1], [16, 16]).atomic_add([0, 0], X)", SN)
W("libdevice", "tl.extra.libdevice.no_such(x)", SN)
W("libdevice", "tl.extra.libdevice.pow(x, x_ptr)", SN)
W("libdevice", "tl.extra.libdevice.isinf(xi)", SN)
V("libdevice", "tl.extra.libdevice.isinf(x).to(tl.float32)")
V("libdevice", "tl.extra.libdevice.tanh(x.to(tl.float64)).to(tl.float32)")
W("extra.cuda", "tl.extra.cuda.num_warps(3)", SN)
W("extra.cuda", "tl.extra.cuda.convert_custom_float8_sm80(x, tl.float8e4nv)", SN)
W("extra.cuda", "tl.extra.cuda.no_such()", SN)
W("frontend", "_call_jit_wrong_arity(x)", SN)
W("frontend", "_shape_changes_in_loop(x)", SN)
W("frontend", "_type_changes_in_if(x, n)", SN)
W("frontend", "_undefined_name(x)", SN)
W("frontend", "_while_tensor(x)", SN)
W("frontend", "_return_mismatch(x, n)", SN)
W("frontend", "_lambda_in_kernel(x)", SN)
W("frontend", "_try_in_kernel(x)", SN)
W("frontend", "_assert_tensor(x)", SN)
W("frontend", "_recursive(x, 3)", SN)
W("frontend", "_assign_to_tl(x)", SN)
W("frontend", "_index_tuple_out_of_range(x)", SN)
W("frontend", "_tuple_of_tensors_wrong(x)", SN)
W("frontend", "_break_in_for(x)", SN)
W("frontend", "_yield_in_kernel(x)", SN)
W("frontend", "_global_in_kernel(x)", SN)
W("frontend", "_kwargs_star(x)", SN)
W("frontend", "_constexpr_non_const(x, n)", SN)
W("frontend", "_bad_decorator_use(x)", SN)


#: the @jit helpers some cases call (combine functions, loops, frontend mistakes)
HELPERS = '''
@jit
def _add(a, b):
    return a + b


@jit
def _add2(a0, a1, b0, b1):
    return a0 + b0, a1 + b1


@jit
def _bad_ret(a, b):
    return a + b, a


def _not_jit(a, b):
    return a + b


@jit
def _scalar_fn(a, b):
    return a * 2 + b


@jit
def _loop_sum(x):
    acc = x * 0
    for i in tl.range(0, 4, num_stages=2, loop_unroll_factor=2):
        acc += x
    return acc


@jit
def _static_loop(x):
    acc = x * 0
    for i in tl.static_range(4):
        acc += x * i
    return acc


@jit
def _bad_range(x):
    acc = x * 0
    for i in tl.range(0, 4, 0.5):
        acc += x
    return acc


@jit
def _bad_static_range(x, n):
    acc = x * 0
    for i in tl.static_range(n):
        acc += x
    return acc


@jit
def _if_on_tensor(x):
    if x > 0:
        return x
    return -x


def _plain_python(x):
    return x


@jit
def _range_over_tensor(x):
    acc = x * 0
    for i in range(x):
        acc += x
    return acc


@jit
def _static_loop_tensor(x):
    acc = x * 0
    for i in tl.static_range(x):
        acc += x
    return acc


@jit
def _scalar_fn3(a, b, c):
    return a


@jit
def _call_jit_wrong_arity(x):
    return _add(x)


@jit
def _shape_changes_in_loop(x):
    for i in range(3):
        x = x[:, None]
    return x


@jit
def _type_changes_in_if(x, n):
    if n > 0:
        x = x.to(tl.int32)
    return x


@jit
def _undefined_name(x):
    return x + not_defined_anywhere


@jit
def _while_tensor(x):
    while x > 0:
        x = x - 1
    return x


@jit
def _return_mismatch(x, n):
    if n > 0:
        return x
    return x.to(tl.int32)


@jit
def _lambda_in_kernel(x):
    f = lambda v: v + 1  # noqa: E731
    return f(x)


@jit
def _try_in_kernel(x):
    try:
        x = x + 1
    except Exception:
        pass
    return x


@jit
def _assert_tensor(x):
    assert x > 0
    return x


@jit
def _recursive(x, n: tl.constexpr):
    return _recursive(x, n)


@jit
def _assign_to_tl(x):
    tl.float32 = 3
    return x


@jit
def _index_tuple_out_of_range(x):
    t = (x, x)
    return t[5]


@jit
def _tuple_of_tensors_wrong(x):
    a, b, c = (x, x)
    return a


@jit
def _break_in_for(x):
    for i in range(4):
        if i == 2:
            break
    return x


@jit
def _yield_in_kernel(x):
    yield x


_G = 3


@jit
def _global_in_kernel(x):
    global _G
    _G = 4
    return x


@jit
def _kwargs_star(x):
    d = dict(a=1)
    return _add(x, **d)


@jit
def _constexpr_non_const(x, n):
    return _needs_const(x, n)


@jit
def _needs_const(x, N: tl.constexpr):
    return x + N


@jit
def _bad_decorator_use(x):
    return jit(x)
'''

_KERNEL_HEAD = """import os
if os.environ.get("PROBE_TRITON"):
    import triton as _j
    import triton.language as tl
else:
    import workbench as _j
    import workbench.language as tl
jit = _j.jit
"""
_PRELUDE = [
    "    r = tl.arange(0, 16)",
    "    pid = tl.program_id(0)",
    "    x = tl.load(x_ptr + r)",
    "    y = tl.load(y_ptr + r)",
    "    xi = tl.load(i_ptr + r)",
    "    yi = tl.load(i_ptr + 16 + r)",
    "    X = tl.load(x_ptr + r[:, None] * 16 + r[None, :])",
    "    Y = tl.load(y_ptr + r[:, None] * 16 + r[None, :])",
    "    XI = tl.load(i_ptr + r[:, None] * 16 + r[None, :])",
]
#: names whose values differ between targets by design (addresses, clocks)
_NOT_COMPARED = ("extra.cuda.globaltimer", "extra.cuda.smid", "cast.pointer_to_int")


def write_kernels(path: Path) -> list[int]:
    """Write one kernel ``k<i>`` per case to ``path``; returns each case's line number."""
    text = _KERNEL_HEAD + HELPERS
    line = text.count("\n") + 1
    lines = []
    for i, (_name, expr, store, _valid) in enumerate(C):
        body = ["", "", "@jit",
                f"def k{i}(x_ptr, y_ptr, i_ptr, d_ptr, out_ptr, i_out, h_out, n):"] + _PRELUDE
        lines.append(line + len(body))
        body += ([f"    res = {expr}  # probe", "    " + store] if store
                 else [f"    {expr}  # probe"])
        chunk = "\n".join(body) + "\n"
        text += chunk
        line += chunk.count("\n")
    path.write_text(text)
    return lines


def _arrays():
    rng = np.random.default_rng(1234)
    return [rng.uniform(0.1, 1.0, 256).astype(np.float32),
            rng.uniform(0.1, 1.0, 256).astype(np.float32),
            rng.integers(1, 100, 256).astype(np.int32), rng.uniform(0.1, 1.0, 256),
            np.zeros(256, np.float32), np.zeros(256, np.int32), np.zeros(256, np.float16), 16]


class _Timeout(Exception):
    pass


def _alarm(*_):
    raise _Timeout()


def run_case(mod, kpath: str, i: int, line: int, target: str, seconds: int = 60) -> dict:
    """Compile (and on a host target launch) kernel ``k<i>`` of ``mod`` for ``target``."""
    import workbench as wb
    from workbench.errors import WorkbenchError
    args = _arrays()
    rec: dict = {"kind": "ok"}
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(seconds)
    try:
        ck = wb.compile(getattr(mod, f"k{i}"), *args, target=target)
        if target in ("cpu", "interpreter"):
            ck[(1,)](*args)
            rec["out"] = [a.copy() for a in args[4:7]]
    except WorkbenchError as e:
        msg = str(e)
        rec.update(kind="wb", cls=type(e).__name__, msg=msg,
                   at_line=f"{kpath}:{line}:" in msg, at_file=f"{kpath}:" in msg)
    except _Timeout:
        rec["kind"] = "timeout"
    except Exception as e:  # noqa: BLE001 (an internal error is what the probe looks for)
        rec.update(kind="internal", cls=type(e).__name__,
                   msg=f"{e}\n" + "".join(traceback.format_exc().splitlines(True)[-6:]))
    finally:
        signal.alarm(0)
    return rec


def triton_verdicts(kpath: Path, indices) -> dict:
    """``{i: True/False}``: does real Triton compile case ``i`` for cuda:90 (compile only)?"""
    os.environ["PROBE_TRITON"] = "1"
    try:
        import triton
        from triton.backends.compiler import GPUTarget
        from triton.compiler import ASTSource
        mod = _load(kpath, "probe_kernels_triton")
    finally:
        del os.environ["PROBE_TRITON"]
    sig = {"x_ptr": "*fp32", "y_ptr": "*fp32", "i_ptr": "*i32", "d_ptr": "*fp64",
           "out_ptr": "*fp32", "i_out": "*i32", "h_out": "*fp16", "n": "i32"}
    out = {}
    saved = os.dup(1), os.dup(2)  # Triton prints the IR of a failing compile to fd 1 and 2
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    try:
        for i in indices:
            out[i] = _triton_compiles(triton, ASTSource, GPUTarget, mod, sig, i)
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, null):
            os.close(fd)
    return out


def _triton_compiles(triton, ast_source, gpu_target, mod, sig, i) -> bool:
    if "make_block_ptr(" in C[i][1] and C[i][1].endswith(") + 1"):
        return False  # Triton aborts the process on this one (an MLIR assertion)
    try:
        triton.compile(ast_source(getattr(mod, f"k{i}"), sig, {}),
                       target=gpu_target("cuda", 90, 32))
        return True
    except Exception:  # noqa: BLE001 (any refusal counts)
        return False


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def classify(valid: bool, rec: dict, triton_ok) -> str:
    """The outcome's class (see the module docstring); names of BAD ones are upper case."""
    k = rec["kind"]
    if k == "ok":
        if valid:
            return "ok"
        return "lenient" if triton_ok else "accepted"
    if k == "wb":
        if not rec["at_file"]:
            return "NOLINE"
        if not valid:
            return "clean"
        if rec["cls"] == "UnsupportedError" or "in this architecture" in rec["msg"]:
            return "unsupported"  # this target cannot do it, and the error says so
        return "REFUSED" if triton_ok else "refused"
    return k.upper()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--target", action="append",
                    help="interpreter, cpu, cuda:90, cuda:80 (repeat; default: the host two)")
    ap.add_argument("--only", help="probe only the cases whose name contains this")
    ap.add_argument("--start", type=int, default=0, help="first case index")
    ap.add_argument("--triton", action="store_true",
                    help="also compile every case with real Triton (cuda:90) to judge them")
    ap.add_argument("--verbose", action="store_true", help="print whole messages")
    ap.add_argument("--show-all", action="store_true", help="print every outcome")
    a = ap.parse_args(argv)
    targets = a.target or ["interpreter", "cpu"]
    tmp = Path(tempfile.mkdtemp(prefix="probe_language_"))
    kpath = tmp / "probe_kernels.py"
    lines = write_kernels(kpath)
    mod = _load(kpath, "probe_kernels")
    todo = [i for i in range(a.start, len(C)) if not a.only or a.only in C[i][0]]
    verdict = triton_verdicts(kpath, todo) if a.triton else {}
    counts = {t: Counter() for t in targets}
    bad = 0
    for i in todo:
        name, expr, _store, valid = C[i]
        recs = {t: run_case(mod, str(kpath), i, lines[i], t) for t in targets}
        for t, rec in recs.items():
            c = classify(valid, rec, verdict.get(i))
            if (c == "ok" and t == "cpu" and "interpreter" in recs and name not in _NOT_COMPARED
                    and "out" in rec and "out" in recs["interpreter"]
                    and not all(np.allclose(u.astype(float), v.astype(float), rtol=2e-3,
                                            atol=1e-4, equal_nan=True)
                                for u, v in zip(rec["out"], recs["interpreter"]["out"],
                                                strict=True))):
                c = "MISMATCH"
            counts[t][c] += 1
            if c.isupper() or a.show_all:
                bad += c.isupper()
                msg = rec.get("msg", "")
                msg = msg if a.verbose else msg.strip().replace("\n", " | ")[:200]
                print(f"[{t}] {c} #{i} {name}: {expr}" + (f"  -> {rec.get('cls')}: {msg}"
                                                           if msg else ""))
    print(f"{len(todo)} calls of {len({C[i][0] for i in todo})} names")
    for t in targets:
        print(f"{t}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts[t].items())))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
