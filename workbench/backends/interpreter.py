"""The ``interpreter`` backend: executes ttir with numpy, program by program.

It is the reference semantics the compiled backends are tested against, and a debugging mode:
``tl.device_print`` prints once per program with the program id, ``tl.device_assert`` raises
:class:`~workbench.backends.interp.errors.DeviceAssertionError` naming the program and line, an
access outside the launch's arrays raises :class:`workbench.errors.OutOfBoundsError` with the
program id, the source line and the offending element offsets, and never crashes the process.

Semantics worth knowing (where GPUs differ or Triton leaves things undefined):

- integer ``//`` and ``%`` on IR values truncate toward zero (C); ints wrap at their width.
- fp16 arithmetic is done in fp16; bf16 in fp32 rounded to nearest even after every op;
  ``math.*`` functions use numpy (correctly rounded or nearly so, unlike the GPU's fast
  approximations).
- ``tt.dot`` with fp32 inputs and ``inputPrecision = tf32`` (Triton's default) rounds the
  inputs to TF32 first, so results match tensor cores; ``ieee`` is full fp32. fp16/bf16 inputs
  accumulate in fp32; int8 in int32.
- masked-off lanes of a load without ``other`` read 0.
- atomics run lane by lane in order; programs run in linear block order (x fastest).

Speed: ops are precompiled into closures; consecutive programs run together as one numpy
computation when that is exactly equal to running them one by one (see
:mod:`workbench.backends.interp.launch`).
"""
from __future__ import annotations

from ..ir.clone import clone_module
from ..ir.core import functions
from ..ir.parser import parse_module
from ..passes.decompose_scaled_dot import decompose_all
from ..passes.expand_map_elementwise import expand_map_elementwise
from ..passes.inline_calls import inline_calls
from .base import Backend, BackendResult, KernelMetadata, Loaded
from .descriptors import lower_descriptors, wrap_launcher
from .interp.compiler import compile_function
from .interp.errors import DeviceAssertionError, InterpreterError
from .interp.launch import DEFAULT_BATCH_ELEMS, Launcher
from .interp.memory import empty_poisoned, poison

__all__ = ["InterpreterBackend", "DeviceAssertionError", "InterpreterError", "empty_poisoned",
           "poison", "interpret"]


class InterpreterBackend(Backend):
    """``Backend`` for target ``interpreter``: no stages beyond ``ttir``; the launcher runs the
    kernel's ttir with numpy. ``batch_elems``: tile elements x programs run together at most
    (0 disables running programs together)."""

    stage_names = ()

    def __init__(self, target=None, batch_elems: int = DEFAULT_BATCH_ELEMS):
        from ..config import Target
        super().__init__(Target.parse(target or "interpreter"))
        self.batch_elems = batch_elems

    def compile(self, ttir_module, spec, options, ctx) -> BackendResult:
        """Precompile the module's kernel (its first ``tt.func``, or the module if it is a
        ``tt.func``) into closures. ``spec`` and ``ctx`` are accepted for the interface.
        Raises UnsupportedError naming the op and its line for ops the interpreter lacks.
        ``tt.dot_scaled`` is first decomposed as on sm_90 (``decompose-scaled-dot``)."""
        original = ttir_module
        # helpers inlined before descriptors are lowered (as the CPU backend does), so a
        # descriptor a noinline helper makes and returns has a known origin
        ttir_module = expand_map_elementwise(inline_calls(ttir_module))
        ttir_module = decompose_all(lower_descriptors(ttir_module, clone_module))
        if ttir_module.name == "tt.func":
            func, module = ttir_module, None
        else:
            funcs = functions(ttir_module)
            if not funcs:
                raise ValueError("the module has no tt.func")
            public = [f for f in funcs if f.attributes.get("visibility", "public") == "public"]
            func, module = (public or funcs)[0], ttir_module
        cf = compile_function(func, module)
        meta = KernelMetadata(name=cf.name, target="interpreter",
                              num_warps=getattr(options, "num_warps", 4),
                              num_stages=getattr(options, "num_stages", 3))
        launcher = wrap_launcher(Launcher(cf, self.batch_elems), original)
        return BackendResult(stages=[], metadata=meta, launcher=launcher,
                             extra={"compiled_function": cf, "facts": cf.facts})

    def cache_key(self) -> tuple:
        return ("interpreter", 1)

    def pack(self, kernel) -> bytes:
        """The kernel's ttir text (``kernel.asm["ttir"]``), UTF-8."""
        return kernel.asm["ttir"].encode()

    def load(self, data: bytes) -> Loaded:
        """Parse the ttir and precompile it again (the interpreter has no machine code to
        keep); ``extra`` gets the fresh ``compiled_function`` and ``facts``."""
        res = self.compile(parse_module(data.decode()), None, None, None)
        return Loaded(res.launcher, res.launch_error, dict(res.extra))


def interpret(module, grid, args, batch_elems: int = DEFAULT_BATCH_ELEMS) -> None:
    """Compile ``module`` (ttir) and run it once over ``grid`` (1 to 3 ints) with ``args``
    (PointerArg / Python scalars, see docs/contracts.md). A convenience for tests."""
    g = tuple(grid) + (1,) * (3 - len(tuple(grid)))
    launcher = InterpreterBackend(batch_elems=batch_elems).compile(module, None, None,
                                                                   None).launcher
    assert launcher is not None  # the interpreter runs everywhere
    launcher(g, args)
