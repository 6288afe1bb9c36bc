"""Per-argument specialisation codes for the launch fast path (Triton's approach).

A *code* is a small hashable value computed from one raw launch argument with minimal work
(``type(arg)`` picks a handler from a table); equal codes (for one parameter of one kernel)
imply the slow path (:func:`workbench.runtime.binding.specialize`) gives the same
:class:`~workbench.runtime.specialization.ArgSpec`, the same device and the same verdict
(accepted or a LaunchError). A handler returns ``(code, runtime_value)``, where the runtime
value is what the backend launcher gets for a passed parameter (a ``PointerArg`` for an
array, a Python scalar), or :data:`MISS` when the argument is unusual: then the launch takes
the slow path, which gives the detailed errors.

Codes: numpy array -> ``"*fp32"`` / ``"*fp32:16"`` (first element's address divisible by 16);
int -> ``"i32"``, ``"i32:16"``, ``"i32:1"`` (and ``i64``/``u64``/a fixed annotation type);
float -> ``"fp32"``; bool -> ``"i1"``; a CUDA torch tensor -> ``(dtype, device index,
aligned)`` (its runtime value is the device address, an int); a host ``TensorDescriptor`` ->
``("tensordesc", dtype, device, device index, block shape)`` (its runtime value a
``DescriptorArg``); a constexpr -> ``(type, value)``.
"""
from __future__ import annotations

import ctypes
import sys
from dataclasses import fields

import numpy as np

from ..backends.base import PointerArg
from ..backends.descriptors import DescriptorArg
from .devices import ArrayTypeError, array_info, byte_span
from .devices import from_cuda_array_interface as cai_array_info
from .specialization import NUMPY_TO_SHORT

MISS = object()  # "take the slow path"

_I32_LO, _I32_HI, _I64_LO, _I64_HI, _U64_HI = -2 ** 31, 2 ** 31, -2 ** 63, 2 ** 63, 2 ** 64
_INT_RANGES = {"i1": (0, 1), "i8": (-2 ** 7, 2 ** 7), "i16": (-2 ** 15, 2 ** 15),
               "i32": (-2 ** 31, 2 ** 31), "i64": (-2 ** 63, 2 ** 63), "u8": (0, 2 ** 8),
               "u16": (0, 2 ** 16), "u32": (0, 2 ** 32), "u64": (0, 2 ** 64)}


# ------------------------------------------------------------------------------ PointerArg
def _check_fast_pointer_arg() -> bool:
    """Whether PointerArg is a plain frozen dataclass (instance ``__dict__``, these five
    fields, nothing computed in ``__init__``), so it can be built by filling ``__dict__``."""
    names = tuple(f.name for f in fields(PointerArg))
    if names != ("address", "lo", "hi", "itemsize", "obj") or "__slots__" in vars(PointerArg):
        return False
    probe = object.__new__(PointerArg)
    vars(probe).update(address=1, lo=1, hi=2, itemsize=1, obj=None)
    return probe == PointerArg(1, 1, 2, 1, None) and not hasattr(PointerArg, "__post_init__")


_FAST_PA = _check_fast_pointer_arg()
_new = object.__new__


def pointer_arg(address: int, lo: int, hi: int, itemsize: int, obj) -> PointerArg:
    """``PointerArg(address, lo, hi, itemsize, obj)``, built by filling the instance
    ``__dict__`` instead of the frozen dataclass's per-field ``object.__setattr__`` calls
    (about 2.5x cheaper) when that is safe (:func:`_check_fast_pointer_arg`)."""
    if not _FAST_PA:
        return PointerArg(address, lo, hi, itemsize, obj)
    p = _new(PointerArg)
    d = p.__dict__
    d["address"] = address
    d["lo"] = lo
    d["hi"] = hi
    d["itemsize"] = itemsize
    d["obj"] = obj
    return p


# ------------------------------------------------------------------------------ parameters
class ParamInfo:
    """What the handlers need to know of one parameter: ``hints`` (not in
    ``do_not_specialize``), ``align`` (divisibility hints too: also not in
    ``do_not_specialize_on_alignment``), ``fixed`` (the annotation's type string or None),
    and derived ``fixed_ptr`` / ``fixed_float`` / ``int_range`` / ``int_codes``."""

    __slots__ = ("name", "hints", "align", "fixed", "fixed_ptr", "fixed_float", "int_range",
                 "int_codes", "inner")

    def __init__(self, name: str, hints: bool, fixed: str | None, align: bool | None = None):
        self.name, self.hints, self.fixed = name, hints, fixed
        self.align = hints if align is None else (hints and align)
        # the elements of a tuple argument: the same hints, no annotation
        self.inner = self if fixed is None else ParamInfo(name, hints, None, align)
        self.fixed_ptr = bool(fixed and fixed.startswith("*"))
        self.fixed_float = bool(fixed and fixed.startswith(("fp", "bf")))
        self.int_range = _INT_RANGES.get(fixed) if fixed else None
        self.int_codes = _codes(fixed) if fixed and not self.fixed_ptr else None


def _codes(typ: str) -> tuple:
    """(plain, divisible by 16, equal to 1) codes of int type ``typ``."""
    return (typ, typ + ":16", typ + ":1")


_C_I32, _C_I64, _C_U64 = _codes("i32"), _codes("i64"), _codes("u64")


def _int_code(v: int, pi: ParamInfo, codes):
    if pi.hints:
        if v == 1:
            return codes[2]
        if pi.align and v % 16 == 0:
            return codes[1]
    return codes[0]


# ------------------------------------------------------------------------------ handlers
def _int(v, pi: ParamInfo):
    if pi.fixed is None:
        if _I32_LO <= v < _I32_HI:
            codes = _C_I32
        elif _I64_HI <= v < _U64_HI:
            codes = _C_U64
        elif _I64_LO <= v < _I64_HI:
            codes = _C_I64
        else:
            return MISS, None
        return _int_code(v, pi, codes), v
    if pi.fixed_ptr:
        return MISS, None
    if pi.fixed_float:
        return "fp", float(v)
    rng = pi.int_range
    if rng is None or not rng[0] <= v < rng[1]:
        return MISS, None
    return _int_code(v, pi, pi.int_codes), v


def _float(v, pi: ParamInfo):
    return (MISS, None) if pi.fixed_ptr else ("fp", v)


def _bool(v, pi: ParamInfo):
    return (MISS, None) if pi.fixed_ptr else ("i1", bool(v))


def _none(v, pi: ParamInfo):
    return "None", None  # a constexpr None: not passed


def _np_int(v, pi: ParamInfo):
    """Numpy integer scalars keep their dtype (``np.int8(3)`` is i8)."""
    if pi.fixed_ptr:
        return MISS, None
    iv = int(v)
    if pi.fixed is None:
        typ = NUMPY_TO_SHORT[v.dtype.name]
        return (type(v), _int_code(iv, pi, _codes(typ))), iv
    return _int(iv, pi)  # an annotated type: as for a Python int


def _np_float(v, pi: ParamInfo):
    return (MISS, None) if pi.fixed_ptr else (type(v), float(v))


def _np_bool(v, pi: ParamInfo):
    return (MISS, None) if pi.fixed_ptr else ("i1", bool(v))


_addressof = ctypes.addressof
_from_buffer = ctypes.c_char.from_buffer
_NP_CODES: dict = {}  # numpy dtype -> ("*fp32", "*fp32:16", short) or None (unsupported)


def _np_codes(dt):
    codes = _NP_CODES.get(dt, MISS)
    if codes is MISS:
        short = NUMPY_TO_SHORT.get(dt.name)
        codes = None if short is None else ("*" + short, "*" + short + ":16", "*" + short)
        _NP_CODES[dt] = codes
    return codes


def _ndarray(a, pi: ParamInfo):
    """A numpy array: code ``"*<dtype>[:16]"``, runtime a PointerArg. The first element's
    address comes from ``ctypes.c_char.from_buffer`` (which succeeds only for a writable,
    C-contiguous, non-empty array: then the span is ``[addr, addr + nbytes)``), else from
    ``__array_interface__`` with the strided span."""
    codes = _NP_CODES.get(a.dtype) or _np_codes(a.dtype)
    if codes is None or (pi.fixed_ptr and pi.fixed != codes[2]):
        return MISS, None
    try:
        addr = _addressof(_from_buffer(a))
        lo, hi = addr, addr + a.nbytes
    except (TypeError, ValueError, BufferError):
        addr = a.__array_interface__["data"][0]
        if a.flags.c_contiguous:
            lo, hi = addr, addr + a.nbytes
        else:
            lo, hi = byte_span(addr, a.shape, a.strides, a.itemsize)
    return codes[1 if pi.align and not addr % 16 else 0], pointer_arg(addr, lo, hi,
                                                                       a.itemsize, a)


_TORCH_SHORT: dict = {}  # torch dtype -> short name or None


def _torch(t, pi: ParamInfo):
    """A CUDA torch tensor: code ``(dtype, device index, aligned)``, runtime value the device
    address of its first element (an int: the CUDA launcher needs nothing else; the byte span
    of a PointerArg serves the host backends' bounds checks). Host tensors -> MISS (their
    ``get_device()`` is -1)."""
    dev = t.get_device()
    if dev < 0:
        return MISS, None
    dt = t.dtype
    short = _TORCH_SHORT.get(dt, MISS)
    if short is MISS:
        short = _TORCH_SHORT[dt] = NUMPY_TO_SHORT.get(str(dt).replace("torch.", ""))
    if short is None or (pi.fixed_ptr and pi.fixed != "*" + short):
        return MISS, None
    addr = t.data_ptr()
    return (dt, dev, pi.align and not addr % 16), addr


def _cuda_array(v, pi: ParamInfo):
    """An object with ``__cuda_array_interface__`` (CuPy, Numba, ``workbench.cuda`` arrays):
    read by the same function as the slow path (:func:`workbench.runtime.devices.array_info`
    for such objects), so the code ``(dtype, device index, aligned)`` means what it does
    there; runtime value the device address. Unsupported element types -> MISS."""
    try:
        info = cai_array_info(v)
    except ArrayTypeError:
        return MISS, None
    if pi.fixed_ptr and pi.fixed != "*" + info.dtype:
        return MISS, None
    addr = info.address
    return (info.dtype, info.device_index, pi.align and not addr % 16), addr


HANDLERS: dict = {int: _int, float: _float, bool: _bool, type(None): _none,
                  np.ndarray: _ndarray, np.bool_: _np_bool}  # tuples: added below
for _it in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64):
    HANDLERS[_it] = _np_int
for _ft in (np.float16, np.float32, np.float64):
    HANDLERS[_ft] = _np_float


def _miss(v, pi):
    return MISS, None


def _tensordesc(v, pi: ParamInfo):
    """A host tensor descriptor (workbench's ``TensorDescriptor`` or Triton's): code
    ``("tensordesc", dtype, device, device index, block shape)``, what the slow path's
    signature type ``tensordesc<dtype[block]>`` and the launch's device are made of (its base
    read as :func:`~workbench.runtime.devices.array_info` reads it; a CUDA torch tensor
    through :func:`_torch_base`, fewer torch calls to the same values); runtime value its
    :class:`~workbench.backends.descriptors.DescriptorArg`. Anything unusual -> MISS."""
    if pi.fixed is not None:
        return MISS, None
    try:
        base = v.base
        bt = type(base)
        got = _torch_base(base) if (HANDLERS.get(bt) or handler_for(bt)) is _torch else None
        if got is None:
            info = array_info(base)
            if info is None:
                return MISS, None
            got = (info.dtype, info.device, info.device_index,
                   pointer_arg(info.address, info.lo, info.hi, info.itemsize, info.obj))
        if got is MISS:
            return MISS, None
        block = tuple(int(b) for b in v.block_shape)
        rv = DescriptorArg.of(v, got[3])
    except (ArrayTypeError, AttributeError, TypeError, ValueError):
        return MISS, None
    return ("tensordesc", got[0], got[1], got[2], block), rv


_TORCH_ITEMSIZE: dict = {}  # torch dtype -> bytes per element


def _torch_base(t):
    """(dtype, "cuda", device index, PointerArg) of a CUDA torch tensor, the values
    :func:`~workbench.runtime.devices.array_info` gives for it; None for a host tensor (the
    caller reads it the slow way), MISS for an element type no kernel takes."""
    dev = t.get_device()
    if dev < 0:
        return None
    dt = t.dtype
    short = _TORCH_SHORT.get(dt, MISS)
    if short is MISS:
        short = _TORCH_SHORT[dt] = NUMPY_TO_SHORT.get(str(dt).replace("torch.", ""))
    if short is None:
        return MISS
    itemsize = _TORCH_ITEMSIZE.get(dt)
    if itemsize is None:
        itemsize = _TORCH_ITEMSIZE[dt] = int(t.element_size())
    addr = t.data_ptr()
    lo, hi = byte_span(addr, t.shape, [s * itemsize for s in t.stride()], itemsize)
    return short, "cuda", dev, pointer_arg(addr, lo, hi, itemsize, t)


def _tuple(v, pi: ParamInfo):
    """A tuple (namedtuple, ``torch.Size``): code ``(class, element codes)``, runtime value
    the tuple of the elements' runtime values; MISS when any element is unusual."""
    inner = pi.inner
    codes, rvs = [], []
    for e in v:
        t = type(e)
        code, rv = (HANDLERS.get(t) or handler_for(t))(e, inner)
        if code is MISS:
            return MISS, None
        codes.append(code)
        rvs.append(rv)
    return (type(v), tuple(codes)), tuple(rvs)


HANDLERS[tuple] = _tuple


def handler_for(t: type):
    """The handler of argument type ``t`` (found once per type and kept in
    :data:`HANDLERS`; types without one get a handler returning MISS)."""
    h = HANDLERS.get(t)
    if h is None:
        torch = sys.modules.get("torch")
        if torch is not None and t is getattr(torch, "Tensor", None):
            h = _torch
        elif t.__name__ == "TensorDescriptor":  # workbench's or Triton's (duck-typed)
            h = _tensordesc
        elif issubclass(t, tuple):
            h = _tuple
        elif hasattr(t, "__cuda_array_interface__") and not issubclass(t, np.ndarray) \
                and not (t.__module__ or "").startswith("torch"):
            h = _cuda_array  # the order of devices.array_info: numpy, torch, then this
        else:
            h = _miss
        HANDLERS[t] = h
    return h


# ------------------------------------------------------------------------------ constexprs
CX_PLAIN = frozenset({int, bool, str, type(None)})


def constexpr_code(v, keep: list):
    """The code of a compile-time value: ``(type, value)`` for ints, bools, strings and None,
    ``(float, repr)`` for floats (so ``-0.0``/``0.0`` differ as their cache keys do); an
    ``@jit`` function or a language dtype by identity (the object is appended to ``keep``,
    which the cache entry holds, so the id stays unique); MISS for anything else."""
    t = type(v)
    if t in CX_PLAIN:
        return (t, v)
    if t is float:
        return (t, repr(v))
    if getattr(v, "__workbench_jit__", False) or (
            t.__module__.startswith("workbench.language") and hasattr(v, "name")
            and t.__name__ != "constexpr"):
        keep.append(v)
        return (t, id(v))
    return MISS

