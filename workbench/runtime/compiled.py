"""A compiled kernel: every stage's text with its line map, metadata, and a launcher."""
from __future__ import annotations

import dataclasses
import html

from ..backends.limits import MAX_GRID, LimitCheck, grid_checks
from ..errors import LaunchError, OutOfResources, ToolMissingError, user_facing
from . import views
from .binding import bind_arguments, launch_error, param_location, specialize
from .fastpath import FastBinder, FastEntry, passed_plan
from .grid import normalize_grid
from .specialization import flat_runtime


class CompiledKernel:
    """One specialisation of a kernel compiled for one target (Triton's ``CompiledKernel``).

    Attributes: ``name``; ``asm`` (dict stage -> text: ``"source"``, ``"ttir"``, then the
    backend's stages in order); ``line_maps`` (dict stage -> list with one source
    :class:`~workbench.ir.core.Location` or None per line of ``asm[stage]``); ``metadata``
    (:class:`~workbench.backends.base.KernelMetadata`); ``src`` (KernelSource); ``spec``
    (:class:`~workbench.runtime.specialization.Specialization`); ``options``
    (:class:`~workbench.config.Options`); ``target`` (:class:`~workbench.config.Target`);
    ``snapshots`` (dict stage -> list of ``(pass_name, text)``, filled when compiled with
    ``keep_snapshots=True``); ``timings`` (dict step -> seconds); ``stages`` (stage names in
    order). Launch with ``kernel[grid](*args)`` or ``kernel.run(grid, *args)``.
    """

    def __init__(self, *, fn, params, src, spec, options, target, asm, line_maps, metadata,
                 launcher=None, launch_error=None, snapshots=None, timings=None, extra=None):
        self.fn = fn
        # a parameter compiled with its value baked in (``ASTSource`` typed it "constexpr")
        # binds as a constexpr: it may be left out, and a given value must be the compiled one
        baked = {a.name for a in spec.args if a.kind == "constexpr"}
        self.params = params if params is None else [
            dataclasses.replace(p, constexpr=True) if p.name in baked and not p.constexpr else p
            for p in params]
        self.name = metadata.name
        self.src = src
        self.spec = spec
        self.options = options
        self.target = target
        self.asm = asm
        self.line_maps = line_maps
        self.metadata = metadata
        self.snapshots = snapshots if snapshots is not None else {}
        self.timings = timings if timings is not None else {}
        self.extra = extra if extra is not None else {}
        self._launcher = launcher
        if getattr(launcher, "wants_allocator", False):  # global scratch at launch
            from ._allocation import current_allocator
            launcher.get_allocator = current_allocator
        self._launch_error = launch_error
        #: the first resource the kernel needs more of than the device allows, or None; such
        #: a kernel has no launcher, and launch() raises OutOfResources
        self.over_limit = next((c for c in self.limits if not c.ok), None)
        if self.over_limit is not None:
            self._launcher = None
        self._fast = None    # FastBinder for run(): a launch key from the raw arguments
        self._fits = set()   # keys whose arguments passed _check_fits
        self._entry = None   # FastEntry of this kernel for FastBinder.launch

    @property
    def launcher(self):
        """The backend's launcher ``(grid3, runtime_args)``, or None when this target cannot
        run here (see :meth:`launch`)."""
        return self._launcher

    @property
    def limits(self) -> list[LimitCheck]:
        """The resource checks the backend made (``extra["limits"]``): per resource what the
        kernel needs and what the device allows (see :mod:`workbench.backends.limits`)."""
        return [LimitCheck.from_json(d) for d in self.extra.get("limits") or ()]

    def resource_error(self, check: LimitCheck) -> OutOfResources:
        """The :class:`OutOfResources` of a failed ``check``, pointing at the kernel's
        ``def`` line."""
        try:
            loc = param_location(self.fn, None)
        except Exception:  # noqa: BLE001 - a kernel without readable source
            loc = None
        return check.error(self.name, loc)

    @property
    def n_regs(self):
        """Registers per thread from ptxas (Triton's ``kernel.n_regs``); None when ptxas did
        not run (host targets, or no ptxas installed)."""
        return self.metadata.n_regs

    @property
    def n_spills(self):
        """Bytes spilled per thread from ptxas (Triton's ``kernel.n_spills``); None when
        ptxas did not run."""
        return self.metadata.n_spills

    def _init_handles(self) -> None:
        """Triton loads the module onto the device here and reads the binary's registers,
        spills and shared memory; the workbench's backends load at compile time. On a host
        target (cpu, interpreter), which has no registers or shared memory to count, the
        figures are those of the same specialisation compiled for cuda:90, the GPU whose
        limits ``driver.active.utils.get_device_properties()`` gives on the host:
        ``metadata`` gets that compile's ``shared`` bytes and ptxas's ``n_regs`` and
        ``n_spills`` (None without ptxas), and ``extra["gpu_figures"]`` says ``"cuda:90"``.
        Raises CompilationError when the kernel does not compile for cuda:90."""
        jit_fn = getattr(self, "jit_fn", None)  # set by JITFunction.compile_for
        if self.target.backend not in ("cpu", "interpreter") or "gpu_figures" in self.extra \
                or jit_fn is None:
            return
        from ..config import Target
        gpu = jit_fn.compile_for(self.spec, self.options, Target("cuda", 90))
        self.metadata = dataclasses.replace(self.metadata, shared=gpu.metadata.shared,
                                            n_regs=gpu.n_regs, n_spills=gpu.n_spills)
        self.extra["gpu_figures"] = "cuda:90"

    @property
    def hash(self) -> str:
        """Triton's ``kernel.hash``: the hex SHA-256 naming this kernel's disk-cache entry
        (source, specialisation, options, target, compiler version); for a kernel not made
        by a ``@jit`` function, the SHA-256 of its stages' text."""
        jit_fn = getattr(self, "jit_fn", None)
        if jit_fn is not None:
            return jit_fn.kernel_hash(self.spec, self.options, self.target)
        import hashlib
        return hashlib.sha256("\n".join(str(t) for t in self.asm.values()).encode()).hexdigest()

    @property
    def stages(self) -> list[str]:
        """Stage names in pipeline order: ``["source", "ttir", ...backend stages]``."""
        return list(self.asm)

    # ------------------------------------------------------------------ launching
    def launch(self, grid3: tuple, runtime_args) -> None:
        """Run the kernel over ``grid3`` (3 ints) with already specialised runtime arguments
        (``PointerArg`` per pointer, Python scalars; passed params only). An empty grid runs
        nothing. Raises :class:`OutOfResources` when the kernel needs more than the device
        allows (shared memory, registers, threads) or the grid is larger than the device's
        (x < 2**31, y and z <= 65535, on every backend), :class:`ToolMissingError` when this
        target cannot run here."""
        if self.over_limit is not None:
            raise self.resource_error(self.over_limit)
        if grid3[0] > MAX_GRID[0] or grid3[1] > MAX_GRID[1] or grid3[2] > MAX_GRID[2]:
            raise self.resource_error(grid_checks(grid3)[0])
        if self._launcher is None:
            raise ToolMissingError(
                f"kernel '{self.name}' was compiled for {self.target} but cannot run here: "
                f"{self._launch_error or 'the backend gave no launcher'}")
        if grid3[0] * grid3[1] * grid3[2] == 0:
            return
        self._launcher(tuple(grid3), list(runtime_args))

    @user_facing
    def run(self, grid, *args, **kwargs):
        """Launch over ``grid`` (int, tuple of 1..3 ints, or a callable of the bound
        arguments) with the kernel's arguments, bound like a JIT launch (constexprs may be
        left out; given ones must equal the compiled values). The arguments must fit this
        specialisation: same types, a pointer or int compiled as divisible by 16 must be, an
        int compiled as the constant 1 must be 1, arrays on this kernel's device.
        Raises :class:`LaunchError` otherwise. Returns ``self``."""
        from ..config import settings
        from .hooks import launch
        fast = self._fast_binder() if not settings.hooks else None
        hit = fast.key(args, kwargs) if fast is not None else None
        if hit is not None:
            try:
                fits = hit[0] in self._fits
            except TypeError:  # an unhashable option value
                fits = hit = False
            if fits:
                fast.launch(self._entry, grid, hit[1], hit[2])
                return self
        params = self.params
        given = dict(kwargs)
        fixed = {a.name: a.value for a in self.spec.args if a.kind == "constexpr"}
        positional = list(args)
        for i, p in enumerate(params):
            if p.constexpr and i >= len(positional) and p.name not in given:
                given[p.name] = fixed[p.name]
        values = bind_arguments(self.fn, params, positional, given)
        bound = specialize(self.fn, params, values)
        self._check_fits(bound)
        meta = dict(values, num_warps=self.options.num_warps,
                    num_stages=self.options.num_stages)
        runtime = flat_runtime(self.spec.args, bound.per_param)
        launch(self, normalize_grid(grid, meta, self.fn), runtime, values,
               getattr(self, "jit_fn", None))
        if hit:  # these argument types fit: later launches with the same key skip the checks
            if len(self._fits) >= 1024:
                self._fits.clear()
            self._fits.add(hit[0])
        return self

    def _fast_binder(self):
        """The :class:`~workbench.runtime.fastpath.FastBinder` of this kernel's parameters,
        constexprs defaulting to their compiled values (built at the first :meth:`run`), or
        None when the kernel has no parameter list."""
        if self._fast is None and self.params is not None:
            # constexprs may be left out: their compiled values are the binder's defaults
            fixed = {a.name: a.value for a in self.spec.args if a.kind == "constexpr"}
            params = [dataclasses.replace(p, default=fixed[p.name])
                      if p.constexpr and p.name in fixed else p for p in self.params]
            self._fast = FastBinder(params)
            self._entry = FastEntry(self, passed_plan(self.spec), self.options, ())
        return self._fast

    def _check_fits(self, bound) -> None:
        for want, got in zip(self.spec.args, bound.spec.args, strict=True):
            bad = _misfit(want, got)
            if bad:
                raise launch_error(self.fn, f"argument '{want.name}' does not fit kernel "
                                            f"'{self.name}': it {bad}",
                                   "Launch through the @jit kernel (kernel[grid](...)) to "
                                   "compile a matching specialisation.", param=want.name)
        device = bound.device or str(self.target)
        runs_on_host = self.target.backend in ("cpu", "interpreter")
        if (device == "cpu") != runs_on_host:
            raise LaunchError(f"kernel '{self.name}' was compiled for {self.target} but the "
                              f"arrays are on {'the host' if device == 'cpu' else device}")

    def __getitem__(self, grid):
        """``kernel[grid](*args)``: a launcher bound to ``grid`` (see :meth:`run`)."""
        return lambda *args, **kwargs: self.run(grid, *args, **kwargs)

    def layouts(self):
        """Every value of this kernel's ttgir with its layout: a ``LayoutTable`` (an HTML
        table in Jupyter; ``.draw(name)`` draws one value's thread ownership; the ``"layouts"``
        view of :mod:`workbench.runtime.views`, registered by :mod:`workbench.viz`). Raises
        ``LayoutError`` when the target has no ``ttgir`` stage (cpu, interpreter),
        :class:`ToolMissingError` when no view is registered (workbench.viz is missing)."""
        view = views.lookup("layouts")
        if view is None:
            raise ToolMissingError("CompiledKernel.layouts() needs workbench.viz, which is "
                                   "not installed")
        return view(self)

    # ------------------------------------------------------------------ display
    def _repr_html_(self) -> str:
        """The side-by-side stage view (the ``"compiled_html"`` view of
        :mod:`workbench.runtime.views`, registered by :mod:`workbench.viz`); plain ``<pre>``
        blocks when no view is registered."""
        view = views.lookup("compiled_html")
        return self._plain_html() if view is None else view(self)

    def _plain_html(self) -> str:
        parts = [f"<div><b>{html.escape(self.name)}</b> &middot; {html.escape(str(self.target))}"
                 f" &middot; {html.escape(self.spec.signature_text())}</div>"]
        for stage, text in self.asm.items():
            parts.append(f"<details><summary>{html.escape(stage)}</summary>"
                         f"<pre>{html.escape(text)}</pre></details>")
        return "\n".join(parts)

    def __repr__(self) -> str:
        consts = {a.name: a.value for a in self.spec.args if a.kind == "constexpr"}
        return (f"<CompiledKernel {self.name} target={self.target} "
                f"signature='{self.spec.signature_text()}' constexprs={consts} "
                f"num_warps={self.options.num_warps} stages={self.stages}>")


def _misfit(want, got) -> str | None:
    """Why argument spec ``got`` does not fit the compiled ``want`` (None when it does);
    tuples element by element."""
    if want.kind == "constexpr":
        if got.kind != "constexpr" or got.key() != want.key():
            return f"was compiled with {want.name}={want.value!r}"
    elif want.kind == "tuple":
        if got.kind != "tuple" or len(got.elements) != len(want.elements):
            return f"was compiled for a tuple {want.type}, got {got.type}"
        for i, (w, g) in enumerate(zip(want.elements, got.elements, strict=True)):
            bad = _misfit(w, g)
            if bad:
                return f"(element {i}) {bad}"
    elif want.equal_to_1:
        if not got.equal_to_1:
            return "was compiled for the value 1 (Triton's equal-to-1 specialisation)"
    elif got.kind != want.kind or got.type != want.type:
        return f"was compiled for type {want.type}, got {got.type}"
    elif want.divisible_by_16 and not got.divisible_by_16:
        return "was compiled assuming divisibility by 16, which this value lacks"
    return None
