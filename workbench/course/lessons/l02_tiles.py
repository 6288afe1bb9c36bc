"""Lesson 2: 2-D tiles, strides and broadcasting (a bias added to every row, an outer product,
rows scaled by a vector).

Each good solution gives program (pid_m, pid_n) a BM x BN tile: row offsets as a column
``rows[:, None]``, column offsets as a row ``cols[None, :]``, the two broadcast into the tile
of pointers ``base + rows[:, None] * stride + cols[None, :]``. Each slow solution is right but
walks its tile one column at a time: a column's elements are ``stride`` elements apart, so
each thread moves 4 bytes per access and a warp's accesses touch 32 different sectors, where
the tile's row-contiguous vector accesses move 16 bytes per thread.
"""
from __future__ import annotations

import numpy as np

from ... import language as tl
from ...runtime.jit import jit
from ..exercise import Case, Exercise

BM, BN = 32, 64
SIZES = ((37, 100), (64, 128), (256, 512))


@jit
def add_bias(x_ptr, b_ptr, out_ptr, M, N, stride, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    offs = rows[:, None] * stride + cols[None, :]
    x = tl.load(x_ptr + offs, mask=mask)
    b = tl.load(b_ptr + cols, mask=cols < N)
    tl.store(out_ptr + offs, x + b[None, :], mask=mask)


@jit
def add_bias_by_columns(x_ptr, b_ptr, out_ptr, M, N, stride, BM: tl.constexpr,
                        BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    for j in range(BN):
        c = tl.program_id(1) * BN + j
        mask = (rows < M) & (c < N)
        col = tl.load(x_ptr + rows * stride + c, mask=mask)
        tl.store(out_ptr + rows * stride + c, col + tl.load(b_ptr + c, mask=c < N), mask=mask)


@jit
def outer(a_ptr, b_ptr, out_ptr, M, N, stride, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    a = tl.load(a_ptr + rows, mask=rows < M)
    b = tl.load(b_ptr + cols, mask=cols < N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    tl.store(out_ptr + rows[:, None] * stride + cols[None, :], a[:, None] * b[None, :], mask=mask)


@jit
def outer_by_columns(a_ptr, b_ptr, out_ptr, M, N, stride, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    a = tl.load(a_ptr + rows, mask=rows < M)
    for j in range(BN):
        c = tl.program_id(1) * BN + j
        tl.store(out_ptr + rows * stride + c, a * tl.load(b_ptr + c, mask=c < N),
                 mask=(rows < M) & (c < N))


@jit
def row_scale(x_ptr, s_ptr, out_ptr, M, N, stride, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    offs = rows[:, None] * stride + cols[None, :]
    s = tl.load(s_ptr + rows, mask=rows < M)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * s[:, None], mask=mask)


@jit
def row_scale_by_columns(x_ptr, s_ptr, out_ptr, M, N, stride, BM: tl.constexpr,
                         BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    s = tl.load(s_ptr + rows, mask=rows < M)
    for j in range(BN):
        c = tl.program_id(1) * BN + j
        mask = (rows < M) & (c < N)
        tl.store(out_ptr + rows * stride + c, tl.load(x_ptr + rows * stride + c, mask=mask) * s,
                 mask=mask)


def _grid(m: int, n: int) -> tuple:
    return (-(-m // BM), -(-n // BN))


def _program_of(n: int):
    return lambda i: (i // n // BM, i % n // BN)


def _label(m: int, n: int) -> str:
    tails = [f"{what} {v} is not a multiple of {b}" for what, v, b in
             (("M", m, BM), ("N", n, BN)) if v % b]
    return f"M={m}, N={n}" + (f" ({'; '.join(tails)}: the masks matter)" if tails else "")


def _make_add_bias(rng, size) -> Case:
    m, n = size
    x = rng.standard_normal((m, n), dtype=np.float32)
    b = rng.standard_normal(n, dtype=np.float32)
    out = np.full((m, n), np.nan, np.float32)
    return Case(_label(m, n), (x, b, out, m, n, n), {"BM": BM, "BN": BN}, _grid(m, n),
                {2: x + b[None, :]}, program_of=_program_of(n))


def _make_outer(rng, size) -> Case:
    m, n = size
    a = rng.standard_normal(m, dtype=np.float32)
    b = rng.standard_normal(n, dtype=np.float32)
    out = np.full((m, n), np.nan, np.float32)
    return Case(_label(m, n), (a, b, out, m, n, n), {"BM": BM, "BN": BN}, _grid(m, n),
                {2: a[:, None] * b[None, :]}, program_of=_program_of(n))


def _make_row_scale(rng, size) -> Case:
    m, n = size
    x = rng.standard_normal((m, n), dtype=np.float32)
    s = rng.standard_normal(m, dtype=np.float32)
    out = np.full((m, n), np.nan, np.float32)
    return Case(_label(m, n), (x, s, out, m, n, n), {"BM": BM, "BN": BN}, _grid(m, n),
                {2: x * s[:, None]}, program_of=_program_of(n))


SCALAR = "4-byte accesses where 16 are possible"
PARAMS = ("M", "N", "stride", "BM", "BN")
TILE_HINT = ("rows = tl.program_id(0) * BM + tl.arange(0, BM)\n"
             "cols = tl.program_id(1) * BN + tl.arange(0, BN)\n"
             "mask = (rows[:, None] < M) & (cols[None, :] < N)\n"
             "offs = rows[:, None] * stride + cols[None, :]\n")

EXERCISES = (
    Exercise(
        name="add_bias", lesson=2, title="A bias added to every row",
        task="out[i, j] = x[i, j] + b[j] for an M x N row-major x (row stride `stride`); "
             "program (pid_m, pid_n) computes a BM x BN tile.",
        params=("x_ptr", "b_ptr", "out_ptr") + PARAMS,
        stub='''@wb.jit
def add_bias(x_ptr, b_ptr, out_ptr, M, N, stride, BM: tl.constexpr, BN: tl.constexpr):
    # TODO: the tile's row and column offsets, a 2-D mask, the tile of x, the bias row
    # broadcast over the tile's rows, a masked store
    pass
''',
        solution=add_bias, slow=add_bias_by_columns, slow_advice=SCALAR,
        make=_make_add_bias, sizes=SIZES,
        hints=("Build the tile's offsets from a column of row offsets and a row of column "
               "offsets.",
               "`rows[:, None]` has shape (BM, 1) and `cols[None, :]` shape (1, BN): combined "
               "by + or * they broadcast to (BM, BN). The bias is one row: load it with the "
               "column offsets and add `b[None, :]`.",
               TILE_HINT + "b = tl.load(b_ptr + cols, mask=cols < N)\n"
               "tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + b[None, :], "
               "mask=mask)")),
    Exercise(
        name="outer", lesson=2, title="Outer product",
        task="out[i, j] = a[i] * b[j] for an M x N output (row stride `stride`).",
        params=("a_ptr", "b_ptr", "out_ptr") + PARAMS,
        stub='''@wb.jit
def outer(a_ptr, b_ptr, out_ptr, M, N, stride, BM: tl.constexpr, BN: tl.constexpr):
    # TODO: load BM values of a and BN values of b, broadcast their product to a tile
    pass
''',
        solution=outer, slow=outer_by_columns, slow_advice=SCALAR,
        make=_make_outer, sizes=SIZES,
        hints=("Two 1-D loads, one 2-D store.",
               "`a[:, None] * b[None, :]` is the (BM, BN) outer product of two vectors.",
               TILE_HINT.replace("offs = rows[:, None] * stride + cols[None, :]\n", "")
               + "a = tl.load(a_ptr + rows, mask=rows < M)\n"
               "b = tl.load(b_ptr + cols, mask=cols < N)\n"
               "tl.store(out_ptr + rows[:, None] * stride + cols[None, :], "
               "a[:, None] * b[None, :], mask=mask)")),
    Exercise(
        name="row_scale", lesson=2, title="Rows scaled by a vector",
        task="out[i, j] = x[i, j] * s[i] for an M x N x (row stride `stride`).",
        params=("x_ptr", "s_ptr", "out_ptr") + PARAMS,
        stub='''@wb.jit
def row_scale(x_ptr, s_ptr, out_ptr, M, N, stride, BM: tl.constexpr, BN: tl.constexpr):
    # TODO: the tile of x times the column of scales
    pass
''',
        solution=row_scale, slow=row_scale_by_columns, slow_advice=SCALAR,
        make=_make_row_scale, sizes=SIZES,
        hints=("The scale is per row: a column that broadcasts along the tile's columns.",
               "Load the BM scales with the row offsets and multiply by `s[:, None]`.",
               TILE_HINT + "s = tl.load(s_ptr + rows, mask=rows < M)\n"
               "tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * s[:, None], "
               "mask=mask)")),
)
