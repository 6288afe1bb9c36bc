"""``%%tilekernel --compare triton``: compile the cell's specialisation with real Triton 3.6
beside ours and show both (``workbench.viz.compare_view``). Without Triton installed, a
note says how to install it and the cell still succeeds."""
from __future__ import annotations

from .display import show, show_box, show_error


def comparison_args(compiled) -> tuple[list, dict]:
    """(signature entries, constexprs) of the specialisation ``compiled`` was built for, as
    ``workbench.compare`` takes them (``"*fp32:16"``; ``":1"`` for ints specialised to 1)."""
    entries, consts = [], {}
    for a in compiled.spec.args:
        if a.kind == "constexpr":
            consts[a.name] = a.value
        else:
            entries.append(a.type + (":16" if a.divisible_by_16 else "")
                           + (":1" if a.equal_to_1 else ""))
    return entries, consts


def run_compare(kernel, compiled, stages=None) -> bool:
    """Compare ``compiled`` (a CompiledKernel of ``kernel`` for a CUDA target) with Triton and
    display the view. Returns False after showing an error box (a failed comparison), True
    otherwise (shown, or a note that Triton is missing or the target is not CUDA)."""
    from ..errors import ToolMissingError
    from ..runtime.compare import compare
    from ..viz.compare_view import render_comparison
    target = str(compiled.target)
    if not target.startswith("cuda"):
        show_box("note", f"--compare triton compares CUDA compiles; this one is for {target}.",
                 "Add --target cuda:90 (or cuda:80) to the %%tilekernel line.")
        return True
    entries, consts = comparison_args(compiled)
    try:
        c = compare(kernel, *entries, target=target, num_warps=compiled.options.num_warps,
                    num_stages=compiled.options.num_stages, **consts)
    except ToolMissingError as exc:
        show_box("note", "--compare triton: Triton is not installed, so only our stages are "
                         "shown.", str(exc))
        return True
    except Exception as exc:  # noqa: BLE001 - Triton's own errors: shown, the kernel survives
        show_error(exc, f"compiling {compiled.src.name} with Triton for {target}")
        return False
    show(render_comparison(c, stages), c.summary())
    return True
