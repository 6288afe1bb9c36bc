"""The SSA IR: values, operations with regions, blocks and source locations.

A small Python version of MLIR's structure, enough for Triton's dialects: an :class:`Operation`
has a dialect-qualified ``name`` (``"arith.addf"``), operands, results, attributes, nested
regions and a :class:`Location`. Values keep their use lists, so passes can replace and erase.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

from .types import Type


@dataclass(frozen=True)
class Location:
    """Where an op came from: ``file:line:col`` (1-based line and column, as Python's ``ast``
    gives them plus one for the column), an optional variable ``name`` (Triton prints
    ``loc("x"(...))`` for values assigned to ``x``) and the ``caller`` location when the op was
    inlined from a ``@jit`` helper (a call-site chain)."""

    file: str
    line: int
    col: int
    name: str | None = None
    caller: "Location | None" = None

    def with_name(self, name: str | None) -> "Location":
        return Location(self.file, self.line, self.col, name, self.caller)

    def with_caller(self, caller: "Location") -> "Location":
        inner = self.caller.with_caller(caller) if self.caller is not None else caller
        return Location(self.file, self.line, self.col, self.name, inner)

    def root(self) -> "Location":
        """The outermost call site: the line of the kernel itself for inlined helper code."""
        loc = self
        while loc.caller is not None:
            loc = loc.caller
        return loc

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


UNKNOWN = Location("unknown", 0, 0)


class Value:
    """An SSA value: the result of an op or an argument of a block."""

    __slots__ = ("type", "name", "owner", "index", "uses")

    def __init__(self, type: Type, owner=None, index: int = 0, name: str | None = None):
        self.type = type
        self.owner = owner  # Operation (result) or Block (argument)
        self.index = index
        self.name = name  # a hint for the printer (the user's variable name)
        self.uses: list[tuple[Operation, int]] = []

    @property
    def defining_op(self) -> "Operation | None":
        return self.owner if isinstance(self.owner, Operation) else None

    def replace_all_uses_with(self, new: "Value") -> None:
        for op, i in list(self.uses):
            op.set_operand(i, new)

    def __repr__(self) -> str:
        return f"<Value {self.name or ''}:{self.type}>"


class Operation:
    """One IR operation. Create it with :meth:`create` (or a :class:`Builder`)."""

    def __init__(self, name: str, operands, result_types, attributes=None, regions=0,
                 loc: Location = UNKNOWN):
        self.name = name
        self.operands: list[Value] = []
        for v in operands:
            self._add_operand(v)
        self.results = [Value(t, self, i) for i, t in enumerate(result_types)]
        self.attributes: dict = dict(attributes or {})
        self.regions: list[Region] = [Region(self) for _ in range(regions)]
        self.loc = loc
        self.parent: Block | None = None

    def _add_operand(self, v: Value) -> None:
        if not isinstance(v, Value):
            raise TypeError(f"operand of {self.name} must be an IR Value, got {v!r}")
        v.uses.append((self, len(self.operands)))
        self.operands.append(v)

    def add_operand(self, v: Value) -> None:
        """Append ``v`` to the operands (an iter arg of a loop, a token of a load)."""
        self._add_operand(v)

    def set_operand(self, i: int, v: Value) -> None:
        old = self.operands[i]
        old.uses.remove((self, i))
        self.operands[i] = v
        v.uses.append((self, i))

    def drop_operands(self) -> None:
        for i, v in enumerate(self.operands):
            v.uses.remove((self, i))
        self.operands = []

    @property
    def result(self) -> Value:
        assert len(self.results) == 1, f"{self.name} has {len(self.results)} results"
        return self.results[0]

    @property
    def dialect(self) -> str:
        return self.name.split(".", 1)[0]

    def erase(self) -> None:
        """Remove this op from its block; its results must be unused."""
        for r in self.results:
            if r.uses:
                raise ValueError(f"cannot erase {self.name}: result still used")
        for region in self.regions:
            for block in region.blocks:
                for op in list(reversed(block.ops)):
                    op.drop_operands()
        self.drop_operands()
        if self.parent is not None:
            self.parent.ops.remove(self)
            self.parent = None

    def walk(self) -> Iterator["Operation"]:
        """This op and every op nested in its regions, in pre-order."""
        yield self
        for region in self.regions:
            for block in region.blocks:
                for op in list(block.ops):
                    yield from op.walk()

    def parent_op(self) -> "Operation | None":
        if self.parent is None or self.parent.parent is None:
            return None
        return self.parent.parent.parent

    def __repr__(self) -> str:
        return f"<Operation {self.name} at {self.loc}>"


class Block:
    """A list of ops with block arguments (loop induction variables, reduce operands)."""

    def __init__(self, arg_types=(), parent: "Region | None" = None):
        self.args = [Value(t, self, i) for i, t in enumerate(arg_types)]
        self.ops: list[Operation] = []
        self.parent = parent

    def add_arg(self, t: Type, name: str | None = None) -> Value:
        v = Value(t, self, len(self.args), name)
        self.args.append(v)
        return v

    def append(self, op: Operation) -> Operation:
        op.parent = self
        self.ops.append(op)
        return op

    def insert(self, index: int, op: Operation) -> Operation:
        op.parent = self
        self.ops.insert(index, op)
        return op

    def insert_before(self, anchor: Operation, op: Operation) -> Operation:
        return self.insert(self.ops.index(anchor), op)

    @property
    def terminator(self) -> Operation | None:
        return self.ops[-1] if self.ops else None


class Region:
    """A list of blocks owned by an op (our ops use single-block regions)."""

    def __init__(self, parent: Operation | None = None):
        self.blocks: list[Block] = []
        self.parent = parent

    def add_block(self, arg_types=()) -> Block:
        b = Block(arg_types, self)
        self.blocks.append(b)
        return b

    @property
    def block(self) -> Block:
        return self.blocks[0]


def module_op(attributes=None, loc: Location = UNKNOWN) -> Operation:
    """An empty ``builtin.module`` with one block."""
    m = Operation("builtin.module", [], [], attributes, regions=1, loc=loc)
    m.regions[0].add_block()
    return m


def functions(module: Operation) -> list[Operation]:
    """The ``tt.func`` ops of a module, in order."""
    return [op for op in module.regions[0].block.ops if op.name == "tt.func"]
