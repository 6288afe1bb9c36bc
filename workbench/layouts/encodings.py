"""Layout encodings with Triton's parameters and Triton's printed form.

Each encoding is a frozen, hashable dataclass whose fields are tuples of ints. ``str(enc)``
prints exactly what Triton 3.6 prints in TTGIR (``#ttg.blocked<{...}>``; the trivial CTA/CGA
sub-layout is omitted as Triton 3.6 does); :func:`workbench.layouts.parse.parse` reads it back.
Parameters and their meaning follow ``include/triton/Dialect/TritonGPU/IR/TritonGPUAttrDefs.td``
(Triton 3.6).

Lists passed to the constructors are converted to tuples, so ``BlockedLayout([4], [32], [4],
[0])`` works. Invalid parameters raise :class:`~workbench.layouts.errors.LayoutError` (a
``ValueError``) naming the parameter in Triton's spelling.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from math import prod
from typing import ClassVar, Optional, Union

from .errors import LayoutError
from .linear import LinearLayout, is_pow2

#: Number of threads in an NVIDIA warp; the only value the layouts accept.
WARP_SIZE = 32

AliasFn = Optional[Callable[[object], Optional[str]]]


def _as_ints(obj, name: str, param: str) -> tuple[int, ...]:
    try:
        vals = tuple(int(v) for v in obj)
    except TypeError:
        raise LayoutError(f"{param} must be a list of integers, got {obj!r}") from None
    for raw in obj:
        if isinstance(raw, bool) or (isinstance(raw, float) and raw != int(raw)):
            raise LayoutError(f"{param} must contain integers, got {raw!r}")
    return vals


def _set(obj, name: str, value) -> None:
    object.__setattr__(obj, name, value)


def _fmt(vals) -> str:
    return "[" + ", ".join(str(v) for v in vals) + "]"


def _check_pow2(vals, param: str) -> None:
    for v in vals:
        if not is_pow2(v):
            raise LayoutError(
                f"{param} = {_fmt(vals)}: every entry must be a power of two, got {v}")


def _check_order(order, rank: int, param: str = "order") -> None:
    if sorted(order) != list(range(rank)):
        raise LayoutError(
            f"{param} = {_fmt(order)} must be a permutation of 0..{rank - 1} (dims from fastest "
            f"to slowest varying)")


def _ref(enc, alias_of: AliasFn) -> str:
    if alias_of is not None:
        name = alias_of(enc)
        if name:
            return name if name.startswith("#") else "#" + name
    return enc.to_text(alias_of)


class Encoding:
    """Base of every encoding: ``to_text``, ``__str__`` and the alias name used by printers."""

    #: Base name of the alias a module printer gives this encoding (``#blocked``, ``#blocked1``
    #: ...), or None when Triton prints the encoding inline (slice, dot_op).
    alias_name: ClassVar[Optional[str]] = None
    #: True for register (distributed) layouts, False for shared-memory layouts.
    distributed: ClassVar[bool] = True

    def to_text(self, alias_of: AliasFn = None) -> str:  # pragma: no cover - abstract
        """Triton's textual form. ``alias_of(parent) -> "#name" | None`` names nested parents."""
        raise NotImplementedError

    @property
    def rank(self) -> Optional[int]:  # pragma: no cover - abstract
        """The rank of the tensors this encoding lays out (None: any rank)."""
        raise NotImplementedError

    def __str__(self) -> str:
        return self.to_text(None)


@dataclass(frozen=True, repr=True)
class BlockedLayout(Encoding):
    """``#ttg.blocked``: each thread holds a ``sizePerThread`` block; threads and warps tile it.

    Fields (tuples of ints, one entry per tensor dim): ``size_per_thread``, ``threads_per_warp``
    (product 32), ``warps_per_cta`` (product = num_warps, see :func:`check_num_warps`), ``order``
    (dims from fastest to slowest varying). All entries of the first three are powers of two.
    Raises LayoutError on a violated rule, naming the parameter.
    Source: Triton ``BlockedEncodingAttr`` (TritonGPUAttrDefs.td).
    """

    size_per_thread: tuple[int, ...]
    threads_per_warp: tuple[int, ...]
    warps_per_cta: tuple[int, ...]
    order: tuple[int, ...]
    alias_name: ClassVar[Optional[str]] = "blocked"

    def __post_init__(self):
        spt = _as_ints(self.size_per_thread, "size_per_thread", "sizePerThread")
        tpw = _as_ints(self.threads_per_warp, "threads_per_warp", "threadsPerWarp")
        wpc = _as_ints(self.warps_per_cta, "warps_per_cta", "warpsPerCTA")
        order = _as_ints(self.order, "order", "order")
        _set(self, "size_per_thread", spt)
        _set(self, "threads_per_warp", tpw)
        _set(self, "warps_per_cta", wpc)
        _set(self, "order", order)
        rank = len(spt)
        if rank == 0:
            raise LayoutError("sizePerThread must have at least one entry (rank >= 1)")
        for name, vals in (("threadsPerWarp", tpw), ("warpsPerCTA", wpc), ("order", order)):
            if len(vals) != rank:
                raise LayoutError(
                    f"{name} = {_fmt(vals)} has {len(vals)} entries but sizePerThread = "
                    f"{_fmt(spt)} has {rank}; all must have one entry per tensor dim")
        _check_pow2(spt, "sizePerThread")
        _check_pow2(tpw, "threadsPerWarp")
        _check_pow2(wpc, "warpsPerCTA")
        if prod(tpw) != WARP_SIZE:
            raise LayoutError(
                f"threadsPerWarp = {_fmt(tpw)} has product {prod(tpw)}, but a warp has "
                f"{WARP_SIZE} threads on NVIDIA GPUs: the product of threadsPerWarp must be "
                f"{WARP_SIZE}")
        _check_order(order, rank)

    @property
    def rank(self) -> int:
        """Number of tensor dimensions."""
        return len(self.size_per_thread)

    @property
    def num_warps(self) -> int:
        """Product of ``warps_per_cta``."""
        return prod(self.warps_per_cta)

    @property
    def cta_tile(self) -> tuple[int, ...]:
        """Elements covered by one pass of the CTA per dim: spt * tpw * wpc."""
        return tuple(a * b * c for a, b, c in zip(self.size_per_thread, self.threads_per_warp,
                                                  self.warps_per_cta, strict=False))

    def to_text(self, alias_of: AliasFn = None) -> str:
        return (f"#ttg.blocked<{{sizePerThread = {_fmt(self.size_per_thread)}, "
                f"threadsPerWarp = {_fmt(self.threads_per_warp)}, "
                f"warpsPerCTA = {_fmt(self.warps_per_cta)}, order = {_fmt(self.order)}}}>")


@dataclass(frozen=True, repr=True)
class MmaLayout(Encoding):
    """``#ttg.nvidia_mma``: the accumulator layout of tensor-core instructions.

    ``version_major`` 2 is Ampere ``mma.sync`` (``instr_shape = (16, 8)``, m16n8k16 for 16-bit
    inputs); 3 is Hopper ``wgmma`` (``instr_shape = (16, N, K)`` per warp, warps in groups of 4).
    ``warps_per_cta`` has one entry per tensor dim (rank 2; rank 3 for a batched MMA v2 dot,
    ``instr_shape = (1, 16, 8)``). Raises LayoutError on a bad
    version, instrShape or warpsPerCTA. Source: Triton ``NvidiaMmaEncodingAttr``.
    """

    version_major: int
    warps_per_cta: tuple[int, ...]
    instr_shape: tuple[int, ...]
    version_minor: int = 0
    alias_name: ClassVar[Optional[str]] = "mma"

    def __post_init__(self):
        wpc = _as_ints(self.warps_per_cta, "warps_per_cta", "warpsPerCTA")
        instr = _as_ints(self.instr_shape, "instr_shape", "instrShape")
        _set(self, "warps_per_cta", wpc)
        _set(self, "instr_shape", instr)
        _set(self, "version_major", int(self.version_major))
        _set(self, "version_minor", int(self.version_minor))
        if self.version_major not in (2, 3):
            raise LayoutError(
                f"versionMajor = {self.version_major} is not supported: use 2 (Ampere mma.sync) "
                f"or 3 (Hopper wgmma)")
        _check_pow2(wpc, "warpsPerCTA")
        if len(wpc) != 2 and not (self.version_major == 2 and len(wpc) == 3):
            raise LayoutError(f"warpsPerCTA = {_fmt(wpc)}: MMA layouts have rank 2 (MMA v2 "
                              f"also rank 3, a batched dot)")
        if self.version_major == 2:
            want = (16, 8) if len(wpc) == 2 else (1, 16, 8)
            if instr != want:
                raise LayoutError(
                    f"instrShape = {_fmt(instr)}: an MMA v2 layout of rank {len(wpc)} has "
                    f"instrShape = {_fmt(want)}")
        else:
            if len(instr) != 3 or instr[0] != 16 or instr[1] % 8 or instr[1] <= 0 or instr[2] <= 0:
                raise LayoutError(
                    f"instrShape = {_fmt(instr)}: an MMA v3 layout has instrShape = [16, N, K] "
                    f"with N a multiple of 8")
            if prod(wpc) % 4:
                raise LayoutError(
                    f"warpsPerCTA = {_fmt(wpc)}: MMA v3 (wgmma) needs whole warp groups "
                    f"(a multiple of 4 warps)")

    @property
    def rank(self) -> int:
        """Number of tensor dimensions (2; 3 for a batched MMA v2 dot)."""
        return len(self.warps_per_cta)

    @property
    def num_warps(self) -> int:
        """Product of ``warps_per_cta``."""
        return prod(self.warps_per_cta)

    def to_text(self, alias_of: AliasFn = None) -> str:
        return (f"#ttg.nvidia_mma<{{versionMajor = {self.version_major}, versionMinor = "
                f"{self.version_minor}, warpsPerCTA = {_fmt(self.warps_per_cta)}, "
                f"instrShape = {_fmt(self.instr_shape)}}}>")


@dataclass(frozen=True, repr=True)
class SliceLayout(Encoding):
    """``#ttg.slice``: ``parent`` with tensor dim ``dim`` removed (e.g. the result of a reduce).

    Printed inline; ``to_text(alias_of)`` prints the parent as its alias when one is given.
    Raises LayoutError when ``dim`` is outside the parent's rank or the parent is not a
    distributed layout. Source: Triton ``SliceEncodingAttr``.
    """

    dim: int
    parent: DistributedEncoding
    alias_name: ClassVar[Optional[str]] = None

    def __post_init__(self):
        _set(self, "dim", int(self.dim))
        if not isinstance(self.parent, Encoding) or not self.parent.distributed:
            raise LayoutError(
                f"parent of a slice must be a distributed layout, got {self.parent!r}")
        if not 0 <= self.dim < self.parent.rank:
            raise LayoutError(f"dim = {self.dim} is outside the parent's rank {self.parent.rank}")
        if self.parent.rank < 2:
            raise LayoutError("the parent of a slice must have rank >= 2")

    @property
    def rank(self) -> int:
        """Parent rank minus one."""
        return self.parent.rank - 1

    @property
    def num_warps(self) -> int:
        """The parent's number of warps."""
        return self.parent.num_warps

    def to_text(self, alias_of: AliasFn = None) -> str:
        return f"#ttg.slice<{{dim = {self.dim}, parent = {_ref(self.parent, alias_of)}}}>"


@dataclass(frozen=True, repr=True)
class DotOperandLayout(Encoding):
    """``#ttg.dot_op``: register layout of operand A (``op_idx`` 0) or B (1) of a dot.

    ``parent`` is the result's layout: an :class:`MmaLayout` (tensor cores; ``k_width`` > 0 is the
    number of consecutive K elements per thread per fragment, 2 for fp16) or a
    :class:`BlockedLayout` (FMA dot; ``k_width`` 0 and not printed). Raises LayoutError on a bad
    opIdx, kWidth or parent. Source: Triton ``DotOperandEncodingAttr``.
    """

    op_idx: int
    parent: MmaLayout | BlockedLayout
    k_width: int = 0
    alias_name: ClassVar[Optional[str]] = None

    def __post_init__(self):
        _set(self, "op_idx", int(self.op_idx))
        _set(self, "k_width", int(self.k_width))
        if self.op_idx not in (0, 1):
            raise LayoutError(f"opIdx = {self.op_idx} must be 0 (operand A) or 1 (operand B)")
        if not isinstance(self.parent, (MmaLayout, BlockedLayout)):
            raise LayoutError(
                f"parent of a dot_op must be an nvidia_mma or blocked layout, got {self.parent!r}")
        if isinstance(self.parent, MmaLayout):
            if not is_pow2(self.k_width):
                raise LayoutError(
                    f"kWidth = {self.k_width}: with an nvidia_mma parent kWidth must be a power "
                    f"of two (2 for 16-bit types, 4 for 8-bit)")
            if self.parent.version_major == 3 and self.op_idx == 1:
                raise LayoutError(
                    "opIdx = 1 with an MMA v3 parent: wgmma reads operand B from shared memory, "
                    "it has no register layout")
        elif self.k_width < 0:
            raise LayoutError(f"kWidth = {self.k_width} must be >= 0")

    @property
    def rank(self) -> int:
        """The parent's rank."""
        return self.parent.rank

    @property
    def num_warps(self) -> int:
        """The parent's number of warps."""
        return self.parent.num_warps

    def to_text(self, alias_of: AliasFn = None) -> str:
        kw = f", kWidth = {self.k_width}" if self.k_width else ""
        return f"#ttg.dot_op<{{opIdx = {self.op_idx}, parent = {_ref(self.parent, alias_of)}{kw}}}>"


@dataclass(frozen=True, repr=True)
class SwizzledSharedLayout(Encoding):
    """``#ttg.swizzled_shared``: shared memory with Triton's XOR swizzle.

    Element (row, col) of a 2-D view (``order = (col_dim, row_dim, ...)``) is stored at
    ``row * numCols + (((col // vec) ^ phase) * vec + col % vec)`` with
    ``phase = (row // perPhase) % maxPhase``. ``vec``, ``per_phase``, ``max_phase`` are powers of
    two. Source: Triton ``SwizzledSharedEncodingAttr``.
    """

    vec: int
    per_phase: int
    max_phase: int
    order: tuple[int, ...]
    alias_name: ClassVar[Optional[str]] = "shared"
    distributed: ClassVar[bool] = False

    def __post_init__(self):
        for name, tri in (("vec", "vec"), ("per_phase", "perPhase"), ("max_phase", "maxPhase")):
            v = getattr(self, name)
            if isinstance(v, bool) or not is_pow2(v):
                raise LayoutError(f"{tri} = {v!r} must be a positive power of two")
            _set(self, name, int(v))
        order = _as_ints(self.order, "order", "order")
        _set(self, "order", order)
        if not order:
            raise LayoutError("order must have at least one entry")
        _check_order(order, len(order))

    @property
    def rank(self) -> int:
        """Number of tensor dimensions (length of ``order``)."""
        return len(self.order)

    def to_text(self, alias_of: AliasFn = None) -> str:
        return (f"#ttg.swizzled_shared<{{vec = {self.vec}, perPhase = {self.per_phase}, "
                f"maxPhase = {self.max_phase}, order = {_fmt(self.order)}}}>")


@dataclass(frozen=True, repr=True)
class NVMMASharedLayout(Encoding):
    """``#ttg.nvmma_shared``: the wgmma/TMA shared layout (8-row swizzle atoms).

    ``swizzling_byte_width`` in {0, 32, 64, 128} bytes; ``transposed`` means the contiguous dim is
    the outer one; ``element_bit_width`` in {8, 16, 32, 64}. Equivalent swizzle: ``vec = 128 /
    element_bit_width``, ``per_phase = 128 / swizzle``, ``max_phase = swizzle / 16``.
    Source: Triton ``NVMMASharedEncodingAttr``; PTX ISA "Shared memory matrix layout" (wgmma).
    """

    swizzling_byte_width: int
    transposed: bool
    element_bit_width: int
    fp4_padded: bool = False
    alias_name: ClassVar[Optional[str]] = "shared"
    distributed: ClassVar[bool] = False

    def __post_init__(self):
        _set(self, "swizzling_byte_width", int(self.swizzling_byte_width))
        _set(self, "element_bit_width", int(self.element_bit_width))
        _set(self, "transposed", bool(self.transposed))
        _set(self, "fp4_padded", bool(self.fp4_padded))
        if self.swizzling_byte_width not in (0, 32, 64, 128):
            raise LayoutError(
                f"swizzlingByteWidth = {self.swizzling_byte_width} must be 0, 32, 64 or 128")
        if self.element_bit_width not in (4, 8, 16, 32, 64):
            raise LayoutError(
                f"elementBitWidth = {self.element_bit_width} must be 8, 16, 32 or 64")

    @property
    def vec(self) -> int:
        """Elements per 16-byte swizzle unit: ``128 // element_bit_width``."""
        return max(128 // self.element_bit_width, 1)

    @property
    def per_phase(self) -> int:
        """Rows sharing one swizzle phase: ``128 // swizzling_byte_width`` (1 without swizzle)."""
        return 128 // self.swizzling_byte_width if self.swizzling_byte_width else 1

    @property
    def max_phase(self) -> int:
        """Number of swizzle phases: ``swizzling_byte_width // 16`` (1 without swizzle)."""
        return self.swizzling_byte_width // 16 if self.swizzling_byte_width else 1

    @property
    def rank(self) -> Optional[int]:
        """None: an nvmma_shared encoding fits any rank >= 2."""
        return None

    def to_text(self, alias_of: AliasFn = None) -> str:
        fp4 = ", fp4Padded = true" if self.fp4_padded else ""
        return (f"#ttg.nvmma_shared<{{swizzlingByteWidth = {self.swizzling_byte_width}, "
                f"transposed = {'true' if self.transposed else 'false'}, "
                f"elementBitWidth = {self.element_bit_width}{fp4}}}>")


@dataclass(frozen=True, repr=True)
class LinearEncoding(Encoding):
    """``#ttg.linear``: a distributed layout given directly by its linear-layout bases.

    ``linear_layout`` must have in-dims among register, lane, warp, block and out-dims
    ``dim0..dim{rank-1}``. Printed as ``#ttg.linear<{register = [[..]], lane = [..], warp =
    [..], block = []}>``. Source: Triton ``LinearEncodingAttr``; arXiv:2505.23819.
    """

    linear_layout: LinearLayout
    alias_name: ClassVar[Optional[str]] = "linear"

    def __post_init__(self):
        ll = self.linear_layout
        if not isinstance(ll, LinearLayout):
            raise LayoutError(f"LinearEncoding needs a LinearLayout, got {ll!r}")
        extra = [d for d in ll.in_dims if d not in ("register", "lane", "warp", "block")]
        if extra:
            raise LayoutError(f"#ttg.linear in-dims must be register/lane/warp/block, got {extra}")
        if list(ll.out_dims) != [f"dim{i}" for i in range(ll.rank)]:
            raise LayoutError(
                f"#ttg.linear out-dims must be dim0..dim{ll.rank - 1}, got {ll.out_dims}")
        if ll.in_dim_size("lane") != WARP_SIZE:
            raise LayoutError(
                f"lane has {ll.in_dim_size_log2('lane')} bases ({ll.in_dim_size('lane')} lanes); "
                f"a warp has {WARP_SIZE} threads: lane needs 5 bases")

    @property
    def rank(self) -> int:
        """Number of tensor dimensions."""
        return self.linear_layout.rank

    @property
    def num_warps(self) -> int:
        """Number of warps: ``2 ** len(warp bases)``."""
        return self.linear_layout.in_dim_size("warp")

    def to_text(self, alias_of: AliasFn = None) -> str:
        parts = []
        for name in ("register", "lane", "warp", "block"):
            vecs = self.linear_layout.in_dim_bases(name)
            parts.append(f"{name} = [" + ", ".join(_fmt(v) for v in vecs) + "]")
        return "#ttg.linear<{" + ", ".join(parts) + "}>"


DistributedEncoding = Union[BlockedLayout, SliceLayout, MmaLayout, DotOperandLayout, LinearEncoding]
SharedEncoding = Union[SwizzledSharedLayout, NVMMASharedLayout]


def check_num_warps(layout: Encoding, num_warps: int) -> None:
    """Check that a distributed layout uses exactly ``num_warps`` warps.

    Raises LayoutError naming ``warpsPerCTA`` (or the parent's) when the product differs from the
    module's ``ttg.num-warps``. Shared layouts are not tied to warps and always pass.
    """
    if not layout.distributed:
        return
    base = layout
    while isinstance(base, (SliceLayout, DotOperandLayout)):
        base = base.parent
    assert isinstance(base, (BlockedLayout, MmaLayout, LinearEncoding)), base
    have = base.num_warps
    if have != num_warps:
        if isinstance(base, LinearEncoding):
            what = f"warp has {base.linear_layout.in_dim_size_log2('warp')} bases ({have} warps)"
        else:
            what = f"warpsPerCTA = {_fmt(base.warps_per_cta)} has product {have}"
        raise LayoutError(f"{what}, but the kernel runs num_warps = {num_warps}; "
                          f"the product of warpsPerCTA must equal num_warps")


__all__ = [
    "Encoding", "BlockedLayout", "MmaLayout", "SliceLayout", "DotOperandLayout",
    "SwizzledSharedLayout", "NVMMASharedLayout", "LinearEncoding", "check_num_warps",
    "WARP_SIZE",
]
