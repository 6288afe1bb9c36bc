"""An independent numpy Philox 4x32 (Salmon et al., SC'11, as in Random123), for tests.

The round function, for counter (c0, c1, c2, c3) and key (k0, k1):
    (hi0, lo0) = M0 * c0, (hi1, lo1) = M1 * c2   (64-bit products)
    c <- (hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0)
    k <- (k0 + W0, k1 + W1) between rounds,
with M0 = 0xD2511F53, M1 = 0xCD9E8D57, W0 = 0x9E3779B9, W1 = 0xBB67AE85.
"""
import numpy as np

M0, M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
W0, W1 = np.uint32(0x9E3779B9), np.uint32(0xBB67AE85)
MASK = np.uint64(0xFFFFFFFF)


def philox4x32(ctr, key, rounds=10):
    """``ctr``: 4 uint32 arrays (broadcastable), ``key``: 2 uint32 arrays -> 4 uint32 arrays."""
    c = [np.asarray(x, np.uint32) for x in ctr]
    k0, k1 = (np.asarray(x, np.uint32) for x in key)
    with np.errstate(over="ignore"):
        for r in range(rounds):
            if r:
                k0, k1 = k0 + W0, k1 + W1
            p0 = c[0].astype(np.uint64) * M0
            p1 = c[2].astype(np.uint64) * M1
            hi0, lo0 = (p0 >> np.uint64(32)).astype(np.uint32), (p0 & MASK).astype(np.uint32)
            hi1, lo1 = (p1 >> np.uint64(32)).astype(np.uint32), (p1 & MASK).astype(np.uint32)
            c = [hi1 ^ c[1] ^ k0, lo1, hi0 ^ c[3] ^ k1, lo0]
    return c


def triton_randint4x(seed, offsets, rounds=10):
    """Triton's randint4x: key = (seed lo, seed hi), counter = (offset lo, offset hi, 0, 0)."""
    seed = int(seed) & (2**64 - 1)
    off = np.asarray(offsets).astype(np.int64)
    lo = (off & 0xFFFFFFFF).astype(np.uint32)
    hi = ((off >> 32) & 0xFFFFFFFF).astype(np.uint32) if np.asarray(offsets).dtype.itemsize > 4 \
        else np.zeros_like(lo)
    zero = np.zeros_like(lo)
    return philox4x32((lo, hi, zero, zero),
                      (np.uint32(seed & 0xFFFFFFFF), np.uint32(seed >> 32)), rounds)


def uniform(bits):
    """uint32 -> fp32 in [0, 1) as Triton's uint_to_uniform_float."""
    x = np.asarray(bits, np.uint32).view(np.int32).astype(np.int64)
    x = np.where(x < 0, -x - 1, x).astype(np.int32)
    return x.astype(np.float32) * np.float32(4.6566127342e-10)


def normal(b0, b1):
    """Box-Muller as Triton's pair_uniform_to_normal (first output), in fp32."""
    u1 = np.maximum(np.float32(1.0e-7), uniform(b0))
    th = np.float32(6.283185307179586) * uniform(b1)
    r = np.sqrt(np.float32(-2.0) * np.log(u1))
    return r * np.cos(th)
