"""Binding launch arguments to a kernel's parameters, and the specialisation of a launch.

Rules (Triton 3.6, ``triton/runtime/jit.py``): bools are ``i1``; ints in [-2^31, 2^31) are ``i32``,
[2^63, 2^64) ``u64``, other ints ``i64``; an int equal to 1 is specialised to the constant 1
and leaves the compiled signature; ints divisible by 16 get ``tt.divisibility = 16``; floats are
``fp32`` and never specialised; arrays are ``*<dtype>`` pointers divisible by 16 when their
first element's address is; ``None`` is a constexpr. ``do_not_specialize`` turns off the
"== 1" and divisibility hints of the named parameters. Numpy scalars keep their own dtype
(``np.float64(x)`` is ``fp64``, ``np.int8(x)`` is ``i8``) and get the same int hints.
"""
from __future__ import annotations

import inspect
import linecache
import re
from dataclasses import dataclass

import numpy as np

from ..backends.base import PointerArg
from ..errors import ArgumentOverflowError, LaunchError, format_at
from ..ir.core import Location
from .devices import ArrayTypeError, array_info, cuda_target_for
from .specialization import (
    NUMPY_TO_SHORT,
    SHORT_TO_NUMPY,
    ArgSpec,
    Specialization,
    flat_runtime,
    scalar_type_of,
    tuple_spec,
)

_NO_DEFAULT = inspect.Parameter.empty
_INT_RANGES = {"i8": (-2 ** 7, 2 ** 7), "i16": (-2 ** 15, 2 ** 15),
               "i32": (-2 ** 31, 2 ** 31), "i64": (-2 ** 63, 2 ** 63), "u8": (0, 2 ** 8),
               "u16": (0, 2 ** 16), "u32": (0, 2 ** 32), "u64": (0, 2 ** 64)}


@dataclass(frozen=True)
class Param:
    """One parameter of a kernel: ``name``, position ``index``, whether it is a
    ``tl.constexpr``, its ``default`` (``inspect.Parameter.empty`` when none) and the type
    string fixed by an annotation (``x: tl.int64`` or ``x: "*fp32"``), else None."""

    name: str
    index: int
    constexpr: bool
    default: object = _NO_DEFAULT
    fixed_type: str | None = None


#: Triton's spellings of the 1-bit type in annotations (``_utils.type_canonicalisation_dict``)
_BOOL_NAMES = {"bool": "i1", "int1": "i1", "uint1": "i1", "u1": "i1", "i1": "i1"}


def _annotation_kind(ann):
    """("constexpr", None), ("type", "i64") or (None, None) for a parameter annotation."""
    if ann is _NO_DEFAULT or ann is None:
        return None, None
    if isinstance(ann, str):
        text = ann.strip().strip("'\"")
        if text.split(".")[-1] == "constexpr":
            return "constexpr", None
        short = text.split(".")[-1]
        short = _BOOL_NAMES.get(short) or NUMPY_TO_SHORT.get(short, short)
        base = short.lstrip("*")
        if base in SHORT_TO_NUMPY:
            return "type", short
        return None, None
    if isinstance(ann, type) and ann.__name__ == "constexpr":
        return "constexpr", None
    name = getattr(ann, "name", None)
    if isinstance(name, str):
        short = "i1" if name == "int1" else NUMPY_TO_SHORT.get(name, name)
        if short in SHORT_TO_NUMPY:
            return "type", short
    return None, None


def kernel_params(fn) -> tuple[Param, ...]:
    """The parameters of kernel function ``fn`` in declaration order.

    A parameter is a constexpr when annotated ``tl.constexpr`` (the object or the string).
    Raises :class:`LaunchError` for ``*args``/``**kwargs`` parameters (Triton rejects them)."""
    out = []
    for i, p in enumerate(inspect.signature(fn).parameters.values()):
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise LaunchError(format_at(
                param_location(fn, p.name), f"kernel parameter '{p.name}' is variadic",
                "Kernels take a fixed list of parameters; list each one."))
        kind, fixed = _annotation_kind(p.annotation)
        out.append(Param(p.name, i, kind == "constexpr", p.default, fixed))
    return tuple(out)


def param_location(fn, name: str | None = None) -> Location:
    """The Location of parameter ``name`` in ``fn``'s ``def`` (or of the ``def`` keyword when
    ``name`` is None or not found), for error messages. Lines are 1-based."""
    code = fn.__code__
    file, line = code.co_filename, code.co_firstlineno
    text = linecache.getline(file, line)
    probe = line
    while text and not re.match(r"\s*(async\s+)?def\b", text) and probe < line + 50:
        probe += 1
        text = linecache.getline(file, probe)
    if not text:
        return Location(file, line, 1)
    def_loc = Location(file, probe, text.index("def") + 1)
    if name is None:
        return def_loc
    pat = re.compile(r"\b%s\b" % re.escape(name))
    for ln in range(probe, probe + 50):
        t = linecache.getline(file, ln)
        start = t.index("def") + 3 if ln == probe else 0
        m = pat.search(t, start)
        if m:
            return Location(file, ln, m.start() + 1)
        if not t or t.rstrip().endswith(":"):
            break
    return def_loc


def launch_error(fn, message: str, hint: str | None = None, param: str | None = None,
                 cls: type[LaunchError] = LaunchError) -> LaunchError:
    """A :class:`LaunchError` (or subclass ``cls``) pointing at ``param`` (or the ``def``
    line) of kernel ``fn``."""
    loc = param_location(fn, param)
    end = loc.col + len(param) if param else None
    return cls(format_at(loc, message, hint, end))


def bind_arguments(fn, params, args, kwargs) -> dict:
    """Map every parameter name to its value: positional ``args`` in order, then ``kwargs``,
    then defaults. ``kwargs`` must hold only parameter names (the caller removes options).

    Raises :class:`LaunchError` (pointing at the kernel's ``def``) for too many arguments,
    an unknown keyword, a parameter given twice or a missing one."""
    name = fn.__name__
    if len(args) > len(params):
        listed = ", ".join(p.name for p in params)
        raise launch_error(fn, f"kernel '{name}' takes {len(params)} arguments ({listed}) "
                               f"but {len(args)} were given",
                           "Pass one value per parameter, constexprs included or by keyword.")
    values = {p.name: a for p, a in zip(params, args, strict=False)}
    known = {p.name for p in params}
    for k, v in kwargs.items():
        if k not in known:
            raise launch_error(fn, f"kernel '{name}' has no parameter '{k}'",
                               f"Its parameters are {', '.join(p.name for p in params)}; launch "
                               "options are num_warps, num_stages, enable_fp_fusion, debug, "
                               "bounds_check.")
        if k in values:
            raise launch_error(fn, f"argument '{k}' given both by position and by keyword",
                               "Pass it once.", param=k)
        values[k] = v
    for p in params:
        if p.name not in values:
            if p.default is _NO_DEFAULT:
                kind = "constexpr " if p.constexpr else ""
                raise launch_error(fn, f"missing argument for {kind}parameter '{p.name}' of "
                                       f"kernel '{name}'",
                                   f"Pass {p.name}=... to the launch.", param=p.name)
            values[p.name] = p.default
    return {p.name: values[p.name] for p in params}


def _unwrap_constexpr(v):
    """The plain value of ``tl.constexpr(v)``."""
    if type(v).__name__ == "constexpr" and hasattr(v, "value"):
        v = v.value
    return v


@dataclass(frozen=True)
class BoundLaunch:
    """A specialised launch: the :class:`Specialization`, the runtime arguments for the
    backend launcher (``PointerArg`` per pointer, Python scalars, only for passed params) and
    the device the arrays live on (``"cpu"``, ``"cuda:<arch>"``, or None with no arrays).
    ``per_param``: the runtime value of every parameter in order (None for constexprs), so a
    kernel compiled with other hints can pick its own passed params."""

    spec: Specialization
    runtime_args: tuple
    device: str | None
    per_param: tuple = ()


def _int_spec(p: Param, v: int, typ: str, hints: bool, align: bool = True) -> ArgSpec:
    bounds = _INT_RANGES.get(typ)
    if bounds is not None and not bounds[0] <= v < bounds[1]:
        raise OverflowError(f"value {v} does not fit the parameter's type {typ}")
    if hints and v == 1:
        return ArgSpec(p.name, "scalar", typ, False, True, 1)
    return ArgSpec(p.name, "scalar", typ, hints and align and v % 16 == 0)


def _scalar(p: Param, v, hints: bool, align: bool = True):
    """ArgSpec and the runtime value for scalar value ``v``; ValueError when not a scalar."""
    if isinstance(v, (bool, np.bool_)):
        return ArgSpec(p.name, "scalar", p.fixed_type or "i1"), bool(v)
    if isinstance(v, np.integer):
        typ = p.fixed_type or NUMPY_TO_SHORT[v.dtype.name]
        v = int(v)
        if typ == "i1":  # an int given to a bool parameter: its low bit, never specialised
            return ArgSpec(p.name, "scalar", "i1"), bool(v & 1)
        return _int_spec(p, v, typ, hints, align), v
    if isinstance(v, int):
        typ = p.fixed_type or scalar_type_of(v)
        if typ.startswith("fp"):
            return ArgSpec(p.name, "scalar", typ), float(v)
        if typ == "i1":  # an int given to a bool parameter: its low bit, never specialised
            return ArgSpec(p.name, "scalar", "i1"), bool(v & 1)
        return _int_spec(p, v, typ, hints, align), v
    if isinstance(v, np.floating):
        ftyp = p.fixed_type or NUMPY_TO_SHORT.get(v.dtype.name)
        if ftyp is None:
            raise ValueError(f"numpy scalars of type {v.dtype.name} are not supported")
        return ArgSpec(p.name, "scalar", ftyp), float(v)
    if isinstance(v, float):
        return ArgSpec(p.name, "scalar", p.fixed_type or "fp32"), v
    if isinstance(v, list):
        raise ValueError(f"a list of {len(v)} item(s) cannot be passed to a kernel "
                         "(np.asarray(v, dtype=...) makes an array of it)")
    shown = repr(v)
    shown = shown if len(shown) <= 40 else shown[:39] + "…"
    raise ValueError(f"a {type(v).__name__} ({shown}) cannot be passed to a kernel")


def specialize(fn, params, values: dict, do_not_specialize=frozenset(),
               no_align=frozenset()) -> BoundLaunch:
    """The :class:`BoundLaunch` of bound ``values`` (from :func:`bind_arguments`).
    Parameters named in ``do_not_specialize`` get no hints; those in ``no_align`` (Triton's
    ``do_not_specialize_on_alignment``) keep "== 1" but get no divisibility-by-16 hint.

    A tuple (or namedtuple, or ``torch.Size``) given to a non-constexpr parameter is
    specialised element by element (Triton's ``specialize_impl`` recursion): its elements may
    be arrays, scalars, descriptors, constexprs, None, ``@jit`` functions and tuples.
    Raises :class:`LaunchError` naming the parameter for a value a kernel cannot take
    (strings, lists, complex numbers, arrays of unsupported dtypes, a constexpr parameter
    given an array) and for arrays on different devices (host and CUDA mixed)."""
    specs: list = []
    per_param: list = []
    devices: dict = {}
    for p in params:
        v = _unwrap_constexpr(values[p.name])
        hints = p.name not in do_not_specialize
        align = hints and p.name not in no_align
        if p.constexpr and isinstance(v, np.generic):
            v = v.item()  # BLOCK=np.int64(128) is the constexpr 128
        if p.constexpr and _is_array(v):
            raise launch_error(fn, f"constexpr parameter '{p.name}' was given an array",
                               "Constexpr parameters take compile-time values (ints, "
                               "floats, bools, dtypes); drop tl.constexpr to pass an "
                               "array.", param=p.name)
        if p.constexpr:
            specs.append(ArgSpec(p.name, "constexpr", "constexpr", value=v))
            per_param.append(None)
            continue
        spec, rv = _value_spec(fn, p, v, hints, devices, p.name, align)
        specs.append(spec)
        per_param.append(rv)
    spec_all = Specialization(tuple(specs))
    runtime = tuple(flat_runtime(spec_all.args, per_param))
    return BoundLaunch(spec_all, runtime, _device(fn, devices), tuple(per_param))


def _value_spec(fn, p: Param, v, hints: bool, devices: dict, where: str,
                align: bool = True):
    """(ArgSpec, runtime value) of value ``v`` given to non-constexpr parameter ``p``;
    ``where`` names it in errors (``"t"``, ``"t[1][0]"``). Arrays record their device in
    ``devices``. Raises :class:`LaunchError` for a value a kernel cannot take."""
    v = _unwrap_constexpr(v)
    if v is None or getattr(v, "__workbench_jit__", False) or _is_language_dtype(v):
        return ArgSpec(p.name, "constexpr", "constexpr", value=v), None
    if isinstance(v, tuple):
        return _tuple_spec(fn, p, v, hints, devices, where, align)
    if where != p.name and isinstance(v, (str, type)):
        return ArgSpec(p.name, "constexpr", "constexpr", value=v), None  # as Triton does
    if _is_descriptor(v):
        spec, rv, info = _descriptor(fn, p, v, where)
        dev = "cpu" if info.device == "cpu" else f"cuda#{info.device_index}"
        devices.setdefault(dev, (p.name, info))
        return spec, rv
    try:
        info = array_info(v)
    except ArrayTypeError as e:
        raise launch_error(fn, f"argument '{where}': {e}", param=p.name) from None
    if info is not None:
        typ = "*" + info.dtype
        if p.fixed_type and p.fixed_type.startswith("*") and p.fixed_type != typ:
            raise launch_error(fn, f"argument '{p.name}' is an array of {info.dtype} but "
                                   f"the parameter is annotated {p.fixed_type}",
                               "Pass an array of the annotated dtype.", param=p.name)
        dev = "cpu" if info.device == "cpu" else f"cuda#{info.device_index}"
        devices.setdefault(dev, (p.name, info))
        return (ArgSpec(p.name, "pointer", typ, hints and align and info.address % 16 == 0),
                PointerArg(info.address, info.lo, info.hi, info.itemsize, info.obj))
    if p.fixed_type and p.fixed_type.startswith("*"):
        raise launch_error(fn, f"argument '{p.name}' is annotated {p.fixed_type} but was "
                               f"given a {type(v).__name__}", "Pass an array.",
                           param=p.name)
    try:
        return _scalar(p, v, hints, align)
    except OverflowError as e:
        raise launch_error(fn, f"argument '{where}': {e}",
                           "Ints passed to a kernel must fit int64 or uint64 (or the "
                           "annotated type).", param=p.name,
                           cls=ArgumentOverflowError) from None
    except ValueError as e:
        raise launch_error(
            fn, f"argument '{where}': {e}",
            "Pass a numpy or CUDA array (a pointer), an int, a float, a bool or a tuple of "
            "those, or annotate the parameter tl.constexpr for a compile-time value.",
            param=p.name) from None


def _tuple_spec(fn, p: Param, v: tuple, hints: bool, devices: dict, where: str,
                align: bool = True):
    """(ArgSpec of kind "tuple", tuple of the elements' runtime values) of tuple ``v``:
    elements are specialised as arguments are, without the parameter's annotation.
    ``torch.Size`` and other plain tuple subclasses count as ``tuple``; a namedtuple keeps
    its class (the kernel reads its fields by name)."""
    inner = Param(p.name, p.index, False, _NO_DEFAULT, None)
    cls = type(v) if hasattr(type(v), "_fields") else tuple
    specs: list = []
    rvs: list = []
    for i, e in enumerate(v):
        if type(e).__name__ == "constexpr" and hasattr(e, "value"):  # tl.constexpr(4)
            specs.append(ArgSpec(p.name, "constexpr", "constexpr", value=e.value))
            rvs.append(None)
            continue
        s, r = _value_spec(fn, inner, e, hints, devices, f"{where}[{i}]", align)
        specs.append(s)
        rvs.append(r)
    return tuple_spec(p.name, cls, specs), tuple(rvs)


def _is_descriptor(v) -> bool:
    """A host tensor descriptor (``workbench.tools.tensor_descriptor.TensorDescriptor`` or
    an object with the same fields, such as Triton's)."""
    return type(v).__name__ == "TensorDescriptor" and all(
        hasattr(v, f) for f in ("base", "shape", "strides", "block_shape"))


def _descriptor(fn, p: Param, v, where: str | None = None):
    """ArgSpec ``tensordesc<fp16[32, 64]>`` (Triton's signature type), the runtime
    :class:`~workbench.backends.descriptors.DescriptorArg` and the base's array info."""
    from ..backends.descriptors import DescriptorArg
    where = where or p.name
    try:
        info = array_info(v.base)
    except ArrayTypeError as e:
        raise launch_error(fn, f"argument '{where}': descriptor base: {e}",
                           param=p.name) from None
    if info is None:
        raise launch_error(fn, f"argument '{where}': the descriptor's base is not an array",
                           "build it with TensorDescriptor.from_tensor(array, block_shape)",
                           param=p.name)
    block = ", ".join(str(int(b)) for b in v.block_shape)
    spec = ArgSpec(p.name, "tensordesc", f"tensordesc<{info.dtype}[{block}]>")
    ptr = PointerArg(info.address, info.lo, info.hi, info.itemsize, info.obj)
    return spec, DescriptorArg.of(v, ptr), info


def _is_language_dtype(v) -> bool:
    """A ``tl.float32``-style dtype object: passed as a constexpr, as Triton does."""
    return type(v).__module__.startswith("workbench.language") and hasattr(v, "name")


def _is_array(v) -> bool:
    try:
        return array_info(v) is not None
    except ArrayTypeError:
        return True


def _device(fn, devices: dict) -> str | None:
    if not devices:
        return None
    if len(devices) > 1:
        where = ", ".join(f"'{name}' on {'the host' if d == 'cpu' else 'CUDA device ' + d[5:]}"
                          for d, (name, _) in devices.items())
        first = next(iter(devices.values()))[0]
        raise launch_error(fn, f"arrays on different devices: {where}",
                           "Put every array of a launch on one device (all numpy arrays for "
                           "the CPU, or all on the same GPU).", param=first)
    (dev, (name, info)), = devices.items()
    if dev != "cpu" and info.device_index:
        raise launch_error(fn, f"argument '{name}' is on CUDA device {info.device_index}; "
                               "kernels launch on CUDA device 0 only (several GPUs are not "
                               "supported yet)",
                           "Move the arrays to device 0 (torch: .to('cuda:0')), or make the "
                           "GPU device 0 with CUDA_VISIBLE_DEVICES.", param=name)
    return "cpu" if dev == "cpu" else cuda_target_for(info.device_index, info.obj)
