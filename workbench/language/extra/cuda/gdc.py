"""Grid dependency control (Triton 3.6's ``triton.language.extra.cuda.gdc``), for kernels
launched with programmatic dependent launch (``launch_pdl=True``, sm_90 and later).

``gdc_wait()`` blocks until the grid this launch depends on has finished and its memory is
visible; ``gdc_launch_dependents()`` lets the next grid start launching. Both are
``griddepcontrol`` instructions (PTX ISA, "Parallel Synchronization and Communication
Instructions: griddepcontrol"), emitted as Triton does: an impure
``tt.elementwise_inline_asm`` with a dummy int32 result. They are safe without PDL. Where the
instruction does not exist they do nothing: on the interpreter and the CPU backend (programs
run after the previous launch has finished anyway) and on CUDA targets below sm_90, where the
compile report says so.
"""
from __future__ import annotations

from ....ir.dialects.tt import GDC_ASM
from ... import dtypes as dt
from ...core import builtin
from ...inline_asm import inline_asm_elementwise

WAIT, LAUNCH_DEPENDENTS = GDC_ASM


@builtin
def gdc_wait(_semantic=None):
    """Wait for the grid this launch depends on (see the module docstring). Returns None."""
    inline_asm_elementwise(WAIT, "=r", [], dtype=dt.int32, is_pure=False, pack=1,
                           _semantic=_semantic)


@builtin
def gdc_launch_dependents(_semantic=None):
    """Let the dependent grid start launching (see the module docstring). Returns None."""
    inline_asm_elementwise(LAUNCH_DEPENDENTS, "=r", [], dtype=dt.int32, is_pure=False,
                           pack=1, _semantic=_semantic)
