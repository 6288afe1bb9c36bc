"""Lesson 4, coalescing and vector width: what makes the compiler give each thread a 16-byte
vector and each warp one contiguous run of memory (a transpose that stays coalesced on both
sides, a copy at an offset the compiler is told about with ``tl.multiple_of``, an embedding
lookup).

Slow solutions: a transpose that moves one row at a time and stores it down a column (each
thread stores 4 bytes, a warp's stores are M elements apart); a copy whose offset is not known
to be a multiple of 4 elements (so 4-byte accesses); an embedding lookup that walks the columns
(each lane loads one element of a different row).
"""
from __future__ import annotations

import numpy as np

from ... import language as tl
from ...runtime.jit import jit
from ..exercise import Case, Exercise

BM = BN = 32
BLOCK = 1024
D = 64
BR = 16


@jit
def transpose(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=mask)
    tl.store(out_ptr + cols[None, :] * M + rows[:, None], x, mask=mask)


@jit
def transpose_by_rows(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    for i in range(BM):
        r = tl.program_id(0) * BM + i
        mask = (cols < N) & (r < M)
        tl.store(out_ptr + cols * M + r, tl.load(x_ptr + r * N + cols, mask=mask), mask=mask)


@jit
def copy_at(x_ptr, out_ptr, start, n, BLOCK: tl.constexpr):
    first = tl.multiple_of(start + tl.program_id(0) * BLOCK, 4)
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + first + tl.arange(0, BLOCK), mask=mask),
             mask=mask)


@jit
def copy_at_unknown(x_ptr, out_ptr, start, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + start + offs, mask=mask), mask=mask)


@jit
def embedding(table_ptr, idx_ptr, out_ptr, n, D: tl.constexpr, BR: tl.constexpr):
    rows = tl.program_id(0) * BR + tl.arange(0, BR)
    cols = tl.arange(0, D)
    idx = tl.load(idx_ptr + rows, mask=rows < n, other=0)
    mask = (rows[:, None] < n) & (cols[None, :] < D)
    vals = tl.load(table_ptr + idx[:, None] * D + cols[None, :], mask=mask)
    tl.store(out_ptr + rows[:, None] * D + cols[None, :], vals, mask=mask)


@jit
def embedding_by_columns(table_ptr, idx_ptr, out_ptr, n, D: tl.constexpr, BR: tl.constexpr):
    rows = tl.program_id(0) * BR + tl.arange(0, BR)
    idx = tl.load(idx_ptr + rows, mask=rows < n, other=0)
    for j in range(D):
        tl.store(out_ptr + rows * D + j, tl.load(table_ptr + idx * D + j, mask=rows < n),
                 mask=rows < n)


def _make_transpose(rng, size) -> Case:
    m, n = size
    x = rng.standard_normal((m, n), dtype=np.float32)
    out = np.full((n, m), np.nan, np.float32)

    def program(i: int) -> tuple:          # out[j, r] holds x[r, j]
        j, r = divmod(i, m)
        return (r // BM, j // BN)
    tails = [f"{w}={v}" for w, v, b in (("M", m, BM), ("N", n, BN)) if v % b]
    return Case(f"M={m}, N={n}" + (f" (tails: {', '.join(tails)})" if tails else ""),
                (x, out, m, n), {"BM": BM, "BN": BN}, (-(-m // BM), -(-n // BN)), {1: x.T},
                program_of=program)


def _make_copy_at(rng, size) -> Case:
    n, start = size
    x = rng.standard_normal(n + start, dtype=np.float32)
    out = np.full(n, np.nan, np.float32)
    return Case(f"n={n}, start={start} (a multiple of 4, not of 16)", (x, out, start, n),
                {"BLOCK": BLOCK}, (-(-n // BLOCK),), {1: x[start:start + n]},
                program_of=lambda i: (i // BLOCK,))


def _make_embedding(rng, n) -> Case:
    vocab = 1000
    table = rng.standard_normal((vocab, D), dtype=np.float32)
    idx = rng.integers(0, vocab, n).astype(np.int32)
    out = np.full((n, D), np.nan, np.float32)
    return Case(f"{n} lookups of rows of {D}" + (f" (the last block holds {n % BR} of {BR})"
                                                   if n % BR else ""),
                (table, idx, out, n), {"D": D, "BR": BR}, (-(-n // BR),), {2: table[idx]},
                program_of=lambda i: (i // D // BR,))


EXERCISES = (
    Exercise(
        name="transpose", lesson=4, title="A transpose coalesced on both sides",
        task="out = x.T for a row-major M x N x (out is N x M); program (pid_m, pid_n) moves "
             "a BM x BN tile.",
        params=("x_ptr", "out_ptr", "M", "N", "BM", "BN"),
        stub='''@wb.jit
def transpose(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    # TODO: load a BM x BN tile of x (its columns are contiguous) and store it where out's
    # rows are contiguous: the compiler swaps the layout through shared memory
    pass
''',
        solution=transpose, slow=transpose_by_rows,
        slow_advice="your stores use 4-byte accesses where 16 are possible",
        make=_make_transpose, sizes=((40, 70), (64, 128), (512, 1024)),
        hints=("Load a whole tile; store the same tile through transposed pointers.",
               "x's (r, c) goes to out's (c, r), at `out_ptr + c * M + r`. Stored as a tile "
               "(`cols[None, :] * M + rows[:, None]`), the compiler sees that `rows` is "
               "contiguous in out and gives the store its own layout, converting the tile "
               "through shared memory (the compile report lists it).",
               "x = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=mask)\n"
               "tl.store(out_ptr + cols[None, :] * M + rows[:, None], x, mask=mask)")),
    Exercise(
        name="copy_at", lesson=4, title="Telling the compiler what you know: tl.multiple_of",
        task="out[i] = x[start + i] for i < n, where the caller promises `start` is a "
             "multiple of 4 (not necessarily of 16).",
        params=("x_ptr", "out_ptr", "start", "n", "BLOCK"),
        stub='''@wb.jit
def copy_at(x_ptr, out_ptr, start, n, BLOCK: tl.constexpr):
    # TODO: a masked copy of x[start:start + n]; tell the compiler what start is a multiple of
    pass
''',
        solution=copy_at, slow=copy_at_unknown,
        slow_advice="your loads use 4-byte accesses where 16 are possible",
        make=_make_copy_at, sizes=((1000, 4), (5000, 36), (1 << 20, 4100)),
        hints=("A 16-byte vector load needs an address that is a multiple of 16 bytes.",
               "The compiler knows x_ptr is 16-byte aligned, and a run-time int is taken as a "
               "multiple of 16 only when the launch's value is one; `start` = 4100 is not, so "
               "every load is 4 bytes. `tl.multiple_of(value, 4)` on the first offset of the "
               "program's run promises 4 elements = 16 bytes.",
               "first = tl.multiple_of(start + tl.program_id(0) * BLOCK, 4)\n"
               "x = tl.load(x_ptr + first + tl.arange(0, BLOCK), mask=mask)")),
    Exercise(
        name="embedding", lesson=4, title="An embedding lookup (a gather of rows)",
        task="out[i, :] = table[idx[i], :] for i < n, rows of D elements; program i handles "
             "BR lookups.",
        params=("table_ptr", "idx_ptr", "out_ptr", "n", "D", "BR"),
        stub='''@wb.jit
def embedding(table_ptr, idx_ptr, out_ptr, n, D: tl.constexpr, BR: tl.constexpr):
    # TODO: load BR indices, then a BR x D tile of the table rows they name, store it
    pass
''',
        solution=embedding, slow=embedding_by_columns,
        slow_advice="your loads use 4-byte accesses where 16 are possible",
        make=_make_embedding, sizes=(100, 1000, 4096),
        hints=("The rows are scattered; each row is contiguous.",
               "`idx[:, None] * D + cols[None, :]` is a (BR, D) tile whose rows are "
               "contiguous runs of D elements: each thread loads a vector from one row, "
               "even though the rows are far apart.",
               "idx = tl.load(idx_ptr + rows, mask=rows < n, other=0)\n"
               "vals = tl.load(table_ptr + idx[:, None] * D + cols[None, :], mask=mask)")),
)
