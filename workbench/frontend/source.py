"""Capture a kernel's source: file, first line, dedented text, globals, closure, parameters.

Locations in the IR name the user's own file and line, so ``KernelSource`` keeps the real
file (``co_filename``; notebook cells are content-hashed files in :mod:`linecache`), the
line of the first captured line and the indentation removed by dedenting.
"""
from __future__ import annotations

import ast
import inspect
import linecache
import types
from dataclasses import dataclass, field

from ..errors import CompilationError
from ..ir.core import Location

_CONSTEXPR_NAMES = ("constexpr", "tl.constexpr", "triton.language.constexpr",
                    "language.constexpr", "workbench.language.constexpr")


_CONST_NAMES = ("const", "tl.const", "triton.language.const", "language.const",
                "workbench.language.const")


def _is_const_annotation(ann) -> bool:
    """Whether a parameter annotation is ``tl.const`` (a pointer nothing is stored through),
    the class (by its marker attribute) or its name as a string."""
    if isinstance(ann, type) and vars(ann).get("__workbench_const_type__", False):
        return True
    return isinstance(ann, str) and ann.strip().strip("'\"") in _CONST_NAMES


def _is_constexpr_annotation(ann) -> bool:
    """Whether a parameter annotation marks a constexpr: the ``tl.constexpr`` class itself
    (recognised by its marker attribute, so this module needs no import of the language,
    which imports it) or its name as a string annotation."""
    if isinstance(ann, type) and vars(ann).get("__workbench_constexpr_type__", False):
        return True
    if isinstance(ann, str):
        return ann.strip().strip("'\"") in _CONSTEXPR_NAMES
    return False


@dataclass
class KernelSource:
    """The source of one ``@jit`` function.

    ``text``: the dedented source (decorators included); ``file``: the file it came from;
    ``first_line``: 1-based line of ``text``'s first line in ``file``; ``col_offset``: the
    number of columns removed by dedenting; ``params``: parameter names in order;
    ``constexprs``: names annotated ``tl.constexpr``; ``consts``: names annotated ``tl.const``
    (pointers nothing is stored through); ``defaults``: parameter defaults;
    ``globals`` and ``closure``: the names the body can read."""

    name: str
    text: str
    file: str
    first_line: int
    col_offset: int = 0
    params: list = field(default_factory=list)
    constexprs: set = field(default_factory=set)
    defaults: dict = field(default_factory=dict)
    globals: dict = field(default_factory=dict)
    closure: dict = field(default_factory=dict)
    fn: object = None
    consts: set = field(default_factory=set)
    _tree: ast.FunctionDef | ast.AsyncFunctionDef | None = field(default=None, repr=False)

    @staticmethod
    def from_function(fn) -> "KernelSource":
        """Capture ``fn`` (a plain Python function). Raises CompilationError when its source
        cannot be found or does not parse (a Python syntax error points at the user's line)."""
        fn = getattr(fn, "fn", fn) if getattr(fn, "__workbench_jit__", False) else fn
        file = fn.__code__.co_filename
        try:
            lines, first = inspect.getsourcelines(fn)
        except (OSError, TypeError) as e:
            raise CompilationError(
                f"cannot read the source of {fn.__name__!r} ({e})", None,
                "define kernels in a file or a notebook cell, not with exec() of a string "
                "that linecache does not know") from None
        first = max(first, 1)
        indent = len(lines[0]) - len(lines[0].lstrip(" \t"))
        out = []
        for line in lines:
            prefix = line[:indent]
            out.append(line[indent:] if prefix.strip() == "" else line.lstrip())
        text = "".join(out)
        closure = {}
        if fn.__closure__:
            for name, cell in zip(fn.__code__.co_freevars, fn.__closure__, strict=False):
                try:
                    closure[name] = cell.cell_contents
                except ValueError:
                    pass
        sig = inspect.signature(fn)
        params = list(sig.parameters)
        defaults = {n: p.default for n, p in sig.parameters.items()
                    if p.default is not inspect.Parameter.empty}
        constexprs = {n for n, p in sig.parameters.items()
                      if _is_constexpr_annotation(p.annotation)}
        src = KernelSource(fn.__name__, text, file, first, indent, params, constexprs, defaults,
                           fn.__globals__, closure, fn,
                           {n for n, p in sig.parameters.items()
                            if _is_const_annotation(p.annotation)})
        src.tree()  # parse now: syntax errors surface at capture
        return src

    @staticmethod
    def from_text(text: str, file: str, first_line: int = 1, globals_: dict | None = None,
                  name: str | None = None) -> "KernelSource":
        """Capture a kernel from source text (a notebook cell, a test). ``file`` should be
        in :mod:`linecache` for errors to show the line. Raises CompilationError on a syntax
        error, pointing at the line."""
        src = KernelSource(name or "<kernel>", text, file, first_line, 0, globals=globals_ or {})
        tree = src.tree()
        src.name = name or tree.name
        src.params = [a.arg for a in tree.args.args]
        return src

    def __str__(self) -> str:
        return self.text

    def replace(self, old: str, new: str, count: int = -1) -> str:
        """``text`` with ``old`` replaced by ``new`` (``str.replace``): Triton's tests patch a
        template kernel with ``kernel._unsafe_update_src(kernel.src.replace(key, value))``,
        where Triton's ``JITFunction.src`` is a string."""
        return self.text.replace(old, new, count)

    def with_text(self, text: str) -> "KernelSource":
        """A copy that compiles ``text`` instead (same file, first line, globals, closure and
        parameters: the text must define the same function). Raises CompilationError on a
        syntax error."""
        import dataclasses
        src = dataclasses.replace(self, text=text, _tree=None)
        src.tree()
        return src

    def loc(self, lineno: int, col_offset: int, name: str | None = None) -> Location:
        """The Location in the user's file of an AST position of ``text`` (1-based line,
        0-based col)."""
        return Location(self.file, self.first_line + lineno - 1,
                        col_offset + 1 + self.col_offset, name)

    def tree(self) -> ast.FunctionDef | ast.AsyncFunctionDef:
        """The parsed ``def`` (cached). Raises CompilationError on a syntax error."""
        if self._tree is None:
            try:
                mod = ast.parse(self.text)
            except SyntaxError as e:
                loc = self.loc(e.lineno or 1, (e.offset or 1) - 1)
                known = bool(linecache.getline(self.file, loc.line))
                raise CompilationError(f"invalid Python syntax in kernel {self.name!r}: "
                                       f"{e.msg}", loc if known else None,
                                       "fix the syntax error") from None
            defs = [n for n in mod.body if isinstance(n, (ast.FunctionDef,
                                                          ast.AsyncFunctionDef))]
            if not defs:
                raise CompilationError(f"no function definition found for {self.name!r}")
            self._tree = defs[0]
            self._mark_constexpr_annotations(self._tree)
        return self._tree

    def _mark_constexpr_annotations(self, tree) -> None:
        for a in tree.args.args + tree.args.kwonlyargs:
            if a.annotation is not None and ast.unparse(a.annotation) in _CONSTEXPR_NAMES:
                self.constexprs.add(a.arg)
            if a.annotation is not None and ast.unparse(a.annotation) in _CONST_NAMES:
                self.consts.add(a.arg)


def _code_objects(code):
    yield code
    for c in code.co_consts:
        if inspect.iscode(c):
            yield from _code_objects(c)


def _matches(text: str, fn) -> bool:
    try:
        top = compile(text, fn.__code__.co_filename, "exec")
    except (SyntaxError, ValueError):
        return False
    want = fn.__code__
    return any(c.co_name == want.co_name and c.co_firstlineno == want.co_firstlineno
               and c.co_code == want.co_code for c in _code_objects(top))


def recover_exec_source(fn, max_frames: int = 12) -> bool:
    """Give a function made by ``exec(text)`` a readable source, as a file would have.

    Such a function's ``co_filename`` is ``"<string>"`` and :mod:`linecache` has no lines for
    it, so its source cannot be read later. While it is being decorated, the text usually
    still sits in a local variable of a caller (Triton's tests build kernels this way), so the
    callers' string locals that contain ``def <name>(`` are tried: the first one that compiles
    to the same bytecode at the same line is stored in :mod:`linecache` under a file name of
    its own (``<exec:NAME:HASH>``) and ``fn.__code__`` is pointed at that name. Returns True
    when the source was found (or was readable already), False otherwise (the compile step
    then reports that the source cannot be read). Only frames alive now are searched."""
    import sys
    file = fn.__code__.co_filename
    if not file.startswith("<") or linecache.getlines(file):
        return True
    needle = f"def {fn.__name__}("
    frame: types.FrameType | None = sys._getframe(1)
    for _ in range(max_frames):
        if frame is None:
            break
        for value in list(frame.f_locals.values()):
            if isinstance(value, str) and needle in value and _matches(value, fn):
                name = f"<exec:{fn.__name__}:{abs(hash(value)):x}>"
                lines = value.splitlines(keepends=True)
                linecache.cache[name] = (len(value), None, lines, name)
                fn.__code__ = fn.__code__.replace(co_filename=name)
                return True
        frame = frame.f_back
    return False
