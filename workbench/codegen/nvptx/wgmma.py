"""``ttng.warp_group_dot``: Hopper ``wgmma`` (MMA v3), B in shared memory, A in shared memory
or in registers.

A warp group (4 consecutive warps, the first one's index a multiple of 4) issues
``wgmma.mma_async.sync.aligned.m64nNk16.f32.{f16,bf16}.{f16,bf16}``, for 8-bit floats
``wgmma.mma_async.sync.aligned.m64nNk32.f32.{e4m3,e5m2}.{e4m3,e5m2}`` and for fp32 inputs with
``inputPrecision = tf32`` ``wgmma.mma_async.sync.aligned.m64nNk8.f32.tf32.tf32`` (PTX ISA
9.7.15.5.2; fp8 and tf32: K-major operands only, no imm-trans operands): D (64 x N, fp32,
registers) += A (64 x K) * B (K x N) with K = 32 bytes of elements (16, 32 for fp8, 8 for
tf32), A and B read by the tensor cores from
shared memory through 64-bit *matrix descriptors* (PTX ISA 9.7.15.5.1, "Matrix descriptor
format")::

    bits  0-13  start address >> 4 (shared-window byte address)
    bits 16-29  leading dimension byte offset >> 4
    bits 32-45  stride dimension byte offset >> 4
    bits 62-63  swizzle mode: 0 none, 1 = 128-byte, 2 = 64-byte, 3 = 32-byte

The operand buffers are ``#ttg.nvmma_shared``: 8-row atoms of ``S`` = 32/64/128 bytes per row,
16-byte chunks XOR-ed by the row within the atom (the hardware's swizzle of address bits 4-6
by bits 7-9, hence 1024-byte aligned buffers), atoms stacked along the rows, then column
blocks of ``S`` bytes (:func:`workbench.codegen.nvptx.smem_access.nvmma_offset_py`). With ``R`` the
buffer's row count and ``eb`` the element bytes:

* **K-major** (K is the contiguous dim; ``imm-trans`` 0): the instruction's 16 K elements lie
  in one atom row; start = block of K + ``mn * S + (k % TC) * eb``; stride byte offset (between
  8-row groups along M/N) ``8 * S``; leading byte offset unused for swizzled K-major layouts
  (encoded 1, as CUTLASS does).
* **MN-major** (M or N contiguous; ``imm-trans`` 1, 16-bit types only): start =
  ``(mn / TC) * R * S + k * S``; leading byte offset = ``R * S`` (next ``S``-byte column block
  along M/N), stride byte offset = ``8 * S`` (next 8 K rows). CUTLASS ``make_gmma_desc``'s
  canonical MN-major layouts.

Operand A may instead be a register tensor in ``#ttg.dot_op<{opIdx = 0, parent = #mma,
kWidth = 2}>`` (Triton 3.6 ``AccelerateMatmul.cpp`` keeps A in registers when it does not come
from a load, e.g. attention's ``P``): four 32-bit registers per instruction, laid out as the
``mma.m16n8k16`` A fragment in each warp of the group, and the instruction takes only
``imm-trans-b`` (PTX ISA 9.7.15.5.2, the ``wgmma.mma_async`` form with ``a`` in registers).

Accumulator: the ``#ttg.nvidia_mma<{versionMajor = 3, warpsPerCTA = [wm, wn], instrShape =
[16, N, 16]}>`` registers; register ``i`` of one wgmma is row ``16 * (warp % 4) + lane / 4 +
8 * ((i / 2) % 2)``, column ``8 * (i / 4) + 2 * (lane % 4) + i % 2`` (PTX ISA 9.7.15.5.1.1
"Matrix fragments for wgmma.m64nNk16", the m16n8 C fragment repeated along N), which is
:func:`workbench.layouts.convert.mma_to_linear`'s v3 tile, so each register's coordinate says
which instruction (M/N repetition) and slot it is.

Each dot: ``wgmma.fence.sync.aligned`` (the accumulator registers were written by other
instructions), one wgmma per (M repetition, N repetition, K step of 16), K innermost and
chained through the accumulator, then ``wgmma.commit_group.sync.aligned``; a synchronous dot
(``isAsync = false``) then waits with ``wgmma.wait_group.sync.aligned 0``; an asynchronous one
leaves the group in flight for a later ``ttng.warp_group_dot_wait {pendings}``
(:func:`lower_wait`). Waits pass the accumulator registers through inline asm so that no use
of them is scheduled before the wait.
"""
from __future__ import annotations

from llvmlite import ir

from ...errors import UnsupportedError
from ...ir.types import MemDescType, TensorType
from ...layouts.encodings import MmaLayout, NVMMASharedLayout
from .elementwise import fusion_flags
from .smem_access import shared_address
from .types import F16, F32, I8, I16, I32, I64, byte_size
from .wgmma_asm import asm, pack_f16, unpack_f16, wait, wgmma_asm

SWIZZLE_MODE = {0: 0, 128: 1, 64: 2, 32: 3}


def matrix_descriptor(address: int, leading_byte_offset: int, stride_byte_offset: int,
                      swizzle_bytes: int) -> int:
    """The 64-bit wgmma shared-memory matrix descriptor (PTX ISA 9.7.15.5.1): ``address`` >> 4
    in bits 0-13, ``leading_byte_offset`` >> 4 in bits 16-29, ``stride_byte_offset`` >> 4 in
    bits 32-45, swizzle mode (1: 128 B, 2: 64 B, 3: 32 B, 0: none) in bits 62-63; base
    offset (bits 49-51) 0. Byte quantities must be multiples of 16; raises ValueError."""
    for name, v in (("address", address), ("leading byte offset", leading_byte_offset),
                    ("stride byte offset", stride_byte_offset)):
        if v % 16 or v < 0 or (v >> 4) > 0x3FFF:
            raise ValueError(f"{name} {v} must be a multiple of 16 below 256 KiB")
    if swizzle_bytes not in SWIZZLE_MODE:
        raise ValueError(f"swizzle {swizzle_bytes} bytes: use 0, 32, 64 or 128")
    return ((address >> 4) | ((leading_byte_offset >> 4) << 16) |
            ((stride_byte_offset >> 4) << 32) | (SWIZZLE_MODE[swizzle_bytes] << 62))


class OperandGeometry:
    """Where wgmma finds one operand in its ``#ttg.nvmma_shared`` buffer of ``shape``
    (A: M x K, ``op_idx`` 0; B: K x N, ``op_idx`` 1): ``k_major``, ``trans`` (the
    instruction's imm-trans), ``lbo``/``sbo`` (bytes), :meth:`offset` (byte offset of the
    8-row-aligned element (mn, k)) and :meth:`origin` (the same for a warp group's run-time
    M/N origin)."""

    def __init__(self, enc: NVMMASharedLayout, shape, op_idx: int, elem_bytes: int):
        if not isinstance(enc, NVMMASharedLayout) or not enc.swizzling_byte_width:
            raise UnsupportedError(f"wgmma operands need a swizzled #ttg.nvmma_shared buffer, "
                                   f"got {enc}")
        k_dim = 1 if op_idx == 0 else 0
        contig = 0 if enc.transposed else 1
        self.swizzle = s = enc.swizzling_byte_width
        self.rows = int(shape[1 - contig])
        self.tc = s // elem_bytes
        self.eb = elem_bytes
        self.k_major = contig == k_dim
        self.trans = 0 if self.k_major else 1
        self.sbo = 8 * s
        self.lbo = 16 if self.k_major else self.rows * s

    def offset(self, mn: int, k: int) -> int:
        """Byte offset of the wgmma tile whose first element is (mn, k) (mn a multiple of 8,
        k of 16; MN-major: mn a multiple of the atom's ``TC`` columns)."""
        s, tc = self.swizzle, self.tc
        if self.k_major:
            return (k // tc) * self.rows * s + mn * s + (k % tc) * self.eb
        return (mn // tc) * self.rows * s + k * s + (mn % tc) * self.eb

    def origin(self, kl, mn):
        """Byte offset (i32) of the run-time M/N index ``mn`` (i32, a multiple of 8; MN-major:
        it may fall inside a swizzle atom's row, e.g. the second warp group's 32 columns of a
        128-byte atom: the descriptor then starts there)."""
        b = kl.b
        if self.k_major:
            return b.mul(mn, I32(self.swizzle))
        block = b.mul(b.udiv(mn, I32(self.tc)), I32(self.rows * self.swizzle))
        return b.add(block, b.mul(b.urem(mn, I32(self.tc)), I32(self.eb)))

    def high_bits(self) -> int:
        """The descriptor without its address field."""
        return matrix_descriptor(0, self.lbo, self.sbo, self.swizzle)


def _groups(kl, c_t, enc: MmaLayout):
    """``{(rep_m, rep_n): [register index per wgmma slot]}`` of the accumulator."""
    wm, wn = enc.warps_per_cta
    n_in = enc.instr_shape[1]
    tl = kl.layout(c_t)
    groups: dict = {}
    for r, (m, n) in enumerate(tl.regs):
        key = (m // (16 * wm), n // (n_in * wn))
        slot = ((n % n_in) // 8) * 4 + ((m % 16) // 8) * 2 + n % 2
        groups.setdefault(key, {})
        if slot in groups[key]:
            raise UnsupportedError("ttng.warp_group_dot: the accumulator layout repeats "
                                   "elements; the tile must fill the warp groups")
        groups[key][slot] = r
    out = {}
    for key, d in groups.items():
        if sorted(d) != list(range(n_in // 2)):
            raise UnsupportedError("ttng.warp_group_dot: accumulator registers do not form "
                                   f"whole m64n{n_in} fragments")
        out[key] = [d[i] for i in range(n_in // 2)]
    return out


def _desc_base(kl, mem_v, geo: OperandGeometry, mn_origin):
    """The i64 address field (bits 0-13) of the operand tile's descriptor at the warp
    group's M/N origin ``mn_origin`` (i32) and K = 0. Each instruction's descriptor is this
    plus one constant, ``geo.high_bits() + (offset >> 4)`` (:func:`_descriptor`), as Triton
    builds them: ptxas then derives each from the previous with one 64-bit uniform add."""
    b = kl.b
    base = kl.smem_offsets.get(id(mem_v))
    if base is None:
        raise UnsupportedError("ttng.warp_group_dot of a buffer not made by ttg.local_alloc")
    addr = shared_address(kl, base, geo.origin(kl, mn_origin))
    return b.zext(b.and_(b.lshr(addr, I32(4)), I32(0x3FFF)), I64)


def _descriptor(kl, field, geo: OperandGeometry, offset: int):
    """The i64 descriptor of the wgmma tile ``offset`` bytes after the tile whose address
    field is ``field`` (:func:`_desc_base`)."""
    return kl.b.add(field, I64(geo.high_bits() + (offset >> 4)))


def _register_a(kl, a_v, wm: int) -> dict:
    """``{(M repetition, K step): [4 x i32]}``: operand A in ``#ttg.dot_op<{opIdx = 0,
    parent = #mma (v3), kWidth = w}>`` registers (``w`` = 32 / bits: 2 for 16-bit, 4 for
    fp8) packed as wgmma's register fragment (PTX ISA 9.7.15.5.1.1, "Register fragment for
    matrix A": per warp the m16n8k16 A fragment, or the m16n8k32 one for 8-bit types): word
    ``j`` holds row ``g + 8 * (j % 2)``, columns ``w * t + 4 * w * (j // 2)`` to ``+ w - 1``,
    with ``g = lane / 4``, ``t = lane % 4`` and rows offset by 16 per warp of the warp group;
    one K step is ``8 * w`` columns."""
    a_t = a_v.type
    kw = getattr(a_t.encoding, "k_width", 0)
    name = getattr(a_t.element, "name", "")
    want = 4 // byte_size(a_t.element)
    if kw != want:
        raise UnsupportedError(f"wgmma's register operand A needs kWidth = {want}, got "
                               f"{a_t.encoding}")
    regs = kl.get(a_v)
    elem = {"f16": F16, "f32": F32}.get(name, I16 if kw == 2 else I8)  # bf16: i16; fp8: i8
    kstep = 8 * kw
    frags: dict = {}
    for r, (m, k) in enumerate(kl.layout(a_t).regs):
        key = (m // (16 * wm), k // kstep)
        j = ((k % kstep) // (4 * kw)) * 2 + (m % 16) // 8
        frags.setdefault(key, {}).setdefault(j, {})[k % kw] = regs[r]
    b = kl.b
    out = {}
    vec_t = ir.VectorType(elem, kw)
    for key, words in frags.items():
        packed = []
        for j in range(4):
            v = ir.Constant(vec_t, None)
            for e in range(kw):
                v = b.insert_element(v, words[j][e], I32(e))
            packed.append(b.bitcast(v, I32))
        out[key] = packed
    return out


def _operand_a(kl, op, a_v, wm: int, wg_m, k_in: int = 16):
    """How the wgmma instructions take operand A: ``(number of asm operands, their
    constraints, their LLVM types, the imm-trans-a text ("" for registers), args(rm, ks))``
    with ``args`` the operands of M repetition ``rm`` and K step ``ks`` (of ``k_in``
    elements): four packed registers (:func:`_register_a`) or one shared-memory
    descriptor."""
    a_t = a_v.type
    if isinstance(a_t, TensorType):
        words = _register_a(kl, a_v, wm)

        def reg_args(rm, ks):
            try:
                return words[(rm, ks)]
            except KeyError:
                raise UnsupportedError("ttng.warp_group_dot: the register operand A does not "
                                       "match the accumulator's layout", op.loc) from None
        return 4, ["r"] * 4, [I32] * 4, "", reg_args
    ga = OperandGeometry(a_t.encoding, a_t.shape, 0, byte_size(a_t.element))
    da = _desc_base(kl, a_v, ga, wg_m)

    if ga.trans and k_in != 16:
        raise UnsupportedError("wgmma reads an 8-bit or tf32 operand A K-major only (its "
                               "shared buffer must have K contiguous)", op.loc)

    def desc_args(rm, ks):
        return [_descriptor(kl, da, ga, ga.offset(rm * 16 * wm, ks * k_in))]
    return 1, ["l"], [I64], f"{ga.trans}, " if k_in == 16 else "", desc_args


def _warp_group_origin(kl, enc: MmaLayout, m: int, n: int):
    """(row, column) of the first accumulator element of this warp's group, i32. Warps run
    along M first (warp ``w``: M index ``w % wm``, N index ``w // wm``); a warp group covers
    64 rows and ``instrShape[1]`` columns. When the warps cover more than the tile (attention's
    ``Q @ K^T`` of 64 rows on 8 warps, ``warpsPerCTA = [8, 1]``) the origin wraps around the
    tile: the extra warp groups compute the same rows again, as the layout's broadcast warp
    bases say (Triton 3.6 ``NvidiaMmaEncodingAttr::toLinearLayout``)."""
    b = kl.b
    wm, _ = enc.warps_per_cta
    warp = getattr(kl, "warp_uniform", kl.warp)
    wg_m = b.mul(b.udiv(b.urem(warp, I32(wm)), I32(4)), I32(64))
    wg_n = b.mul(b.udiv(warp, I32(wm)), I32(enc.instr_shape[1]))
    if 16 * wm > m:
        wg_m = b.urem(wg_m, I32(m))
    if enc.instr_shape[1] * enc.warps_per_cta[1] > n:
        wg_n = b.urem(wg_n, I32(n))
    return wg_m, wg_n


#: wgmma's operand type names of the IR's float types (PTX ISA 9.7.15.5.2)
_WGMMA_TYPE = {"f16": "f16", "bf16": "bf16", "f8E4M3FN": "e4m3", "f8E5M2": "e5m2",
               "f32": "tf32"}


def _is_zero(v) -> bool:
    d = v.defining_op
    return d is not None and d.name == "arith.constant" and d.attributes.get("value") in (0, 0.0)


def lower_warp_group_dot(kl, op) -> None:
    """``ttng.warp_group_dot %a, %b, %c {isAsync, maxNumImpreciseAcc}`` (module docstring).

    fp8 operands (e4m3/e5m2): ``wgmma...k32.f32.e4m3.e5m2`` with no imm-trans operands (both
    operands K-major); with an fp16 accumulator (``out_dtype = tl.float16``)
    ``wgmma...k32.f16.e4m3.e5m2``, each 32-bit accumulator register holding the two fp16
    elements of adjacent columns that the f32 form keeps in two (PTX ISA 9.7.15.5.1.1, the
    D fragments). With an fp32 accumulator and ``maxNumImpreciseAcc`` <= K (Triton's
    ``needsPartialAccumulator``), each run of wgmmas covering ``maxNumImpreciseAcc`` K
    elements (or the last run) accumulates into a fresh partial sum (scale-d 0 for its first
    instruction), which ``fadd`` (PTX ``add.f32``) then adds into the accumulator: one add
    per accumulator register per run, ``BM * BN / threads * ceil(K / maxNumImpreciseAcc)``
    adds per thread and dot (Triton 3.6 ``WGMMA.cpp``, ``convertDot``). A dot whose
    accumulator is a zero constant starts without it (scale-d 0 on its first instruction, no
    zeros moved into the accumulator registers; for fp8 no first add), as Triton's: with an
    earlier wgmma group still in flight (attention's ``P @ V``), such moves would make ptxas
    serialise the wgmma (C7515).
    """
    a_v, b_v, c_v = op.operands
    a_t, b_t, c_t = (v.type for v in op.operands)
    enc = c_t.encoding
    if not isinstance(enc, MmaLayout) or enc.version_major != 3:
        raise UnsupportedError("ttng.warp_group_dot needs an MMA v3 result layout", op.loc)
    name = _WGMMA_TYPE.get(getattr(a_t.element, "name", ""))
    name_b = _WGMMA_TYPE.get(getattr(b_t.element, "name", ""))
    fp8 = name in ("e4m3", "e5m2")
    acc_name = getattr(c_t.element, "name", "")
    f16_acc = fp8 and acc_name == "f16"
    prec = op.attributes.get("inputPrecision", "tf32") or "tf32"
    if name is None or (acc_name != "f32" and not f16_acc) or \
            (name_b != name and not (fp8 and name_b in ("e4m3", "e5m2"))) or \
            (name == "tf32" and prec != "tf32"):
        raise UnsupportedError(f"wgmma is emitted for f16/bf16/e4m3/e5m2/tf32 -> f32 and "
                               f"e4m3/e5m2 -> f16 only, got {a_t.element} x {b_t.element} -> "
                               f"{c_t.element} (inputPrecision {prec})", op.loc)
    eb = byte_size(a_t.element)
    wm, wn = enc.warps_per_cta
    n_in = enc.instr_shape[1]
    k_in = 32 // eb  # 32 bytes of K per instruction: k16 (16-bit), k32 (fp8), k8 (tf32)
    K = int(a_t.shape[1])
    gb = OperandGeometry(b_t.encoding, b_t.shape, 1, eb)
    if k_in != 16 and gb.trans:
        raise UnsupportedError("wgmma reads an 8-bit or tf32 operand B K-major only (its "
                               "shared buffer must be transposed = true: K contiguous)", op.loc)
    b = kl.b
    C = kl.get(c_v)
    groups = _groups(kl, c_t, enc)
    if not gb.k_major and (n_in * wn) % gb.tc and len({k[1] for k in groups}) > 1:
        raise UnsupportedError(f"ttng.warp_group_dot: {wn} warp groups of N = {n_in} do not "
                               f"cover whole {gb.swizzle}-byte swizzle atoms of B", op.loc)
    wg_m, wg_n = _warp_group_origin(kl, enc, int(c_t.shape[0]), int(c_t.shape[1]))
    n_a, a_cons, a_tys, trans_a, a_args = _operand_a(kl, op, a_v, wm, wg_m, k_in)
    db = _desc_base(kl, b_v, gb, wg_n)
    asm(kl, "wgmma.fence.sync.aligned;", "~{memory}", [])
    n = n_in // 4 if f16_acc else n_in // 2
    acc_t = I32 if f16_acc else F32
    head = f"wgmma.mma_async.sync.aligned.m64n{n_in}k{k_in}.{acc_name}.{name}.{name_b}"
    tail = "" if k_in != 16 else f", {trans_a}{gb.trans}"  # imm-trans: 16-bit types only
    acc_asm = wgmma_asm(n, n_a, a_tys, a_cons, head, tail, True, acc_t)
    fresh_asm = wgmma_asm(n, n_a, a_tys, a_cons, head, tail, False, acc_t)
    limit = int(op.attributes.get("maxNumImpreciseAcc", 0) or 0)
    # Triton's needsPartialAccumulator: fp8 operands, fp32 accumulator, the limit within K
    partial = fp8 and not f16_acc and limit <= K
    zero_c = _is_zero(c_v)
    flags = fusion_flags(kl)  # add.f32 (add.rn.f32 without enable_fp_fusion), as Triton's

    def wgmma(acc, rm, ks, b_desc):
        if acc is None:
            res = b.call(fresh_asm, a_args(rm, ks) + [b_desc])
        else:
            res = b.call(acc_asm, acc + a_args(rm, ks) + [b_desc])
        return [b.extract_value(res, i) for i in range(n)]

    out = list(C)
    for (rm, rn), regs in sorted(groups.items()):
        d = None if zero_c else [C[r] for r in regs]
        if f16_acc and d is not None:
            d = [pack_f16(b, d[2 * j], d[2 * j + 1]) for j in range(n)]
        part, run = None, 0
        n0 = rn * n_in * wn
        for ks in range(K // k_in):
            b_desc = _descriptor(kl, db, gb, gb.offset(n0, ks * k_in))
            if not partial:
                d = wgmma(d, rm, ks, b_desc)
                continue
            part = wgmma(part, rm, ks, b_desc)
            run += k_in
            if run >= limit or ks == K // k_in - 1:  # add the partial sum in fp32
                d = part if d is None else [b.fadd(x, y, flags=flags)
                                            for x, y in zip(d, part, strict=True)]
                part, run = None, 0
        assert d is not None
        if f16_acc:
            d = [h for w in d for h in unpack_f16(b, w)]
        for r, v in zip(regs, d, strict=True):
            out[r] = v
    asm(kl, "wgmma.commit_group.sync.aligned;", "~{memory}", [])
    if not op.attributes.get("isAsync"):
        out = wait(kl, 0, out)
    kl.set(op.result, out)


def lower_wait(kl, op) -> None:
    """``ttng.warp_group_dot_wait %acc... {pendings}``: ``wgmma.wait_group.sync.aligned
    pendings``; the tensor results are the inputs' registers, read only after the wait. A
    shared-memory operand (listed so its buffer stays live until the wait) passes through
    as it is."""
    regs: list = []
    sizes: list = []
    for v in op.operands:
        r = [] if isinstance(v.type, MemDescType) else kl.get(v)
        regs.extend(r)
        sizes.append(len(r))
    if any(x.type not in (F32, I32, F16) for x in regs):
        raise UnsupportedError("ttng.warp_group_dot_wait passes f32/f16/i32 registers only",
                               op.loc)
    done = wait(kl, int(op.attributes.get("pendings", 0)), regs)
    i = 0
    for v, res, k in zip(op.operands, op.results, sizes, strict=True):
        if isinstance(v.type, MemDescType):
            kl.set(res, kl.get(v))
            continue
        kl.set(res, done[i:i + k])
        i += k


__all__ = [
    "OperandGeometry",
    "lower_wait",
    "lower_warp_group_dot",
    "matrix_descriptor",
]
