"""LinearLayout algebra, slice and shared-memory conversions."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.layouts import (
    BlockedLayout,
    DotOperandLayout,
    LayoutError,
    LinearEncoding,
    LinearLayout,
    NVMMASharedLayout,
    SliceLayout,
    SwizzledSharedLayout,
    ownership,
    to_linear,
)

LL = LinearLayout


def test_apply_is_xor_of_bases():
    ll = LL({"register": [(0, 1), (8, 0)], "lane": [(0, 2), (1, 1)]}, ["dim0", "dim1"])
    assert ll.out_dim_sizes == {"dim0": 16, "dim1": 4}
    assert ll.apply(register=3, lane=0) == (8, 1)
    assert ll.apply(register=1, lane=3) == (1, 1 ^ 2 ^ 1)
    assert ll.in_dim_size("register") == 4 and ll.in_dim_size("warp") == 1
    with pytest.raises(LayoutError, match="register=4"):
        ll.apply(register=4)
    with pytest.raises(LayoutError, match="warp"):
        ll.apply(warp=1)
    np.testing.assert_array_equal(ll.apply_array(register=np.arange(4), lane=2),
                                  [ll.apply(register=r, lane=2) for r in range(4)])


def test_product_shifts_outer_bases():
    a = LL.identity1d(4, "register", "dim0") * LL.identity1d(8, "lane", "dim0")
    assert a.in_dim_bases("lane") == ((4,), (8,), (16,))
    assert a.out_dim_sizes == {"dim0": 32}


def test_invert_and_compose():
    ll = to_linear(SwizzledSharedLayout(2, 1, 4, (1, 0)), (8, 8))
    inv = ll.invert()
    assert inv.in_dims == ("dim0", "dim1") and inv.out_dims == ("offset",)
    for off in range(64):
        r, c = ll.apply(offset=off)
        assert inv.apply(dim0=r, dim1=c) == (off,)
    ident = ll.compose(inv)
    assert all(ident.apply(offset=o) == (o,) for o in range(64))


def test_non_invertible_raises():
    with pytest.raises(LayoutError, match="not invertible"):
        to_linear(BlockedLayout((1,), (32,), (4,), (0,)), (8,)).invert()
    with pytest.raises(LayoutError, match="not invertible"):
        LL({"register": [(2,)]}, {"dim0": 4}).invert()  # misses odd coordinates
    inv = to_linear(BlockedLayout((1,), (32,), (4,), (0,)), (128,)).invert()
    assert inv.apply(dim0=37) == (0, 5, 1, 0)  # (register, lane, warp, block)


def test_surjective_and_injective():
    ll = to_linear(BlockedLayout((1,), (32,), (4,), (0,)), (8,))
    assert ll.is_surjective and not ll.is_injective
    ll2 = to_linear(BlockedLayout((1,), (32,), (4,), (0,)), (128,))
    assert ll2.is_surjective and ll2.is_injective
    assert not LL({"register": [(2,)]}, {"dim0": 4}).is_surjective


def test_equality_hash_str():
    a = to_linear(BlockedLayout((2,), (32,), (2,), (0,)), (128,))
    b = to_linear(BlockedLayout((2,), (32,), (2,), (0,)), (128,))
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert a != to_linear(BlockedLayout((2,), (32,), (1,), (0,)), (128,))
    text = str(a)
    assert " - register=1 -> (1)" in text and "where out dims are: [dim0 (size 128)]" in text


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 4).flatmap(lambda n: st.permutations(range(1 << n))))
def test_property_invert_of_random_bijection_bits(perm):
    # a random invertible GF(2) matrix built from elementary column operations
    n = len(perm).bit_length() - 1
    bases = [1 << i for i in range(n)]
    for i, p in enumerate(perm[:n * 2]):
        a, b = i % n, p % n
        if a != b:
            bases[a] ^= bases[b]
    ll = LL({"x": [(v,) for v in bases]}, {"y": 1 << n})
    inv = ll.invert()
    for x in range(1 << n):
        assert inv.apply(y=ll.apply(x=x)[0]) == (x,)


# ---------------------------------------------------------------------- slice
PARENT = BlockedLayout((1, 4), (1, 32), (4, 1), (1, 0))


def test_rowsum_slice_matches_reference():
    # ir_rowsum.txt: tl.sum(axis=1) of 64x128 #blocked -> slice{dim=1}: element i lives in warp
    # i % 4, register i // 4, replicated over all 32 lanes (the reduction broadcast).
    own = ownership(SliceLayout(1, PARENT), (64,))
    assert np.array_equal(own.warp, np.arange(64) % 4)
    assert np.array_equal(own.register, np.arange(64) // 4)
    assert (own.copies == 32).all() and (own.lane == 0).all()


@pytest.mark.parametrize("dim,shape", [(0, (128,)), (1, (64,)), (0, (4,)), (1, (1024,))])
def test_slice_equals_parent_with_unit_dim(dim, shape):
    """expand_dims of a slice is the parent layout at size 1 along dim: same threads per element."""
    sl = to_linear(SliceLayout(dim, PARENT), shape).coords()
    parent_shape = list(shape)
    parent_shape.insert(dim, 1)
    pc = to_linear(PARENT, parent_shape).coords()
    pc = np.delete(pc, dim, axis=-1)

    def holders(coords):
        out = {}
        W, L, R, _ = coords.shape
        for w in range(W):
            for ln in range(L):
                for r in range(R):
                    out.setdefault(tuple(coords[w, ln, r]), set()).add((w, ln))
        return out
    assert holders(sl) == holders(pc)


def test_slice_of_slice_and_of_mma():
    b3 = BlockedLayout((1, 1, 4), (2, 4, 4), (1, 2, 2), (2, 1, 0))
    ll = to_linear(SliceLayout(0, SliceLayout(2, b3)), (8,))
    assert ll.out_dims == ("dim0",)
    from workbench.layouts import MmaLayout
    own = ownership(SliceLayout(1, MmaLayout(2, (2, 2), (16, 8))), (32,))
    # rows of the accumulator: row = groupID + 8*(reg bit1) + 16*warp_m
    assert np.array_equal(own.lane, (np.arange(32) % 8) * 4)
    assert np.array_equal(own.warp, (np.arange(32) // 16) * 2)


def test_linear_encoding_conversion_is_its_layout():
    ll = to_linear(BlockedLayout((2, 2), (8, 4), (2, 2), (0, 1)), (32, 16))
    assert to_linear(LinearEncoding(ll), (32, 16)) == ll


def test_fma_dot_operand_holds_all_of_k():
    parent = BlockedLayout((2, 2), (8, 4), (2, 2), (1, 0))
    a = to_linear(DotOperandLayout(0, parent), (32, 16))
    own = ownership(DotOperandLayout(0, parent), (32, 16))
    # every thread holds whole rows of A (all 16 k) and lanes/warps along N are broadcast
    assert a.in_dim_size("register") == 2 * 16
    assert (own.copies == 4 * 2).all()
    for w in range(4):
        for ln in range(32):
            rows = {c[0] for c in own.thread_elements(w, ln)}
            ks = sorted(c[1] for c in own.thread_elements(w, ln))
            assert len(rows) == 2 and ks == sorted(list(range(16)) * 2)


# ---------------------------------------------------------------------- shared
def swizzle_formula(row, col, vec, per_phase, max_phase, ncols):
    phase = (row // per_phase) % max_phase
    return row * ncols + (((col // vec) ^ phase) * vec + col % vec) % ncols


@pytest.mark.parametrize("vec,pp,mp,shape", [(8, 2, 4, (128, 32)), (8, 1, 8, (32, 128)),
                                             (1, 1, 32, (32, 32)), (4, 2, 2, (16, 16)),
                                             (1, 1, 1, (8, 64))])
def test_swizzled_shared_matches_formula(vec, pp, mp, shape):
    ll = to_linear(SwizzledSharedLayout(vec, pp, mp, (1, 0)), shape)
    inv = ll.invert()
    for r in range(shape[0]):
        for c in range(shape[1]):
            assert inv.apply(dim0=r, dim1=c) == (swizzle_formula(r, c, vec, pp, mp, shape[1]),)


def test_swizzled_shared_column_major_order():
    ll = to_linear(SwizzledSharedLayout(1, 1, 8, (0, 1)), (8, 8))
    # dim0 is contiguous: offset 1 -> (1, 0); the row is dim1
    assert ll.apply(offset=1) == (1, 0)
    assert ll.apply(offset=8) == (1, 1)


@pytest.mark.parametrize("swz,bits,shape", [(128, 16, (64, 64)), (64, 16, (16, 32)),
                                            (32, 16, (8, 64)), (128, 32, (8, 64)), (0, 16, (8, 8))])
def test_nvmma_shared_atoms(swz, bits, shape):
    enc = NVMMASharedLayout(swz, False, bits)
    inv = to_linear(enc, shape).invert()
    eb = bits // 8
    tile_cols = swz // eb if swz else shape[1]
    for r in range(shape[0]):
        for c in range(shape[1]):
            ctile, cin = divmod(c, tile_cols)
            if swz:
                phase = (r // (128 // swz)) % (swz // 16)
                vec = 16 // eb
                cin = ((cin // vec) ^ phase) * vec + cin % vec
            exp = ctile * shape[0] * tile_cols + r * tile_cols + cin
            assert inv.apply(dim0=r, dim1=c) == (exp,)


def test_nvmma_transposed_and_too_small():
    t = to_linear(NVMMASharedLayout(128, True, 16), (64, 64))
    assert t.apply(offset=1) == (1, 0)
    with pytest.raises(LayoutError, match="at least 8 rows x 64"):
        to_linear(NVMMASharedLayout(128, False, 16), (64, 32))


def test_shape_errors():
    with pytest.raises(LayoutError, match="power of two"):
        to_linear(BlockedLayout((1,), (32,), (4,), (0,)), (100,))
    with pytest.raises(LayoutError, match="rank"):
        to_linear(BlockedLayout((1,), (32,), (4,), (0,)), (4, 4))
    with pytest.raises(LayoutError, match="distributed"):
        ownership(SwizzledSharedLayout(1, 1, 1, (1, 0)), (8, 8))


def test_apply_array_matches_apply_on_random_layouts():
    """The table lookups of ``apply_array`` (8 index bits per table) give what ``apply``
    gives point by point, for in-dims of 0 to 13 bits (two tables) and any bases."""
    rng = np.random.default_rng()
    for _ in range(20):
        nbits = {"register": int(rng.integers(0, 14)), "lane": 5, "warp": int(rng.integers(0, 4))}
        bases = {k: [tuple(int(x) for x in rng.integers(0, 1 << 10, 2)) for _ in range(n)]
                 for k, n in nbits.items()}
        ll = LL(bases, ["dim0", "dim1"])
        regs = rng.integers(0, 1 << nbits["register"], 6)
        lanes = rng.integers(0, 32, 6)
        warps = rng.integers(0, 1 << nbits["warp"], 6)
        got = ll.apply_array(register=regs, lane=lanes, warp=warps)
        want = [ll.apply(register=int(r), lane=int(la), warp=int(w))
                for r, la, w in zip(regs, lanes, warps, strict=True)]
        np.testing.assert_array_equal(got, want)
    ll = LL({"register": [(1, 0)] * 9}, ["dim0", "dim1"])
    with pytest.raises(LayoutError, match="register index outside"):
        ll.apply_array(register=np.array([512]))
