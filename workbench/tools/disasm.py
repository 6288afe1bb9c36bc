"""``triton.tools.disasm.get_sass``: the SASS of a cubin, for scripts that read
``compiled.asm["cubin"]`` and disassemble it themselves (a compiled kernel's
``asm["sass"]`` already holds the same text).

Triton runs ``cuobjdump -sass`` and rewrites its output; the workbench runs NVIDIA's
``nvdisasm`` (the ``sass`` extra installs it; no GPU needed), so the text is nvdisasm's:
the same instructions, with ``//## File ..., line N`` comments giving each one's source line.
"""
from __future__ import annotations

import re

from ..backends.nvidia_tools import disassemble, find_tool
from ..errors import ToolMissingError


def get_sass(cubin_asm: bytes, fun: str | None = None) -> str:
    """SASS text of ``cubin_asm`` (the bytes of a cubin); with ``fun``, only the function of
    that name (its ``.text.<fun>`` section). Raises ToolMissingError without nvdisasm,
    :class:`~workbench.backends.nvidia_tools.PtxasError` when nvdisasm refuses the bytes,
    KeyError when the cubin has no function ``fun``, TypeError for text (a compiled kernel's
    ``asm["cubin"]`` is a readable summary here; its bytes are ``extra["cubin"]``)."""
    if not isinstance(cubin_asm, (bytes, bytearray)):
        raise TypeError("get_sass takes the cubin's bytes: a compiled kernel's asm['cubin'] "
                        "is a text summary in the workbench; pass compiled.extra['cubin'], or "
                        "read compiled.asm['sass'], which is this disassembly")
    tool = find_tool("nvdisasm")
    if tool is None:
        raise ToolMissingError("triton.tools.disasm.get_sass runs nvdisasm, which is not "
                               "installed: pip install 'workbench[sass]' (NVIDIA's "
                               "nvidia-cuda-nvdisasm wheel)")
    sass = disassemble(bytes(cubin_asm), tool)
    if fun is None:
        return sass
    sections = re.split(r"(?m)^(?=\s*\.section\s+\.text\.)", sass)
    for text in sections:
        if re.match(rf"\s*\.section\s+\.text\.{re.escape(fun)}\b", text):
            return text
    raise KeyError(f"the cubin has no function {fun!r}")
