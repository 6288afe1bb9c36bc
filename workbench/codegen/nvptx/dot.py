"""``tt.dot``: tensor cores (``mma.sync``, MMA v2 layouts) or FMA (blocked layouts).

**MMA v2** (result ``#ttg.nvidia_mma<{versionMajor = 2}>``, operands ``#ttg.dot_op`` of it,
Triton's NvidiaMmaEncoding v2). Per warp the result tile is a grid of 16 x 8 instruction tiles; each
register's coordinate from the register bits alone says which tile and which fragment slot it
is (the lane and warp bits are the hardware's fragment convention, PTX ISA 9.7.14.5.8/.14
"Matrix fragments for mma.m16n8k16 / m16n8k8 / m16n8k32"):

* accumulator slot ``2 (row % 16 >= 8) + (col % 2)``;
* A register ``2 (k % Kin >= Kin/2) + (row % 16 >= 8)``, holding ``kWidth`` consecutive K;
* B register ``(k % Kin >= Kin/2)``.

One instruction per (batch index of a 3-D dot, M tile, N tile, K tile), K innermost (PTX ISA
9.7.14.5.14 mma):
``mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.{f16,bf16}.f32``,
``mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32`` (fp32 inputs with
``inputPrecision = tf32``; the raw fp32 registers are passed, as Triton 3.6 does: the tensor
core ignores their 13 low mantissa bits)
``mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16`` (fp16 inputs, ``out_dtype = float16``:
the accumulator is two f16x2 registers, slots 0-1 and 2-3) and
``mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32`` (int8; ``.satfinite`` as Triton's
``MMAv2.cpp`` emits it: an int32 sum that overflows is clamped to the int32 range, which with
int8 inputs takes K > 131072).

**FMA** (blocked parent; Triton's FMADotOpToLLVM): every thread holds whole rows of A and whole
columns of B for its result elements (``dot_op`` with a blocked parent) and computes
``c = fma(a[m, k], b[k, n], c)`` for k = 0..K-1 in order (batched 3-D dots: the same per
batch index, ``a[b, m, k]``, ``b[b, k, n]``); fp16/bf16 inputs are widened to f32,
integers multiply-add in the result's width.
"""
from __future__ import annotations

from llvmlite import ir

from ...errors import UnsupportedError
from ...ir.types import FloatType, IntType, TensorType
from ...layouts.encodings import DotOperandLayout, MmaLayout
from .elementwise import from_f32, to_f32
from .threads import thread_layout
from .types import F16, F32, I8, I16, I32, is_bf16, llvm_type


def lower_dot(kl, op) -> None:
    """Lower ``tt.dot a, b, c`` from the layouts of its operands."""
    a_t, b_t, c_t = (v.type for v in op.operands)
    enc = c_t.encoding
    if isinstance(enc, MmaLayout):
        if enc.version_major != 2:
            raise UnsupportedError("tt.dot with an MMA v3 (wgmma) layout is not supported; "
                                   "the accelerate-matmul pass emits v2", op.loc)
        return _lower_mma(kl, op)
    if not (isinstance(a_t.encoding, DotOperandLayout) and isinstance(b_t.encoding,
                                                                      DotOperandLayout)):
        raise UnsupportedError("tt.dot operands need #ttg.dot_op layouts", op.loc)
    return _lower_fma(kl, op)


# FMA ----------------------------------------------------------------------------------------
def _index(tl):
    idx = {}
    for i, c in enumerate(tl.regs):
        idx.setdefault(tuple(c), i)
    return idx


def _lower_fma(kl, op) -> None:
    a_v, b_v, c_v = op.operands
    a_t, b_t, c_t = (v.type for v in op.operands)
    K = a_t.shape[-1]
    A, B, C = kl.get(a_v), kl.get(b_v), kl.get(c_v)
    ta, tb, tc = kl.layout(a_t), kl.layout(b_t), kl.layout(c_t)
    ia, ib = _index(ta), _index(tb)
    in_t, out_t = a_t.element, c_t.element
    in_ts = {"a": a_t.element, "b": b_t.element}  # two fp8 types may meet
    b = kl.b
    is_int = isinstance(out_t, IntType)
    widen = {}

    def val(regs, i, cache_key):
        key = (cache_key, i)
        if key not in widen:
            x = regs[i]
            if is_int:
                x = b.sext(x, llvm_type(out_t)) if x.type.width < llvm_type(out_t).width else x
            elif isinstance(in_t, IntType):
                x = b.sitofp(x, F32 if acc_f32 else ir.DoubleType())
            elif in_ts[cache_key].name not in ("f32", "f64"):
                x = to_f32(b, x, in_ts[cache_key])
            widen[key] = x
        return widen[key]

    acc_f32 = not is_int and out_t.name != "f64"
    fma = kl.intrinsic("llvm.fma.f64" if (not is_int and out_t.name == "f64") else
                       "llvm.fma.f32", F32 if acc_f32 else ir.DoubleType(),
                       [F32 if acc_f32 else ir.DoubleType()] * 3) if not is_int else None
    out: list = []
    done: dict = {}
    for r, coord in enumerate(tc.regs):
        coord = tuple(coord)
        if coord in done:
            out.append(out[done[coord]])
            continue
        done[coord] = r
        batch, (m, n) = coord[:-2], coord[-2:]
        acc = C[r]
        if acc_f32:
            acc = to_f32(b, acc, out_t)
        for k in range(K):
            try:
                x = val(A, ia[batch + (m, k)], "a")
                y = val(B, ib[batch + (k, n)], "b")
            except KeyError:
                raise UnsupportedError("tt.dot: the operand layouts do not give each thread "
                                       "the rows/columns of its results", op.loc) from None
            acc = b.add(b.mul(x, y), acc) if is_int else b.call(fma, [x, y, acc])
        out.append(from_f32(b, acc, out_t) if acc_f32 else acc)
    kl.set(op.result, out)


# MMA v2 --------------------------------------------------------------------------------------
def instr_for(in_t, out_t, precision: str) -> tuple[str, int]:
    """(PTX ``mma`` text without operands, Kin) for input/output element types.

    Raises UnsupportedError for types mma.sync does not take."""
    name = in_t.name if isinstance(in_t, FloatType) else f"i{in_t.width}"
    if name == "f16" and out_t == FloatType("f16"):
        return "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16", 16
    if name in ("f16", "bf16") and out_t == FloatType("f32"):
        return f"mma.sync.aligned.m16n8k16.row.col.f32.{name}.{name}.f32", 16
    if name == "f32" and out_t == FloatType("f32") and precision == "tf32":
        return "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", 8
    if name == "i8" and out_t == IntType(32):
        return "mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32", 32
    raise UnsupportedError(f"mma.sync does not take {name} inputs with {out_t} results "
                           f"(inputPrecision {precision})")


def _pack_word(kl, elems, in_t):
    """Pack kWidth elements (one 32-bit fragment register) into an i32."""
    b = kl.b
    if len(elems) == 1:
        x = elems[0]
        return b.bitcast(x, I32)
    et = F16 if (isinstance(in_t, FloatType) and in_t.name == "f16") else (
        I16 if is_bf16(in_t) else I8)
    v = ir.Constant(ir.VectorType(et, len(elems)), None)
    for i, e in enumerate(elems):
        v = b.insert_element(v, e, I32(i))
    return b.bitcast(v, I32)


def _mma_asm(text: str, out_t):
    """(inline asm, accumulator registers) of one mma.sync: four f32/s32 accumulators, or two
    f16x2 words for an fp16 accumulator (PTX ISA 9.7.14.5.8, m16n8k16 C/D fragments)."""
    if out_t == FloatType("f16"):
        ct, cc, n = I32, "r", 2
    else:
        ct, cc, n = (F32, "f", 4) if isinstance(out_t, FloatType) else (I32, "r", 4)
    d = ", ".join(f"${i}" for i in range(n))
    c = ", ".join(f"${i}" for i in range(n + 6, 2 * n + 6))
    cons = ",".join([f"={cc}"] * n + ["r"] * 6 + [str(i) for i in range(n)])
    fty = ir.FunctionType(ir.LiteralStructType([ct] * n), [I32] * 6 + [ct] * n)
    return ir.InlineAsm(fty, f"{text} {{{d}}}, {{${n}, ${n + 1}, ${n + 2}, ${n + 3}}}, "
                             f"{{${n + 4}, ${n + 5}}}, {{{c}}};", cons), n


def _pack_acc(b, vals, n_acc):
    """Accumulator slots 0-3 as the instruction's registers (f16 pairs packed into i32)."""
    if n_acc == 4:
        return vals
    words = []
    for lo, hi in ((0, 1), (2, 3)):
        v = ir.Constant(ir.VectorType(F16, 2), None)
        v = b.insert_element(b.insert_element(v, vals[lo], I32(0)), vals[hi], I32(1))
        words.append(b.bitcast(v, I32))
    return words


def _unpack_acc(b, regs, n_acc):
    if n_acc == 4:
        return regs
    out = []
    for w in regs:
        v = b.bitcast(w, ir.VectorType(F16, 2))
        out += [b.extract_element(v, I32(0)), b.extract_element(v, I32(1))]
    return out


def _virtual_layouts(a_t, b_t, c_t):
    """Thread layouts of A, B and C over the tile padded to the warps' instruction tiles
    (M to ``16 * warpsPerCTA[0]``, N to ``8 * warpsPerCTA[1]``).

    A tile smaller than that (a 2 x 4 dot) keeps every register of the full layout, its
    coordinates wrapped into the tile (the linear layout's bases past the shape are zero:
    rows 2-15 replicate rows 0-1, as in Triton 3.6, whose MMA v2 runs ``mma.sync`` on such
    tiles). Register ``r`` of the real layout is register ``r`` of the padded one, so the
    padded coordinates say which instruction and fragment slot each register feeds; the
    replicated rows and columns compute copies that no one reads."""
    wm, wn = c_t.encoding.warps_per_cta[-2:]
    *batch, m, n = c_t.shape
    pm, pn = max(m, 16 * wm), max(n, 8 * wn)
    if (pm, pn) == (m, n):
        return thread_layout(a_t), thread_layout(b_t), thread_layout(c_t)
    k, bt = a_t.shape[-1], tuple(batch)
    return (thread_layout(TensorType(bt + (pm, k), a_t.element, a_t.encoding)),
            thread_layout(TensorType(bt + (k, pn), b_t.element, b_t.encoding)),
            thread_layout(TensorType(bt + (pm, pn), c_t.element, c_t.encoding)))


def _lower_mma(kl, op) -> None:
    a_v, b_v, c_v = op.operands
    a_t, b_t, c_t = (v.type for v in op.operands)
    in_t, out_t = a_t.element, c_t.element
    text, kin = instr_for(in_t, out_t, op.attributes.get("inputPrecision", "tf32") or "tf32")
    kw = a_t.encoding.k_width
    A, B, C = kl.get(a_v), kl.get(b_v), kl.get(c_v)
    ta, tb, tc = _virtual_layouts(a_t, b_t, c_t)
    b = kl.b
    a_frag: dict = {}
    b_frag: dict = {}
    c_frag: dict = {}
    for r, (*bt, m, k) in enumerate(ta.regs):  # bt: the batch index of a 3-D dot, or none
        key = (*bt, m // 16, k // kin)
        j = ((k % kin) // (kin // 2)) * 2 + (m % 16) // 8
        a_frag.setdefault(key, {}).setdefault(j, {})[k % kw] = A[r]
    for r, (*bt, k, n) in enumerate(tb.regs):
        key = (*bt, k // kin, n // 8)
        j = (k % kin) // (kin // 2)
        b_frag.setdefault(key, {}).setdefault(j, {})[k % kw] = B[r]
    slots: dict = {}
    for r, (*bt, m, n) in enumerate(tc.regs):
        key = (*bt, m // 16, n // 8)
        s = ((m % 16) // 8) * 2 + n % 2
        c_frag.setdefault(key, {}).setdefault(s, C[r])
        slots.setdefault(key, {}).setdefault(s, []).append(r)
    a_words = {key: [_pack_word(kl, [d[j][e] for e in range(kw)], in_t) for j in range(4)]
               for key, d in a_frag.items()}
    b_words = {key: [_pack_word(kl, [d[j][e] for e in range(kw)], in_t) for j in range(2)]
               for key, d in b_frag.items()}
    n_k = a_t.shape[-1] // kin
    asm, n_acc = _mma_asm(text, out_t)
    out = [None] * tc.num_regs
    for (*bt, tm, tn), d in c_frag.items():
        acc = _pack_acc(b, [d[s] for s in range(4)], n_acc)
        for tk in range(n_k):
            try:
                args = a_words[(*bt, tm, tk)] + b_words[(*bt, tk, tn)] + acc
            except KeyError:
                raise UnsupportedError("tt.dot: operand layouts do not match the MMA result "
                                       "layout", op.loc) from None
            res = b.call(asm, args)
            acc = [b.extract_value(res, i) for i in range(n_acc)]
        acc = _unpack_acc(b, acc, n_acc)
        for s, regs in slots[(*bt, tm, tn)].items():
            for r in regs:
                out[r] = acc[s]
    kl.set(op.result, out)


__all__ = ["lower_dot", "instr_for"]
