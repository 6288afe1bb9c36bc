"""The work model shared by the static and exact counters: FLOPs per op, the :class:`Work`
of a launch and the :class:`Run` a roofline point is made of (see
:mod:`workbench.testing.work` for the counting rules).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

FLOP_PER_ELEMENT = {
    "arith.addf": 1, "arith.subf": 1, "arith.mulf": 1, "arith.divf": 1, "arith.remf": 1,
    "arith.negf": 1, "arith.maximumf": 1, "arith.minimumf": 1, "arith.maxnumf": 1,
    "arith.minnumf": 1, "math.fma": 2, "tt.clampf": 2, "tt.precise_divf": 1,
    "tt.precise_sqrt": 1, "math.exp": 1, "math.exp2": 1, "math.log": 1, "math.log2": 1,
    "math.sqrt": 1, "math.rsqrt": 1, "math.sin": 1, "math.cos": 1, "math.tanh": 1,
    "math.erf": 1,
}

def dtype_name(t) -> str:
    """Triton's short name of a float IR type: ``f32`` -> ``"fp32"``, ``bf16`` stays."""
    name = str(getattr(t, "scalar", t))
    return {"f16": "fp16", "f32": "fp32", "f64": "fp64"}.get(name, name)


@dataclass
class Work:
    """FLOPs and bytes of one launch.

    ``flops`` (FLOP), ``bytes`` (bytes moved = ``bytes_read + bytes_written``),
    ``flops_by_dtype`` (``"fp32"``, ``"fp16:dot"``... -> FLOP), ``bytes_by_arg`` (parameter ->
    (read, written) bytes), ``bytes_issued`` (every access counted, re-reads included),
    ``programs``, ``mode`` (``"static"``, ``"exact"``, ``"user"``, or ``"static+user"``...),
    ``complete`` (False when a loop's trip count was unknown), ``notes``."""

    flops: float
    bytes: float
    bytes_read: float = 0.0
    bytes_written: float = 0.0
    flops_by_dtype: dict = field(default_factory=dict)
    bytes_by_arg: dict = field(default_factory=dict)
    bytes_issued: float = 0.0
    programs: int = 1
    mode: str = "static"
    complete: bool = True
    notes: list = field(default_factory=list)

    @property
    def dtype(self) -> str:
        """The roof this work is compared with: the ``tl.dot`` unit (``"fp32:dot"``,
        ``"fp16:dot"``) doing most dot FLOPs when the kernel uses ``tl.dot`` at all (its roof
        is the fastest the kernel can reach, so the epilogue's elementwise FLOPs do not make
        it look above its roof), else the dtype doing most of the FLOPs, e.g. ``"fp32"``;
        ``"fp32"`` when there are none (a copy kernel)."""
        counted = {k: v for k, v in self.flops_by_dtype.items() if v > 0}
        if not counted:
            return "fp32"
        dots = {k: v for k, v in counted.items() if k.endswith(":dot")}
        pool = dots or counted
        return max(pool, key=lambda k: pool[k])

    @property
    def intensity(self) -> float:
        """Arithmetic intensity in FLOP/byte (inf when no bytes move)."""
        return self.flops / self.bytes if self.bytes else math.inf


@dataclass
class Run:
    """One timed launch, a point on a roofline: ``name`` (kernel, config or size label),
    ``seconds`` (time of one launch), ``flops`` (FLOP), ``bytes`` (bytes moved), ``dtype``
    (the roof it is measured against: ``"fp32"``, ``"fp64"``, ``"fp16:dot"``), ``target``
    (``"cpu"``, ``"cuda"``), ``config`` (meta-parameters, free-form), ``work`` (the
    :class:`Work` it was counted from, if any)."""

    name: str
    seconds: float
    flops: float
    bytes: float
    dtype: str = "fp32"
    target: str = "cpu"
    config: dict = field(default_factory=dict)
    work: Work | None = None

    @property
    def intensity(self) -> float:
        """FLOP/byte (inf when no bytes move)."""
        return self.flops / self.bytes if self.bytes else math.inf

    @property
    def flops_per_s(self) -> float:
        """Achieved FLOP/s."""
        return self.flops / self.seconds if self.seconds > 0 else math.inf

    @property
    def bytes_per_s(self) -> float:
        """Achieved bytes/s."""
        return self.bytes / self.seconds if self.seconds > 0 else math.inf


def numel(t) -> int:
    """Elements of a tensor type (1 for a scalar type)."""
    shape = getattr(t, "shape", None)
    return math.prod(shape) if shape else 1


def is_float(t) -> bool:
    """Whether ``t`` (or its element type) is a float type."""
    from ..ir.types import FloatType
    return isinstance(getattr(t, "scalar", t), FloatType)
