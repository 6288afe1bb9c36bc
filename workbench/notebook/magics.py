"""The ``%%tilekernel`` cell magic: define the cell's ``@jit`` kernels, compile one, show it.

Flow of one cell: parse the options (bad ones: a usage box, and the cell fails; ``--help``
alone: the usage box, and the cell succeeds); write the cell to its
content-hashed file and execute it there into the user's namespace (a SyntaxError or an
exception: an error box pointing at the cell's line); pick the kernel (``--kernel`` or the last
``@jit`` defined); then, with ``--launch``, evaluate the launch and take the compiled kernel it
returns (recompiled for the view target when it ran elsewhere), or with ``--signature``
compile for the view target; display the side-by-side view. Nothing escapes as an exception
but :class:`CellFailed`, raised after an error or usage box was shown: the notebook's kernel
always survives, and the magic returns None (output goes to display).
"""
from __future__ import annotations

import dataclasses

from IPython.core.magic import Magics, line_cell_magic, magics_class

from ..config import Target
from .cells import cell_names, current_cell_number, defined_functions, run_cell_source, write_cell
from .display import box_html, show, show_box, show_error
from .options import USAGE, OptionsError, parse_options

LAUNCH_FILE = "<tilekernel --launch>"


def _is_jit(obj) -> bool:
    return bool(getattr(obj, "__workbench_jit__", False))


def signature_hint(kernel) -> str:
    """An example ``--signature`` for ``kernel``: ``*fp32`` for parameters named like
    pointers, ``i32`` for the other non-constexpr ones (a starting point, not a guess of
    the real types)."""
    params = getattr(kernel, "params", None) or []
    entries = []
    for p in params:
        if getattr(p, "constexpr", False):
            continue
        entries.append("*fp32" if "ptr" in p.name.lower() else "i32")
    return ",".join(entries)


def _constexpr_names(kernel) -> list[str]:
    return [p.name for p in (getattr(kernel, "params", None) or [])
            if getattr(p, "constexpr", False)]


def _signature_problem(kernel, name, signature, defines):
    """(title, hint) when ``--signature``/``-D`` cannot fit ``kernel``'s parameters (a -D name
    that is not a parameter, a signature of the wrong length), else None."""
    params = list(getattr(kernel, "params", None) or [])
    if not params:
        return None
    names = [p.name for p in params]
    unknown = [d for d in defines if d not in names]
    if unknown:
        consts = [p.name for p in params if p.constexpr]
        return (f"-D {unknown[0]}: '{unknown[0]}' is not a parameter of {name}",
                f"Its constexpr parameters: {', '.join(consts) or '(none)'}.")
    runtime = [p.name for p in params if not p.constexpr]
    if len(signature) != len(runtime):
        return (f"--signature has {len(signature)} entr{'y' if len(signature) == 1 else 'ies'};"
                f" {name} has {len(runtime)} non-constexpr parameters "
                f"({', '.join(runtime)})",
                "Give one type per parameter, in order, e.g. --signature "
                f'"{signature_hint(kernel)}".')
    return None


def _missing_constexprs(kernel, given) -> list[str]:
    """Constexpr parameters of ``kernel`` with neither a default nor a ``-D`` value."""
    import inspect
    return [p.name for p in (getattr(kernel, "params", None) or [])
            if getattr(p, "constexpr", False) and p.name not in given
            and getattr(p, "default", inspect.Parameter.empty) is inspect.Parameter.empty]


def _same_target(a, b) -> bool:
    try:
        return str(Target.parse(a)) == str(Target.parse(b))
    except Exception:  # noqa: BLE001 - an unparsable target is simply "different"
        return False


class CellFailed(Exception):
    """Raised by ``%%tilekernel`` and ``%tilelayout`` after they have shown an error or a
    usage box for bad input, so the cell counts as failed (Jupyter stops "Run All" there);
    IPython prints only this one line, no traceback. ``magic``: the magic's name as typed."""

    def __init__(self, message: str = "", magic: str = "%%tilekernel"):
        super().__init__(message)
        self.magic = magic

    def _render_traceback_(self) -> list:
        return [f"{self.magic}: {self}"]


@magics_class
class TileKernelMagics(Magics):
    """IPython magics of Tile Workbench (registered by ``%load_ext workbench``)."""

    @line_cell_magic
    def tilekernel(self, line: str, cell: str | None = None):
        """Define the cell's ``@jit`` kernels and show the kernel's stages side by side.
        ``%tilekernel`` (the line form) or ``%%tilekernel --help`` shows the options."""
        self._failed = False
        try:
            if cell is None:
                show_box("usage", "%%tilekernel options (a cell magic: put it on the first "
                                  "line of a cell holding your kernels)", USAGE)
                return None
            self._run(line, cell)
        except Exception as exc:  # noqa: BLE001 - last resort: never crash the kernel
            self._error(exc, "running %%tilekernel (internal error: please report it)")
        if self._failed:
            # the message is already shown above; failing the cell stops "Run All" there
            raise CellFailed("the cell failed: the message above says where and why")
        return None

    def _error(self, exc, doing, files=()) -> None:
        """Show ``exc`` as an error box and mark the cell as failed."""
        self._failed = True
        show_error(exc, doing, files)

    def _error_box(self, title, body="", details="") -> None:
        self._failed = True
        show_box("error", title, body, details)

    # ---------------------------------------------------------------------------------
    def _run(self, line: str, cell: str) -> None:
        try:
            opts = parse_options(line)
        except OptionsError as e:
            self._failed = True     # a typo in an option must not look like a success
            show_box("usage", f"%%tilekernel: {e}", USAGE)
            return
        if opts.help:
            show_box("usage", "%%tilekernel options", USAGE)
            return
        try:
            target = Target.parse(opts.view_target)
        except Exception as exc:  # noqa: BLE001 - TargetError explains itself
            self._error(exc, "reading --target")
            return
        assert self.shell is not None  # a registered magic always has its shell
        ns = self.shell.user_ns
        # line 1 of the cell file stands for the %%tilekernel line, so every file:line the
        # workbench prints is the line number Jupyter shows in the cell's gutter
        source = f"# %%tilekernel {line.strip()}\n{cell}"
        path = write_cell(source)
        cell_names(self.shell).remember(path, current_cell_number(self.shell))
        try:
            run_cell_source(source, path, ns)
        except BaseException as exc:  # noqa: BLE001 - includes KeyboardInterrupt in the cell
            if isinstance(exc, (SystemExit, KeyboardInterrupt)):
                self._error_box("the cell was interrupted")
                return
            self._error(exc, "running the cell", (path,))
            return
        names = [n for n in defined_functions(cell) if _is_jit(ns.get(n))]
        kernel_name = opts.kernel or (names[-1] if names else None)
        if kernel_name is None:
            show_box("note", "This cell defines no @jit kernel.",
                     "Decorate a function with @jit to compile it; its stages are shown here.")
            return
        kernel = ns.get(kernel_name)
        if not _is_jit(kernel):
            self._error_box(f"--kernel {kernel_name}: no @jit kernel of that name",
                     f"kernels defined by this cell: {', '.join(names) or 'none'}")
            return
        notes = []
        if len(names) > 1:
            notes.append(f"this cell defines {', '.join(names)}; showing {kernel_name} "
                         "(choose with --kernel NAME)")
        view_opts = opts
        if opts.bench and opts.launch is None and opts.signature is None:
            view_opts = dataclasses.replace(opts, launch=opts.bench)  # view the bench's launch
        compiled = self._compiled_for_view(view_opts, kernel, kernel_name, target, path, notes)
        if compiled is not None:
            self._show(compiled, opts, notes)
            if opts.compare:
                from .compare_cell import run_compare
                self._failed = not run_compare(kernel, compiled, opts.stages) or self._failed
        elif view_opts is not opts:
            return  # the bench's launch failed: its error is shown once
        if opts.bench:
            from .bench_cell import run_bench
            run_bench(opts.bench, ns)

    def _compiled_for_view(self, opts, kernel, name, target, path, notes):
        """The CompiledKernel to show, or None after showing the source/an error."""
        ns = self.shell.user_ns
        if opts.launch:
            try:
                code = compile(opts.launch, LAUNCH_FILE, "eval")
                result = eval(code, ns)  # noqa: S307 - the user's own launch expression
            except Exception as exc:  # noqa: BLE001
                self._error(exc, f"launching: {opts.launch}", (path, LAUNCH_FILE))
                return None
            if not hasattr(result, "asm"):
                show_box("note", f"--launch returned {type(result).__name__}, not a compiled "
                                 "kernel, so there are no stages to show.",
                         "Give a launch like kernel[grid](args...), which returns the "
                         "CompiledKernel, or use --signature.")
                return None
            if opts.signature is not None:
                notes.append("--signature is ignored: the view shows the launch's "
                             "specialisation")
            ran_on = getattr(result, "target", None)
            ropts = getattr(result, "options", None)
            same_options = all(want is None or want == getattr(ropts, attr, want)
                               for want, attr in ((opts.num_warps, "num_warps"),
                                                  (opts.num_stages, "num_stages")))
            if _same_target(ran_on, target) and opts.passes is None and same_options:
                return result
            if not _same_target(ran_on, target):
                notes.append(f"ran on {ran_on}; the stages shown are the same specialisation "
                             f"compiled for {target}")
            return self._recompile(result, kernel, name, target, opts)
        if opts.signature is None:
            self._show_source_only(kernel, name, path)
            return None
        try:
            consts = {k: eval(v, ns) for k, v in opts.defines}  # noqa: S307
        except Exception as exc:  # noqa: BLE001
            self._error(exc, "evaluating a -D value")
            return None
        problem = _signature_problem(kernel, name, opts.signature, consts)
        if problem:
            self._error_box(*problem)
            return None
        kw = dict(consts, target=str(target))
        if opts.num_warps is not None:
            kw["num_warps"] = opts.num_warps
        if opts.num_stages is not None:
            kw["num_stages"] = opts.num_stages
        if opts.passes is not None:
            kw["keep_snapshots"] = True
        try:
            import workbench
            return workbench.compile(kernel, *opts.signature, **kw)
        except Exception as exc:  # noqa: BLE001
            missing = _missing_constexprs(kernel, consts)
            if missing:  # the generic hint says "pass it to the launch": here it is -D
                defines = " ".join(f"-D {m}=..." for m in missing)
                self._error_box(f"{name} needs a value for its constexpr parameter"
                                f"{'s' if len(missing) > 1 else ''} {', '.join(missing)}",
                                f"Add {defines} to the %%tilekernel line (e.g. -D "
                                f"{missing[0]}=1024).")
                return None
            self._error(exc, f"compiling {name} for {target}", (path,))
            return None

    def _recompile(self, launched, kernel, name, target, opts):
        """Compile the launch's specialisation (``launched.spec``, its options) for
        ``target``."""
        options = launched.options
        changes = {}
        if opts.num_warps is not None:
            changes["num_warps"] = opts.num_warps
        if opts.num_stages is not None:
            changes["num_stages"] = opts.num_stages
        if changes:
            options = dataclasses.replace(options, **changes)
        try:
            return kernel.compile_for(launched.spec, options, target,
                                      keep_snapshots=opts.passes is not None)
        except Exception as exc:  # noqa: BLE001
            self._error(exc, f"compiling {name} for {target}", (getattr(launched.src, "file",
                                                                      ""),))
            return None

    def _show_source_only(self, kernel, name, path) -> None:
        from ..viz.ir_view import render_stages
        try:
            src = kernel.src
            text, file, first = src.text, src.file, src.first_line
        except Exception:  # noqa: BLE001 - fall back to the whole cell
            text, file, first = open(path, encoding="utf-8").read(), path, 1
        consts = " ".join(f"-D {c}=..." for c in _constexpr_names(kernel))
        hint = (f'To see its stages add --signature "{signature_hint(kernel)}"'
                f"{' ' + consts if consts else ''} (your types), or --launch "
                f'"{name}[grid](args...)" to run it and show what the launch compiled.')
        html = render_stages([], text, file, first, title=f"{name} (defined)", notes=[hint])
        show(html, f"{name} defined. {hint}")

    def _show(self, compiled, opts, notes) -> None:
        from IPython.display import display

        from ..viz.snapshot_view import render_snapshots
        from ..viz.stage_widget import stage_view
        if notes:
            show("".join(box_html("note", n) for n in notes), "\n".join(notes))
        display(stage_view(compiled, opts.stages))
        if opts.passes is not None:
            show(render_snapshots(compiled, opts.passes),
                 f"{compiled.name}: {opts.passes} pass by pass")
