"""Where a pass places an op that converts a value for one of its users (a helper of
``convert-triton-to-tritongpu`` and ``remove-layout-conversions``, not a pass)."""
from __future__ import annotations

from ..ir.core import Operation, Value
from .values import block_of


def insert_for_use(v: Value, user: Operation, new: Operation) -> None:
    """Insert ``new`` (an op reading ``v`` for ``user``) before ``user`` when ``v`` is defined
    in the user's block; otherwise right after ``v``'s definition (or at the start of the
    block whose argument ``v`` is), so a value from outside a loop is converted once, not per
    iteration."""
    d = v.defining_op
    home = block_of(d) if d is not None else v.owner
    if home is user.parent:
        block_of(user).insert_before(user, new)
    elif d is not None:
        home.insert(home.ops.index(d) + 1, new)
    else:
        home.insert(0, new)
