"""Shared-memory bank conflicts of a warp-wide access.

Model (CUDA C++ Programming Guide, "Shared Memory" in the compute capability 5.x-9.x sections,
and NVIDIA's "Shared memory bank conflicts" notes for 64/128-bit accesses):

* Shared memory has 32 banks; successive 4-byte words go to successive banks
  (bank = (byte address // 4) % 32).
* A warp request where each lane accesses ``v`` bytes is served in phases: all 32 lanes in one
  phase for ``v <= 4``, two half-warps (16 lanes) for ``v == 8``, four quarter-warps (8 lanes)
  for ``v == 16``. Each phase takes as many *wavefronts* as the largest number of distinct
  4-byte words it addresses in any one bank; lanes reading the same word share it (broadcast,
  no conflict).
* The ideal count of a phase is ``ceil(distinct words / 32)``; a request's conflict degree is
  wavefronts / ideal.

The addresses come from the shared layout's linear layout (offset -> element,
:func:`workbench.layouts.convert.to_linear`, inverted) or, for :class:`PaddedRowMajor`, from
``row * (cols + pad) + col``. The threads' elements come from the access layout's linear layout.
"""
from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .convert import to_linear
from .encodings import Encoding, NVMMASharedLayout, SwizzledSharedLayout
from .errors import LayoutError
from .linear import LinearLayout

NUM_BANKS = 32
BANK_BYTES = 4

_DTYPE_BYTES = {
    "fp64": 8, "f64": 8, "i64": 8, "u64": 8, "int64": 8, "uint64": 8, "float64": 8,
    "fp32": 4, "f32": 4, "tf32": 4, "i32": 4, "u32": 4, "int32": 4, "uint32": 4, "float32": 4,
    "fp16": 2, "f16": 2, "bf16": 2, "i16": 2, "u16": 2, "int16": 2, "uint16": 2, "float16": 2,
    "bfloat16": 2,
    "fp8e4nv": 1, "fp8e5": 1, "fp8e4b15": 1, "fp8e4b8": 1, "fp8e5b16": 1, "fp8": 1,
    "i8": 1, "u8": 1, "int8": 1, "uint8": 1, "i1": 1, "int1": 1, "bool": 1,
}


def dtype_bytes(dtype) -> int:
    """Bytes per element of a Triton short dtype name (``"fp32"``, ``"bf16"``, ``"i8"``...) or a
    numpy dtype. Raises LayoutError for an unknown name."""
    if isinstance(dtype, str) and dtype.lower() in _DTYPE_BYTES:
        return _DTYPE_BYTES[dtype.lower()]
    try:
        return int(np.dtype(dtype).itemsize)
    except TypeError:
        raise LayoutError(f"unknown dtype {dtype!r}: use a Triton name like 'fp32', 'fp16', "
                          f"'bf16', 'i8', 'i32' or a numpy dtype") from None


@dataclass(frozen=True)
class PaddedRowMajor:
    """Row-major shared memory with ``pad_elements`` unused elements after every row.

    Element (i0, ..., row, col) of a tile is at element offset ``flat_row * (cols + pad) +
    col`` where flat_row flattens the leading dims. One 4-byte word of padding per row is
    ``pad_elements = 4 // elem_bytes`` (1 for fp32, 2 for fp16). ``pad_elements = 0`` is plain
    row-major storage.
    """

    pad_elements: int = 0

    def __post_init__(self):
        if int(self.pad_elements) < 0:
            raise LayoutError(f"pad_elements = {self.pad_elements} must be >= 0")

    distributed = False

    def offsets(self, shape: Sequence[int]) -> np.ndarray:
        """Element offset of every element: an int64 array of ``shape``."""
        shape = tuple(int(s) for s in shape)
        cols = shape[-1]
        idx = np.indices(shape)
        flat_row = np.zeros(shape, np.int64)
        for d in range(len(shape) - 1):
            flat_row = flat_row * shape[d] + idx[d]
        return flat_row * (cols + int(self.pad_elements)) + idx[-1]

    def __str__(self):
        return f"row-major, {self.pad_elements} element(s) of padding per row"


def shared_offsets(shared, shape: Sequence[int]) -> np.ndarray:
    """Element offset in shared memory of every element of the tile: int64 array of ``shape``.

    ``shared`` is a :class:`SwizzledSharedLayout`, :class:`NVMMASharedLayout`,
    :class:`PaddedRowMajor` or a LinearLayout from in-dim ``offset`` to the tensor's dims.
    Raises LayoutError for anything else or a layout that does not
    cover the tile exactly once.
    """
    shape = tuple(int(s) for s in shape)
    if isinstance(shared, PaddedRowMajor):
        return shared.offsets(shape)
    if isinstance(shared, LinearLayout) and shared.in_dims == ("offset",):
        ll = shared  # a conversion buffer: offset -> tensor coordinates
    elif not isinstance(shared, (SwizzledSharedLayout, NVMMASharedLayout)):
        raise LayoutError(f"shared must be a swizzled_shared, nvmma_shared or PaddedRowMajor "
                          f"layout, got {shared!r}")
    else:
        ll = to_linear(shared, shape)
    n = ll.in_dim_size("offset")
    pts = ll.apply_array(offset=np.arange(n))
    out = np.full(shape, -1, np.int64)
    out[tuple(pts.T)] = np.arange(n)
    if np.any(out < 0) or n != out.size:
        raise LayoutError(f"{shared} does not store a {list(shape)} tile one element per offset")
    return out


@dataclass
class BankRequest:
    """One warp-wide shared-memory request.

    Attributes:
        warp: the warp issuing it. registers: the registers (vector) each lane moves.
        elements: int64 [32, vec, rank] tensor coordinates per lane.
        addresses: int64 [32, words_per_lane] byte address of each 4-byte word a lane touches
            (-1 where a lane touches fewer words).
        banks: int64 [32, words_per_lane] bank of each word (-1 where none).
        phase_of_lane: int64 [32], the phase (0.. n_phases-1) serving each lane.
        wavefronts: wavefronts the request takes. ideal: the conflict-free count.
        conflict_lanes: bool [32], lanes whose word shares its bank and phase with a different word.
    """

    warp: int
    registers: tuple[int, ...]
    elements: np.ndarray
    addresses: np.ndarray
    banks: np.ndarray
    phase_of_lane: np.ndarray
    wavefronts: int
    ideal: int
    conflict_lanes: np.ndarray


@dataclass
class BankReport:
    """Result of :func:`bank_conflicts`.

    Attributes:
        shared, access_layout, shape, dtype, elem_bytes, vector_bytes (bytes per lane per request).
        requests: list of :class:`BankRequest`, warp-major then register order.
        wavefronts: list[int], one per request. ideal_wavefronts: list[int], one per request.
        conflict_degree: max over requests of wavefronts / ideal (1.0 = conflict free).
        lane_banks: list of int64 arrays [32, words_per_lane], one per request (= request.banks).
    """

    shared: object
    access_layout: object
    shape: tuple[int, ...]
    dtype: object
    elem_bytes: int
    vector_bytes: int
    requests: list[BankRequest] = field(default_factory=list)

    @property
    def wavefronts(self) -> list[int]:
        return [r.wavefronts for r in self.requests]

    @property
    def ideal_wavefronts(self) -> list[int]:
        return [r.ideal for r in self.requests]

    @property
    def lane_banks(self) -> list[np.ndarray]:
        return [r.banks for r in self.requests]

    @property
    def lane_addresses(self) -> list[np.ndarray]:
        return [r.addresses for r in self.requests]

    @property
    def conflict_degree(self) -> float:
        if not self.requests:
            return 1.0
        return max(r.wavefronts / r.ideal for r in self.requests)

    @property
    def total_wavefronts(self) -> int:
        return sum(self.wavefronts)

    def __repr__(self) -> str:
        """One line: tile, layouts, requests, wavefronts and the conflict degree (the
        per-request arrays are in ``requests``)."""
        def short(x):
            t = str(x)
            return t if len(t) <= 120 else t[:117] + "..."
        deg = self.conflict_degree
        kind = "conflict-free" if deg == 1 else f"{deg:g}-way conflict"
        return (f"BankReport({list(self.shape)} {self.dtype} stored as {short(self.shared)}, "
                f"accessed as {short(self.access_layout)}: {len(self.requests)} requests of "
                f"{self.vector_bytes} B/lane, {self.total_wavefronts} wavefronts (ideal "
                f"{sum(self.ideal_wavefronts)}), {kind})")

    def summary(self) -> str:
        """One paragraph: requests, wavefronts, ideal and the conflict degree."""
        n = len(self.requests)
        deg = self.conflict_degree
        kind = "conflict-free" if deg == 1 else f"{deg:g}-way bank conflict"
        return (f"{n} warp request(s) of {self.vector_bytes} B/lane on a {list(self.shape)} "
                f"{self.dtype} tile stored as {self.shared}: {self.total_wavefronts} wavefronts "
                f"(ideal {sum(self.ideal_wavefronts)}), {kind}.")


def _vector_elems(addr: np.ndarray, eb: int, max_elems: int) -> int:
    """Largest power-of-two v <= max_elems such that every group of v consecutive registers of
    every thread is contiguous and aligned in shared memory (addr: [W, L, R] element offsets)."""
    R = addr.shape[-1]
    v = 1
    while v * 2 <= max_elems and R % (v * 2) == 0:
        cand = v * 2
        g = addr.reshape(addr.shape[:-1] + (R // cand, cand))
        contiguous = np.all(g - g[..., :1] == np.arange(cand))
        aligned = np.all((g[..., 0] * eb) % (cand * eb) == 0)
        if not (contiguous and aligned):
            break
        v = cand
    return v


def _lane_words(el_addr: np.ndarray, eb: int) -> np.ndarray:
    """Distinct 4-byte word indices each lane touches: int64 [L, n] padded with -1."""
    per = max(1, -(-eb // BANK_BYTES))
    w = (el_addr[..., None] // BANK_BYTES + np.arange(per)).reshape(el_addr.shape[0], -1)
    w = np.sort(w, axis=1)
    dup = np.zeros_like(w, dtype=bool)
    dup[:, 1:] = w[:, 1:] == w[:, :-1]
    big = np.iinfo(np.int64).max
    w = np.sort(np.where(dup, big, w), axis=1)
    n = int((w != big).sum(axis=1).max())
    w = w[:, :n]
    return np.where(w == big, -1, w)


def _request_addresses(shared, access_layout, shape: Sequence[int], dtype,
                       vector_bytes) -> tuple:
    """``(shape, element bytes, coords [W, L, R, rank], element offsets [W, L, R], elements
    per lane per request, phase of each lane)`` of :func:`bank_conflicts`' arguments."""
    shape = tuple(int(s) for s in shape)
    eb = dtype_bytes(dtype)
    if isinstance(access_layout, Encoding) and not access_layout.distributed:
        raise LayoutError("access_layout must be a distributed (register) layout")
    offs = shared_offsets(shared, shape)
    coords = to_linear(access_layout, shape).coords()  # [W, L, R, rank]
    W, L, R, rank = coords.shape
    addr = offs[tuple(np.moveaxis(coords, -1, 0))]  # [W, L, R] element offsets
    if vector_bytes is None:
        vec = 1  # scalar accesses: one element per lane per request
    elif vector_bytes == "auto":
        vec = _vector_elems(addr, eb, max(16 // eb, 1))
    else:
        vector_bytes = int(vector_bytes)
        if vector_bytes % eb or vector_bytes <= 0 or vector_bytes > 16:
            raise LayoutError(f"vector_bytes = {vector_bytes} must be a positive multiple of the "
                              f"element size {eb} B and at most 16 B")
        vec = vector_bytes // eb
        if R % vec:
            raise LayoutError(f"vector_bytes = {vector_bytes} ({vec} elements) does not divide "
                              f"the {R} registers per thread")
    vb = vec * eb
    lanes_per_phase = L if vb <= 4 else max(L * 4 // vb, 1)
    phase_of_lane = np.arange(L) // lanes_per_phase
    return shape, eb, coords, addr, vec, phase_of_lane


def bank_conflicts(shared, access_layout, shape: Sequence[int], dtype,
                   vector_bytes: int | str | None = None) -> BankReport:
    """Bank behaviour of every warp-wide request of ``access_layout`` reading/writing ``shared``.

    Args:
        shared: :class:`SwizzledSharedLayout`, :class:`NVMMASharedLayout` or
            :class:`PaddedRowMajor`.
        access_layout: the distributed layout of the registers that are stored/loaded.
        shape: tile shape (powers of two).
        dtype: Triton short name ("fp32", "fp16", "bf16", "i8", "i32", ...) or numpy dtype.
        vector_bytes: bytes each lane moves per request (a multiple of the element size, at
            most 16: 4, 8 or 16 for vectorised accesses). None (default): the element size, one
            scalar access per lane. ``"auto"``: the widest contiguous, aligned vector of
            consecutive registers, at most 16 bytes (as Triton's shared-memory lowering
            vectorises).
    Returns: :class:`BankReport` (wavefronts per request, ideal, conflict degree, lane->bank maps).
    Raises: LayoutError for unknown dtype, a vector width that is not a multiple of the element
        size or exceeds 16 bytes, or layouts that do not fit ``shape``.
    Source: CUDA C++ Programming Guide, Shared Memory (32 banks x 4 bytes; 64-bit accesses in
    half-warps, 128-bit in quarter-warps).
    """
    tile, eb, coords, addr, vec, phase_of_lane = _request_addresses(
        shared, access_layout, shape, dtype, vector_bytes)
    W, L, R, _ = coords.shape
    vb = vec * eb
    report = BankReport(shared=shared, access_layout=access_layout, shape=tile, dtype=dtype,
                        elem_bytes=eb, vector_bytes=vb)
    for w in range(W):
        for g in range(R // vec):
            regs = tuple(range(g * vec, (g + 1) * vec))
            el_addr = addr[w, :, g * vec:(g + 1) * vec] * eb  # bytes, [L, vec]
            wa = _lane_words(el_addr, eb)  # [L, words_per_lane], -1 padded
            banks = np.where(wa >= 0, wa % NUM_BANKS, -1)
            wf = ideal = 0
            conflict = np.zeros(L, bool)
            for p in range(int(phase_of_lane.max()) + 1):
                sel = phase_of_lane == p
                pw = np.unique(wa[sel][wa[sel] >= 0])
                if pw.size == 0:
                    continue
                per_bank = np.bincount(pw % NUM_BANKS, minlength=NUM_BANKS)
                wf += int(per_bank.max())
                ideal += -(-pw.size // NUM_BANKS)
                hot = np.append(per_bank > 1, False)  # index -1 (no word) -> False
                conflict[sel] = np.any(hot[banks[sel]], axis=1)
            report.requests.append(BankRequest(
                warp=w, registers=regs, elements=coords[w, :, g * vec:(g + 1) * vec].copy(),
                addresses=np.where(wa >= 0, wa * BANK_BYTES, -1), banks=banks,
                phase_of_lane=phase_of_lane.copy(), wavefronts=wf, ideal=max(ideal, 1),
                conflict_lanes=conflict))
    return report


def conflict_summary(shared, access_layout, shape: Sequence[int], dtype,
                     vector_bytes: int | str | None = None) -> tuple[float, int]:
    """``(conflict_degree, total_wavefronts)`` of :func:`bank_conflicts` with the same
    arguments, computed for every request at once (numpy) without the per-request report,
    and cached per arguments (layouts are immutable): what the code generator records for
    each shared-memory access. Raises as :func:`bank_conflicts`."""
    args = (shared, access_layout, tuple(int(s) for s in shape), dtype, vector_bytes)
    try:
        hash(args)
    except TypeError:  # an unhashable layout: computed, not cached
        return _summary(*args)
    return _cached_summary(*args)


def _summary(shared, access_layout, shape, dtype, vector_bytes) -> tuple[float, int]:
    tile, eb, coords, addr, vec, phase_of_lane = _request_addresses(
        shared, access_layout, shape, dtype, vector_bytes)
    W, L, R, _ = coords.shape
    groups, phases = R // vec, int(phase_of_lane.max()) + 1 if L else 1
    per_phase = L // phases
    if W * groups == 0 or not np.array_equal(phase_of_lane, np.arange(L) // per_phase):
        rep = bank_conflicts(shared, access_layout, tile, dtype, vector_bytes)
        return float(rep.conflict_degree), int(rep.total_wavefronts)
    per = max(1, -(-eb // BANK_BYTES))  # words per element
    words = (addr.reshape(W, L, groups, vec) * eb)[..., None] // BANK_BYTES + np.arange(per)
    # [request (warp, register group), phase, every word its lanes touch]
    words = words.transpose(0, 2, 1, 3, 4).reshape(W * groups * phases, -1)
    words = np.sort(words, axis=1)
    first = np.ones(words.shape, bool)
    first[:, 1:] = words[:, 1:] != words[:, :-1]  # each distinct word once
    rows = np.broadcast_to(np.arange(words.shape[0])[:, None], words.shape)
    counts = np.bincount((rows * NUM_BANKS + words % NUM_BANKS)[first],
                         minlength=words.shape[0] * NUM_BANKS).reshape(-1, NUM_BANKS)
    wavefronts = counts.max(axis=1).reshape(W * groups, phases).sum(axis=1)
    distinct = first.sum(axis=1).reshape(W * groups, phases)
    ideal = np.maximum((-(-distinct // NUM_BANKS)).sum(axis=1), 1)
    degree = max(int(w) / int(i) for w, i in zip(wavefronts, ideal, strict=True))
    return float(degree), int(wavefronts.sum())


_cached_summary = functools.lru_cache(maxsize=2048)(_summary)
