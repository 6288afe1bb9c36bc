"""Closures for tile-shape ops, reductions, scans, ``tt.dot``, histogram and gather.

Each ``tt_<name>(comp, op)`` is called once at compile time by the
:class:`~.compiler.FunctionCompiler` ``comp`` and returns the closure ``f(env)``. IR axis
``a`` is numpy axis ``a + 1`` (the leading axis holds the programs of a batch).
"""
from __future__ import annotations

import numpy as np

from ...ir.types import FloatType, IntType, shape_of
from .block import run_block
from .dtypes import np_dtype
from .tensor_ops import dot, hillis_steele_scan, tree_reduce


def tt_splat(comp, op):
    s, r = comp.slot(op.operands[0]), comp.slot(op.result)
    shape = tuple(shape_of(op.result.type))
    tail = (1,) * len(shape)

    def splat(env, s=s, r=r, shape=shape, tail=tail):
        x = env[s]
        env[r] = np.broadcast_to(x.reshape(x.shape + tail), x.shape[:1] + shape)
    return splat


def tt_broadcast(comp, op):
    s, r = comp.slot(op.operands[0]), comp.slot(op.result)
    shape = tuple(shape_of(op.result.type))

    def broadcast(env, s=s, r=r, shape=shape):
        x = env[s]
        env[r] = np.broadcast_to(x, x.shape[:1] + shape)
    return broadcast


def tt_expand_dims(comp, op):
    s, r = comp.slot(op.operands[0]), comp.slot(op.result)
    axis = op.attributes["axis"] + 1

    def expand_dims(env, s=s, r=r, axis=axis):
        env[r] = np.expand_dims(env[s], axis)
    return expand_dims


def tt_reshape(comp, op):
    s, r = comp.slot(op.operands[0]), comp.slot(op.result)
    shape = tuple(shape_of(op.result.type))

    def reshape(env, s=s, r=r, shape=shape):
        x = env[s]
        env[r] = x.reshape(x.shape[:1] + shape)
    return reshape


def tt_unsplat(comp, op):
    """The element of a one-element tile: drop its dims (the leading program dim stays)."""
    s, r = comp.slot(op.operands[0]), comp.slot(op.result)

    def unsplat(env, s=s, r=r):
        x = env[s]
        env[r] = x.reshape(x.shape[:1])
    return unsplat


def tt_trans(comp, op):
    s, r = comp.slot(op.operands[0]), comp.slot(op.result)
    perm = (0,) + tuple(int(o) + 1 for o in op.attributes["order"])

    def trans(env, s=s, r=r, perm=perm):
        env[r] = np.transpose(env[s], perm)
    return trans


def tt_join(comp, op):
    a, b = (comp.slot(v) for v in op.operands)
    r = comp.slot(op.result)

    def join(env, a=a, b=b, r=r):
        env[r] = np.stack(np.broadcast_arrays(env[a], env[b]), axis=-1)
    return join


def tt_split(comp, op):
    s = comp.slot(op.operands[0])
    r0, r1 = (comp.slot(v) for v in op.results)

    def split(env, s=s, r0=r0, r1=r1):
        x = env[s]
        env[r0], env[r1] = x[..., 0], x[..., 1]
    return split


def tt_cat(comp, op):
    a, b = (comp.slot(v) for v in op.operands)
    r = comp.slot(op.result)

    def cat(env, a=a, b=b, r=r):
        x, y = env[a], env[b]
        n = max(x.shape[0], y.shape[0])
        x = np.broadcast_to(x, (n,) + x.shape[1:])
        y = np.broadcast_to(y, (n,) + y.shape[1:])
        env[r] = np.concatenate([x, y], axis=1)
    return cat


# ---- reductions and scans ---------------------------------------------------------------------
_FAST_REDUCE = {"arith.addf": np.add, "arith.addi": np.add, "arith.maxnumf": np.fmax,
                "arith.minnumf": np.fmin, "arith.maximumf": np.maximum,
                "arith.minimumf": np.minimum, "arith.maxsi": np.maximum,
                "arith.minsi": np.minimum, "arith.andi": np.bitwise_and,
                "arith.ori": np.bitwise_or, "arith.xori": np.bitwise_xor,
                "arith.muli": np.multiply}


def _fast_ufunc(op):
    """The numpy ufunc equal to a one-op combine region ``(a, b) -> a OP b``, if exact."""
    body = op.regions[0].block
    if len(op.operands) != 1 or len(body.ops) != 2:
        return None
    inner, ret = body.ops
    if inner.name not in _FAST_REDUCE or list(ret.operands) != [inner.result]:
        return None
    if set(inner.operands) != set(body.args) or len(inner.operands) != 2:
        return None
    t = inner.result.type.scalar
    if isinstance(t, FloatType) and t.name in ("f16", "bf16"):
        return None  # each step rounds to f16/bf16: use the tree
    if isinstance(t, IntType) and t.width == 1:
        return None
    return _FAST_REDUCE[inner.name]


def _region(comp, op):
    body = op.regions[0].block
    arg_slots = [comp.slot(a) for a in body.args]
    fns, ret = comp.block(body)
    n = len(op.operands)

    def combine(env, accs, xs):
        for s, v in zip(arg_slots, list(accs) + list(xs), strict=False):
            env[s] = v
        run_block(fns, env)
        return [env[s] for s in ret]
    return combine, n


def tt_reduce(comp, op):
    srcs = [comp.slot(v) for v in op.operands]
    res = [comp.slot(v) for v in op.results]
    axis = op.attributes["axis"] + 1
    dts = [np_dtype(v.type) for v in op.results]
    fast = _fast_ufunc(op)
    if fast is not None:
        s, r, dt = srcs[0], res[0], dts[0]

        def reduce_fast(env, s=s, r=r, dt=dt, axis=axis, fast=fast):
            env[r] = fast.reduce(env[s], axis=axis, dtype=dt)
        comp.block(op.regions[0].block)  # allocate slots (unused)
        return reduce_fast
    combine, _ = _region(comp, op)

    def reduce(env, srcs=srcs, res=res, axis=axis, dts=dts):
        out = tree_reduce([env[s] for s in srcs], axis, lambda a, b: combine(env, a, b))
        for r, v, dt in zip(res, out, dts, strict=False):
            env[r] = np.asarray(v).astype(dt, copy=False)
    return reduce


def tt_scan(comp, op):
    srcs = [comp.slot(v) for v in op.operands]
    res = [comp.slot(v) for v in op.results]
    axis = op.attributes["axis"] + 1
    reverse = bool(op.attributes.get("reverse", False))
    combine, _ = _region(comp, op)

    def scan(env, srcs=srcs, res=res, axis=axis, reverse=reverse):
        out = hillis_steele_scan([env[s] for s in srcs], axis,
                                 lambda a, b: combine(env, a, b), reverse)
        for r, v in zip(res, out, strict=False):
            env[r] = v
    return scan


# ---- dot, histogram, gather -------------------------------------------------------------------
def tt_dot(comp, op):
    a, b, c = (comp.slot(v) for v in op.operands)
    r = comp.slot(op.result)
    ta, tb, tc = (v.type for v in op.operands)
    prec = op.attributes.get("inputPrecision", "tf32")
    prec = str(prec).lower() if prec is not None else None

    def dot_(env, a=a, b=b, c=c, r=r):
        env[r] = dot(env[a], env[b], env[c], ta, tb, tc, prec)
    return dot_


def tt_histogram(comp, op):
    s = comp.slot(op.operands[0])
    m = comp.slot(op.operands[1]) if len(op.operands) > 1 else None
    r = comp.slot(op.result)
    nbins = shape_of(op.result.type)[0]
    dt = np_dtype(op.result.type)

    def histogram(env, s=s, m=m, r=r):
        x = env[s]
        mask = np.ones(x.shape, bool) if m is None else np.broadcast_to(env[m], x.shape)
        out = np.zeros((x.shape[0], nbins), dtype=dt)
        for b in range(x.shape[0]):
            v = x[b][mask[b]].astype(np.int64)
            v = v[(v >= 0) & (v < nbins)]
            out[b] = np.bincount(v, minlength=nbins)[:nbins]
        env[r] = out
    return histogram


def tt_gather(comp, op):
    s, i = (comp.slot(v) for v in op.operands)
    r = comp.slot(op.result)
    axis = op.attributes["axis"] + 1

    def gather(env, s=s, i=i, r=r, axis=axis):
        src, idx = env[s], env[i].astype(np.int64)
        n = max(src.shape[0], idx.shape[0])
        src = np.broadcast_to(src, (n,) + src.shape[1:])
        idx = np.broadcast_to(idx, (n,) + idx.shape[1:])
        if idx.size and (idx.min() < 0 or idx.max() >= src.shape[axis]):
            raise IndexError(f"gather index out of range [0, {src.shape[axis]})")
        env[r] = np.take_along_axis(src, idx, axis=axis)
    return gather
