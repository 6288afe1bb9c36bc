"""Counter-based random numbers: Philox 4x32-10 (and 4x64) as Triton 3.6 defines them (Triton's
``language/random.py``; Salmon, Moraes, Dror, Shaw, "Parallel random numbers: as easy as 1, 2, 3",
SC'11).

The functions are written in the tile language itself (``jit_helper``: the frontend inlines
them), out of ``umulhi``, multiplies, xors and casts, so every backend runs them and the
results are bit-identical to Triton's for the same ``seed`` and ``offset``:

* the seed is cast to uint64 and split into two 32-bit keys ``k0 = lo``, ``k1 = hi``;
* the counter is ``(offset_lo, offset_hi, 0, 0)`` (``offset_hi`` is the upper half of a
  64-bit offset, else 0);
* each of ``n_rounds`` rounds computes, with ``A = 0xD2511F53``, ``B = 0xCD9E8D57``:
  ``c0' = hi(B*c2) ^ c1 ^ k0``, ``c2' = hi(A*c0) ^ c3 ^ k1``, ``c1' = lo(B*c2)``,
  ``c3' = lo(A*c0)``, then bumps the key by ``(0x9E3779B9, 0xBB67AE85)``;
* ``uint_to_uniform_float`` reads the bits as int32, folds negatives with ``-x - 1`` and
  scales by 4.6566127342e-10 (so the result is in [0, 1));
* ``randn`` is Box-Muller on two uniforms (the first clamped to >= 1e-7).
"""
from __future__ import annotations

from .builtins import cos, log, maximum, sin, sqrt, where
from .core import constexpr, jit_helper
from .debug import static_assert
from .dtypes import int32, int64, uint32, uint64
from .loops import static_range
from .mathops import to_tensor, umulhi

N_ROUNDS_DEFAULT = constexpr(10)
PHILOX_KEY_A = constexpr(0x9E3779B9)  # key bumps (golden ratio, sqrt(3) - 1)
PHILOX_KEY_B = constexpr(0xBB67AE85)
PHILOX_ROUND_A = constexpr(0xD2511F53)  # round multipliers
PHILOX_ROUND_B = constexpr(0xCD9E8D57)
PHILOX_KEY_A_64 = constexpr(0x9E3779B97F4A7C15)
PHILOX_KEY_B_64 = constexpr(0xBB67AE8584CAA73B)
PHILOX_ROUND_A_64 = constexpr(0xD2E7470EE14C6C93)
PHILOX_ROUND_B_64 = constexpr(0xCA5A826395121157)


@jit_helper
def philox_impl(c0, c1, c2, c3, k0, k1, n_rounds: constexpr = N_ROUNDS_DEFAULT):
    """``n_rounds`` Philox rounds on the counter ``(c0, c1, c2, c3)`` with key ``(k0, k1)``
    (all uint32, or all uint64 for Philox 4x64). Returns the four output words."""
    narrow = c0.dtype == uint32
    key_a = PHILOX_KEY_A if narrow else PHILOX_KEY_A_64
    key_b = PHILOX_KEY_B if narrow else PHILOX_KEY_B_64
    mul_a = PHILOX_ROUND_A if narrow else PHILOX_ROUND_A_64
    mul_b = PHILOX_ROUND_B if narrow else PHILOX_ROUND_B_64
    for _ in static_range(n_rounds):
        x0 = c0
        x2 = c2
        c0 = umulhi(mul_b, x2) ^ c1 ^ k0
        c2 = umulhi(mul_a, x0) ^ c3 ^ k1
        c1 = mul_b * x2
        c3 = mul_a * x0
        k0 = k0 + key_a
        k1 = k1 + key_b
    return c0, c1, c2, c3


@jit_helper
def philox(seed, c0, c1, c2, c3, n_rounds: constexpr = N_ROUNDS_DEFAULT):
    """Philox with the integer ``seed`` split into two 32-bit keys (lo, hi) over the counter
    words ``c0..c3`` (32-bit: reinterpreted as uint32; 64-bit: uint64, key ``(seed, 0)``)."""
    seed = to_tensor(seed)
    static_assert(seed.dtype.is_int(), "philox: the seed must be an integer")
    seed = seed.to(uint64)
    c0 = to_tensor(c0)
    bits = c0.dtype.primitive_bitwidth
    static_assert(bits == 32 or bits == 64, "philox: counters must be 32 or 64 bits wide")
    if bits == 32:
        word = uint32
        k0 = (seed & 0xFFFFFFFF).to(uint32)
        k1 = ((seed >> 32) & 0xFFFFFFFF).to(uint32)
    else:
        word = uint64
        k0 = seed
        k1 = seed * 0
    c0 = c0.to(word, bitcast=True)
    c1 = to_tensor(c1).to(word, bitcast=True)
    c2 = to_tensor(c2).to(word, bitcast=True)
    c3 = to_tensor(c3).to(word, bitcast=True)
    return philox_impl(c0, c1, c2, c3, k0, k1, n_rounds)


@jit_helper
def randint4x(seed, offset, n_rounds: constexpr = N_ROUNDS_DEFAULT):
    """Four blocks of random uint32 for ``seed`` and the int ``offset`` block: the Philox
    output for the counter ``(offset_lo, offset_hi, 0, 0)``."""
    offset = to_tensor(offset)
    lo = offset.to(uint32)
    zero = lo * 0
    if offset.dtype.primitive_bitwidth > 32:
        hi = (offset >> 32).to(uint32)
    else:
        hi = zero
    return philox(seed, lo, hi, zero, zero, n_rounds)


@jit_helper
def randint(seed, offset, n_rounds: constexpr = N_ROUNDS_DEFAULT):
    """A block of random uint32 (the first word of :func:`randint4x`)."""
    r0, r1, r2, r3 = randint4x(seed, offset, n_rounds)
    return r0


@jit_helper
def uint_to_uniform_float(x):
    """Random 32/64-bit integers -> fp32 uniformly in [0, 1): the bits as a signed int,
    negatives folded with ``-x - 1``, times 4.6566127342e-10 (1.0842020432385337e-19 for
    64 bits), the largest scale whose product with INT_MAX stays below 1.0 in fp32."""
    if x.dtype == uint32 or x.dtype == int32:
        x = x.to(int32, bitcast=True)
        scale = 4.6566127342e-10
    else:
        static_assert(x.dtype == uint64 or x.dtype == int64, "expected 32/64-bit integers")
        x = x.to(int64, bitcast=True)
        scale = 1.0842020432385337e-19
    x = where(x < 0, -x - 1, x)
    return x * scale


@jit_helper
def rand(seed, offset, n_rounds: constexpr = N_ROUNDS_DEFAULT):
    """A block of fp32 uniform in [0, 1) for ``seed`` and ``offset``."""
    return uint_to_uniform_float(randint(seed, offset, n_rounds))


@jit_helper
def rand4x(seed, offsets, n_rounds: constexpr = N_ROUNDS_DEFAULT):
    """Four blocks of fp32 uniform in [0, 1) (``offsets``: Triton's parameter name here)."""
    i0, i1, i2, i3 = randint4x(seed, offsets, n_rounds)
    return (uint_to_uniform_float(i0), uint_to_uniform_float(i1), uint_to_uniform_float(i2),
            uint_to_uniform_float(i3))


@jit_helper
def pair_uniform_to_normal(u1, u2):
    """Box-Muller: two uniforms -> two independent N(0, 1) samples (``u1`` clamped to
    >= 1e-7 so the log stays finite)."""
    u1 = maximum(1.0e-7, u1)
    theta = 6.283185307179586 * u2
    radius = sqrt(-2.0 * log(u1))
    return radius * cos(theta), radius * sin(theta)


@jit_helper
def randn(seed, offset, n_rounds: constexpr = N_ROUNDS_DEFAULT):
    """A block of fp32 N(0, 1) samples (Box-Muller on the first two Philox words)."""
    i0, i1, i2, i3 = randint4x(seed, offset, n_rounds)
    n0, n1 = pair_uniform_to_normal(uint_to_uniform_float(i0), uint_to_uniform_float(i1))
    return n0


@jit_helper
def randn4x(seed, offset, n_rounds: constexpr = N_ROUNDS_DEFAULT):
    """Four blocks of fp32 N(0, 1) samples."""
    u0, u1, u2, u3 = rand4x(seed, offset, n_rounds)
    n0, n1 = pair_uniform_to_normal(u0, u1)
    n2, n3 = pair_uniform_to_normal(u2, u3)
    return n0, n1, n2, n3
