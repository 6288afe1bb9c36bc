"""Linear layouts: maps over GF(2) from hardware indices to tensor coordinates.

A linear layout sends the bits of *input dimensions* (``register``, ``lane``, ``warp``,
``block`` for values held in registers; ``offset`` for shared memory) to coordinates of
*output dimensions* (``dim0``, ``dim1``, ...). It is fully given by its *bases*: for every input
dimension, one basis vector per bit of the index, each basis a tuple of output coordinates.
Evaluating it XORs together the bases of the set bits::

    L(register=r, lane=l, ...) = XOR over set bits i of r of bases["register"][i]
                                 XOR over set bits j of l of bases["lane"][j] ...

All sizes are powers of two. Bases may be zero (several hardware indices hold the same
element: broadcast). This follows Triton's ``LinearLayout`` (``include/triton/Tools/
LinearLayout.h``, ``lib/Tools/LinearLayout.cpp``) and the paper K. Zhou et al., "Linear
Layouts: Robust Code Generation of Efficient Tensor Computation Using F2", arXiv:2505.23819.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import reduce

import numpy as np

from .errors import LayoutError

#: In-dimension names of distributed (register) layouts, in Triton's printing order.
DISTRIBUTED_IN_DIMS = ("register", "lane", "warp", "block")


def is_pow2(x: int) -> bool:
    """True when ``x`` is a positive power of two (1, 2, 4, ...)."""
    return isinstance(x, (int, np.integer)) and x > 0 and (int(x) & (int(x) - 1)) == 0


def log2_exact(x: int, what: str = "size") -> int:
    """log2 of a power of two; raises :class:`LayoutError` naming ``what`` otherwise."""
    if not is_pow2(x):
        raise LayoutError(f"{what} must be a power of two, got {x}")
    return int(x).bit_length() - 1


#: index bits per lookup table of :meth:`LinearLayout.apply_array` (tables of 256 rows)
_TABLE_BITS = 8


def _xor_table(vecs: Sequence[Sequence[int]], rank: int) -> np.ndarray:
    """int64 ``[2**len(vecs), rank]``: row ``i`` is the XOR of the ``vecs`` whose bit is set
    in ``i`` (the layout's value on index ``i`` of one in-dim, for those bits)."""
    table = np.zeros((1, rank), np.int64)
    for vec in vecs:
        table = np.concatenate([table, table ^ np.asarray(vec, dtype=np.int64)])
    return table


def standard_out_dims(rank: int) -> tuple[str, ...]:
    """Triton's standard output dimension names ``("dim0", ..., "dim{rank-1}")``."""
    return tuple(f"dim{i}" for i in range(rank))


def _normalised_bases(bases: Mapping[str, Sequence[Sequence[int]]],
                      names: tuple[str, ...]) -> dict[str, tuple[tuple[int, ...], ...]]:
    """``bases`` as tuples of ints keyed by str in-dim names; raises LayoutError for a basis
    with the wrong number of coordinates or a negative one."""
    rank = len(names)
    norm: dict[str, tuple[tuple[int, ...], ...]] = {}
    for in_name, vecs in bases.items():
        rows = []
        for i, vec in enumerate(vecs):
            vec = tuple(int(v) for v in vec)
            if len(vec) != rank:
                raise LayoutError(
                    f"basis {i} of in-dim {in_name!r} has {len(vec)} coordinates, "
                    f"expected {rank} (one per out-dim {list(names)})")
            if any(v < 0 for v in vec):
                raise LayoutError(f"basis {i} of in-dim {in_name!r} has a negative value {vec}")
            rows.append(vec)
        norm[str(in_name)] = tuple(rows)
    return norm


def _smallest_sizes(norm: Mapping[str, tuple[tuple[int, ...], ...]],
                    rank: int) -> tuple[int, ...]:
    """Per out-dim, the smallest power of two above every basis coordinate."""
    sizes = []
    for k in range(rank):
        acc = 0
        for vecs in norm.values():
            for vec in vecs:
                acc |= vec[k]
        sizes.append(1 << acc.bit_length())
    return tuple(sizes)


def _check_bases_fit(norm: Mapping[str, tuple[tuple[int, ...], ...]], names: Sequence[str],
                     sizes: Sequence[int]) -> None:
    """Raise LayoutError when a basis coordinate falls outside its out-dim's size."""
    for in_name, vecs in norm.items():
        for i, vec in enumerate(vecs):
            for n, s, v in zip(names, sizes, vec, strict=False):
                if v >= s:
                    raise LayoutError(f"basis {i} of in-dim {in_name!r} maps to {n}={v}, "
                                      f"outside its size {s}")


class LinearLayout:
    """A linear map over GF(2) from named input dims to named output dims (Triton's LinearLayout).

    Args:
        bases: mapping in-dim name -> sequence of basis vectors; basis ``i`` of an in-dim is the
            image of index ``2**i`` and is a sequence of ints, one per output dim (in the order of
            ``out_dims``). The in-dim's size is ``2 ** len(bases[name])``. Insertion order is kept.
        out_dims: either a mapping out-dim name -> size (a power of two) or a sequence of names
            (sizes are then inferred as the smallest power of two above every basis value, as
            Triton does).

    Raises:
        LayoutError: a basis of the wrong length, a negative value, a value outside its out-dim's
            size, or a size that is not a power of two.

    Instances are immutable and hashable; ``==`` compares bases, in-dim and out-dim names and
    out-dim sizes (in-dims with zero bases are significant, as in Triton).
    """

    __slots__ = ("_bases", "_out_names", "_out_sizes")

    def __init__(self, bases: Mapping[str, Sequence[Sequence[int]]],
                 out_dims: Mapping[str, int] | Sequence[str]):
        if isinstance(out_dims, Mapping):
            names = tuple(out_dims)
            sizes = tuple(int(out_dims[n]) for n in names)
        else:
            names = tuple(out_dims)
            sizes = None
        if len(set(names)) != len(names):
            raise LayoutError(f"duplicate output dimension names {names}")
        norm = _normalised_bases(bases, names)
        if sizes is None:
            sizes = _smallest_sizes(norm, len(names))
        for n, s in zip(names, sizes, strict=False):
            log2_exact(s, f"size of out-dim {n!r}")
        _check_bases_fit(norm, names, sizes)
        self._bases = norm
        self._out_names = names
        self._out_sizes = sizes

    # ----------------------------------------------------------------- constructors
    @classmethod
    def empty(cls) -> "LinearLayout":
        """The layout with no in-dims and no out-dims (unit of ``*``)."""
        return cls({}, {})

    @classmethod
    def identity1d(cls, size: int, in_dim: str, out_dim: str) -> "LinearLayout":
        """Identity of ``size`` (a power of two) from ``in_dim`` to ``out_dim``: bases 1, 2, 4,
        ..."""
        n = log2_exact(size, f"identity size for {in_dim!r}")
        return cls({in_dim: [(1 << i,) for i in range(n)]}, {out_dim: size})

    @classmethod
    def zeros1d(cls, size: int, in_dim: str, out_dim: str) -> "LinearLayout":
        """``size`` indices of ``in_dim`` all mapped to coordinate 0 of ``out_dim`` (broadcast)."""
        n = log2_exact(size, f"broadcast size for {in_dim!r}")
        return cls({in_dim: [(0,)] * n}, {out_dim: 1})

    # ----------------------------------------------------------------- accessors
    @property
    def in_dims(self) -> tuple[str, ...]:
        """Input dimension names, in order."""
        return tuple(self._bases)

    @property
    def out_dims(self) -> tuple[str, ...]:
        """Output dimension names, in order."""
        return self._out_names

    @property
    def out_dim_sizes(self) -> dict[str, int]:
        """Mapping out-dim name -> size (a power of two)."""
        return dict(zip(self._out_names, self._out_sizes, strict=True))

    @property
    def rank(self) -> int:
        """Number of output dimensions."""
        return len(self._out_names)

    @property
    def bases(self) -> dict[str, tuple[tuple[int, ...], ...]]:
        """Mapping in-dim name -> tuple of basis vectors (copies are immutable tuples)."""
        return dict(self._bases)

    def in_dim_bases(self, name: str) -> tuple[tuple[int, ...], ...]:
        """Basis vectors of one in-dim (empty tuple when the in-dim is absent)."""
        return self._bases.get(name, ())

    def in_dim_size_log2(self, name: str) -> int:
        """Number of bits of in-dim ``name`` (0 when absent)."""
        return len(self._bases.get(name, ()))

    def in_dim_size(self, name: str) -> int:
        """Number of indices of in-dim ``name``: ``2 ** len(bases[name])``; 1 when absent."""
        return 1 << self.in_dim_size_log2(name)

    def out_dim_size(self, name: str) -> int:
        """Size of out-dim ``name``; 1 when absent."""
        return dict(zip(self._out_names, self._out_sizes, strict=True)).get(name, 1)

    def total_in_size(self) -> int:
        """Product of all in-dim sizes."""
        return 1 << sum(len(v) for v in self._bases.values())

    def total_out_size(self) -> int:
        """Product of all out-dim sizes."""
        return reduce(lambda a, b: a * b, self._out_sizes, 1)

    # ----------------------------------------------------------------- evaluation
    def apply(self, **ins: int) -> tuple[int, ...]:
        """Evaluate the layout at one hardware index.

        Args: keyword per in-dim, e.g. ``apply(register=3, lane=5, warp=1, block=0)``; omitted
            in-dims are 0. An in-dim the layout lacks may only be given as 0.
        Returns: the output coordinate, a tuple of ints in ``out_dims`` order.
        Raises: LayoutError for an index outside its in-dim or an unknown in-dim set non-zero.
        """
        out = [0] * self.rank
        for name, value in ins.items():
            value = int(value)
            vecs = self._bases.get(name)
            if vecs is None:
                if value != 0:
                    raise LayoutError(
                        f"layout has no in-dim {name!r} (in-dims: {list(self.in_dims)})")
                continue
            if not 0 <= value < (1 << len(vecs)):
                raise LayoutError(f"{name}={value} is outside 0..{(1 << len(vecs)) - 1}")
            bit = 0
            while value:
                if value & 1:
                    for k, v in enumerate(vecs[bit]):
                        out[k] ^= v
                value >>= 1
                bit += 1
        return tuple(out)

    def apply_array(self, **ins) -> np.ndarray:
        """Vectorised :meth:`apply`: each keyword is an int array (all broadcastable together).

        Returns an int64 array of shape ``broadcast_shape + (rank,)``.
        """
        arrays = {k: np.asarray(v, dtype=np.int64) for k, v in ins.items()}
        shape = np.broadcast_shapes(*(a.shape for a in arrays.values())) if arrays else ()
        out = np.zeros(shape + (self.rank,), dtype=np.int64)
        for name, arr in arrays.items():
            vecs = self._bases.get(name)
            if vecs is None:
                if np.any(arr != 0):
                    raise LayoutError(f"layout has no in-dim {name!r}")
                continue
            if np.any((arr < 0) | (arr >= (1 << len(vecs)))):
                raise LayoutError(f"{name} index outside 0..{(1 << len(vecs)) - 1}")
            for lo in range(0, len(vecs), _TABLE_BITS):  # one table lookup per 8 index bits
                table = _xor_table(vecs[lo:lo + _TABLE_BITS], self.rank)
                out ^= table[(arr >> lo) & (len(table) - 1)]
        return out

    def coords(self) -> np.ndarray:
        """Tensor coordinate of every (warp, lane, register) of a distributed layout.

        Returns an int64 array of shape ``[num_warps, num_lanes, num_registers, rank]`` (num_lanes
        is 32 for every NVIDIA layout), with block fixed at 0.
        """
        w = np.arange(self.in_dim_size("warp"))[:, None, None]
        ln = np.arange(self.in_dim_size("lane"))[None, :, None]
        r = np.arange(self.in_dim_size("register"))[None, None, :]
        ins = {"warp": w, "lane": ln, "register": r}
        ins = {k: v for k, v in ins.items() if k in self._bases}
        out = self.apply_array(**ins) if ins else np.zeros((1, 1, 1, self.rank), np.int64)
        full = (self.in_dim_size("warp"), self.in_dim_size("lane"), self.in_dim_size("register"))
        return np.broadcast_to(out, full + (self.rank,)).copy()

    # ----------------------------------------------------------------- algebra
    def __mul__(self, outer: "LinearLayout") -> "LinearLayout":
        """Product (Triton's ``operator*``): ``self`` is the inner (faster) factor.

        In-dims present in both get ``self``'s bases followed by ``outer``'s; out-dims present in
        both have their sizes multiplied and ``outer``'s coordinates scaled by ``self``'s size.
        """
        in_names = list(self.in_dims) + [d for d in outer.in_dims if d not in self._bases]
        out_names = list(self.out_dims) + [d for d in outer.out_dims if d not in self._out_names]
        s_idx = {n: i for i, n in enumerate(self._out_names)}
        o_idx = {n: i for i, n in enumerate(outer._out_names)}
        sizes = {n: self.out_dim_size(n) * outer.out_dim_size(n) for n in out_names}
        shift = {n: self.out_dim_size(n).bit_length() - 1 for n in out_names}
        bases: dict[str, list[tuple[int, ...]]] = {}
        for name in in_names:
            rows = [tuple(v[s_idx[n]] if n in s_idx else 0 for n in out_names)
                    for v in self._bases.get(name, ())]
            rows += [tuple((v[o_idx[n]] << shift[n]) if n in o_idx else 0 for n in out_names)
                     for v in outer._bases.get(name, ())]
            bases[name] = rows
        return LinearLayout(bases, sizes)

    def compose(self, outer: "LinearLayout") -> "LinearLayout":
        """``outer ∘ self``: first ``self``, then ``outer`` (Triton's ``LinearLayout::compose``).

        ``outer``'s in-dims must be ``self``'s out-dims with sizes at least as large.
        Returns a layout with ``self``'s in-dims and ``outer``'s out-dims.
        Raises: LayoutError when the dimensions do not line up.
        """
        for n, s in zip(self._out_names, self._out_sizes, strict=True):
            if outer.in_dim_size(n) < s or (n not in outer._bases and s > 1):
                outer_dims = {d: outer.in_dim_size(d) for d in outer.in_dims}
                raise LayoutError(
                    f"cannot compose: out-dim {n!r} of size {s} is not an in-dim of the outer "
                    f"layout of size >= {s} (outer in-dims: {outer_dims})")
        bases = {}
        for name, vecs in self._bases.items():
            bases[name] = [outer.apply(**dict(zip(self._out_names, v, strict=False))) for v in vecs]
        return LinearLayout(bases, outer.out_dim_sizes)

    def transpose_outs(self, names: Sequence[str]) -> "LinearLayout":
        """Same map with the output dimensions reordered to ``names`` (a permutation)."""
        names = tuple(names)
        if sorted(names) != sorted(self._out_names):
            raise LayoutError(f"transpose_outs: {names} is not a permutation of {self._out_names}")
        idx = [self._out_names.index(n) for n in names]
        bases = {k: [tuple(v[i] for i in idx) for v in vecs] for k, vecs in self._bases.items()}
        return LinearLayout(bases, {n: self.out_dim_size(n) for n in names})

    def transpose_ins(self, names: Sequence[str]) -> "LinearLayout":
        """Same map with the input dimensions reordered to ``names`` (a permutation)."""
        names = tuple(names)
        if sorted(names) != sorted(self.in_dims):
            raise LayoutError(f"transpose_ins: {names} is not a permutation of {self.in_dims}")
        return LinearLayout({n: self._bases[n] for n in names}, self.out_dim_sizes)

    # -- GF(2) matrix view ------------------------------------------------
    def _out_bits(self) -> list[tuple[str, int]]:
        return [(n, b) for n, s in zip(self._out_names, self._out_sizes, strict=True)
                for b in range(s.bit_length() - 1)]

    def matrix(self) -> np.ndarray:
        """The layout as a GF(2) matrix, uint8 of shape ``[out_bits, in_bits]``.

        Columns are the in-dim bits in ``in_dims`` order (low bit first); rows the out-dim bits.
        """
        out_bits = self._out_bits()
        cols = [v for vecs in self._bases.values() for v in vecs]
        m = np.zeros((len(out_bits), len(cols)), dtype=np.uint8)
        idx = {n: i for i, n in enumerate(self._out_names)}
        for c, v in enumerate(cols):
            for r, (n, b) in enumerate(out_bits):
                m[r, c] = (v[idx[n]] >> b) & 1
        return m

    def rank_gf2(self) -> int:
        """Rank over GF(2) of :meth:`matrix`."""
        return _gf2_rank(self.matrix())

    @property
    def is_surjective(self) -> bool:
        """True when every output coordinate is reached by some input."""
        return self.rank_gf2() == len(self._out_bits())

    @property
    def is_injective(self) -> bool:
        """True when no two inputs map to the same output (no broadcast)."""
        return self.rank_gf2() == sum(len(v) for v in self._bases.values())

    def invert(self) -> "LinearLayout":
        """The inverse map, from this layout's out-dims to its in-dims.

        Returns a layout whose in-dims are ``out_dims`` (same sizes) and whose out-dims are
        ``in_dims`` (sizes ``in_dim_size``).
        Raises: LayoutError when the layout is not bijective (broadcast or not surjective).
        """
        m = self.matrix()
        n_out, n_in = m.shape
        if n_out != n_in or _gf2_rank(m) != n_in:
            raise LayoutError(
                f"layout is not invertible: {n_in} input bits, {n_out} output bits, "
                f"rank {_gf2_rank(m)} (broadcast or missing coordinates)")
        inv = _gf2_inverse(m)  # [in_bits, out_bits]
        in_bits = [(n, b) for n, vecs in self._bases.items() for b in range(len(vecs))]
        in_names = list(self._bases)
        bases: dict[str, list[tuple[int, ...]]] = {n: [] for n in self._out_names}
        for col, (oname, _ob) in enumerate(self._out_bits()):
            vec = [0] * len(in_names)
            for row, (iname, ib) in enumerate(in_bits):
                if inv[row, col]:
                    vec[in_names.index(iname)] |= 1 << ib
            bases[oname].append(tuple(vec))
        return LinearLayout(bases, {n: self.in_dim_size(n) for n in in_names})

    def invert_and_compose(self, other: "LinearLayout") -> "LinearLayout":
        """``other⁻¹ ∘ self`` for an invertible ``other``: where each index of ``self`` lives in
        ``other`` (e.g. which shared offset holds the element a register holds)."""
        return self.compose(other.invert())

    # ----------------------------------------------------------------- dunder
    def _key(self):
        return (tuple(self._bases.items()), self._out_names, self._out_sizes)

    def __eq__(self, other):
        if not isinstance(other, LinearLayout):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        b = ", ".join(f"{k!r}: {[list(v) for v in vecs]}" for k, vecs in self._bases.items())
        return f"LinearLayout({{{b}}}, {self.out_dim_sizes})"

    def __str__(self):
        """Triton's ``LinearLayout::toString`` format: one line per basis, then the out-dims."""
        lines = []
        for name, vecs in self._bases.items():
            for i, v in enumerate(vecs):
                lead = " - " if i == 0 else "   "
                lines.append(f"{lead}{name}={1 << i} -> ({', '.join(map(str, v))})")
            if not vecs:
                lines.append(f" - {name} is a size 1 dimension")
        outs = ", ".join(f"{n} (size {s})"
                         for n, s in zip(self._out_names, self._out_sizes, strict=True))
        lines.append(f"where out dims are: [{outs}]")
        return "\n".join(lines)


def _gf2_rank(m: np.ndarray) -> int:
    a = (m.copy() & 1).astype(np.uint8)
    rows, cols = a.shape
    r = 0
    for c in range(cols):
        piv = next((i for i in range(r, rows) if a[i, c]), None)
        if piv is None:
            continue
        a[[r, piv]] = a[[piv, r]]
        for i in range(rows):
            if i != r and a[i, c]:
                a[i] ^= a[r]
        r += 1
        if r == rows:
            break
    return r


def _gf2_inverse(m: np.ndarray) -> np.ndarray:
    n = m.shape[0]
    a = np.concatenate([m.astype(np.uint8) & 1, np.eye(n, dtype=np.uint8)], axis=1)
    for c in range(n):
        piv = next(i for i in range(c, n) if a[i, c])
        a[[c, piv]] = a[[piv, c]]
        for i in range(n):
            if i != c and a[i, c]:
                a[i] ^= a[c]
    return a[:, n:]


def product(layouts: Iterable[LinearLayout]) -> LinearLayout:
    """Product of several layouts, the first being the fastest-varying."""
    return reduce(lambda a, b: a * b, layouts, LinearLayout.empty())
