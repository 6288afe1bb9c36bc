"""User-facing errors. Every message points at the user's line: ``file:line:col``, the source
line, a caret under the construct, and a sentence saying what to do. No internal frames.
"""
from __future__ import annotations

import functools
import linecache
import os
import sys
import traceback
from typing import Callable


class WorkbenchError(Exception):
    """Base class of every error Tile Workbench raises on purpose.

    Its message already points at the user's line, so IPython shows only the message
    (``_render_traceback_``), and the public entry points drop our internal frames
    (:func:`user_facing`)."""

    __suppress_context__ = True

    def shown_text(self) -> str:
        """The message as people see it (IPython and a script's traceback): ``str(self)``
        less lines kept only for code that reads Triton's messages."""
        return str(self)

    def _render_traceback_(self) -> list:
        """IPython's hook: the lines shown instead of a traceback."""
        lines = self.shown_text().splitlines() or [""]
        out = [f"{type(self).__name__}: {lines[0]}"] + lines[1:]
        cause = self.__cause__
        if isinstance(cause, WorkbenchError):  # a called @jit function's error: shown first
            out = cause._render_traceback_() + ["", "The above was raised in a call made here:",
                                                ""] + out
        return out


def user_facing(fn):
    """Decorate a public entry point (launch, compile): a :class:`WorkbenchError` raised
    anywhere below it is re-raised from it with the internal frames dropped, so a script's
    traceback ends at the user's call and the message (which names the user's line)."""
    @functools.wraps(fn)
    def entry(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except WorkbenchError as e:
            cause = e.__cause__  # an underlying language error the compiler chained: kept
            raise e.with_traceback(None) from (
                language_frames(cause) if cause is not None else None)
    return entry


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
_LANGUAGE_DIR = _PACKAGE_DIR + "language" + os.sep


def language_frames(err: BaseException) -> BaseException:
    """``err`` with its traceback cut to start at its first frame in the language library
    (``workbench/language/``: the ``tl`` builtin that refused, e.g. the ``@builtin`` wrapper
    in ``language/core.py``, then the rule that raised); no traceback if it has no such frame
    (the compiler's own frames are never shown). As in Triton, whose chained cause of an
    error in a builtin shows ``language/core.py`` and not the code generator. Returns
    ``err``."""
    tb = err.__traceback__
    while tb is not None and not os.path.abspath(
            tb.tb_frame.f_code.co_filename).startswith(_LANGUAGE_DIR):
        tb = tb.tb_next
    return err.with_traceback(tb)


def script_traceback(err: WorkbenchError) -> str:
    """What a script shows for ``err`` left uncaught: the traceback's frames outside this
    package (the user's calls, most recent last) and the message as IPython shows it
    (:meth:`WorkbenchError._render_traceback_`); no internal frame, no chained language
    error (the message already says it)."""
    frames = [f for f in traceback.extract_tb(err.__traceback__)
              if not os.path.abspath(f.filename).startswith(_PACKAGE_DIR)]
    head = ""
    if frames:
        head = "Traceback (most recent call last):\n" + "".join(traceback.format_list(frames))
    return head + "\n".join(err._render_traceback_()) + "\n"


_previous_hook: list = []


def _excepthook(kind, value, tb) -> None:
    if isinstance(value, WorkbenchError):
        sys.stderr.write(script_traceback(value.with_traceback(tb)))
        return
    _previous_hook[0](kind, value, tb)


def install_excepthook() -> None:
    """Show an uncaught :class:`WorkbenchError` of a script by :func:`script_traceback`;
    every other exception goes to the hook that was there. Installed only over Python's own
    hook (IPython, debuggers and tools with a hook of their own keep theirs); called when
    ``workbench`` is imported."""
    if sys.excepthook is sys.__excepthook__:
        _previous_hook[:] = [sys.excepthook]
        sys.excepthook = _excepthook


# functions file -> display name of that file or None; the notebook extension adds one that
# names notebook cells "In [12]" (as IPython names them); empty outside a notebook
_FILE_NAMERS: list[Callable[[str], "str | None"]] = []


def add_file_namer(namer: Callable[[str], "str | None"]) -> None:
    """Make :func:`place` ask ``namer(file)`` for a display name of a source file (e.g.
    ``"In [12]"`` for a notebook cell); adding the same function twice adds it once."""
    if namer not in _FILE_NAMERS:
        _FILE_NAMERS.append(namer)


def place(file, line: int, col: int | None = None) -> str:
    """Where a source line is, for people: ``In [12], line 5`` (``, col 9`` with a column) for
    a file a namer knows (a notebook cell), else ``file:line`` (``:col``)."""
    for namer in _FILE_NAMERS:
        try:
            name = namer(str(file))
        except Exception:  # noqa: BLE001 - a broken namer must not hide the error itself
            name = None
        if name:
            return f"{name}, line {line}" + (f", col {col}" if col else "")
    return f"{file}:{line}" + (f":{col}" if col is not None else "")


def format_at(loc, message: str, hint: str | None = None, end_col: int | None = None) -> str:
    """``file:line:col: message`` (``In [12], line 5, col 9: message`` for a notebook cell, see
    :func:`place`), the source line, a caret line and the hint.

    ``loc`` is a :class:`workbench.ir.core.Location` (1-based line and column) or None.
    The source line is read with :mod:`linecache`, so it works for files and for notebook
    cells written to content-hashed files.
    """
    if loc is None or getattr(loc, "file", "unknown") == "unknown":
        out = message
    else:
        out = f"{place(loc.file, loc.line, loc.col)}: {message}"
        src = linecache.getline(loc.file, loc.line).rstrip("\n")
        if src:
            col = max(loc.col, 1)
            width = max(1, (end_col - col) if end_col and end_col > col else 1)
            out += f"\n    {src}\n    {' ' * (col - 1)}{'^' * width}"
    if hint:
        out += f"\n{hint}"
    return out


class CompilationError(WorkbenchError):
    """A kernel could not be compiled (bad construct, bad shapes, bad types...).

    Attributes: ``loc`` (the Location of the offending construct, or None), ``reason`` (the
    bare message), ``hint`` (what to do), ``at`` (Triton's position: line from the ``def``,
    column, function name; or None). As in Triton, ``__cause__`` holds the underlying error:
    the language rule's own exception, or for an error inside a called ``@jit`` function,
    that function's CompilationError (this one then points at the call).
    """

    def __init__(self, reason: str, loc=None, hint: str | None = None, end_col: int | None = None,
                 at: tuple | None = None):
        self.reason = reason
        self.loc = loc
        self.hint = hint
        #: Triton's position of the construct, (line counted from the ``def`` line as 1,
        #: 0-based column), or None; the message says it as Triton does, ``at 2:4:``
        self.at = at
        text = format_at(loc, reason, None, end_col)
        self._shown = text + (f"\n{hint}" if hint else "")
        if at is not None:  # Triton's tests look for "at 2:4:" in str(error)
            text += f"\n(Triton's position: at {at[0]}:{at[1]}: of {at[2]})"
        super().__init__(text + (f"\n{hint}" if hint else ""))

    def shown_text(self) -> str:
        """The message without Triton's def-relative position (``str(self)`` keeps it)."""
        return getattr(self, "_shown", None) or str(self)

    @property
    def error_message(self) -> str:
        """The bare message (Triton's ``CompilationError.error_message``): ``reason``."""
        return self.reason


class UnsupportedError(CompilationError):
    """A construct the language (or this target) does not support."""


#: PTX special registers read by the ``tl.extra.cuda`` helpers that are inline assembly, and
#: those helpers' names (so an error names what the user called)
_PTX_HELPERS = {"%globaltimer": "tl.extra.cuda.globaltimer", "%smid": "tl.extra.cuda.smid"}


def cuda_only(what: str, target: str, loc=None, asm: str = "") -> UnsupportedError:
    """The error for ``what`` (a language name such as ``tl.inline_asm_elementwise``) met by
    ``target`` ("the interpreter", "the CPU backend"), which cannot run it: only the CUDA
    backend can. ``loc`` is the op's location (the user's line); ``asm``: the inline
    assembly's text, which names the ``tl.extra.cuda`` helper that made it, if one did."""
    for register, helper in _PTX_HELPERS.items():
        if register in asm:
            what = f"{helper} (inline PTX reading {register})"
    return UnsupportedError(
        f"{what} runs PTX on an NVIDIA GPU, so only the CUDA backend can run it; {target} "
        "cannot", loc, "compile for a cuda target (target='cuda:90') and launch on an NVIDIA "
        "GPU, or write the computation with tl operations that every backend runs")


class CompileTimeAssertionFailure(CompilationError):
    """A ``tl.static_assert`` whose condition was false (Triton's class of that name)."""


class LaunchError(WorkbenchError):
    """Bad launch: wrong number or type of arguments, bad grid, mismatched devices."""


class AutotunerError(LaunchError):
    """``@autotune`` has nothing to time (``early_config_prune`` left no configuration);
    Triton's ``triton.runtime.errors.AutotunerError``."""


class LaunchOptionError(LaunchError, AssertionError):
    """A launch option with a bad value (``num_warps`` not a power of 2, ...); also an
    ``AssertionError``, which Triton's backends raise from their options' checks."""


class TargetOptionError(LaunchError, ValueError):
    """A launch option the target cannot honour (``num_ctas > 1`` before sm_90, an ``arch``
    the CUDA backend does not compile for); also a ``ValueError``, which Triton's CUDA
    backend raises there (``parse_options``)."""


class ArgumentOverflowError(LaunchError, OverflowError):
    """An integer argument outside the range of its parameter's type (an unannotated int
    must fit int64 or uint64); also an ``OverflowError``, which Triton raises there."""


class OutOfBoundsError(WorkbenchError):
    """A load or store touched memory outside the arrays passed to the launch.

    Attributes: ``program_id`` (tuple of 3 ints), ``loc`` (source Location), ``offset`` (the
    offending byte offset relative to the pointer argument's base), ``arg`` (parameter name);
    where the backend knows them (the interpreter), ``element_offset`` (``offset`` in elements)
    and ``offsets`` (every offending lane's element offset), else None and ``[]``.
    """

    def __init__(self, message: str, program_id=None, loc=None, offset=None, arg=None):
        self.program_id, self.loc, self.offset, self.arg = program_id, loc, offset, arg
        self.element_offset: int | None = None
        self.offsets: list[int] = []
        super().__init__(format_at(loc, message))


class OutOfResources(WorkbenchError):
    """A kernel needs more of a resource than the device (or the host) allows: shared memory,
    registers, threads per block, grid size, scratch memory (Triton's
    ``triton.runtime.errors.OutOfResources``, with the same ``required``, ``limit`` and
    ``name`` attributes).

    ``required`` and ``limit``: the amounts (ints, in ``unit``); ``name``: the resource
    ("shared memory", "registers per thread", "threads per block", ...); ``kernel``: the
    kernel's name; ``hint``: what to change; ``loc``: the kernel's ``def`` line when known
    (the message then points at it); ``source``: where the limit comes from (the device's
    answer or the table of architectures)."""

    def __init__(self, required, limit, name: str, kernel: str | None = None,
                 hint: str | None = None, unit: str = "", loc=None, source: str | None = None):
        self.required, self.limit, self.name = required, limit, name
        self.kernel, self.hint, self.unit, self.loc, self.source = kernel, hint, unit, loc, source
        who = f"kernel '{kernel}'" if kernel else "the kernel"
        units = f" {unit}" if unit else ""
        where = f" ({source})" if source else ""
        text = (f"out of resource: {name}: {who} needs {required}{units}; the limit is "
                f"{limit}{units}{where}")
        super().__init__(format_at(loc, text, hint or "Use smaller blocks or fewer stages."))

    def __reduce__(self):
        return (_rebuild_out_of_resources, (self.required, self.limit, self.name, self.kernel,
                                            self.hint, self.unit, self.source))


def _rebuild_out_of_resources(required, limit, name, kernel, hint, unit, source):
    """Unpickle an :class:`OutOfResources` (its source location is not kept)."""
    return OutOfResources(required, limit, name, kernel, hint, unit, None, source)


class DeviceFaultError(WorkbenchError):
    """A kernel faulted on the GPU (an illegal address, a trap...): the CUDA context is
    unusable from now on. ``code`` and ``code_name``: the driver's error (e.g. 700,
    ``CUDA_ERROR_ILLEGAL_ADDRESS``); ``kernel``: the name of the kernel launched last;
    ``launch``: text describing that launch (grid, arguments' shapes and dtypes)."""

    def __init__(self, message: str, code: int = 0, code_name: str = "", kernel=None,
                 launch: str | None = None):
        self.code, self.code_name, self.kernel, self.launch = code, code_name, kernel, launch
        super().__init__(message)


class TargetError(WorkbenchError):
    """Unknown target, or a target whose tools (GPU, driver, ptxas) are missing here."""


class ToolMissingError(TargetError):
    """An optional tool (ptxas, nvdisasm, the CUDA driver, a GPU) is not installed or present."""


#: Triton's name of the base class (``triton.errors.TritonError``)
TritonError = WorkbenchError
