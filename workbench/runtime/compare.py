"""``workbench.compare``: compile one kernel with the workbench and with real Triton 3.6 for the
same CUDA target and list where their decisions differ.

Compared (see :mod:`workbench.runtime.ir_facts`): the layout definitions, the layout on every
load/store/dot/reduce/scan/shape op, the ``ttg.convert_layout`` count, the shared bytes
(``ttg.shared`` and the compiled kernel's metadata), the barriers (``bar.sync`` in PTX: ours
agree when there are no more than Triton's) and the global-memory vector widths in PTX.
Registers and spills are not compared: Triton reports them only after loading the kernel on
a GPU.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..config import Target
from .aot import compile as wb_compile
from .ir_facts import IRFacts, facts_of
from .jit import JITFunction, jit
from .triton_oracle import import_triton, triton_compile

#: the properties of a :class:`Comparison`, in display order
PROPERTIES = ("layouts", "op_layouts", "converts", "shared", "barriers", "vectors")


@dataclass
class Difference:
    """One property on which the compilers disagree: ``prop`` (one of :data:`PROPERTIES`),
    ``what`` (a short description: an op name, a layout), ``ours`` and ``theirs``."""

    prop: str
    what: str
    ours: object
    theirs: object

    def __str__(self) -> str:
        return f"{self.prop}: {self.what}: ours {self.ours} / Triton {self.theirs}"


@dataclass
class Comparison:
    """Our stages and Triton's for one kernel and target.

    ``ours``/``theirs``: ``{stage: text}`` (``ttir``, ``ttgir``, ``llir``, ``ptx``);
    ``ours_facts``/``theirs_facts``: :class:`IRFacts`; ``ours_shared``/``theirs_shared``: the
    compiled kernels' shared-memory metadata (bytes); ``differences``: a list of
    :class:`Difference`, empty when every property agrees; ``agree``: property -> bool;
    ``compiled``: our CompiledKernel (its line maps colour the notebook view)."""

    kernel: str
    target: str
    num_warps: int
    ours: dict
    theirs: dict
    ours_facts: IRFacts
    theirs_facts: IRFacts
    ours_shared: int
    theirs_shared: int
    differences: list = field(default_factory=list)
    agree: dict = field(default_factory=dict)
    compiled: object = field(default=None, repr=False)

    def summary(self) -> str:
        """One line per property: ``agree`` or the differences."""
        lines = [f"{self.kernel} on {self.target}, num_warps={self.num_warps}"]
        for prop in PROPERTIES:
            diffs = [d for d in self.differences if d.prop == prop]
            lines.append(f"  {prop}: " + ("agree" if not diffs else
                                          "; ".join(f"{d.what}: ours {d.ours} / Triton "
                                                    f"{d.theirs}" for d in diffs)))
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<Comparison {self.summary()}>"


def _diff_op_layouts(ours: dict, theirs: dict) -> list:
    out = []
    for op in sorted(set(ours) | set(theirs)):
        a, b = ours.get(op, []), theirs.get(op, [])
        if len(a) != len(b):
            out.append(Difference("op_layouts", f"{op} count", len(a), len(b)))
            continue
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                out.append(Difference("op_layouts", f"{op} #{i}", list(x), list(y)))
    return out


def differences(ours: IRFacts, theirs: IRFacts, ours_shared: int, theirs_shared: int) -> list:
    """The :class:`Difference` list between two sets of facts (see :class:`Comparison`)."""
    out = []
    only_ours = sorted(set(ours.layouts) - set(theirs.layouts))
    only_theirs = sorted(set(theirs.layouts) - set(ours.layouts))
    if only_ours or only_theirs:
        out.append(Difference("layouts", "definitions only in one", only_ours, only_theirs))
    out += _diff_op_layouts(ours.op_layouts, theirs.op_layouts)
    if ours.converts != theirs.converts:
        out.append(Difference("converts", "ttg.convert_layout ops", ours.converts,
                              theirs.converts))
    if ours_shared != theirs_shared:
        out.append(Difference("shared", "shared bytes (kernel metadata)", ours_shared,
                              theirs_shared))
    if ours.ptx_barriers > theirs.ptx_barriers:  # fewer barriers than Triton is no fault
        out.append(Difference("barriers", "bar.sync in ptx", ours.ptx_barriers,
                              theirs.ptx_barriers))
    if ours.vectors != theirs.vectors:
        keys = sorted(set(ours.vectors) | set(theirs.vectors))
        out.append(Difference("vectors", "global ld/st by width",
                              {k: ours.vectors[k] for k in keys},
                              {k: theirs.vectors[k] for k in keys}))
    return out


def compare(kernel, *signature, target: str = "cuda:90", num_warps: int = 4,
            num_stages: int = 3, **constexprs) -> Comparison:
    """Compile ``kernel`` (a ``@jit`` function or a plain one) with the workbench and with
    Triton 3.6 for ``target`` (``"cuda:80"`` or ``"cuda:90"``; no GPU needed) and compare.

    ``signature``: one Triton signature string per non-constexpr parameter (``"*fp32:16"``,
    ``"i32"``; see ``workbench.runtime.compiler.parse_signature_entry``); ``constexprs``: the
    constexpr values by name. Returns a :class:`Comparison`.
    Raises ToolMissingError (Triton not installed; the message gives
    ``pip install "tile-workbench[triton]"``), ValueError (a target other than CUDA, a bad
    signature entry), LaunchError/CompilationError (our compile), and Triton's errors."""
    import_triton()
    jf = kernel if isinstance(kernel, JITFunction) else jit(kernel)
    parsed = Target.parse(target)
    if parsed.backend != "cuda":
        raise ValueError(f"Triton compiles for CUDA targets only (cuda:80, cuda:90), not "
                         f"{parsed}")
    target = str(parsed)
    ours_ck = wb_compile(jf, *signature, target=target, num_warps=num_warps,
                         num_stages=num_stages, **constexprs)
    values = {p.name: jf.src.defaults[p.name] for p in jf.params
              if p.constexpr and p.name in jf.src.defaults}
    values.update(constexprs)
    for opt, v in (("num_warps", num_warps), ("num_stages", num_stages)):
        if opt in {p.name for p in jf.params if p.constexpr}:  # a parameter takes it, as
            values.setdefault(opt, v)  # in a launch (ours binds it the same way)
    theirs = triton_compile(jf, signature, target, num_warps, num_stages, values)
    ours = {k: ours_ck.asm[k] for k in ("ttir", "ttgir", "llir", "ptx") if k in ours_ck.asm}
    of = facts_of(ours.get("ttgir", ""), ours.get("ptx", ""))
    tf = facts_of(theirs["asm"].get("ttgir", ""), theirs["asm"].get("ptx", ""))
    diffs = differences(of, tf, ours_ck.metadata.shared, theirs["shared"])
    agree = {p: not any(d.prop == p for d in diffs) for p in PROPERTIES}
    return Comparison(jf.src.name, target, num_warps, ours, theirs["asm"], of, tf,
                      ours_ck.metadata.shared, theirs["shared"], diffs, agree, ours_ck)
