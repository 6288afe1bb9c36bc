"""tl.randint / randint4x / rand / randn / philox against an independent numpy Philox 4x32-10
(philox_ref.py, checked on Random123's known-answer vectors), on every backend."""
import numpy as np
import pytest
from lang_helpers import launch
from philox_ref import normal, philox4x32, triton_randint4x, uniform

import workbench as wb
import workbench.language as tl


@pytest.mark.parametrize("ctr,key,expected", [
    ((0, 0, 0, 0), (0, 0), (0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8)),
    ((0xffffffff,) * 4, (0xffffffff,) * 2, (0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd)),
    ((0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344), (0xa4093822, 0x299f31d0),
     (0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1)),
])
def test_reference_reproduces_random123_known_answers(ctr, key, expected):
    out = philox4x32([np.uint32(c) for c in ctr], [np.uint32(k) for k in key])
    assert tuple(int(v) for v in out) == expected


@wb.jit
def philox_kat(c_ptr, k_ptr, out_ptr):
    r0, r1, r2, r3 = tl.philox_impl(tl.load(c_ptr), tl.load(c_ptr + 1), tl.load(c_ptr + 2),
                                    tl.load(c_ptr + 3), tl.load(k_ptr), tl.load(k_ptr + 1))
    tl.store(out_ptr, r0)
    tl.store(out_ptr + 1, r1)
    tl.store(out_ptr + 2, r2)
    tl.store(out_ptr + 3, r3)


def test_philox_impl_known_answer_in_a_kernel(backend):
    for ctr, key, exp in [((0, 0, 0, 0), (0, 0), (0x6627e8d5, 0xe169c58d, 0xbc57ac4c,
                                                   0x9b00dbd8)),
                          ((0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344),
                           (0xa4093822, 0x299f31d0), (0xd16cfe09, 0x94fdcceb, 0x5001e420,
                                                      0x24126ea1))]:
        out = np.zeros(4, np.uint32)
        launch(backend, philox_kat, (1,), np.array(ctr, np.uint32), np.array(key, np.uint32),
               out)
        assert [int(v) for v in out] == list(exp)


@wb.jit
def random_streams(seed, ri, r4, ru, rn, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(ri + offs, tl.randint(seed, offs))
    a, b, c, d = tl.randint4x(seed, offs)
    tl.store(r4 + offs * 4, a)
    tl.store(r4 + offs * 4 + 1, b)
    tl.store(r4 + offs * 4 + 2, c)
    tl.store(r4 + offs * 4 + 3, d)
    tl.store(ru + offs, tl.rand(seed, offs))
    tl.store(rn + offs, tl.randn(seed, offs))


@pytest.mark.parametrize("seed", [1, 0x123456789AB])
def test_random_streams_bit_exact(backend, seed):
    n, block = 256, 64
    ri, ru, rn = np.zeros(n, np.uint32), np.zeros(n, np.float32), np.zeros(n, np.float32)
    r4 = np.zeros(4 * n, np.uint32)
    launch(backend, random_streams, (n // block,), seed, ri, r4, ru, rn, BLOCK=block)
    ref = triton_randint4x(seed, np.arange(n, dtype=np.int32))
    np.testing.assert_array_equal(ri, ref[0])
    np.testing.assert_array_equal(r4.reshape(n, 4), np.stack(ref, 1))
    np.testing.assert_array_equal(ru, uniform(ref[0]))
    assert ru.min() >= 0.0 and ru.max() < 1.0
    # sqrt/log/cos may differ by an ulp between math libraries
    np.testing.assert_allclose(rn, normal(ref[0], ref[1]), rtol=1e-5, atol=1e-6)


@wb.jit
def random_int64_offsets(seed, base, out, BLOCK: tl.constexpr):
    offs = base + tl.arange(0, BLOCK).to(tl.int64)
    tl.store(out + tl.arange(0, BLOCK), tl.randint(seed, offs))


def test_int64_offsets_use_the_high_counter_word(backend):
    base = 3 * 2**32 + 5
    out = np.zeros(32, np.uint32)
    launch(backend, random_int64_offsets, (1,), 7, base, out, BLOCK=32)
    ref = triton_randint4x(7, base + np.arange(32, dtype=np.int64))
    np.testing.assert_array_equal(out, ref[0])


def test_rand_statistics_and_seed_independence(backend):
    n = 4096
    a = [np.zeros(n, np.uint32) for _ in range(2)]
    u = np.zeros(n, np.float32)
    g = np.zeros(n, np.float32)
    launch(backend, random_streams, (n // 1024,), 42, a[0], np.zeros(4 * n, np.uint32), u, g,
           BLOCK=1024)
    launch(backend, random_streams, (n // 1024,), 43, a[1], np.zeros(4 * n, np.uint32), u, g,
           BLOCK=1024)
    assert (a[0] != a[1]).mean() > 0.99
    assert abs(u.mean() - 0.5) < 0.02 and abs(g.mean()) < 0.06 and abs(g.std() - 1) < 0.05
