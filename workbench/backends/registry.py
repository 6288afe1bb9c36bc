"""Which backend compiles for which target. Backends are imported only when asked for."""
from __future__ import annotations

import importlib

from ..config import TARGETS, Target
from ..errors import TargetError

# Target.backend -> (module, class)
BACKENDS = {
    "cpu": ("workbench.backends.cpu", "CpuBackend"),
    "cuda": ("workbench.backends.cuda", "CudaBackend"),
    "interpreter": ("workbench.backends.interpreter", "InterpreterBackend"),
}


def get_backend(target):
    """A :class:`workbench.backends.base.Backend` for ``target`` (a :class:`Target` or its text,
    ``"cpu"``, ``"cuda:80"``, ``"cuda:90"``, ``"interpreter"``).

    Raises :class:`TargetError` for an unknown target (listing the valid ones) or one whose
    backend module is not available in this installation."""
    t = Target.parse(target)
    module_name, class_name = BACKENDS[t.backend]
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:
        raise TargetError(f"target {t} is not available here: importing {module_name} "
                          f"failed ({e}); valid targets are {', '.join(TARGETS)}") from None
    cls = getattr(module, class_name, None)
    if cls is None:
        raise TargetError(f"target {t} is not available here: {module_name} has no "
                          f"{class_name}")
    return cls(t)


def available_targets() -> list[str]:
    """The targets whose backend imports here (compiling may still need tools)."""
    out = []
    for name in TARGETS:
        try:
            get_backend(name)
        except TargetError:
            continue
        out.append(name)
    return out
