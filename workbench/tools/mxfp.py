"""Microscaling (MX) host tensors under Triton's names (``triton.tools.mxfp``): 4-bit E2M1
elements (:class:`MXFP4Tensor`) and 8-bit E8M0 block scales (:class:`MXScaleTensor`), as
Triton's block-scaled matmul tutorial and ``tl.dot_scaled`` tests build their inputs.

Formats (OCP Microscaling Formats (MX) Specification v1.0, sections 5.3.3 and 5.4.1):

- E2M1: bit 3 sign, bits 2..1 exponent (bias 1), bit 0 mantissa. The eight magnitudes are
  0, 0.5 (the one subnormal), 1, 1.5, 2, 3, 4, 6; there is no infinity or NaN.
- E8M0: an unsigned biased exponent, value ``2 ** (e - 127)``; code 255 is NaN.

Both classes hold their codes as a ``torch.uint8`` tensor in ``.data`` (one code per byte; an
E2M1 pair per byte only after :meth:`MXFP4Tensor.to_packed_tensor`) and need torch, imported
when a tensor is made.
"""
from __future__ import annotations

import math
from typing import Any

#: E2M1 magnitude of codes 0..7 (the sign is bit 3)
E2M1_MAGNITUDES = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)
E8M0_BIAS = 127
E8M0_NAN = 255


def _torch():
    import torch
    return torch


def _shape(size) -> tuple:
    return tuple(size) if isinstance(size, (tuple, list)) else (int(size),)


class _Codes:
    """What both code tensors share: made from ``data`` (a float torch tensor, encoded by the
    subclass's ``encode``) or from a ``size`` to fill with ``random``. Raises ValueError when
    neither is given, TypeError when ``data`` is not a torch tensor."""

    def __init__(self, data=None, size=None, device=None):
        torch = _torch()
        self.device = device
        self.data: Any = None
        name = type(self).__name__
        if data is not None:
            if not isinstance(data, torch.Tensor):
                raise TypeError(f"{name} data must be a torch tensor, not "
                                f"{type(data).__name__}")
            self.device = data.device
            self.size = tuple(data.shape)
            self.data = self.encode(data)
        elif size is not None:
            self.size = _shape(size)
        else:
            raise ValueError(f"give {name} the data to encode or the size to fill")

    def encode(self, values):  # pragma: no cover - each subclass has its own
        raise NotImplementedError


class MXFP4Tensor(_Codes):
    """E2M1 codes (``.data``: uint8, one code in the low 4 bits of each byte).

    ``MXFP4Tensor(data=t)`` encodes the float tensor ``t`` (see :meth:`encode`);
    ``MXFP4Tensor(size=(m, n), device=d)`` makes an empty one for :meth:`random`.
    Raises ValueError when neither is given, TypeError when ``data`` is not a torch tensor."""

    def random(self) -> "MXFP4Tensor":
        """Fill ``.data`` with codes drawn uniformly from all 16 (both zeros included, from
        torch's generator: ``torch.manual_seed`` applies); returns ``self``."""
        torch = _torch()
        self.data = torch.randint(0, 16, self.size, dtype=torch.uint8, device=self.device)
        return self

    def to(self, dtype):
        """The values as a float32 tensor of ``.data``'s shape (``-0.0`` for code 8).
        Raises ValueError for any other ``dtype``."""
        torch = _torch()
        if dtype != torch.float32:
            raise ValueError(f"MXFP4Tensor converts to torch.float32 only, not {dtype}")
        mags = torch.tensor(E2M1_MAGNITUDES, dtype=torch.float32, device=self.data.device)
        codes = self.data.to(torch.int64)
        mag = mags[codes & 7]
        return torch.where((codes & 8) != 0, -mag, mag)

    def encode(self, values):
        """E2M1 codes (uint8) of a float tensor: round to nearest, ties to the even code
        (mantissa bit 0); magnitudes above 6 and infinities saturate to 6, NaN becomes 6
        with the sign bit of the NaN, and magnitudes below 0.25 become a zero of the value's
        sign (section 6.3 of the MX specification: conversion to E2M1 saturates)."""
        torch = _torch()
        v = values.to(torch.float32)
        sign = torch.signbit(v).to(torch.uint8) << 3
        mag = torch.abs(v)
        mag = torch.where(torch.isnan(mag) | torch.isinf(mag), torch.full_like(mag, 6.0), mag)
        code = torch.zeros(v.shape, dtype=torch.uint8, device=v.device)
        for i in range(len(E2M1_MAGNITUDES) - 1):
            mid = (E2M1_MAGNITUDES[i] + E2M1_MAGNITUDES[i + 1]) / 2
            # above the midpoint: one code up; on it: up only when code i + 1 is even
            up = (mag > mid) | ((mag == mid) & ((i + 1) % 2 == 0))
            code += up.to(torch.uint8)
        return sign | code

    _from_float = encode  # Triton's private name, for scripts that call it

    def to_packed_tensor(self, dim: int):
        """Two codes per byte along ``dim``: element ``2j`` in the low nibble, ``2j + 1`` in
        the high one; an odd length gets a zero code appended. Returns a uint8 tensor whose
        ``dim`` is ``ceil(n / 2)`` long. Raises ValueError for a ``dim`` out of range."""
        torch = _torch()
        data = self.data
        if not 0 <= dim < data.dim():
            raise ValueError(f"dim {dim} is not a dimension of a {data.dim()}-d tensor")
        if data.shape[dim] % 2:
            pad = list(data.shape)
            pad[dim] = 1
            data = torch.cat([data, torch.zeros(pad, dtype=data.dtype, device=data.device)],
                             dim=dim)
        pairs = data.unflatten(dim, (-1, 2))
        return (pairs.select(dim + 1, 1) << 4) | pairs.select(dim + 1, 0)

    def unpack_packed_tensor(self, packed_tensor, dim: int, original_shape):
        """The inverse of :meth:`to_packed_tensor`: one code per byte again, cut back to
        ``original_shape[dim]`` along ``dim`` (uint8)."""
        torch = _torch()
        pair = torch.stack((packed_tensor & 0xF, (packed_tensor >> 4) & 0xF), dim=dim + 1)
        codes = pair.flatten(dim, dim + 1)
        return codes.narrow(dim, 0, int(original_shape[dim])).to(torch.uint8)


class MXScaleTensor(_Codes):
    """E8M0 scale codes (``.data``: uint8). ``MXScaleTensor(data=t)`` encodes the float
    tensor ``t`` (see :meth:`encode`); ``MXScaleTensor(size=..., device=...)`` makes an empty
    one for :meth:`random`. Raises as :class:`MXFP4Tensor`."""

    def random(self, low=None, high=None) -> "MXScaleTensor":
        """Fill ``.data`` with exponent codes drawn uniformly from ``[lo, hi]`` (never the NaN
        code 255): ``lo`` is ``int(log2(low)) + 127`` (0 without ``low``), ``hi`` is
        ``int(log2(high)) + 127`` (254 without ``high``), both clamped to 0..254, ``int``
        truncating toward zero as Triton's does. Returns ``self``. Raises ValueError when
        ``lo > hi``."""
        torch = _torch()
        lo = 0 if low is None else max(0, int(math.log2(low)) + E8M0_BIAS)
        hi = 254 if high is None else min(254, max(0, int(math.log2(high)) + E8M0_BIAS))
        if lo > hi:
            raise ValueError(f"low={low} is above high={high}")
        self.data = torch.randint(lo, hi + 1, self.size, dtype=torch.uint8, device=self.device)
        return self

    def to(self, dtype):
        """``2 ** (code - 127)`` as float32 (NaN for code 255). Raises ValueError for any other
        ``dtype``."""
        torch = _torch()
        if dtype != torch.float32:
            raise ValueError(f"MXScaleTensor converts to torch.float32 only, not {dtype}")
        e = self.data.to(torch.float32)
        value = torch.exp2(e - E8M0_BIAS)
        return torch.where(self.data == E8M0_NAN, torch.full_like(value, math.nan), value)

    def encode(self, values):
        """E8M0 codes of a float tensor: ``floor(log2(v)) + 127`` clamped to 0..254 for
        finite ``v > 0`` (so values are rounded down to a power of two); 255 (NaN) for zero,
        negative, infinite and NaN values."""
        torch = _torch()
        v = values.to(torch.float32)
        valid = torch.isfinite(v) & (v > 0)
        safe = torch.where(valid, v, torch.ones_like(v))
        e = torch.clamp(torch.floor(torch.log2(safe)) + E8M0_BIAS, 0, 254)
        return torch.where(valid, e, torch.full_like(e, E8M0_NAN)).to(torch.uint8)

    _from_float = encode  # Triton's private name


__all__ = ["MXFP4Tensor", "MXScaleTensor", "E2M1_MAGNITUDES"]
