"""The interpreter's view of global memory: byte addresses mapped onto the launch's arrays.

Pointer values are ``int64`` byte addresses, exactly as in the compiled backends (element
address = base + offset * itemsize), so pointer arithmetic, strided views, bitcasts between
pointer types and ``int_to_ptr`` all behave the same. Each pointer argument's byte span
``[lo, hi)`` (from :class:`workbench.backends.base.PointerArg`) is mapped by a flat ``uint8``
numpy view created from its address; overlapping spans (the same array passed twice) are merged.
Every access is checked against the spans; an access of unknown origin outside all of them
first looks for a live host array holding it (a pointer made from an integer, see
:mod:`.host_memory`) and maps it as one more span; an access still outside raises
:class:`OutOfBounds` (an internal signal the caller turns into
:class:`workbench.errors.OutOfBoundsError` with the program id and source line).
"""
from __future__ import annotations

import ctypes

import numpy as np

from .host_memory import find_host_buffers


class OutOfBounds(Exception):
    """Internal: some active lanes of an access fall outside every span.

    ``bad``: bool array (the access's shape) of offending lanes; ``addr``: the addresses."""

    def __init__(self, bad: np.ndarray, addr: np.ndarray):
        super().__init__("out of bounds")
        self.bad, self.addr = bad, addr


class ArgRegion:
    """One pointer argument: ``name``, ``base`` (address of element 0), ``lo``/``hi`` (byte span)
    and ``itemsize`` (bytes)."""

    def __init__(self, name: str, base: int, lo: int, hi: int, itemsize: int):
        self.name, self.base, self.lo, self.hi, self.itemsize = name, base, lo, hi, itemsize


class Span:
    """A contiguous byte range ``[lo, hi)`` backed by a writable flat ``uint8`` view ``u8``."""

    def __init__(self, lo: int, hi: int, keep: list):
        self.lo, self.hi, self.size = lo, hi, hi - lo
        if self.size > 0:
            buf = (ctypes.c_uint8 * self.size).from_address(lo)
            # numpy's stubs do not list ctypes arrays as buffers; numpy accepts them
            self.u8 = np.frombuffer(buf, dtype=np.uint8)  # type: ignore[call-overload]
        else:
            self.u8 = np.zeros(0, dtype=np.uint8)
        self.keep = keep  # the arrays whose memory this is: kept alive with the span
        self._views: dict = {}

    def view(self, dt: np.dtype) -> np.ndarray:
        """The span as an array of ``dt`` elements starting at ``lo`` (tail bytes dropped)."""
        v = self._views.get(dt)
        if v is None:
            k = dt.itemsize
            v = self.u8[: (self.size // k) * k].view(dt)
            self._views[dt] = v
        return v


class Memory:
    """The memory of one launch: ``args`` (one :class:`ArgRegion` per pointer parameter, None
    for scalars) and the merged :class:`Span` list.

    ``pointer_args``: dict ``parameter index -> (name, PointerArg)``. ``recorder``: an
    :class:`~.recorder.AccessRecorder` the loads and stores report to, or None (the default)."""

    def __init__(self, pointer_args: dict, recorder=None):
        self.recorder = recorder
        self.args = {}
        intervals = []
        for idx, (name, pa) in pointer_args.items():
            self.args[idx] = ArgRegion(name, pa.address, pa.lo, pa.hi, pa.itemsize)
            if pa.hi > pa.lo:
                intervals.append([pa.lo, pa.hi, [pa.obj]])
        intervals.sort(key=lambda t: t[0])
        merged: list = []
        for lo, hi, keep in intervals:
            if merged and lo <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], hi)
                merged[-1][2].extend(keep)
            else:
                merged.append([lo, hi, keep])
        self.spans = [Span(lo, hi, keep) for lo, hi, keep in merged]
        self._index_spans()
        self._span_of_arg = {i: self._find_span(r.lo) for i, r in self.args.items()}

    def _index_spans(self) -> None:
        self.spans.sort(key=lambda s: s.lo)
        self._los = np.array([s.lo for s in self.spans], dtype=np.int64)
        self._his = np.array([s.hi for s in self.spans], dtype=np.int64)

    def _adopt(self, addr: np.ndarray, k: int) -> bool:
        """Add spans for live host arrays holding ``addr`` (pointers made from integers,
        see :mod:`.host_memory`) that overlap no span yet; True when any was added."""
        added = False
        for lo, hi, owner in find_host_buffers(addr, k):
            if any(s.lo < hi and lo < s.hi for s in self.spans):
                continue
            self.spans.append(Span(lo, hi, [owner]))
            added = True
        if added:
            self._index_spans()
        return added

    def _find_span(self, addr: int):
        for s in self.spans:
            if s.lo <= addr < s.hi:
                return s
        return None

    # -- locating ---------------------------------------------------------------------------
    def locate(self, addr: np.ndarray, mask, k: int, arg: int | None, aligned: bool = False):
        """Map addresses to memory. Returns a list of ``(span, sel, off, aligned)``: ``sel`` a
        bool array of the lanes it serves (None: every lane, or every lane of ``mask``),
        ``off`` fresh byte offsets into the span (a valid offset for masked-off lanes) and
        whether every offset is known to be a multiple of ``k`` (``aligned`` promises that the
        addresses are the argument's base plus multiples of ``k``). Raises
        :class:`OutOfBounds`."""
        region = self.args.get(arg) if arg is not None else None
        if region is not None:  # known origin: the access must stay inside that argument
            span = self._span_of_arg.get(arg)
            if span is not None:
                a = addr if mask is None else np.where(mask, addr, region.lo)
                if a.size == 0 or (a.min() >= region.lo and a.max() <= region.hi - k):
                    al = aligned and (region.base - span.lo) % k == 0
                    return [(span, None, np.subtract(a, span.lo), al)]
            ok = (addr >= region.lo) & (addr + k <= region.hi)
            bad = ~ok if mask is None else (mask & ~ok)
            if bad.any():
                raise OutOfBounds(bad, addr)
            return []  # every lane is masked off
        span = self._find_span(int(addr.flat[int(np.argmax(mask))] if mask is not None
                                   else addr.flat[0])) if self.spans and addr.size else None
        if span is not None:
            off = addr - span.lo
            if mask is not None:
                off = np.where(mask, off, 0)
            if off.min() >= 0 and off.max() <= span.size - k:
                return [(span, None, off, False)]
        # general path: element by element
        idx = np.searchsorted(self._los, addr, side="right") - 1
        ok = idx >= 0
        idxc = np.where(ok, idx, 0)
        if len(self.spans):
            ok &= addr + k <= self._his[idxc]
        else:
            ok[...] = False
        bad = ~ok if mask is None else (mask & ~ok)
        if bad.any():
            if self._adopt(addr[bad], k):
                return self.locate(addr, mask, k, arg, aligned)
            raise OutOfBounds(bad, addr)
        out = []
        for si in np.unique(idxc if mask is None else idxc[mask]):
            s = self.spans[int(si)]
            sel = idxc == si
            if mask is not None:
                sel &= mask
            out.append((s, sel, np.where(sel, addr - s.lo, 0), False))
        return out

    # -- access -----------------------------------------------------------------------------
    @staticmethod
    def _gather(span: Span, off: np.ndarray, dt: np.dtype, aligned: bool) -> np.ndarray:
        """Elements at byte offsets ``off`` (a fresh array: it is overwritten)."""
        k = dt.itemsize
        if k == 1:
            return span.view(dt)[off]
        if aligned or not (off & (k - 1)).any():
            return span.view(dt)[np.right_shift(off, k.bit_length() - 1, out=off)]
        idx = off[..., None] + np.arange(k)
        return np.ascontiguousarray(span.u8[idx]).view(dt)[..., 0]

    @staticmethod
    def _scatter(span: Span, off: np.ndarray, vals: np.ndarray, dt: np.dtype,
                 aligned: bool) -> None:
        k = dt.itemsize
        if k == 1:
            span.view(dt)[off] = vals
            return
        if aligned or not (off & (k - 1)).any():
            span.view(dt)[np.right_shift(off, k.bit_length() - 1, out=off)] = vals
            return
        raw = np.ascontiguousarray(vals.astype(dt, copy=False)).view(np.uint8)
        raw = raw.reshape(-1, k)
        for j in range(k):  # assign byte j of each element
            span.u8[off + j] = raw[:, j]

    def load(self, addr: np.ndarray, mask, dt: np.dtype, arg: int | None,
             aligned: bool = False) -> np.ndarray:
        """Gather elements of dtype ``dt`` at byte addresses ``addr`` (any shape). Masked-off
        lanes (``mask`` False) read nothing; their result is unspecified (callers select)."""
        parts = self.locate(addr, mask, dt.itemsize, arg, aligned)
        if len(parts) == 1 and parts[0][1] is None:
            span, _, off, al = parts[0]
            return self._gather(span, off, dt, al)
        out = np.zeros(addr.shape, dtype=dt)
        for span, sel, off, al in parts:
            out[sel] = self._gather(span, off[sel], dt, al)
        return out

    def store(self, addr: np.ndarray, vals: np.ndarray, mask, dt: np.dtype, arg: int | None,
              aligned: bool = False):
        """Scatter ``vals`` (same shape as ``addr``) of dtype ``dt`` to the lanes of ``mask``
        (None: all); lanes in order, so with repeated addresses the last lane wins."""
        parts = self.locate(addr, mask, dt.itemsize, arg, aligned)
        for span, sel, off, al in parts:
            if sel is None:
                sel = mask
            if sel is None:
                self._scatter(span, off.ravel(), vals.ravel(), dt, al)
            else:
                self._scatter(span, off[sel], vals[sel], dt, al)

    def rmw(self, addr: np.ndarray, vals: np.ndarray, mask, dt: np.dtype, arg: int | None,
            combine) -> np.ndarray:
        """Atomic read-modify-write, lane by lane in order: ``old = mem; mem = combine(old,
        val)``; returns the old values (0 in masked-off lanes). ``vals`` has ``addr``'s shape;
        ``combine`` maps arrays of ``dt`` to ``dt``."""
        flat_vals = vals.ravel()
        return self._atomic(addr, mask, dt, arg, lambda old, lanes: combine(old, flat_vals[lanes]))

    def cas(self, addr: np.ndarray, cmp: np.ndarray, vals: np.ndarray, dt: np.dtype,
            arg: int | None) -> np.ndarray:
        """Atomic compare-and-swap per lane in order: if ``mem == cmp`` then ``mem = val``;
        returns the old values. ``cmp`` and ``vals`` have ``addr``'s shape."""
        fc, fv = cmp.ravel(), vals.ravel()
        return self._atomic(addr, None, dt, arg,
                            lambda old, lanes: np.where(old == fc[lanes], fv[lanes], old))

    def _atomic(self, addr, mask, dt, arg, update) -> np.ndarray:
        k = dt.itemsize
        parts = self.locate(addr, mask, k, arg)
        old_all = np.zeros(addr.size, dtype=dt)
        for span, sel, off, _ in parts:
            if sel is None:
                sel = mask
            lanes = np.arange(addr.size) if sel is None else np.flatnonzero(sel)
            o = off.ravel()[lanes]
            if k > 1 and (o & (k - 1)).any():
                raise NotImplementedError("misaligned atomic access")
            view, eidx = span.view(dt), o // k
            if np.unique(eidx).size == eidx.size:  # distinct addresses: order does not matter
                old = view[eidx].copy()
                view[eidx] = update(old, lanes)
            else:  # lane by lane, in order
                old = np.empty(eidx.size, dtype=dt)
                for j, e in enumerate(eidx.tolist()):
                    cur = view[e:e + 1].copy()
                    old[j] = cur[0]
                    view[e] = update(cur, lanes[j:j + 1])[0]
            old_all[lanes] = old
        return old_all.reshape(addr.shape)


def poison(arr: np.ndarray) -> np.ndarray:
    """Fill ``arr`` in place with a value that shows when read: NaN for floats (including
    bf16 stored as uint16 0x7FC0 where ``arr`` has the ml_dtypes/bfloat16 dtype name), and
    0x5A bytes for integers (e.g. int32 1515870810). Returns ``arr``."""
    if np.issubdtype(arr.dtype, np.floating):
        arr.fill(np.nan)
    elif arr.dtype.name == "bfloat16":
        arr.view(np.uint16).fill(0x7FC0)
    elif arr.dtype == np.bool_:
        arr.fill(True)
    else:
        arr.view(np.uint8).fill(0x5A)
    return arr


def empty_poisoned(shape, dtype) -> np.ndarray:
    """``np.empty(shape, dtype)`` filled by :func:`poison` (NaN for floats)."""
    return poison(np.empty(shape, dtype=dtype))
