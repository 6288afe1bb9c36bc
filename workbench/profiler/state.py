"""The profiler's one piece of state: the running session (``current.session``)."""
from __future__ import annotations


def _frame(name: str) -> dict:
    return {"frame": {"name": name}, "metrics": {"time (ns)": 0, "count": 0}, "children": []}


class Session:
    """A session: ``name`` (the output file's stem), ``active`` (recording), ``root`` (the
    frame tree) and the stack of open frames."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.active = True
        self.root = _frame("ROOT")
        self.stack = [self.root]

    def enter(self, name: str) -> dict:
        """The child frame ``name`` of the innermost open frame (made if new), now open."""
        parent = self.stack[-1]
        node = next((c for c in parent["children"] if c["frame"]["name"] == name), None)
        if node is None:
            node = _frame(name)
            parent["children"].append(node)
        self.stack.append(node)
        return node

    def leave(self) -> None:
        """Close the innermost open frame."""
        self.stack.pop()


class _Current:
    session: Session | None = None


#: the running session, or None
current = _Current()
