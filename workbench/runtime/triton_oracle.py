"""Compile a workbench kernel's source with real Triton (the optional ``triton`` extra), for
``workbench.compare``.

The kernel keeps its source text (:class:`workbench.frontend.source.KernelSource`); it is
executed again in a namespace where ``triton`` and ``tl`` are real Triton's, decorators
removed, and wrapped in ``triton.jit``. Globals it reads are carried over: our language
module becomes ``triton.language``, our ``tl.constexpr`` values become Triton's, and helper
``@jit`` functions are translated the same way. ``triton.compile(ASTSource(...),
target=GPUTarget("cuda", cc, 32))`` needs no GPU (Triton 3.6: ``python/triton/compiler/
compiler.py``).
"""
from __future__ import annotations

import ast
import linecache
import types

from ..config import Target
from ..errors import ToolMissingError
from .compiler import parse_signature_entry

INSTALL_HINT = 'pip install "tile-workbench[triton]"  (Triton 3.6.0, no GPU needed to compile)'


def import_triton():
    """``(triton, triton.language)``; raises ToolMissingError with the install command when
    Triton is not importable."""
    try:
        import triton
        import triton.language as ttl
    except ImportError as e:
        raise ToolMissingError(
            f"comparing with Triton needs Triton installed ({e}); install it with: "
            f"{INSTALL_HINT}") from None
    return triton, ttl


def _strip_decorators(text: str) -> str:
    """``text`` with the decorator lines of its function blanked (line numbers kept)."""
    tree = ast.parse(text)
    fn = tree.body[0]
    lines = text.splitlines(True)
    if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and fn.decorator_list:
        first = min(d.lineno for d in fn.decorator_list) - 1
        for i in range(first, fn.lineno - 1):
            lines[i] = "\n"
    return "".join(lines)


def _names_used(code) -> set:
    """Global and free names read by ``code`` and the code objects nested in it."""
    names = set(code.co_names) | set(code.co_freevars)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names |= _names_used(c)
    return names


class _Translator:
    """Maps the values a kernel's globals hold to their Triton equivalents."""

    def __init__(self, triton, ttl):
        self.triton, self.ttl = triton, ttl
        self.done: dict = {}

    def value(self, v):
        import workbench
        import workbench.language as wtl
        if v is wtl or (isinstance(v, types.ModuleType)
                        and v.__name__.startswith("workbench.language")):
            return self.ttl
        if v is workbench:
            return self.triton
        if isinstance(v, wtl.constexpr):
            return self.ttl.constexpr(v.value)
        if getattr(v, "__workbench_jit__", False):
            return self.function(v)
        return v

    def function(self, jf):
        if id(jf) in self.done:
            return self.done[id(jf)]
        src = jf.src
        name = f"<triton copy of {src.file}:{src.name}>"
        text = "\n" * (src.first_line - 1) + _strip_decorators(src.text)
        linecache.cache[name] = (len(text), None, text.splitlines(True), name)
        self.done[id(jf)] = jf  # in progress: a cycle keeps the original
        used = _names_used(jf.fn.__code__)
        ns = {k: self.value(v) for k, v in {**src.globals, **src.closure}.items()
              if k in used}
        ns.update(triton=self.triton, tl=self.ttl, __name__=f"triton_copy_{src.name}")
        exec(compile(text, name, "exec"), ns)  # noqa: S102 - the user's own kernel source
        out = self.triton.jit(ns[src.name], noinline=bool(getattr(jf, "noinline", False)))
        self.done[id(jf)] = out
        return out


def triton_compile(jf, entries, target: str | Target, num_warps: int, num_stages: int,
                   constexprs: dict) -> dict:
    """Compile ``jf`` (a workbench ``JITFunction``) with Triton for ``target`` (``cuda:80`` or
    ``cuda:90``). ``entries``: one Triton signature string per non-constexpr parameter
    (``"*fp16:16"``, ``"i32"``); ``constexprs``: the constexpr values (defaults filled in).

    Returns ``{"asm": {stage: text}, "shared": bytes, "num_warps": int}`` with stages
    ``ttir``, ``ttgir``, ``llir``, ``ptx``. Raises ToolMissingError without Triton, ValueError
    for a non-CUDA target or a bad signature entry; Triton's own errors propagate."""
    triton, ttl = import_triton()
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    target = Target.parse(target)
    if target.backend != "cuda" or target.arch is None:
        raise ValueError(f"Triton compiles for CUDA targets only (cuda:80, cuda:90), not "
                         f"{target}")
    fn = _Translator(triton, ttl).function(jf)
    signature: dict = {}
    consts: dict = {}
    attrs: dict = {}
    runtime = iter(entries)
    for i, p in enumerate(jf.params):
        if p.constexpr:
            signature[p.name] = "constexpr"
            consts[p.name] = constexprs[p.name]
            continue
        signature[p.name] = _triton_entry(parse_signature_entry(p.name, next(runtime)), (i,),
                                          consts, attrs)
    src = ASTSource(fn, signature=signature, constexprs=consts, attrs=attrs)
    compiled = triton.compile(src, target=GPUTarget("cuda", target.arch, 32),
                              options={"num_warps": num_warps, "num_stages": num_stages})
    asm = {k: v for k, v in compiled.asm.items() if isinstance(v, str)}
    return {"asm": asm, "shared": int(compiled.metadata.shared),
            "num_warps": int(compiled.metadata.num_warps)}


def _triton_entry(spec, path: tuple, consts: dict, attrs: dict):
    """Triton's signature entry of ``spec`` at argument ``path`` (``(i,)``, or ``(i, j, ...)``
    inside a tuple, Triton's paths), recording constexpr values (an int specialised to 1
    included) in ``consts`` and divisibility in ``attrs``."""
    if spec.kind == "tuple":
        return tuple(_triton_entry(e, (*path, j), consts, attrs)
                     for j, e in enumerate(spec.elements))
    if spec.kind == "constexpr" or spec.equal_to_1:
        consts[path if len(path) > 1 else spec.name] = 1 if spec.equal_to_1 else spec.value
        return "constexpr"
    if spec.divisible_by_16:
        attrs[path] = [["tt.divisibility", 16]]
    return spec.type
