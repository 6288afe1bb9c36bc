"""Host allocations a kernel may reach through pointers made from integers.

A kernel can load a table of addresses (``tensor.data_ptr()`` values) and turn them into
pointers (``tl.load(ptrs + g).to(tl.pointer_type(tl.float16))``, Triton's grouped GEMM
tutorial). Those addresses belong to no launch argument. Rather than read raw memory (a bad
address would kill the process), the interpreter looks, on the first such access, for live
CPU arrays whose memory holds the addresses: torch tensors (their whole storage) and numpy
arrays held by Python containers the garbage collector tracks (lists, tuples, dicts, object
attributes). An address in none of them stays an out-of-bounds error.
"""
from __future__ import annotations

import gc
import warnings

import numpy as np


def _torch_span(obj):
    """(lo, hi) bytes of a CPU torch tensor's storage, else None."""
    try:
        if obj.device.type != "cpu":
            return None
        storage = obj.untyped_storage()
        lo = int(storage.data_ptr())
        return lo, lo + int(storage.nbytes())
    except Exception:  # noqa: BLE001 - any tensor-like object that cannot say: not ours
        return None


def _numpy_span(a: np.ndarray):
    base = a
    while isinstance(base.base, np.ndarray):
        base = base.base
    lo = int(base.__array_interface__["data"][0])
    return lo, lo + int(base.nbytes)


_KIND: dict = {}  # class -> "tensor", "seq", "dict" or "" (memoised MRO walk)


def _kind(cls) -> str:
    k = _KIND.get(cls)
    if k is None:
        mro = cls.__mro__
        if any(c.__name__ == "Tensor" and (c.__module__ or "").startswith("torch")
               for c in mro):
            k = "tensor"
        else:
            k = "seq" if (list in mro or tuple in mro) else "dict" if dict in mro else ""
        _KIND[cls] = k
    return k


def _candidates():
    for obj in gc.get_objects():
        k = _kind(type(obj))
        if k == "tensor":
            yield obj
        elif k == "seq":
            yield from (x for x in obj if type(x) is np.ndarray)
        elif k == "dict":
            yield from (x for x in obj.values() if type(x) is np.ndarray)


def find_host_buffers(addresses: np.ndarray, itemsize: int) -> list:
    """``[(lo, hi, owner)]``: live CPU allocations holding the byte ranges
    ``[a, a + itemsize)`` for the given addresses (each allocation once)."""
    with warnings.catch_warnings():  # touching some lazy module objects warns
        warnings.simplefilter("ignore")
        return _find(np.unique(np.asarray(addresses, dtype=np.int64)), itemsize)


def _find(left: np.ndarray, itemsize: int) -> list:
    found: dict = {}
    for obj in _candidates():
        span = _numpy_span(obj) if isinstance(obj, np.ndarray) else _torch_span(obj)
        if span is None or span[1] <= span[0] or span in found:
            continue
        inside = (left >= span[0]) & (left + itemsize <= span[1])
        if inside.any():
            found[span] = obj
            left = left[~inside]
            if not left.size:
                break
    return [(lo, hi, obj) for (lo, hi), obj in found.items()]
