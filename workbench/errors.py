"""User-facing errors. Every message points at the user's line: ``file:line:col``, the source
line, a caret under the construct, and a sentence saying what to do. No internal frames.
"""
from __future__ import annotations

import functools
import linecache


class WorkbenchError(Exception):
    """Base class of every error Tile Workbench raises on purpose.

    Its message already points at the user's line, so IPython shows only the message
    (``_render_traceback_``), and the public entry points drop our internal frames
    (:func:`user_facing`)."""

    __suppress_context__ = True

    def _render_traceback_(self) -> list:
        """IPython's hook: the lines shown instead of a traceback."""
        lines = str(self).splitlines() or [""]
        return [f"{type(self).__name__}: {lines[0]}"] + lines[1:]


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
                cause.with_traceback(None) if cause is not None else None)
    return entry


def format_at(loc, message: str, hint: str | None = None, end_col: int | None = None) -> str:
    """``file:line:col: message``, the source line, a caret line and the hint.

    ``loc`` is a :class:`workbench.ir.core.Location` (1-based line and column) or None.
    The source line is read with :mod:`linecache`, so it works for files and for notebook
    cells written to content-hashed files.
    """
    if loc is None or getattr(loc, "file", "unknown") == "unknown":
        out = message
    else:
        out = f"{loc.file}:{loc.line}:{loc.col}: {message}"
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
    bare message), ``hint`` (what to do).
    """

    def __init__(self, reason: str, loc=None, hint: str | None = None, end_col: int | None = None):
        self.reason = reason
        self.loc = loc
        self.hint = hint
        super().__init__(format_at(loc, reason, hint, end_col))


class UnsupportedError(CompilationError):
    """A construct the language (or this target) does not support."""


class CompileTimeAssertionFailure(CompilationError):
    """A ``tl.static_assert`` whose condition was false (Triton's class of that name)."""


class LaunchError(WorkbenchError):
    """Bad launch: wrong number or type of arguments, bad grid, mismatched devices."""


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


class TargetError(WorkbenchError):
    """Unknown target, or a target whose tools (GPU, driver, ptxas) are missing here."""


class ToolMissingError(TargetError):
    """An optional tool (ptxas, nvdisasm, the CUDA driver, a GPU) is not installed or present."""
