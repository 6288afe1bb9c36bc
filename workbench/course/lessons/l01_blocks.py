"""Lesson 1: program ids, blocks and masks (a vector add, a saxpy, a clamp).

Each good solution covers ``n`` elements with one program per BLOCK of them and masks the
last, partial block. Each slow solution is right but gives program ``pid`` the elements
``pid, pid + G, pid + 2G...`` (G programs): a warp's lanes then read addresses G elements apart,
so no thread can load a vector and every access needs its own transaction.
"""
from __future__ import annotations

import numpy as np

from ... import language as tl
from ...runtime.jit import jit
from ..exercise import Case, Exercise, grid_1d

BLOCK = 1024
SIZES = (1000, 98_765, 1 << 20)   # the last (a multiple of 16) is also the speed case


@jit
def vector_add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


@jit
def vector_add_strided(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid + tl.arange(0, BLOCK) * tl.num_programs(0)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


@jit
def saxpy(x_ptr, y_ptr, out_ptr, a, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, a * x + y, mask=mask)


@jit
def saxpy_strided(x_ptr, y_ptr, out_ptr, a, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid + tl.arange(0, BLOCK) * tl.num_programs(0)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, a * x + y, mask=mask)


@jit
def clamp(x_ptr, out_ptr, lo, hi, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.minimum(tl.maximum(x, lo), hi), mask=mask)


@jit
def clamp_strided(x_ptr, out_ptr, lo, hi, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid + tl.arange(0, BLOCK) * tl.num_programs(0)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.minimum(tl.maximum(x, lo), hi), mask=mask)


def _program_of_block(block: int):
    return lambda i: (i // block,)


def _make_add(rng, n) -> Case:
    x, y = rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32)
    out = np.full(n, np.nan, np.float32)
    return Case(f"n={n}" + _tail(n), (x, y, out, n), {"BLOCK": BLOCK}, grid_1d(n, BLOCK),
                {2: x + y}, program_of=_program_of_block(BLOCK))


def _make_saxpy(rng, n) -> Case:
    x, y = rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32)
    a = float(np.float32(rng.uniform(-3, 3)))
    out = np.full(n, np.nan, np.float32)
    return Case(f"n={n}, a={a:.4g}" + _tail(n), (x, y, out, a, n), {"BLOCK": BLOCK},
                grid_1d(n, BLOCK), {2: np.float32(a) * x + y},
                program_of=_program_of_block(BLOCK))


def _make_clamp(rng, n) -> Case:
    x = rng.standard_normal(n, dtype=np.float32) * 3
    lo, hi = -1.5, 2.0
    out = np.full(n, np.nan, np.float32)
    return Case(f"n={n}, lo={lo}, hi={hi}" + _tail(n), (x, out, lo, hi, n), {"BLOCK": BLOCK},
                grid_1d(n, BLOCK), {1: np.clip(x, lo, hi)}, program_of=_program_of_block(BLOCK))


def _tail(n: int) -> str:
    rest = n % BLOCK
    return (f" (the last block holds {rest} of {BLOCK} elements: the mask matters)" if rest
            else " (a whole number of blocks)")


STRIDED = "4-byte accesses where 16 are possible"

EXERCISES = (
    Exercise(
        name="vector_add", lesson=1, title="Vector add",
        task="out[i] = x[i] + y[i] for i < n, one program per BLOCK elements "
             "(grid: cdiv(n, BLOCK) programs).",
        params=("x_ptr", "y_ptr", "out_ptr", "n", "BLOCK"),
        stub='''@wb.jit
def vector_add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    # TODO: the offsets of this program's BLOCK elements, a mask for those < n,
    # two masked loads and one masked store
    pass
''',
        solution=vector_add, slow=vector_add_strided, slow_advice=STRIDED,
        make=_make_add, sizes=SIZES,
        hints=("Program `pid` owns elements pid*BLOCK ... pid*BLOCK + BLOCK-1.",
               "`tl.arange(0, BLOCK)` is a tile of 0..BLOCK-1; added to `pid * BLOCK` it gives "
               "the tile of this program's offsets. The last program runs past n: a mask "
               "`offs < n` passed to every load and store keeps those lanes out.",
               "offs = pid * BLOCK + tl.arange(0, BLOCK)\nmask = offs < n\n"
               "tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + "
               "tl.load(y_ptr + offs, mask=mask), mask=mask)")),
    Exercise(
        name="saxpy", lesson=1, title="saxpy: a scalar argument",
        task="out[i] = a * x[i] + y[i] for i < n; `a` is a Python float passed at launch.",
        params=("x_ptr", "y_ptr", "out_ptr", "a", "n", "BLOCK"),
        stub='''@wb.jit
def saxpy(x_ptr, y_ptr, out_ptr, a, n, BLOCK: tl.constexpr):
    # TODO: as the vector add, with a * x + y
    pass
''',
        solution=saxpy, slow=saxpy_strided, slow_advice=STRIDED,
        make=_make_saxpy, sizes=SIZES,
        hints=("A scalar argument is used in the kernel like a number.",
               "`a * x` broadcasts the scalar over the tile x; the mask is the same as in the "
               "vector add.",
               "x = tl.load(x_ptr + offs, mask=mask)\ny = tl.load(y_ptr + offs, mask=mask)\n"
               "tl.store(out_ptr + offs, a * x + y, mask=mask)")),
    Exercise(
        name="clamp", lesson=1, title="Clamp with tl.minimum and tl.maximum",
        task="out[i] = min(max(x[i], lo), hi) for i < n.",
        params=("x_ptr", "out_ptr", "lo", "hi", "n", "BLOCK"),
        stub='''@wb.jit
def clamp(x_ptr, out_ptr, lo, hi, n, BLOCK: tl.constexpr):
    # TODO: load a masked block, clamp it elementwise, store it
    pass
''',
        solution=clamp, slow=clamp_strided, slow_advice=STRIDED,
        make=_make_clamp, sizes=SIZES,
        hints=("Elementwise functions work on whole tiles.",
               "`tl.maximum(x, lo)` raises every element below lo; `tl.minimum(.., hi)` lowers "
               "every element above hi.",
               "x = tl.load(x_ptr + offs, mask=mask)\n"
               "tl.store(out_ptr + offs, tl.minimum(tl.maximum(x, lo), hi), mask=mask)")),
)
