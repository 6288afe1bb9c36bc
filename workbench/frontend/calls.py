"""Calls in kernels (a mixin of :class:`CodeGenerator`): tl builtins, tensor methods, Python
builtins on compile-time values, constexpr functions, and ``@jit`` helpers (inlined with
``Location.caller`` set to the call site)."""
from __future__ import annotations

import ast
import builtins
import inspect
import math
import re
import types

from ..errors import CompilationError, UnsupportedError
from ..language import builtins as lb
from ..language import debug as ldebug
from ..language import dtypes as ldtypes
from ..language import loops
from ..language import tuples as ltuples
from ..language import typesys as ltypesys
from ..language.core import constexpr, tensor
from . import aggregates, noinline
from . import constexpr as ce
from .scopes import ALLOWED_BUILTINS, Scope

MAX_INLINE_DEPTH = 32


class CallsMixin:
    """``visit_Call`` and helper inlining; needs ``self.sem``, ``self.error``."""

    def visit_Call(self, node):
        fn = self.visit(node.func)
        must = getattr(fn, "_must_use_result", False)
        if must and getattr(node, "_wb_unused", False):  # Triton's must_use_result
            name = ast.unparse(node.func)
            words = f"The result of {name} is not being used."  # Triton's words, last line
            raise self.error(node, f"the result of {name} must be used (assign it, e.g. "
                             "a = f(a))", words + (f" {must}" if isinstance(must, str) else ""))
        kws = {}  # keywords first, then positional arguments: the order of Triton's IR
        for k in node.keywords:
            if k.arg is None:
                v = self.visit(k.value)
                if not isinstance(v, dict):
                    raise self.error(k, "only compile-time dicts can be unpacked with **")
                kws.update(v)
            else:
                kws[k.arg] = self.visit(k.value)
        args = self._visit_elts(node.args)
        return self.call(fn, args, kws, node)

    def _check_signature(self, fn, args, kws, node):
        """A caret error when ``fn`` (a tile method) does not take ``args``/``kws`` (an
        unknown keyword, too many or too few arguments)."""
        try:
            inspect.signature(fn).bind(*args, **kws)
        except TypeError as e:
            raise self.error(node, f"bad arguments to tensor.{fn.__name__}: {e}",
                             "check the call against the Triton signature") from None

    def call(self, fn, args, kws, node):
        """Call ``fn`` (already evaluated) with evaluated ``args``/``kws`` at ``node``."""
        if getattr(fn, "__workbench_builtin__", False) or \
                getattr(fn, "__workbench_bound_builtin__", False):
            self.sem.call_jit = lambda f, a: self.inline(f, a, {}, node)
            try:
                return fn(*args, _semantic=self.sem, **kws)
            except TypeError as e:
                raise self.error(node, f"bad arguments: {_named(e, fn)}",
                                 "check the call against the Triton signature") from None
        if getattr(fn, "__workbench_jit__", False):
            if noinline.wants_call(self, fn, args, kws, node):
                return noinline.call_noinline(self, fn, args, kws, node)
            return self.inline(fn, args, kws, node)
        if aggregates.handles(fn):  # tl.core._aggregate classes and their methods
            return aggregates.call(self, fn, args, kws, node)
        if isinstance(fn, types.MethodType) and isinstance(fn.__self__, tensor):
            self._check_signature(fn, args, kws, node)
            return fn(*args, **kws)
        if fn is constexpr:
            return ce.unwrap(args[0]) if args else None
        if fn is ltuples.tuple or ltuples.is_namedtuple_class(fn):
            return self._make_tuple(fn, args, kws, node)
        if fn in (ltuples.tuple_type, ltuples.constexpr_type):
            return self._call_const(fn, args, kws, node)
        if fn in (loops.static_range, loops.range):
            return fn(*[ce.unwrap(a) for a in args], **{k: ce.unwrap(v) for k, v in kws.items()})
        if getattr(fn, "__workbench_constexpr_function__", False):
            return self._call_const(fn, args, kws, node)
        if isinstance(fn, type) and (issubclass(fn, ldtypes.dtype) or fn is ltypesys.slice):
            return self._call_const(fn, args, kws, node)  # tl.pointer_type(tl.int32), tl.dtype

        if isinstance(fn, (types.BuiltinFunctionType, type)) and \
                getattr(builtins, getattr(fn, "__name__", ""), None) is fn:
            return self.call_python_builtin(fn, args, kws, node)
        if isinstance(fn, (types.BuiltinMethodType, types.MethodType)) and \
                not isinstance(getattr(fn, "__self__", None), (tensor, types.ModuleType)):
            return self._call_const(fn, args, kws, node)  # e.g. dtype.is_floating(), str.join
        name = getattr(fn, "__name__", None) or type(fn).__name__
        raise self.error(node, f"calling the plain Python function {name!r} inside a kernel is "
                         "not supported",
                         "decorate it with @workbench.jit to inline it, or compute the value "
                         "outside the kernel and pass it as a tl.constexpr parameter",
                         UnsupportedError)

    def _make_tuple(self, cls, args, kws, node):
        """``tl.tuple(iterable)`` or ``SomeNamedTuple(a, b=...)`` built from kernel values
        (tensors included), as Triton builds them."""
        args = [ce.unwrap(a) for a in args]
        kws = {k: ce.unwrap(v) for k, v in kws.items()}
        if cls is ltuples.tuple:
            kws.pop("type", None)
            if len(args) != 1 or kws or not isinstance(args[0], (tuple, list)):
                raise self.error(node, "tl.tuple takes one tuple or list of values",
                                 "write tl.tuple((a, b)) or tl.tuple([a, b])")
            return ltuples.tuple(args[0])
        try:
            return cls(*args, **kws)
        except TypeError as e:
            raise self.error(node, f"bad arguments to {cls.__name__}: {e}") from None

    def _call_const(self, fn, args, kws, node):
        args = [ce.unwrap(a) for a in args]
        kws = {k: ce.unwrap(v) for k, v in kws.items()}
        if not ce.is_const(args) or not ce.is_const(list(kws.values())):
            name = getattr(fn, "__name__", "function")
            raise self.error(node, f"{name}() needs compile-time arguments here",
                             "pass tl.constexpr values")
        return self.py_eval(node, lambda: fn(*args, **kws))

    def call_python_builtin(self, fn, args, kws, node):
        """``float("inf")``, ``min``/``max`` (tl.minimum/maximum on tensors), ``len``,
        ``abs``, ``print`` (``tl.device_print``, as in Triton: a runtime print whose first
        argument is the prefix string), ``range``..."""
        name = fn.__name__
        if name not in ALLOWED_BUILTINS:
            raise self.error(node, f"the Python builtin {name}() is not supported in kernels",
                             None, UnsupportedError)
        args = [ce.unwrap(a) for a in args]
        if name == "isinstance" and len(args) == 2 and not kws and ce.is_const([args[1]]):
            # a kernel value's Python class (tensor, tensor descriptor...) is known when
            # compiling, as in Triton (tutorial 06: isinstance(x, tl.tensor_descriptor))
            return isinstance(args[0], args[1])
        if name == "print":
            return ldebug.device_print(*args, **kws, _semantic=self.sem)
        if name == "len" and len(args) == 1 and isinstance(args[0], (tuple, list)):
            return len(args[0])  # a tuple's length is known when compiling
        if name in ("min", "max") and ce.is_const(args) and _nan_or_negative_zero(args):
            raise self.error(node, f"{name}() of compile-time values with a NaN or a -0.0 "
                             "is refused, as in Triton (Python's answer depends on the order)",
                             "compare the values explicitly")
        if ce.is_const(args) and ce.is_const(list(kws.values())):
            return self.py_eval(node, lambda: fn(*args, **kws))
        if name in ("min", "max") and not kws:
            vals = list(args[0]) if len(args) == 1 else list(args)
            out = vals[0]
            for v in vals[1:]:
                out = self.sem.minmax(name, out, v)
            return out
        if name == "abs" and len(args) == 1:
            return lb.abs(args[0], _semantic=self.sem)
        if name == "hasattr" and len(args) == 2 and isinstance(args[1], str):
            return hasattr(args[0], args[1])  # a compile-time question about the object
        if name == "len" and len(args) == 1 and isinstance(args[0], tensor):
            if not args[0].shape:
                raise self.error(node, "len() of a scalar tensor")
            return args[0].shape[0]
        raise self.error(node, f"{name}() needs compile-time arguments; a tensor's value is "
                         "only known when the kernel runs",
                         "use tl functions on tensors (e.g. x.to(tl.float32))")

    def inline(self, jit, args, kws, node):
        """Compile the body of the @jit helper ``jit`` in place, its parameters bound to
        ``args``/``kws``; returns its return value (a value, a tuple or None)."""
        from .source import KernelSource
        if self.depth >= MAX_INLINE_DEPTH:
            raise self.error(node, "@jit calls nest too deeply (recursion is not supported)",
                             None, UnsupportedError)
        src = getattr(jit, "src", None)
        if src is None:
            src = KernelSource.from_function(jit.fn)
        try:
            bound = inspect.signature(jit.fn).bind(*args, **kws)
        except TypeError as e:
            raise self.error(node, f"bad arguments to {src.name}(): {e}") from None
        bound.apply_defaults()
        values = {k: ce.unwrap(v) for k, v in bound.arguments.items()}
        tree = src.tree()
        call_loc = self.loc_of(node, name=False)
        sub = type(self)(src, self.builder, self.sem, self.options, Scope(src, values),
                         caller=call_loc, depth=self.depth + 1, outer_name=self.target_name,
                         runtime_depth=self.runtime_depth)
        try:
            sub.visit_stmts(tree.body)
        except CompilationError as e:  # Triton's form: this call's error, caused by the callee's
            if e.loc is None or e.loc.caller is None:
                raise
            err = self.error(node, f"in {src.name}(): {e.reason}", e.hint, type(e))
            err.__cause__ = e.with_traceback(None)
            err.__suppress_context__ = True
            raise err  # noqa: B904 - the cause is set above
        return sub.ret

    def visit_Starred(self, node):
        raise self.error(node, "* unpacking is only supported for compile-time tuples in calls",
                         None, UnsupportedError)


def _nan_or_negative_zero(args) -> bool:
    """Whether compile-time ``min``/``max`` arguments hold a float NaN or -0.0 (Triton's
    ``builtin_min``/``builtin_max`` assert neither is there, triton/language/core.py)."""
    vals = args[0] if len(args) == 1 and isinstance(args[0], (tuple, list)) else args
    return any(isinstance(v, float) and (math.isnan(v) or (v == 0.0 and
                                                           math.copysign(1.0, v) < 0))
               for v in vals)


def is_range_call(fn) -> bool:
    return fn is builtins.range or fn is loops.range or fn is loops.static_range


__all__ = ["CallsMixin", "is_range_call", "ast"]


def _named(err: TypeError, fn) -> str:
    """Python's message for a call that does not bind, with the builtin's public name in
    place of the name of the Python function that implements it (``_unary_math.<locals>.f()
    missing 1 required positional argument`` -> ``ceil() missing ...``)."""
    name = getattr(getattr(fn, "fn", fn), "__name__", None)
    text = str(err)
    if name and re.match(r"[\w.<>]+\(\)", text):
        text = re.sub(r"^[\w.<>]+\(\)", f"{name}()", text, count=1)
    return text
