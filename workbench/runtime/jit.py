"""``@jit`` and the JIT function: record a kernel, specialise and compile it per launch, cache.

As in Triton (``triton/runtime/jit.py``), ``@jit`` only records the function: the kernel's source is
read and compiled at its first launch (or ``workbench.compile``), so errors surface there.
"""
from __future__ import annotations

import dataclasses
import functools

from ..config import OPTION_ENV, Options, Target, env_flag, env_reader, settings
from ..errors import CompilationError, LaunchError, user_facing
from . import hooks
from .binding import bind_arguments, kernel_params, launch_error, specialize
from .compiled import CompiledKernel
from .fastpath import FastBinder, KernelCache
from .grid import normalize_grid
from .interface import KernelInterface, MockTensor, active_mode
from .jit_info import TritonJITAttributes

_read_option_env = env_reader(OPTION_ENV)


def interpret_enabled() -> bool:
    """Whether ``WORKBENCH_INTERPRET`` asks launches to run on the interpreter target
    (read at each launch; see :func:`workbench.config.env_flag`)."""
    return env_flag("WORKBENCH_INTERPRET")


class JITFunction(TritonJITAttributes, KernelInterface):
    """A kernel recorded by ``@jit``. Launch with ``kernel[grid](*args, **kwargs)``.

    Attributes: ``fn`` (the Python function), ``src`` (its
    :class:`workbench.frontend.source.KernelSource`, read on first use), ``params``
    (:class:`~workbench.runtime.binding.Param` tuple), ``do_not_specialize`` (names or
    indices), ``do_not_specialize_on_alignment`` (names or indices: no divisibility-by-16
    hint, "== 1" kept), ``launch_metadata`` (Triton's hook for profilers: a function
    ``(grid, kernel, args) -> dict``, kept for them; the workbench has no launch hooks, so,
    as in Triton without one, nothing calls it), ``debug``, ``noinline``, ``cache`` (the
    in-memory cache: (specialisation key, options, target) -> :class:`CompiledKernel`; a
    :class:`~workbench.runtime.fastpath.KernelCache`, which also holds the launch fast
    path's dict).

    Triton's informational attributes and pre-run hooks (``arg_names``, ``cache_key``,
    ``add_pre_run_hook``...) come from :class:`~workbench.runtime.jit_info.TritonJITAttributes`.

    A launch first tries the fast path (:class:`~workbench.runtime.fastpath.FastBinder`: a key
    from the raw arguments straight to the compiled kernel); a miss or an unusual argument
    takes the slow path (bind, specialise, compile or reuse), which fills the fast dict.
    """

    __workbench_jit__ = True

    def __init__(self, fn, version=None, do_not_specialize=None,
                 do_not_specialize_on_alignment=None, debug=None, noinline=None, repr=None,
                 launch_metadata=None):
        if not callable(fn) or not hasattr(fn, "__code__"):
            raise LaunchError(f"@jit decorates a Python function (def ...), not {fn!r}")
        if fn.__code__.co_filename.startswith("<"):
            from ..frontend.source import recover_exec_source
            recover_exec_source(fn)  # a kernel made by exec(text): keep its text readable
        self.fn = fn
        self.version = version
        self.do_not_specialize = tuple(do_not_specialize or ())
        self.do_not_specialize_on_alignment = tuple(do_not_specialize_on_alignment or ())
        self.launch_metadata = launch_metadata
        self.repr = repr
        self.debug = debug
        self.noinline = noinline
        self._cache = KernelCache()
        self._fast = None  # FastBinder, built at the first launch
        self._src = None
        self._params = None
        self._options_memo = {}
        functools.update_wrapper(self, fn, updated=())

    @property
    def src(self):
        """The kernel's :class:`KernelSource` (read once, on first use)."""
        if self._src is None:
            from ..frontend.source import KernelSource
            self._src = KernelSource.from_function(self.fn)
        return self._src

    def _unsafe_update_src(self, new_src: str) -> None:
        """Compile ``new_src`` from now on instead of the function's own source (Triton's
        ``JITFunction._unsafe_update_src``, used by its tests to patch template kernels: the
        text must define the same function with the same parameters). Every compiled variant
        is dropped. Raises CompilationError on a syntax error in ``new_src``."""
        self._src = self.src.with_text(str(new_src))
        self._cache = KernelCache()
        self._fast = None
        self._params = None
        self._options_memo = {}

    @property
    def cache(self) -> KernelCache:
        """The in-memory cache (see the class docstring). Assigning a dict replaces it (and
        empties the fast path)."""
        return self._cache

    @cache.setter
    def cache(self, value) -> None:
        self._cache = value if isinstance(value, KernelCache) else KernelCache(value)

    @property
    def params(self):
        """The kernel's parameters (:func:`~workbench.runtime.binding.kernel_params`)."""
        if self._params is None:
            # the frontend's view of which parameters are constexprs is the authority
            cx = set(self.src.constexprs)
            self._params = tuple(dataclasses.replace(p, constexpr=p.name in cx)
                                 for p in kernel_params(self.fn))
        return self._params

    def kernel_name(self, spec) -> str:
        """The compiled function's name for ``spec``: the Python function's, or with
        ``@jit(repr=f)`` ``f(proxy)``, where ``proxy.signature`` maps every parameter to
        its type string (``"i32"``, ``"*fp32"``, ``"constexpr"``) and ``proxy.constants``
        the constexprs and the ints specialised to 1 to their values (Triton's
        ``SpecializationProxy``, ``compiler/code_generator.py``). Raises LaunchError when
        ``f`` fails or gives no identifier."""
        if self.repr is None:
            return self.fn.__name__
        import types
        proxy = types.SimpleNamespace(
            constants={a.name: (1 if a.equal_to_1 else a.value) for a in spec.args
                       if a.kind == "constexpr" or a.equal_to_1},
            signature={a.name: a.type for a in spec.args})
        try:
            name = self.repr(proxy)
        except Exception as e:  # noqa: BLE001 - the user's function: say which failed
            raise LaunchError(f"@jit(repr=...) of '{self.fn.__name__}' raised "
                              f"{type(e).__name__}: {e}") from None
        if not isinstance(name, str) or not name.isidentifier():
            raise LaunchError(f"@jit(repr=...) of '{self.fn.__name__}' gave {name!r}; it must "
                              "give a Python identifier (the compiled function's name)")
        return name

    def no_specialize_names(self) -> frozenset:
        """``do_not_specialize`` as parameter names (indices converted).
        Raises :class:`LaunchError` for an unknown name or index."""
        return self._param_names(self.do_not_specialize, "do_not_specialize")

    def no_align_names(self) -> frozenset:
        """``do_not_specialize_on_alignment`` as parameter names (indices converted).
        Raises :class:`LaunchError` for an unknown name or index."""
        return self._param_names(self.do_not_specialize_on_alignment,
                                 "do_not_specialize_on_alignment")

    def _param_names(self, items, what: str) -> frozenset:
        names = [p.name for p in self.params]
        out = set()
        for item in items:
            if isinstance(item, int) and 0 <= item < len(names):
                out.add(names[item])
            elif isinstance(item, str) and item in names:
                out.add(item)
            else:
                raise launch_error(self.fn, f"{what} entry {item!r} is not a "
                                            f"parameter of '{self.fn.__name__}'",
                                   f"Use names or indices of: {', '.join(names)}.")
        for p in self.params:
            if p.constexpr and p.name in out:  # Triton's check and words (code_generator)
                from .binding import param_location
                raise CompilationError(f"{p.name} marked as constexpr and listed in {what}",
                                       param_location(self.fn, p.name),
                                       f"drop '{p.name}' from {what} or its tl.constexpr")
        return frozenset(out)

    def base_options(self) -> Options:
        """Options from the environment (``WORKBENCH_BOUNDS_CHECK``, ``WORKBENCH_DEBUG``,
        ``WORKBENCH_CUDA_MMA``) and
        ``@jit(debug=...)``."""
        env = _read_option_env()
        opts = self._options_memo.get(env)
        if opts is None:
            opts = Options.from_env() if self.debug is None else \
                Options.from_env(debug=bool(self.debug))
            self._options_memo = {env: opts}
        return opts

    # ------------------------------------------------------------------ compiling
    def compile_for(self, spec, options: Options, target, keep_snapshots: bool = False):
        """The :class:`CompiledKernel` of ``spec``/``options``/``target``, from the in-memory
        cache or compiled now (key: ``spec.key()``, ``options``, ``str(target)``). A cached
        kernel without snapshots is recompiled when ``keep_snapshots`` asks for them."""
        from .disk_cache import cached_compile
        key = (spec.key(), options, str(target))
        hit = self.cache.get(key)
        if hit is not None and (not keep_snapshots or hit.snapshots):
            return hit
        kernel = cached_compile(self, spec, options, target, keep_snapshots)
        kernel.jit_fn = self  # for _init_handles' cuda:90 figures on host targets
        self.cache[key] = kernel
        return kernel

    def kernel_hash(self, spec, options: Options, target) -> str:
        """The hex SHA-256 naming the disk-cache entry of ``spec``/``options``/``target``
        (Triton's ``CompiledKernel.hash``)."""
        from .disk_cache import cache_key
        return cache_key(self, spec, options, target)

    def _bind(self, args, kwargs):
        from .compiler import split_options
        params = self.params
        kw, options = split_options(self.fn, kwargs, {p.name for p in params},
                                    self.base_options())
        values = bind_arguments(self.fn, params, args, kw)
        bound = specialize(self.fn, params, values, self.no_specialize_names(),
                           self.no_align_names())
        if interpret_enabled():
            if bound.device not in (None, "cpu"):
                raise LaunchError("WORKBENCH_INTERPRET=1 runs kernels on host (numpy) arrays; "
                                  f"this launch passes arrays on {bound.device}")
            target = Target("interpreter")
        else:
            target = Target.parse(bound.device or "cpu")
        return values, options, bound, target

    @user_facing
    def run(self, *args, grid, warmup: bool = False, **kwargs) -> CompiledKernel:
        """Bind, specialise, compile (or reuse) and launch over ``grid`` (see
        :func:`~workbench.runtime.grid.normalize_grid`; its callable gets every bound argument
        and the options). ``warmup=True`` compiles without launching. Returns the
        :class:`CompiledKernel`. Raises LaunchError (bad arguments, options or grid),
        CompilationError (bad kernel), OutOfBoundsError (a bad access at run time),
        ToolMissingError (the target cannot run here)."""
        hooks = self.__dict__.get("_pre_run_hooks")
        if hooks:  # Triton's add_pre_run_hook
            for hook in hooks:
                hook(*args, **kwargs)
        fast = self._fast
        hit = None
        if fast is not None and not warmup and not settings.hooks:
            hit = fast.key(args, kwargs)
            if hit is not None:
                try:
                    entry = self._cache.fast.get(hit[0])
                except TypeError:  # an unhashable option value: the slow path handles it
                    entry = hit = None
                if entry is not None and hit is not None:
                    return fast.launch(entry, grid, hit[1], hit[2], self.fn)
        return self._run_slow(args, kwargs, grid, warmup, hit)

    def _run_slow(self, args, kwargs, grid, warmup, hit):
        """The full launch; remembers the result for the fast path (``hit``: the fast key
        computed before, or None to compute it here)."""
        values, options, bound, target = self._bind(args, kwargs)
        grid3 = None
        if not warmup:
            meta = dict(values, num_warps=options.num_warps, num_stages=options.num_stages)
            grid3 = normalize_grid(grid, meta, self.fn)
        mode = active_mode.get() if warmup else None
        if mode is not None:  # AsyncCompileMode: the compile runs on its executor
            return mode.submit((self, bound.spec.key(), options, str(target)),
                               lambda: self._compile_hooked(bound.spec, options, target, True),
                               lambda kernel: None)
        kernel = self._compile_hooked(bound.spec, options, target, warmup)
        if kernel is None:  # the jit_cache_hook asked to skip the compile
            return None
        if self._fast is None:
            self._fast = FastBinder(self.params, self.no_specialize_names(),
                                    self.no_align_names())
            hit = self._fast.key(args, kwargs)
        if hit is not None:
            try:
                FastBinder.remember(self._cache, hit[0], hit[3], kernel, bound.spec, options)
            except TypeError:  # an unhashable option value: never on the fast path
                pass
        if grid3 is not None:
            hooks.launch(kernel, grid3, bound.runtime_args, values, self)
        return kernel

    def _compile_hooked(self, spec, options: Options, target, warmup: bool):
        """:meth:`compile_for`, with ``knobs.runtime.jit_cache_hook`` called before a compile
        (a true result skips it: returns None) and ``jit_post_compile_hook`` after, as
        Triton's ``JITFunction._do_compile``."""
        if not settings.hooks or (spec.key(), options, str(target)) in self.cache:
            return self.compile_for(spec, options, target)
        if hooks.call_compile_hook("jit_cache_hook", self, spec, options, target, warmup):
            return None
        kernel = self.compile_for(spec, options, target)
        hooks.call_compile_hook("jit_post_compile_hook", self, spec, options, target, warmup)
        return kernel

    @user_facing
    def preload(self, specialization_data: str) -> CompiledKernel | None:
        """Compile the specialisation described by ``specialization_data`` (the JSON text a
        compile hook got as ``compile["specialization_data"]``), as Triton's ``preload``;
        returns the kernel (None when ``jit_cache_hook`` skips the compile). Raises
        LaunchError when the text is not one of this kernel's."""
        spec, options, target = hooks.parse_specialization_data(self, specialization_data)
        return self._compile_hooked(spec, options, target, True)

    @property
    def device_caches(self) -> dict:
        """Triton's per-device caches, ``device -> (kernel cache, ...)``: the workbench keeps
        one in-memory cache (:attr:`cache`) for every device, so each device's first item is
        it."""
        import collections
        return collections.defaultdict(lambda: (self.cache, {}, None, None, None))

    @user_facing
    def run_recorded(self, *args, grid, recorder, **kwargs) -> CompiledKernel:
        """Launch on the interpreter with ``recorder`` (an
        :class:`~workbench.backends.interp.recorder.AccessRecorder`) logging every load and
        store of every program, whatever target ordinary launches use. Arguments as
        :meth:`run`; arrays must be host (numpy) arrays. Returns the interpreter's
        :class:`CompiledKernel`. Raises as :meth:`run`."""
        from ..backends.interp.launch import Launcher
        values, options, bound, _target = self._bind(args, kwargs)
        if bound.device not in (None, "cpu"):
            raise LaunchError("recording accesses runs the interpreter on host (numpy) arrays; "
                              f"this launch passes arrays on {bound.device}")
        meta = dict(values, num_warps=options.num_warps, num_stages=options.num_stages)
        grid3 = normalize_grid(grid, meta, self.fn)
        kernel = self.compile_for(bound.spec, options, Target("interpreter"))
        cf = kernel.extra["compiled_function"]
        if grid3[0] * grid3[1] * grid3[2]:
            Launcher(cf, recorder=recorder)(grid3, list(bound.runtime_args))
        return kernel

    def warmup(self, *args, grid=None, **kwargs) -> CompiledKernel:
        """Compile for these arguments without launching (Triton's ``warmup``); torch dtypes
        stand for arrays of that dtype (:class:`~workbench.runtime.interface.MockTensor`)."""
        return self.run(*map(MockTensor.wrap_dtype, args), grid=grid, warmup=True, **kwargs)

    def __getitem__(self, grid):
        """``kernel[grid]``: a callable launching the kernel over ``grid``."""
        return functools.partial(self.run, grid=grid)

    def __call__(self, *args, **kwargs):
        raise LaunchError(
            f"'{self.fn.__name__}' is a @jit kernel and cannot be called like a Python "
            f"function; launch it with {self.fn.__name__}[grid](args...), or call it from "
            "inside another @jit function")

    def __repr__(self) -> str:
        # the id keeps two kernels of the same name (a notebook cell run twice) apart in the
        # constexpr part of cache keys
        return f"JITFunction({self.fn.__module__}:{self.fn.__qualname__} at {id(self):#x})"


def jit(fn=None, *, version=None, repr=None, launch_metadata=None, do_not_specialize=None,
        do_not_specialize_on_alignment=None, debug=None, noinline=None):
    """Record a kernel: ``@jit`` or ``@jit(do_not_specialize=["n"], debug=True)``, with
    Triton 3.6's keywords (``triton/runtime/jit.py``).

    ``do_not_specialize``: parameter names or indices whose ints and pointers get neither the
    "== 1" nor the divisibility-by-16 specialisation; ``do_not_specialize_on_alignment``:
    those that keep "== 1" but get no divisibility hint; ``debug``: compile with
    ``Options.debug``; ``noinline``: recorded for the frontend (helpers);
    ``launch_metadata``: kept on the JIT function for profiler hooks (see
    :class:`JITFunction`); ``repr``: names the compiled function (see
    :meth:`JITFunction.kernel_name`); ``version``: recorded (part of ``cache_key``).
    Returns a :class:`JITFunction`. Nothing is read or
    compiled until the first launch."""
    def decorate(f):
        return JITFunction(f, version=version, do_not_specialize=do_not_specialize, debug=debug,
                           noinline=noinline,
                           do_not_specialize_on_alignment=do_not_specialize_on_alignment,
                           launch_metadata=launch_metadata, repr=repr)
    return decorate(fn) if fn is not None else decorate


class TensorWrapper:
    """An array seen by kernels as another element type of the same size (Triton's
    ``triton.runtime.jit.TensorWrapper``): ``base`` is the array (numpy, torch, a CUDA
    array), ``dtype`` the :mod:`workbench.language` dtype kernels see (``tl.uint32`` over
    an int32 tensor, ``tl.float8e5`` over int8). Made by :func:`reinterpret`.

    Shape, strides, device and ``data_ptr()`` are the base's; launches pass the base's
    memory with ``dtype`` as the pointer's element type."""

    def __init__(self, base, dtype):
        self.base = base
        self.dtype = dtype
        self.data = base

    def data_ptr(self) -> int:
        """The base array's first element's address (torch's ``data_ptr``)."""
        return int(self.base.data_ptr())

    @property
    def shape(self):
        return self.base.shape

    @property
    def device(self):
        return self.base.device

    @property
    def is_cuda(self) -> bool:
        return bool(getattr(self.base, "is_cuda", False))

    def stride(self, *args):
        """The base's strides, in elements (torch's ``stride``)."""
        return self.base.stride(*args)

    def element_size(self) -> int:
        """Bytes per element (the base's)."""
        return int(self.base.element_size())

    def numel(self) -> int:
        """Number of elements (the base's)."""
        return int(self.base.numel())

    def dim(self) -> int:
        """Number of dimensions (the base's)."""
        return len(self.base.shape)

    def copy_(self, other):
        """Copy ``other``'s bits into the base (``other``: a wrapper or an array)."""
        self.base.copy_(other.base if isinstance(other, TensorWrapper) else other)
        return self

    def clone(self):
        """A wrapper over a copy of the base."""
        return TensorWrapper(self.base.clone(), self.dtype)

    def new_empty(self, sizes):
        """A wrapper of the same dtype over a new uninitialised base of shape ``sizes``
        (torch's ``new_empty`` on the base)."""
        return TensorWrapper(self.base.new_empty(sizes), self.dtype)

    def to(self, device):
        """A wrapper over the base moved to ``device``."""
        return TensorWrapper(self.base.to(device), self.dtype)

    def cpu(self):
        """A wrapper over the base on the host."""
        return TensorWrapper(self.base.cpu(), self.dtype)

    def __str__(self) -> str:
        return f"TensorWrapper[{self.dtype}]({self.base})"


def reinterpret(tensor, dtype):
    """``tensor`` seen by kernels as ``dtype`` (a :mod:`workbench.language` dtype of the same
    element size), as Triton's ``triton.reinterpret``: a :class:`TensorWrapper`, or the base
    array itself when ``dtype`` is the base's own element type. Raises :class:`LaunchError`
    for a dtype of another size (the bits would not line up)."""
    if isinstance(tensor, TensorWrapper):
        if dtype == tensor.base.dtype or getattr(dtype, "name", None) == \
                str(tensor.base.dtype).replace("torch.", ""):
            return tensor.base
        tensor = tensor.base
    bits = getattr(dtype, "primitive_bitwidth", None)
    size = tensor.element_size() if hasattr(tensor, "element_size") else tensor.itemsize
    if bits is not None and bits != 8 * int(size):
        raise LaunchError(f"reinterpret: {dtype} has {bits} bits but the array's elements "
                          f"have {8 * int(size)}; pick a dtype of the same size")
    return TensorWrapper(tensor, dtype)
