"""The pass manager: runs passes in order, snapshots the IR after each and times each.

A :class:`Pass` is a small named object with typed options (a dataclass); its ``name`` is
Triton's pass name (``"canonicalize"``, ``"cse"``, ``"convert-triton-to-tritongpu"``), so the
pass-by-pass view reads like ``MLIR_ENABLE_DUMP`` output of Triton.
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import ClassVar

from ..ir.core import Operation
from ..ir.printer import print_module


@dataclass
class Pass:
    """Base of every pass. Subclasses are dataclasses whose fields are the pass's options.

    ``name``: the pass's (Triton/MLIR) name. ``run(module, ctx)`` rewrites the ``builtin.module``
    in place; ``ctx`` is a :class:`workbench.config.CompileContext` (or None)."""

    name: ClassVar[str] = ""

    def run(self, module: Operation, ctx) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def options(self) -> dict:
        """The pass's options as a dict (field name -> value)."""
        return asdict(self)

    def describe(self) -> str:
        """``name{opt=value ...}`` as MLIR pass pipelines print a pass with options."""
        opts = " ".join(f"{k}={v}" for k, v in self.options.items())
        return f"{self.name}{{{opts}}}" if opts else self.name


class PassManager:
    """Runs ``passes`` in order on a module.

    Args:
        passes: a list of :class:`Pass` objects.
        verify: run :func:`workbench.ir.verifier.verify` on the input and after every pass;
            a failure raises :class:`~workbench.ir.verifier.VerificationError` whose message
            names the pass that broke the IR.
        snapshot_locations: print snapshots with ``loc(#locN)`` references and the location
            table (True: snapshots parse back with their locations via
            :func:`workbench.ir.parser.parse_module`).
    """

    def __init__(self, passes, verify: bool = False, snapshot_locations: bool = True):
        self.passes = list(passes)
        self.verify = verify
        self.snapshot_locations = snapshot_locations

    def run(self, module: Operation, ctx=None, stage: str = "ttir") -> Operation:
        """Apply the passes to ``module`` (in place) and return it.

        When ``ctx.keep_snapshots``, ``ctx.snapshots[stage]`` becomes a list of
        ``(pass_name, text)``: first ``("input", text)``, then one entry after each pass.
        ``ctx.timings[f"{stage}:{pass.name}"]`` gets each pass's wall time in seconds
        (summed when a pass runs more than once in the stage).
        Raises: whatever a pass raises; VerificationError when ``verify`` finds broken IR.
        """
        keep = bool(ctx is not None and getattr(ctx, "keep_snapshots", False))
        snaps = None
        if keep:
            snaps = [("input", print_module(module, self.snapshot_locations))]
            ctx.snapshots[stage] = snaps
        if self.verify:
            self._verify(module, "input of " + stage)
        for p in self.passes:
            t0 = time.perf_counter()
            p.run(module, ctx)
            dt = time.perf_counter() - t0
            if ctx is not None:
                key = f"{stage}:{p.name}"
                ctx.timings[key] = ctx.timings.get(key, 0.0) + dt
            if self.verify:
                self._verify(module, f"after pass '{p.name}'")
            if snaps is not None:
                snaps.append((p.name, print_module(module, self.snapshot_locations)))
        return module

    @staticmethod
    def _verify(module: Operation, where: str) -> None:
        from ..ir.verifier import VerificationError, verify
        try:
            verify(module)
        except VerificationError as e:
            raise VerificationError(f"{where}: {e}", e.op) from None
