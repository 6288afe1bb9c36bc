"""Lesson 5, shared memory and bank conflicts: tiles that cross threads go through shared
memory (a ``ttg.convert_layout`` lowered to ``st.shared`` then ``ld.shared`` or ``ldmatrix``),
and the compiler's report lists each access with its wavefronts and bank-conflict degree
(:func:`workbench.layouts.bank_conflicts`, the numbers code generation records).

Triton gives a kernel no pointer into shared memory. A conversion's buffer is planned by the
lowering (Triton 3.6's ``optimalSwizzling``, which the CUDA backend follows): the widest vector
both register layouts hold contiguously, then a swizzle that serves every warp's store and load
without bank conflicts, and the whole tile in one round of scratch. What a kernel decides is
which tiles cross shared memory and how often: their shape, their element type, how many
conversions (each one a store, a barrier and a load). The exercises weigh those costs with the
checker's figures for cuda:90: a 16 KB buffer against two 8 KB ones (``transpose_wide``), two
conversions and their barriers where one 4 KB conversion does (``transpose_fp16``), and a dot
operand's conversion per K step of 16 against one per K step of 32 (``matmul_nt``).
"""
from __future__ import annotations

import numpy as np

from ... import language as tl
from ...runtime.jit import jit
from ..exercise import Case, Exercise


@jit
def transpose_wide(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    for h in tl.static_range(2):
        cols = tl.program_id(1) * BN + h * (BN // 2) + tl.arange(0, BN // 2)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        x = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=mask)
        tl.store(out_ptr + cols[None, :] * M + rows[:, None], x, mask=mask)


@jit
def transpose_whole(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=mask)
    tl.store(out_ptr + cols[None, :] * M + rows[:, None], x, mask=mask)


@jit
def transpose_fp16_halves(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    for h in tl.static_range(2):
        cols = tl.program_id(1) * BN + h * (BN // 2) + tl.arange(0, BN // 2)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        x = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=mask)
        tl.store(out_ptr + cols[None, :] * M + rows[:, None], x, mask=mask)


@jit
def transpose_fp16(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=mask)
    tl.store(out_ptr + cols[None, :] * M + rows[:, None], x, mask=mask)


@jit
def matmul_nt_half_slabs(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr,
                         BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, K, BK // 2):
        rk = k + tl.arange(0, BK // 2)
        a = tl.load(a_ptr + rm[:, None] * K + rk[None, :],
                    mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + rn[:, None] * K + rk[None, :],
                    mask=(rn[:, None] < N) & (rk[None, :] < K), other=0.0)
        acc = tl.dot(a, tl.trans(b), acc, input_precision="ieee")
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))


@jit
def matmul_nt(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
              BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, K, BK):
        rk = k + tl.arange(0, BK)
        a = tl.load(a_ptr + rm[:, None] * K + rk[None, :],
                    mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + rn[:, None] * K + rk[None, :],
                    mask=(rn[:, None] < N) & (rk[None, :] < K), other=0.0)
        acc = tl.dot(a, tl.trans(b), acc, input_precision="ieee")
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))


def _label(dims: dict, blocks: dict) -> str:
    tails = [f"{w}={v}" for w, v in dims.items() if v % blocks[w]]
    text = ", ".join(f"{w}={v}" for w, v in dims.items())
    return text + (f" (tails: {', '.join(tails)})" if tails else "")


def _make_transpose(dtype, bm: int, bn: int):
    def make(rng, size) -> Case:
        m, n = size
        x = rng.standard_normal((m, n)).astype(dtype)
        out = np.full((n, m), np.nan, dtype)

        def program(i: int) -> tuple:          # out[j, r] holds x[r, j]
            j, r = divmod(i, m)
            return (r // bm, j // bn)
        return Case(_label({"M": m, "N": n}, {"M": bm, "N": bn}), (x, out, m, n),
                    {"BM": bm, "BN": bn}, (-(-m // bm), -(-n // bn)), {1: x.T.copy()},
                    program_of=program)
    return make


def _make_matmul_nt(rng, size) -> Case:
    m, n, k = size
    a = rng.standard_normal((m, k), dtype=np.float32)
    b = rng.standard_normal((n, k), dtype=np.float32)
    c = np.full((m, n), np.nan, np.float32)
    want = (a.astype(np.float64) @ b.astype(np.float64).T).astype(np.float32)
    return Case(_label({"M": m, "N": n, "K": k}, {"M": 32, "N": 32, "K": 32}),
                (a, b, c, m, n, k), {"BM": 32, "BN": 32, "BK": 32},
                (-(-m // 32), -(-n // 32)), {2: want}, rtol=1e-4, atol=1e-4 * np.sqrt(k),
                program_of=lambda i: (i // n // 32, i % n // 32))


SCRATCH = "bytes of shared memory where"
BARRIERS = "barriers where the solution waits"
HALVES = ("rows = tl.program_id(0) * BM + tl.arange(0, BM)\n"
          "for h in tl.static_range(2):\n"
          "    cols = tl.program_id(1) * BN + h * (BN // 2) + tl.arange(0, BN // 2)\n"
          "    mask = (rows[:, None] < M) & (cols[None, :] < N)\n"
          "    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=mask)\n"
          "    tl.store(out_ptr + cols[None, :] * M + rows[:, None], x, mask=mask)")
WHOLE = ("rows = tl.program_id(0) * BM + tl.arange(0, BM)\n"
         "cols = tl.program_id(1) * BN + tl.arange(0, BN)\n"
         "mask = (rows[:, None] < M) & (cols[None, :] < N)\n"
         "x = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=mask)\n"
         "tl.store(out_ptr + cols[None, :] * M + rows[:, None], x, mask=mask)")
TRANSPOSE_STUB = '''@wb.jit
def {name}(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    # TODO: {todo}
    pass
'''

EXERCISES = (
    Exercise(
        name="transpose_wide", lesson=5, title="A 64 x 64 fp32 transpose in 8 KB of shared memory",
        task="out = x.T for a row-major fp32 M x N x; program (pid_m, pid_n) moves the "
             "BM x BN = 64 x 64 tile at (pid_m * BM, pid_n * BN), with both the load from x "
             "and the store to out coalesced, through at most 8 KB of shared memory.",
        params=("x_ptr", "out_ptr", "M", "N", "BM", "BN"),
        stub=TRANSPOSE_STUB.format(
            name="transpose_wide",
            todo="move the tile (masked) so that both the load from x and the store to out "
                 "are coalesced; then read the compile report's shared memory and its "
                 "shared-memory table"),
        solution=transpose_wide, slow=transpose_whole, slow_advice=SCRATCH,
        make=_make_transpose(np.float32, 64, 64), sizes=((100, 70), (128, 192), (512, 1024)),
        hints=("Start with lesson 4's transpose; then look at its compile report: the "
               "shared memory it needs and the conversion's rows in the shared-memory table.",
               "A coalesced transpose converts the tile's layout through shared memory, and "
               "the conversion's buffer holds the whole tile at once: 64 x 64 x 4 B = 16 KB "
               "per program, conflict-free. Two 64 x 32 halves (a `tl.static_range(2)` loop "
               "over the columns) reuse one 8 KB buffer: the same wavefronts, two more "
               "barriers, half the shared memory.",
               HALVES)),
    Exercise(
        name="transpose_fp16", lesson=5, title="An fp16 transpose: 2-byte elements and ldmatrix",
        task="out = x.T for a row-major fp16 M x N x; program (pid_m, pid_n) moves the "
             "BM x BN = 32 x 64 tile at (pid_m * BM, pid_n * BN), coalesced, with as few "
             "barriers as the solution.",
        params=("x_ptr", "out_ptr", "M", "N", "BM", "BN"),
        stub=TRANSPOSE_STUB.format(
            name="transpose_fp16",
            todo="as transpose_wide, for fp16 elements: read the shared-memory table (which "
                 "instructions move the tile, how many bytes per lane) and count the barriers"),
        solution=transpose_fp16, slow=transpose_fp16_halves, slow_advice=BARRIERS,
        make=_make_transpose(np.float16, 32, 64), sizes=((50, 90), (64, 128), (256, 512)),
        hints=("Two fp16 elements share one 4-byte bank word; the conversion's plan stores "
               "8 of them (16 bytes) per lane and reads them back transposed with ldmatrix.",
               "The whole 32 x 64 fp16 tile needs 4 KB of shared memory: small enough to move "
               "in one conversion (one barrier before its loads). Cutting it in halves as in "
               "transpose_wide saves 2 KB and costs two more barriers.",
               WHOLE)),
    Exercise(
        name="matmul_nt", lesson=5,
        title="c = a @ b.T in exact fp32: an operand through shared memory",
        task="c = a @ b.T for row-major fp32 a (M x K) and b (N x K), exact fp32 products "
             "(tl.dot(..., input_precision=\"ieee\"): no tf32); program (pid_m, pid_n) computes "
             "a BM x BN tile of c (BM = BN = BK = 32).",
        params=("a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "BM", "BN", "BK"),
        stub='''@wb.jit
def matmul_nt(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
              BK: tl.constexpr):
    # TODO: a K loop; load a (BM x BK) tile of a and a (BN x BK) tile of b, and
    # tl.dot(a, tl.trans(b), acc, input_precision="ieee"); check the shared-memory table
    pass
''',
        solution=matmul_nt, slow=matmul_nt_half_slabs, slow_advice=BARRIERS,
        make=_make_matmul_nt, sizes=((40, 24, 50), (64, 96, 128), (128, 64, 128)),
        hints=("b's rows are K-contiguous; tl.trans gives the dot its (k, n) view without "
               "moving data in memory, but the dot's operand layout still comes through "
               "shared memory.",
               "With exact fp32 the dot runs on FMAs and each K step converts both operand "
               "slabs through shared memory: a store, a barrier, a load. Slabs of BK = 32 "
               "columns need half the K steps of 16-column ones, so half the barriers, for "
               "the same wavefronts per program (the price: more registers per thread).",
               "for k in range(0, K, BK):\n    rk = k + tl.arange(0, BK)\n"
               "    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :], mask=..., other=0.0)\n"
               "    b = tl.load(b_ptr + rn[:, None] * K + rk[None, :], mask=..., other=0.0)\n"
               "    acc = tl.dot(a, tl.trans(b), acc, input_precision=\"ieee\")")),
)
