"""The interpreter's inner loop and its control signals (shared by all op modules)."""
from __future__ import annotations

PID, NPROG, MEM, PIDS = 0, 3, 6, 7  # reserved env slots: program id, grid, memory, batch pids
FIRST_SLOT = 8


class Return(Exception):
    """Internal: an early ``tt.return`` (values in ``.values``)."""

    def __init__(self, values):
        super().__init__("return")
        self.values = values


def run_block(fns, env) -> None:
    """Run a block's closures in order (the interpreter's inner loop)."""
    for f in fns:
        f(env)
