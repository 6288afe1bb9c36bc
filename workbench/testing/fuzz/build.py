"""A whole program from a seed, its kernel source, its inputs and its numpy reference."""
from __future__ import annotations

import numpy as np

from . import generate as gm
from . import makers as mk
from . import ops
from . import types as ft
from .program import Info, Input, Program, Stmt

MAKERS = {"binop": gm.make_binop, "cmp": gm.make_cmp, "where": gm.make_where,
          "bitop": gm.make_bitop, "shift": gm.make_shift, "divmod": gm.make_divmod,
          "minmax": gm.make_minmax, "unary": gm.make_unary, "cast": gm.make_cast,
          "math": gm.make_math, "reduce": mk.make_reduce, "scan": mk.make_scan,
          "trans": mk.make_trans, "reshape": mk.make_reshape, "joinsplit": mk.make_joinsplit,
          "dot": mk.make_dot,
          "loop": mk.make_loop, "ifelse": mk.make_ifelse, "atomic": mk.make_atomic}


def _input(rng) -> Input:
    d = str(rng.choice(gm.INPUT_DTYPES))
    if ft.is_float(d):
        return Input(d, float(rng.choice([0.0, 1.0, -2.0, 0.5])), -32, 32, q=2)
    lo, hi = ft.int_range(d)
    if rng.random() < 0.5:
        lo, hi = max(lo, -20), min(hi, 40)
    other = int(rng.integers(0, 4)) if not ft.signed(d) else int(rng.integers(-3, 4))
    return Input(d, other, lo, hi)


#: seeds below this make version-1 programs (no 8-bit float casts, fp16/int8 dots without an
#: accumulator, atomic_add only), so the regression seeds and the recorded campaigns (seeds
#: 0..420,000) keep the programs they found bugs in
LEGACY_SEEDS = 500_000


def generate(seed: int, n_stmts: int | None = None) -> Program:
    """The program of ``seed``: 1-D or 2-D tiles, 1-3 inputs, about 3-10 statements."""
    rng = np.random.default_rng(seed)
    two_d = bool(rng.random() < 0.6)
    BM = int(rng.choice([16, 32] if two_d else [16, 32, 64, 128]))
    BN = int(rng.choice([16, 32])) if two_d else 1
    if two_d and rng.random() < 0.4:
        BN = BM
    M = int(rng.integers(1, 2 * BM + 1))
    N = int(rng.integers(1, 2 * BN + 1)) if two_d else 1
    inputs = [_input(rng) for _ in range(int(rng.integers(1, 4)))]
    version = 1 if 0 <= seed < LEGACY_SEEDS else 2
    if version >= 2:  # some non-negative float inputs (casts to unsigned types need them)
        side = np.random.default_rng([seed, 0x1A])
        for inp in inputs:
            if ft.is_float(inp.dtype) and side.random() < 0.35:
                inp.lo, inp.other = 0, abs(inp.other)
    prog = Program(seed, two_d, BM, BN, M, N, inputs, [], "", "fp32",
                   it=int(rng.integers(0, 4)), flag=int(rng.integers(-1, 2)),
                   BK=int(rng.choice([16, 32])), stride_extra=int(rng.integers(0, 4)),
                   version=version)
    g = gm.Gen(rng, prog)
    for i, inp in enumerate(inputs):
        v = Info(inp.dtype, min(inp.lo / 2**inp.q, inp.other), max(inp.hi / 2**inp.q, inp.other),
                 True, inp.q)
        _add(g, Stmt("load", "", (), {"inp": i, "other": inp.other}, v))
    target = n_stmts if n_stmts is not None else int(rng.integers(3, 11))
    tries = 0
    while sum(s.kind != "load" for s in prog.stmts) < target and tries < 200:
        tries += 1
        s = MAKERS[str(rng.choice(gm.KINDS if prog.version < 2 else gm.KINDS_V2))](g)
        if s is not None:
            _add(g, s)
    last = [s for s in prog.stmts if s.kind != "atomic"][-1]
    set_result(prog, last.out)
    return prog


def _add(g: gm.Gen, s: Stmt) -> None:
    s.out = f"v{len(g.prog.stmts)}"
    g.prog.stmts.append(s)
    if s.kind != "atomic":
        assert s.info is not None
        g.values.append((s.out, s.info))


def set_result(prog: Program, name: str) -> None:
    """Store value ``name`` (bf16 and 8-bit floats stored as fp32, bool as int8)."""
    d = prog.info(name).dtype
    prog.result = name
    prog.out_dtype = "fp32" if ft.is_fp8(d) else {"bf16": "fp32", "i1": "i8"}.get(d, d)


def source(prog: Program) -> str:
    """The ``@jit`` kernel of ``prog`` as Python source (a module importing wb and tl)."""
    params = [f"x{i}_ptr" for i in range(len(prog.inputs))] + ["out_ptr"]
    if prog.uses("dot"):
        params += ["da_ptr", "db_ptr"]
    if prog.uses("atomic"):
        params += ["atom_ptr"]
    params += ["M", "N", "stride", "it", "flag", "BM: tl.constexpr", "BN: tl.constexpr",
               "BK: tl.constexpr"]
    body = ["pid_m = tl.program_id(0)"]
    if prog.two_d:
        body += ["pid_n = tl.program_id(1)", "rm = pid_m * BM + tl.arange(0, BM)",
                 "rn = pid_n * BN + tl.arange(0, BN)",
                 "mask = (rm[:, None] < M) & (rn[None, :] < N)"]
    else:
        body += ["offs = pid_m * BM + tl.arange(0, BM)", "mask = offs < M"]
    for s in prog.stmts:
        body += ops.emit(s, prog)
    body.append(f"tl.store(out_ptr + {ops.index_text(prog)}, "
                f"{prog.result}.to({ft.TL_NAME[prog.out_dtype]}), mask=mask)")
    lines = ["import workbench as wb", "import workbench.language as tl", "", "",
             f"# fuzz program, seed {prog.seed}", "@wb.jit", f"def kern({', '.join(params)}):"]
    return "\n".join(lines + ["    " + b for b in body]) + "\n"


def grid(prog: Program) -> tuple:
    """The launch grid: (cdiv(M, BM),) or (cdiv(M, BM), cdiv(N, BN))."""
    gm_ = -(-prog.M // prog.BM)
    return (gm_, -(-prog.N // prog.BN)) if prog.two_d else (gm_,)


def stride(prog: Program) -> int:
    """Elements between rows (2-D, N plus padding) or between lanes (1-D, 1 or 2)."""
    return prog.N + prog.stride_extra if prog.two_d else 1 + prog.stride_extra % 2
